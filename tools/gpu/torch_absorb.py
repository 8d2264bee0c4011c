#!/usr/bin/env python3
"""The GPU kit's yardstick: one decode step of the MLA attention core as DeepSeek-V3's inference/model.py
computes it with attn_impl = "absorb" (its einsums; the same as benchmarks/pytorch/absorb_decode.py), in
PyTorch on the GPU, over the same grid as `mla bench --grid flashmla`, f32 and bf16 caches.

Usage: python3 torch_absorb.py --out DIR [--quick] [--time-limit-s 75] [--device cuda]

Writes DIR/torch.csv with `mla bench`'s header (backend,path,dtype,batch,heads,context,ms_per_step,gb_per_s,
gflop_per_s; GB/s counts the latent cache once, B*T*576*bytes, GFLOP/s per docs/design.md section 1.3) and
DIR/torch-peaks.csv (what,value,unit,how): a device copy's bandwidth and f32/bf16 GEMM throughput measured
here. Timing: CUDA events around each step after 3 warm-up steps, the median of at least 5 (up to 50 ms of
steps). f32 matmuls run without TF32 (PyTorch's default for matmul). Rows are written as they are measured,
so a run stopped by its time limit or a timeout keeps what it measured.
"""
import argparse
import os
import statistics
import sys
import time

import torch

ap = argparse.ArgumentParser()
ap.add_argument("--out", required=True)
ap.add_argument("--quick", action="store_true")
ap.add_argument("--time-limit-s", type=float, default=75.0)
ap.add_argument("--device", default="cuda")
a = ap.parse_args()
t_start = time.monotonic()
dev = torch.device(a.device)
cuda = dev.type == "cuda"
if cuda and not torch.cuda.is_available():
    sys.exit("torch_absorb.py: error: PyTorch has no CUDA device here (torch.cuda.is_available() is False)")
# full f32 matmuls, no TF32 (newer PyTorch has fp32_precision and refuses a mix of the two settings)
if hasattr(torch.backends.cuda.matmul, "fp32_precision"):
    torch.backends.cuda.matmul.fp32_precision = "ieee"
else:
    torch.backends.cuda.matmul.allow_tf32 = False
torch.manual_seed(0)

# the grid of `mla bench --grid flashmla` (BenchCommand.shapes): keep the two in step
BATCHES = [1, 2] if a.quick else [1, 2, 4, 8, 16, 32, 64, 128]
CONTEXTS = [256, 1024] if a.quick else [1024, 2048, 4096, 8192, 16384]
HEADS = [128, 16]
DTYPES = [("bf16", torch.bfloat16), ("f32", torch.float32)]
DC, DR, DN, DV = 512, 64, 128, 128
SCALE = (DN + DR) ** -0.5
BACKEND = f"torch-{torch.__version__}-{a.device}"
os.makedirs(a.out, exist_ok=True)


def write(name, header, rows):
    tmp = os.path.join(a.out, "." + name + ".tmp")
    with open(tmp, "w") as f:
        f.write(header + "\n")
        for r in rows:
            f.write(r + "\n")
    os.replace(tmp, os.path.join(a.out, name))


def timed(fn, max_ms=50.0, min_runs=5):
    """Median ms of fn() after 3 warm-up runs; CUDA events on a GPU, perf_counter on the CPU."""
    for _ in range(3):
        fn()
    times = []
    while len(times) < min_runs or (sum(times) < max_ms and len(times) < 200):
        if cuda:
            s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            s.record()
            fn()
            e.record()
            e.synchronize()
            times.append(s.elapsed_time(e))
        else:
            t0 = time.perf_counter()
            fn()
            times.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(times)


def over_limit():
    return time.monotonic() - t_start > a.time_limit_s


# ---------------------------------------------------------------- peaks of this device, measured
peaks = []
with torch.inference_mode():
    n = (1 << 28) if cuda else (1 << 24)                       # 1 GiB of f32 on a GPU
    x, y = torch.empty(n, device=dev), torch.empty(n, device=dev)
    ms = timed(lambda: y.copy_(x))
    peaks.append(f"copy,{2 * 4 * n / ms / 1e6:.1f},GB/s,tensor copy_ of {4 * n >> 20} MiB: bytes read + written per second (median)")
    del x, y
    m = 8192 if cuda else 1024
    for name, dt in (("gemm_f32", torch.float32), ("gemm_bf16", torch.bfloat16)):
        p, q = torch.randn(m, m, device=dev, dtype=dt), torch.randn(m, m, device=dev, dtype=dt)
        ms = timed(lambda: p @ q)
        peaks.append(f"{name},{2 * m ** 3 / ms / 1e6:.1f},GFLOP/s,{m}x{m}x{m} matmul (TF32 off) (median)")
        del p, q
write("torch-peaks.csv", "what,value,unit,how", peaks)
for p in peaks:
    print("peak " + p, flush=True)

# ---------------------------------------------------------------- the attention core over the grid
rows = []
with torch.inference_mode():
    for dname, dt in DTYPES:
        for h in HEADS:
            wkv_b = (torch.randn(h, DN + DV, DC, device=dev) / DC ** 0.5).to(dt)
            for b in BATCHES:
                if over_limit():
                    print(f"skipped {dname} H{h} B{b}: --time-limit-s {a.time_limit_s:.0f} reached", flush=True)
                    continue
                tmax = max(CONTEXTS)
                try:
                    kv_cache = torch.randn(b, tmax, DC, device=dev, dtype=dt)
                    pe_cache = torch.randn(b, tmax, DR, device=dev, dtype=dt)
                    q_nope = torch.randn(b, 1, h, DN, device=dev, dtype=dt)
                    q_pe = torch.randn(b, 1, h, DR, device=dev, dtype=dt)
                except torch.cuda.OutOfMemoryError as e:
                    print(f"skipped {dname} H{h} B{b}: out of device memory ({e})", flush=True)
                    continue
                for t in CONTEXTS:
                    kv, pe = kv_cache[:, :t], pe_cache[:, :t]

                    def step():
                        # the "absorb" branch of DeepSeek-V3 inference/model.py MLA.forward, one new token
                        q = torch.einsum("bshd,hdc->bshc", q_nope, wkv_b[:, :DN])
                        scores = (torch.einsum("bshc,btc->bsht", q, kv) + torch.einsum("bshr,btr->bsht", q_pe, pe)) * SCALE
                        scores = scores.softmax(dim=-1, dtype=torch.float32).type_as(q)
                        x = torch.einsum("bsht,btc->bshc", scores, kv)
                        return torch.einsum("bshc,hdc->bshd", x, wkv_b[:, -DV:])

                    try:
                        ms = timed(step)
                    except torch.cuda.OutOfMemoryError as e:
                        print(f"skipped {dname} H{h} B{b} T{t}: out of device memory ({e})", flush=True)
                        continue
                    nbytes = b * t * (DC + DR) * (4 if dt == torch.float32 else 2)
                    flops = b * (2 * h * t * (DC + DR) + 2 * h * t * DC + 2 * h * DC * (DN + DV))
                    rows.append(f"{BACKEND},einsum-absorb,{dname},{b},{h},{t},{ms:.6f},{nbytes / ms / 1e6:.4f},{flops / ms / 1e6:.4f}")
                    write("torch.csv", "backend,path,dtype,batch,heads,context,ms_per_step,gb_per_s,gflop_per_s", rows)
                    print(f"{BACKEND} {dname} H{h} B{b} T{t}: {ms:.3f} ms/step, {nbytes / ms / 1e6:.1f} GB/s", flush=True)
                del kv_cache, pe_cache
if not rows:
    write("torch.csv", "backend,path,dtype,batch,heads,context,ms_per_step,gb_per_s,gflop_per_s", rows)
print(f"torch_absorb.py: {len(rows)} shapes in {time.monotonic() - t_start:.1f} s", flush=True)
