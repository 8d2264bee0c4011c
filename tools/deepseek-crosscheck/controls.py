#!/usr/bin/python3
"""Negative controls: show the cross-check is sensitive to YaRN, the YaRN softmax mscale and rope pairing,
and that the bf16 cache equals the reference cache rounded to bf16. Run after crosscheck.py (uses cases/)."""
import json, os, numpy as np, torch
import crosscheck as cc, st
dsm = cc.dsm
def load_case(c):
    d = os.path.join(cc.HERE, "cases", c)
    s = cc.CASES[c]; return d, s, s["cfg"], st.load(os.path.join(d, "weights.safetensors")), st.load(os.path.join(d, "input.safetensors"))
def outdiff(ref, j, D):
    return max(cc.maxdiff(j[n], ref[n]) for n in ["prefill_output"] + [f"decode_output_{k}" for k in range(D)])

d, s, cfg, w, inp = load_case("c"); j = st.load(os.path.join(d, "out_naive_f32.safetensors"))
B, T, D = s["B"], s["T"], s["D"]
print("c, Java naive vs model.py with YaRN OFF (plain rope, no mscale): %.3g" % outdiff(cc.run_ref(dict(cfg, rope_scaling=None), w, inp, B, T, D, "naive"), j, D))
orig = dsm.MLA.__init__
def no_mscale(self, args): orig(self, args); self.softmax_scale = self.qk_head_dim ** -0.5
dsm.MLA.__init__ = no_mscale
print("c, Java naive vs model.py YaRN freqs but softmax mscale^2 dropped: %.3g" % outdiff(cc.run_ref(cfg, w, inp, B, T, D, "naive"), j, D))
dsm.MLA.__init__ = orig

d, s, cfg, w, inp = load_case("d"); j = st.load(os.path.join(d, "out_naive_f32.safetensors"))
B, T, D = s["B"], s["T"], s["D"]
orig_rot = dsm.apply_rotary_emb
def half_split(x, f):  # rotate (i, i+d/2) instead of (2i, 2i+1)
    h = x.shape[-1] // 2
    y = torch.stack([x[..., :h], x[..., h:]], -1).reshape(x.shape)
    y = orig_rot(y, f)
    return torch.cat([y[..., 0::2], y[..., 1::2]], -1)
dsm.apply_rotary_emb = half_split
print("d, Java naive vs model.py with half-split (NeoX) rope pairing: %.3g" % outdiff(cc.run_ref(cfg, w, inp, B, T, D, "naive"), j, D))
dsm.apply_rotary_emb = orig_rot

def bf16(a):
    u = a.astype(np.float32).view(np.uint32).astype(np.uint64)
    u = (u + 0x7FFF + ((u >> 16) & 1)) >> 16 << 16
    return u.astype(np.uint32).view(np.float32)
d, s, cfg, w, inp = load_case("a"); ab = st.load(os.path.join(d, "ref_absorb.safetensors"))
for p in cc.PATHS:
    j = st.load(os.path.join(d, f"out_{p}_bf16.safetensors"))
    print(f"a, {p} bf16 cache vs bf16(model.py absorb cache): kv %.3g  pe %.3g  (max|kv| %.3g)" % (
        cc.maxdiff(j["kv_cache"], bf16(ab["kv_cache"])), cc.maxdiff(j["pe_cache"], bf16(ab["pe_cache"])), np.abs(ab["kv_cache"]).max()))
