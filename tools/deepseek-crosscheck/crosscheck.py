#!/usr/bin/python3
"""Cross-check TornadoMLA `./mla run-layer` against DeepSeek-V3 inference/model.py (MLA class, PyTorch CPU, f32).

Usage: /usr/bin/python3 crosscheck.py [--main REPO_ROOT] [--cases a,b,c,d] [--skip-java] [--mla-args "--backend tornado"]
Per case it writes cases/<case>/{config.json,weights.safetensors,input.safetensors,ref_naive.safetensors,
ref_absorb.safetensors,out_<path>_<dtype>.safetensors} and prints max abs diffs.
"""
import argparse, json, math, os, subprocess, sys, time
import numpy as np
import torch
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import st

# Debian's torch is 1.13, which predates F.rms_norm (torch >= 2.4); model.py's RMSNorm calls it.
# Same definition as torch's: x * rsqrt(mean(x^2) + eps) * weight.
if not hasattr(F, "rms_norm"):
    def _rms_norm(x, normalized_shape, weight=None, eps=None):
        eps = torch.finfo(x.dtype).eps if eps is None else eps
        y = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps)
        return y * weight if weight is not None else y
    F.rms_norm = _rms_norm

torch.set_default_dtype(torch.float32)
import model as dsm  # DeepSeek-V3 inference/model.py (unmodified), kernel.py is a stub
dsm.Linear.dtype = torch.float32
torch.set_num_threads(os.cpu_count() or 1)

BASE = dict(hidden_size=256, num_attention_heads=4, q_lora_rank=64, kv_lora_rank=64, qk_nope_head_dim=32,
            qk_rope_head_dim=16, v_head_dim=32, rope_theta=10000.0, rms_norm_eps=1e-6,
            max_position_embeddings=4096, num_hidden_layers=1, rope_scaling=None)
CASES = {
    "a": dict(cfg=dict(BASE), B=2, T=7, D=3, seed=101, dtypes=["f32", "bf16"]),
    "b": dict(cfg=dict(BASE, q_lora_rank=None), B=2, T=7, D=3, seed=202, dtypes=["f32"]),
    "c": dict(cfg=dict(BASE, max_position_embeddings=512,
                       rope_scaling=dict(type="yarn", factor=8, original_max_position_embeddings=64, beta_fast=32,
                                         beta_slow=1, mscale=1.0, mscale_all_dim=1.0)),
              B=2, T=40, D=3, seed=303, dtypes=["f32"]),
    "d": dict(cfg=dict(BASE, hidden_size=1024, num_attention_heads=16, q_lora_rank=1536, kv_lora_rank=512,
                       qk_nope_head_dim=128, qk_rope_head_dim=64, v_head_dim=128, max_position_embeddings=163840,
                       rope_scaling=dict(type="yarn", factor=40, original_max_position_embeddings=4096, beta_fast=32,
                                         beta_slow=1, mscale=1.0, mscale_all_dim=1.0)),
              B=1, T=5, D=2, seed=404, dtypes=["f32"]),
}
PATHS = ["naive", "absorbed", "tiled"]


def make_weights(cfg, rng):
    d, H = cfg["hidden_size"], cfg["num_attention_heads"]
    qr, kr = cfg["q_lora_rank"] or 0, cfg["kv_lora_rank"]
    dn, dr, dv = cfg["qk_nope_head_dim"], cfg["qk_rope_head_dim"], cfg["v_head_dim"]
    proj = lambda o, i: (rng.standard_normal((o, i)) / math.sqrt(i)).astype(np.float32)
    norm = lambda n: (1.0 + 0.1 * rng.standard_normal(n)).astype(np.float32)
    p = "model.layers.0.self_attn."
    w = {}
    if qr > 0:
        w[p + "q_a_proj.weight"] = proj(qr, d)
        w[p + "q_a_layernorm.weight"] = norm(qr)
        w[p + "q_b_proj.weight"] = proj(H * (dn + dr), qr)
    else:
        w[p + "q_proj.weight"] = proj(H * (dn + dr), d)
    w[p + "kv_a_proj_with_mqa.weight"] = proj(kr + dr, d)
    w[p + "kv_a_layernorm.weight"] = norm(kr)
    w[p + "kv_b_proj.weight"] = proj(H * (dn + dv), kr)
    w[p + "o_proj.weight"] = proj(d, H * dv)
    return w


HF2DS = {"q_a_proj": "wq_a", "q_a_layernorm": "q_norm", "q_b_proj": "wq_b", "q_proj": "wq",
         "kv_a_proj_with_mqa": "wkv_a", "kv_a_layernorm": "kv_norm", "kv_b_proj": "wkv_b", "o_proj": "wo"}


def model_args(cfg, B):
    rs = cfg["rope_scaling"]
    a = dict(max_batch_size=B, dim=cfg["hidden_size"], n_heads=cfg["num_attention_heads"],
             q_lora_rank=cfg["q_lora_rank"] or 0, kv_lora_rank=cfg["kv_lora_rank"],
             qk_nope_head_dim=cfg["qk_nope_head_dim"], qk_rope_head_dim=cfg["qk_rope_head_dim"],
             v_head_dim=cfg["v_head_dim"], rope_theta=cfg["rope_theta"])
    if rs is None:  # no YaRN: model.py applies YaRN only when max_seq_len > original_seq_len
        a.update(max_seq_len=cfg["max_position_embeddings"], original_seq_len=cfg["max_position_embeddings"])
    else:
        # model.py's single `mscale` is used for the softmax-scale factor; HF uses mscale_all_dim there and
        # mscale/mscale_all_dim for cos/sin. With mscale == mscale_all_dim (all cases here) they coincide.
        assert rs["mscale"] == rs["mscale_all_dim"]
        a.update(max_seq_len=cfg["max_position_embeddings"], original_seq_len=rs["original_max_position_embeddings"],
                 rope_factor=rs["factor"], beta_fast=rs["beta_fast"], beta_slow=rs["beta_slow"], mscale=rs["mscale_all_dim"])
    return dsm.ModelArgs(**a)


def run_ref(cfg, w, inp, B, T, D, impl):
    dsm.attn_impl = impl  # read in MLA.__init__ (buffers) and forward
    args = model_args(cfg, B)
    mla = dsm.MLA(args)
    with torch.no_grad():
        for name, arr in w.items():
            mod = getattr(mla, HF2DS[name.split(".")[-2]])
            assert tuple(mod.weight.shape) == arr.shape, (name, mod.weight.shape, arr.shape)
            mod.weight.copy_(torch.from_numpy(arr))
        freqs = dsm.precompute_freqs_cis(args)
        out = {}
        x = torch.from_numpy(inp["prefill_input"])
        mask = torch.full((T, T), float("-inf")).triu_(1) if T > 1 else None  # as Transformer.forward
        out["prefill_output"] = mla(x, 0, freqs[0:T], mask).numpy()
        for k in range(D):
            x = torch.from_numpy(inp[f"decode_input_{k}"])
            out[f"decode_output_{k}"] = mla(x, T + k, freqs[T + k:T + k + 1], None).numpy()
        S = T + D
        if impl == "absorb":
            out["kv_cache"] = mla.kv_cache[:B, :S].numpy().copy()
            out["pe_cache"] = mla.pe_cache[:B, :S].numpy().copy()
        out["softmax_scale"] = np.array([mla.softmax_scale], np.float32)
    return out


def maxdiff(a, b):
    assert a.shape == b.shape, (a.shape, b.shape)
    return float(np.max(np.abs(a.astype(np.float64) - b.astype(np.float64))))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--main", default=os.path.abspath(os.path.join(HERE, "..", "..")))
    ap.add_argument("--cases", default="a,b,c,d")
    ap.add_argument("--skip-java", action="store_true")
    ap.add_argument("--mla-args", default="", help="extra ./mla run-layer options, e.g. '--backend tornado --device 0:0'")
    o = ap.parse_args()
    rows = []
    for c in o.cases.split(","):
        spec = CASES[c]; cfg = spec["cfg"]; B, T, D = spec["B"], spec["T"], spec["D"]
        dirc = os.path.join(HERE, "cases", c); os.makedirs(dirc, exist_ok=True)
        rng = np.random.default_rng(spec["seed"])
        w = make_weights(cfg, rng)
        inp = {"prefill_input": rng.standard_normal((B, T, cfg["hidden_size"])).astype(np.float32)}
        for k in range(D):
            inp[f"decode_input_{k}"] = rng.standard_normal((B, 1, cfg["hidden_size"])).astype(np.float32)
        hf_cfg = dict(cfg, architectures=["DeepseekV3ForCausalLM"], model_type="deepseek_v3")
        with open(os.path.join(dirc, "config.json"), "w") as f: json.dump(hf_cfg, f, indent=1)
        st.save(os.path.join(dirc, "weights.safetensors"), w)
        st.save(os.path.join(dirc, "input.safetensors"), inp)
        t0 = time.time()
        ref = {impl: run_ref(cfg, w, inp, B, T, D, impl) for impl in ("naive", "absorb")}
        for impl in ref: st.save(os.path.join(dirc, f"ref_{impl}.safetensors"), ref[impl])
        outs = ["prefill_output"] + [f"decode_output_{k}" for k in range(D)]
        nv, ab = ref["naive"], ref["absorb"]
        amp = max(float(np.abs(nv[n]).max()) for n in outs)
        print(f"case {c}: B={B} T={T} D={D} softmax_scale={nv['softmax_scale'][0]:.6g} max|out|={amp:.3g} "
              f"(model.py {time.time()-t0:.1f}s)", flush=True)
        rows.append((c, "model.py absorb", "-", max(maxdiff(ab[n], nv[n]) for n in outs),
                     maxdiff(ab[outs[0]], nv[outs[0]]), max((maxdiff(ab[n], nv[n]) for n in outs[1:]), default=0.0),
                     None, None))
        if o.skip_java: continue
        for dt in spec["dtypes"]:
            for p in PATHS:
                of = os.path.join(dirc, f"out_{p}_{dt}.safetensors")
                cmd = ["./mla", "run-layer", "--config", os.path.join(dirc, "config.json"),
                       "--weights", os.path.join(dirc, "weights.safetensors"), "--layer", "0",
                       "--input", os.path.join(dirc, "input.safetensors"), "--output", of,
                       "--path", p, "--cache-dtype", dt] + o.mla_args.split()
                r = subprocess.run(cmd, cwd=o.main, capture_output=True, text=True)
                if r.returncode != 0:
                    print("FAILED:", " ".join(cmd), "\n", r.stdout, r.stderr); rows.append((c, p, dt, None) + (None,) * 4); continue
                j = st.load(of)
                rows.append((c, p, dt, max(maxdiff(j[n], nv[n]) for n in outs), maxdiff(j[outs[0]], nv[outs[0]]),
                             max(maxdiff(j[n], nv[n]) for n in outs[1:]),
                             maxdiff(j["kv_cache"], ab["kv_cache"]), maxdiff(j["pe_cache"], ab["pe_cache"])))
    f = lambda v: "   -    " if v is None else f"{v:.2e}"
    print(f"\n{'case':4} {'path':16} {'cache':5} {'max(all out)':>12} {'prefill':>9} {'decode':>9} {'kv_cache':>9} {'pe_cache':>9}")
    for c, p, dt, m, pf, dc, kv, pe in rows:
        print(f"{c:4} {p:16} {dt:5} {f(m):>12} {f(pf):>9} {f(dc):>9} {f(kv):>9} {f(pe):>9}")


if __name__ == "__main__":
    main()
