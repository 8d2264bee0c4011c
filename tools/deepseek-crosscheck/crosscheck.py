#!/usr/bin/python3
"""Cross-check TornadoMLA `./mla run-layer` against DeepSeek-V3 inference/model.py (MLA class, PyTorch CPU, f32).

Usage: /usr/bin/python3 crosscheck.py [--main REPO_ROOT] [--cases a,b,c,d,e,f] [--skip-java] [--mla-args "--backend tornado"]
Per case it writes cases/<case>/{config.json,weights.safetensors,input.safetensors,ref_naive.safetensors,
ref_absorb.safetensors,out_<path>_<dtype>.safetensors} and prints max abs diffs.
Cases e and f store the weights as DeepSeek-V3 does (F8_E4M3 codes with 128x128 F32 weight_scale_inv blocks,
partial blocks included, BF16 norms, several shards and an index); model.py runs on the exactly dequantised
weights, e4m3(code) * scale rounded once to f32 (what its weight_dequant kernel computes, kept in f32 here
instead of its default bf16), and run-layer runs with the weights kept as fp8 (default), f32 and bf16.
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
FP8_CASES = {
    # partial blocks everywhere: hidden 320 = 2.5 blocks, q_lora_rank 160, kv_lora_rank 144, kv_b_proj 216 rows
    "e": dict(cfg=dict(BASE, hidden_size=320, num_attention_heads=3, q_lora_rank=160, kv_lora_rank=144,
                       qk_nope_head_dim=32, qk_rope_head_dim=16, v_head_dim=40),
              B=2, T=6, D=3, seed=505, shards=3),
    # DeepSeek-V3's attention (as case d): kv_a_proj_with_mqa's 576 rows end in a half block
    "f": dict(cfg=dict(CASES["d"]["cfg"]), B=1, T=5, D=2, seed=606, shards=2),
}
WEIGHT_FORMS = ["", "f32", "bf16"]     # run-layer's default for an FP8 checkpoint (fp8), then --weights-dtype


def e4m3_table():
    """e4m3fn by its definition (bias 7, no infinities, S.1111.111 NaN), in float64, then as float32 (exact)."""
    t = np.zeros(256)
    for b in range(256):
        s, e, m = b >> 7, (b >> 3) & 15, b & 7
        v = m / 8 * 2.0 ** -6 if e == 0 else (1 + m / 8) * 2.0 ** (e - 7)
        t[b] = np.nan if (e == 15 and m == 7) else (-v if s else v)
    return t.astype(np.float32)


E4M3 = e4m3_table()


def make_fp8_weights(cfg, rng):
    """DeepSeek-V3's storage: F8_E4M3 codes (all 254 finite codes, then random ones) and F32 block scales per
    projection, one block [0, 0] of o_proj with a tiny scale; BF16 norms. Returns (stored, dtypes, exact f32)."""
    exact = make_weights(cfg, rng)
    stored, dtypes, out = {}, {}, {}
    finite = np.array([b for b in range(256) if b & 0x7F != 0x7F], np.uint8)
    for name, w in exact.items():
        if w.ndim == 1:
            bf = (w.view(np.uint32) + 0x8000) & 0xFFFF0000           # round to bf16 (no ties in practice)
            stored[name] = out[name] = bf.view(np.float32); dtypes[name] = "BF16"
            continue
        o, i = w.shape
        codes = rng.choice(finite, size=o * i)
        codes[:min(254, o * i)] = finite[:min(254, o * i)]
        codes = codes.reshape(o, i)
        scales = ((0.5 + rng.random(((o + 127) // 128, (i + 127) // 128))) / (130 * math.sqrt(i))).astype(np.float32)
        if name.endswith("o_proj.weight"):
            scales[0, 0] = np.float32(2.0 ** -140)
        full = np.repeat(np.repeat(scales, 128, 0), 128, 1)[:o, :i]
        out[name] = E4M3[codes] * full                              # float32 product, rounded once
        stored[name] = codes; dtypes[name] = "F8_E4M3"
        stored[name + "_scale_inv"] = scales; dtypes[name + "_scale_inv"] = "F32"
    return stored, dtypes, out


def save_sharded(dirc, stored, dtypes, shards):
    """Tensors round-robin over shards (a weight's scale in the next shard) and model.safetensors.index.json."""
    names = [n for n in stored if not n.endswith("_scale_inv")]
    parts = [dict() for _ in range(shards)]
    wmap = {}
    for k, n in enumerate(names):
        parts[k % shards][n] = stored[n]
        if n + "_scale_inv" in stored:
            parts[(k + 1) % shards][n + "_scale_inv"] = stored[n + "_scale_inv"]
    for j, part in enumerate(parts):
        f = f"model-{j + 1:05d}-of-{shards:05d}.safetensors"
        st.save(os.path.join(dirc, f), part, dtypes)
        for n in part: wmap[n] = f
    index = os.path.join(dirc, "model.safetensors.index.json")
    with open(index, "w") as fh: json.dump({"metadata": {}, "weight_map": wmap}, fh, indent=1)
    return index


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
    ap.add_argument("--cases", default="a,b,c,d,e,f")
    ap.add_argument("--skip-java", action="store_true")
    ap.add_argument("--mla-args", default="", help="extra ./mla run-layer options, e.g. '--backend tornado --device 0:0'")
    o = ap.parse_args()
    rows = []
    for c in o.cases.split(","):
        fp8 = c in FP8_CASES
        spec = FP8_CASES[c] if fp8 else CASES[c]; cfg = spec["cfg"]; B, T, D = spec["B"], spec["T"], spec["D"]
        dirc = os.path.join(HERE, "cases", c); os.makedirs(dirc, exist_ok=True)
        rng = np.random.default_rng(spec["seed"])
        if fp8:
            stored, dtypes, w = make_fp8_weights(cfg, rng)
        else:
            w = make_weights(cfg, rng)
        inp = {"prefill_input": rng.standard_normal((B, T, cfg["hidden_size"])).astype(np.float32)}
        for k in range(D):
            inp[f"decode_input_{k}"] = rng.standard_normal((B, 1, cfg["hidden_size"])).astype(np.float32)
        hf_cfg = dict(cfg, architectures=["DeepseekV3ForCausalLM"], model_type="deepseek_v3")
        if fp8:
            hf_cfg["quantization_config"] = {"activation_scheme": "dynamic", "fmt": "e4m3", "quant_method": "fp8",
                                             "weight_block_size": [128, 128]}
        with open(os.path.join(dirc, "config.json"), "w") as f: json.dump(hf_cfg, f, indent=1)
        if fp8:
            weights_path = save_sharded(dirc, stored, dtypes, spec["shards"])
        else:
            weights_path = os.path.join(dirc, "weights.safetensors")
            st.save(weights_path, w)
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
        runs = [("f32", wf) for wf in WEIGHT_FORMS] if fp8 else [(dt, "") for dt in spec["dtypes"]]
        for dt, wf in runs:
            for p in PATHS:
                label = f"w={wf or 'fp8 (default)'}" if fp8 else dt
                of = os.path.join(dirc, f"out_{p}_{dt}{'_w' + (wf or 'default') if fp8 else ''}.safetensors")
                cmd = ["./mla", "run-layer", "--config", os.path.join(dirc, "config.json"),
                       "--weights", weights_path, "--layer", "0",
                       "--input", os.path.join(dirc, "input.safetensors"), "--output", of,
                       "--path", p, "--cache-dtype", dt] + (["--weights-dtype", wf] if wf else []) + o.mla_args.split()
                r = subprocess.run(cmd, cwd=o.main, capture_output=True, text=True)
                if r.returncode != 0:
                    print("FAILED:", " ".join(cmd), "\n", r.stdout, r.stderr); rows.append((c, p, label, None) + (None,) * 4); continue
                j = st.load(of)
                rows.append((c, p, label, max(maxdiff(j[n], nv[n]) for n in outs), maxdiff(j[outs[0]], nv[outs[0]]),
                             max(maxdiff(j[n], nv[n]) for n in outs[1:]),
                             maxdiff(j["kv_cache"], ab["kv_cache"]), maxdiff(j["pe_cache"], ab["pe_cache"])))
    f = lambda v: "   -    " if v is None else f"{v:.2e}"
    print(f"\n{'case':4} {'path':16} {'cache/weights':17} {'max(all out)':>12} {'prefill':>9} {'decode':>9} {'kv_cache':>9} {'pe_cache':>9}")
    for c, p, dt, m, pf, dc, kv, pe in rows:
        print(f"{c:4} {p:16} {dt:17} {f(m):>12} {f(pf):>9} {f(dc):>9} {f(kv):>9} {f(pe):>9}")


if __name__ == "__main__":
    main()
