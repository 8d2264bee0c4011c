#!/usr/bin/python3
"""Case g: a variable-length batch against DeepSeek-V3 inference/model.py run per sequence.

Three sequences with prompts of 5, 11 and 2 tokens, then 3 decode steps of all three. model.py's MLA (unmodified,
PyTorch CPU, f32, attn_impl "naive" and "absorb") runs each sequence alone (batch 1: its own prefill, then its
decode tokens); `./mla run-layer` runs them as one batch in the variable-length format (prefill_input.<b>
[T_b, hidden], decode_input_<k> [B, 1, hidden]) on every path and cache dtype f32/bf16, contiguous and with
`--paged --block-size 4`. Pass: every output within 1e-4 (f32 cache) or 3e-2 (bf16 cache) of model.py's naive
run, and kv_cache.<b>/pe_cache.<b> within 1e-4 of model.py's absorb cache (f32), or within one bf16 step of it
(bf16: the cache stores model.py's numbers rounded to bf16). Exit code 1 if any case fails.

Usage: /usr/bin/python3 varlen.py [--main REPO_ROOT] [--mla-args "--backend java-fast"]
"""
import argparse, json, os, subprocess, sys, time
import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import crosscheck as cc   # model.py loaded as there (Debian torch 1.13's missing F.rms_norm added), weights, ModelArgs
import st

CFG = dict(cc.BASE)
LENGTHS = [5, 11, 2]
D = 3
TOL = {"f32": 1e-4, "bf16": 3e-2}


def run_one(w, prompt, decodes, impl):
    """model.py's MLA over one sequence: prefill from position 0, then one decode token per step."""
    cc.dsm.attn_impl = impl
    args = cc.model_args(CFG, 1)
    mla = cc.dsm.MLA(args)
    with torch.no_grad():
        for name, arr in w.items():
            getattr(mla, cc.HF2DS[name.split(".")[-2]]).weight.copy_(torch.from_numpy(arr))
        freqs = cc.dsm.precompute_freqs_cis(args)
        t = prompt.shape[0]
        mask = torch.full((t, t), float("-inf")).triu_(1) if t > 1 else None
        out = {"prefill": mla(torch.from_numpy(prompt[None]), 0, freqs[0:t], mask).numpy()[0]}
        for k, x in enumerate(decodes):
            out[f"decode_{k}"] = mla(torch.from_numpy(x[None, None]), t + k, freqs[t + k:t + k + 1], None).numpy()[0, 0]
        if impl == "absorb":
            out["kv"] = mla.kv_cache[0, :t + len(decodes)].numpy().copy()
            out["pe"] = mla.pe_cache[0, :t + len(decodes)].numpy().copy()
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--main", default=os.path.abspath(os.path.join(HERE, "..", "..")))
    ap.add_argument("--mla-args", default="", help="extra ./mla run-layer options")
    o = ap.parse_args()
    dirc = os.path.join(HERE, "cases", "g"); os.makedirs(dirc, exist_ok=True)
    rng = np.random.default_rng(707)
    w = cc.make_weights(CFG, rng)
    d = CFG["hidden_size"]
    prompts = [rng.standard_normal((t, d)).astype(np.float32) for t in LENGTHS]
    decodes = [rng.standard_normal((len(LENGTHS), d)).astype(np.float32) for _ in range(D)]
    with open(os.path.join(dirc, "config.json"), "w") as f:
        json.dump(dict(CFG, architectures=["DeepseekV3ForCausalLM"], model_type="deepseek_v3"), f, indent=1)
    st.save(os.path.join(dirc, "weights.safetensors"), w)
    inp = {f"prefill_input.{b}": prompts[b] for b in range(len(LENGTHS))}
    inp.update({f"decode_input_{k}": decodes[k][:, None, :] for k in range(D)})
    st.save(os.path.join(dirc, "input.safetensors"), inp)
    t0 = time.time()
    ref = [{impl: run_one(w, prompts[b], [decodes[k][b] for k in range(D)], impl) for impl in ("naive", "absorb")}
           for b in range(len(LENGTHS))]
    gap = max(float(np.abs(r["absorb"][n] - r["naive"][n]).max()) for r in ref for n in ["prefill"] + [f"decode_{k}" for k in range(D)])
    print(f"case g: prompts {LENGTHS}, {D} decode steps, model.py per sequence ({time.time() - t0:.1f} s); "
          f"model.py absorb vs naive {gap:.2e}", flush=True)
    rows, failed = [], False
    for dt in ("f32", "bf16"):
        for p in cc.PATHS:
            for layout in ([], ["--paged", "--block-size", "4"]):
                of = os.path.join(dirc, f"out_{p}_{dt}{'_paged' if layout else ''}.safetensors")
                cmd = ["./mla", "run-layer", "--config", os.path.join(dirc, "config.json"), "--weights",
                       os.path.join(dirc, "weights.safetensors"), "--input", os.path.join(dirc, "input.safetensors"),
                       "--output", of, "--path", p, "--cache-dtype", dt] + layout + o.mla_args.split()
                r = subprocess.run(cmd, cwd=o.main, capture_output=True, text=True)
                label = "paged/4" if layout else "contiguous"
                if r.returncode != 0:
                    print("FAILED:", " ".join(cmd), "\n", r.stdout, r.stderr)
                    rows.append((p, dt, label, None, None, None)); failed = True; continue
                j = st.load(of)
                out = cache = 0.0
                # a bf16 cache holds each number rounded to bf16: its error is measured in bf16 steps (2^-8 relative)
                cache_err = (lambda a, r: float(np.abs(a - r).max())) if dt == "f32" else \
                    (lambda a, r: float((np.abs(a - r) / (np.abs(r) * 2.0 ** -8 + 1e-30)).max()))
                for b in range(len(LENGTHS)):
                    nv, ab = ref[b]["naive"], ref[b]["absorb"]
                    out = max(out, float(np.abs(j[f"prefill_output.{b}"] - nv["prefill"]).max()))
                    for k in range(D):
                        out = max(out, float(np.abs(j[f"decode_output_{k}"][b, 0] - nv[f"decode_{k}"]).max()))
                    cache = max(cache, cache_err(j[f"kv_cache.{b}"], ab["kv"]), cache_err(j[f"pe_cache.{b}"], ab["pe"]))
                ok = out <= TOL[dt] and cache <= (1e-4 if dt == "f32" else 1.0)
                failed |= not ok
                rows.append((p, dt, label, out, cache, ok))
    print(f"\n{'path':9} {'cache':5} {'layout':11} {'max|out - model.py|':>20} {'cache error':>11}  verdict "
          "(cache error: max abs for f32, in bf16 steps for bf16)")
    for p, dt, label, out, cache, ok in rows:
        f = lambda v: "-" if v is None else f"{v:.2e}"
        print(f"{p:9} {dt:5} {label:11} {f(out):>20} {f(cache):>11}  {'PASS' if ok else 'FAIL'} (tol {TOL[dt]:.0e})")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
