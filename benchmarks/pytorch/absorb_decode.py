#!/usr/bin/python3
"""One decode step of the MLA attention core as DeepSeek-V3's inference/model.py computes it with
attn_impl = "absorb" (its einsum formulation), in PyTorch on the CPU, f32 (or bf16 with --dtype bf16): the yardstick for TornadoMLA's
java-fast backend (`./mla bench`, DecodeCoreBenchmark). Run it through benchmarks/pytorch/yardstick.sh, which
gives it an optimised BLAS (OpenBLAS) for this process only; benchmarks/vs-torch.sh alternates it with
java-fast and prints the ratios.

Usage: python3 absorb_decode.py [--shapes B:H:T[,B:H:T...]] [--threads N] [--seconds S] [--csv FILE]
       (or the older --batch/--heads/--context for one shape)
Prints, per shape, ms per step (the mean of the timed runs after a warm-up, as `./mla bench` reports; also the
median and the best), GB/s of latent read and GFLOP/s with the
same formulas as `./mla bench` (docs/design.md §1.3), and first which BLAS library the process loaded and the
GFLOP/s of a 2048³ matrix product through it (the proof that the BLAS is the optimised one).
"""
import argparse, csv, os, statistics, sys, time
import torch

ap = argparse.ArgumentParser()
ap.add_argument("--shapes", default=None, help="B:H:T,... (default: one shape from --batch/--heads/--context)")
ap.add_argument("--heads", type=int, default=128)
ap.add_argument("--context", type=int, default=4096)
ap.add_argument("--batch", type=int, default=1)
ap.add_argument("--threads", type=int, default=os.cpu_count())
ap.add_argument("--seconds", type=float, default=3.0, help="timed seconds per shape")
ap.add_argument("--csv", default=None, help="append results in ./mla bench's CSV format")
ap.add_argument("--dtype", default="f32", choices=["f32", "bf16"],
                help="f32 (the yardstick) or bf16: query, weights and cache in bfloat16, the products through oneDNN "
                     "where the CPU has AVX512-BF16/AMX (instructions Java cannot use; shown as context)")
a = ap.parse_args()
torch.set_num_threads(a.threads)
torch.manual_seed(0)


def blas_library():
    """The BLAS shared objects mapped into this process (from /proc/self/maps)."""
    libs = set()
    with open("/proc/self/maps") as f:
        for line in f:
            p = line.split()[-1]
            if "blas" in os.path.basename(p) or "openblas" in p:
                libs.add(p)
    return sorted(libs)


def gemm_gflops(n=2048, reps=5):
    x, y = torch.randn(n, n), torch.randn(n, n)
    torch.mm(x, y)
    best = 1e9
    for _ in range(reps):
        t0 = time.perf_counter()
        torch.mm(x, y)
        best = min(best, time.perf_counter() - t0)
    return 2 * n ** 3 / best / 1e9


def openblas_core(libs):
    """The CPU kernels OpenBLAS chose (openblas_get_corename), or '-' without OpenBLAS."""
    import ctypes
    for p in libs:
        if "openblas" in os.path.basename(p):
            lib = ctypes.CDLL(p)
            lib.openblas_get_corename.restype = ctypes.c_char_p
            return lib.openblas_get_corename().decode()
    return "-"


libs = blas_library()
print(f"pytorch {torch.__version__}, {a.threads} threads; BLAS loaded: {', '.join(libs) or 'none found'}; "
      f"OpenBLAS kernels: {openblas_core(libs)}; 2048^3 sgemm: {gemm_gflops():.1f} GFLOP/s",
      flush=True)

shapes = [tuple(int(v) for v in s.split(":")) for s in a.shapes.split(",")] if a.shapes else [(a.batch, a.heads, a.context)]
dc, dr, dn, dv = 512, 64, 128, 128
dt = torch.bfloat16 if a.dtype == "bf16" else torch.float32
elem = 2 if a.dtype == "bf16" else 4
if a.dtype == "bf16":
    print(f"bf16: oneDNN (mkldnn) available: {torch.backends.mkldnn.is_available()}", flush=True)
rows = []
for B, H, T in shapes:
    scale = (dn + dr) ** -0.5
    q_nope = torch.randn(B, 1, H, dn).to(dt)
    q_pe = torch.randn(B, 1, H, dr).to(dt)
    wkv_b = (torch.randn(H, dn + dv, dc) / dc ** 0.5).to(dt)
    kv_cache = torch.randn(B, T, dc).to(dt)
    pe_cache = torch.randn(B, T, dr).to(dt)

    def step():
        # the "absorb" branch of DeepSeek-V3 inference/model.py MLA.forward, for one new token
        q = torch.einsum("bshd,hdc->bshc", q_nope, wkv_b[:, :dn])
        scores = (torch.einsum("bshc,btc->bsht", q, kv_cache) + torch.einsum("bshr,btr->bsht", q_pe, pe_cache)) * scale
        scores = scores.softmax(dim=-1, dtype=torch.float32).to(dt)   # model.py: .type_as(x)
        x = torch.einsum("bsht,btc->bshc", scores, kv_cache)
        return torch.einsum("bshc,hdc->bshd", x, wkv_b[:, -dv:])

    with torch.inference_mode():
        end = time.perf_counter() + max(0.5, a.seconds / 5)
        while time.perf_counter() < end:
            step()
        times = []
        end = time.perf_counter() + a.seconds
        while time.perf_counter() < end or len(times) < 5:
            t0 = time.perf_counter()
            step()
            times.append(time.perf_counter() - t0)
    best, med, mean = min(times) * 1e3, statistics.median(times) * 1e3, statistics.fmean(times) * 1e3
    flops = B * (2 * H * T * (dc + dr) + 2 * H * T * dc + 2 * H * dc * (dn + dv))
    # the mean of the timed runs, as ./mla bench reports (its Timing harness): the two are compared like for like
    gbs, gfs = B * T * (dc + dr) * elem / mean / 1e6, flops / mean / 1e6
    print(f"torch B{B} H{H} T{T} absorbed {a.dtype}: mean {mean:.3f} ms, median {med:.3f} ms, best {best:.3f} ms ({len(times)} runs), "
          f"{gbs:.2f} GB/s, {gfs:.2f} GFLOP/s", flush=True)
    rows.append(["torch" if a.dtype == "f32" else "torch-bf16", "absorbed", a.dtype, B, H, T, f"{mean:.6f}", f"{gbs:.4f}", f"{gfs:.4f}"])

if a.csv:
    new = not os.path.exists(a.csv)
    with open(a.csv, "a", newline="") as f:
        w = csv.writer(f)
        if new:
            w.writerow(["backend", "path", "dtype", "batch", "heads", "context", "ms_per_step", "gb_per_s", "gflop_per_s"])
        w.writerows(rows)
