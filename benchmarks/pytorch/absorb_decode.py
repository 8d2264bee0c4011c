#!/usr/bin/python3
"""One decode step of the MLA attention core as DeepSeek-V3's inference/model.py computes it with
attn_impl = "absorb" (its einsum formulation), in PyTorch on the CPU, f32 - the yardstick for TornadoMLA's
java-fast backend (`./mla bench`, DecodeCoreBenchmark).

Usage: /usr/bin/python3 benchmarks/pytorch/absorb_decode.py [--heads 128] [--context 4096] [--batch 1]
       [--threads N] [--seconds 5]
Prints ms per step (median of the timed runs), GB/s of latent read and GFLOP/s with the same formulas as
`./mla bench` (docs/design.md §1.3).
"""
import argparse, os, statistics, time
import torch

ap = argparse.ArgumentParser()
ap.add_argument("--heads", type=int, default=128)
ap.add_argument("--context", type=int, default=4096)
ap.add_argument("--batch", type=int, default=1)
ap.add_argument("--threads", type=int, default=os.cpu_count())
ap.add_argument("--seconds", type=float, default=5.0)
a = ap.parse_args()
torch.set_num_threads(a.threads)
torch.manual_seed(0)

B, T, H, dc, dr, dn, dv = a.batch, a.context, a.heads, 512, 64, 128, 128
scale = (dn + dr) ** -0.5
q_nope = torch.randn(B, 1, H, dn)
q_pe = torch.randn(B, 1, H, dr)
wkv_b = torch.randn(H, dn + dv, dc) / dc ** 0.5
kv_cache = torch.randn(B, T, dc)
pe_cache = torch.randn(B, T, dr)


def step():
    # the "absorb" branch of DeepSeek-V3 inference/model.py MLA.forward, for one new token
    q = torch.einsum("bshd,hdc->bshc", q_nope, wkv_b[:, :dn])
    scores = (torch.einsum("bshc,btc->bsht", q, kv_cache) + torch.einsum("bshr,btr->bsht", q_pe, pe_cache)) * scale
    scores = scores.softmax(dim=-1, dtype=torch.float32)
    x = torch.einsum("bsht,btc->bshc", scores, kv_cache)
    return torch.einsum("bshc,hdc->bshd", x, wkv_b[:, -dv:])


with torch.inference_mode():
    end = time.perf_counter() + a.seconds / 5
    while time.perf_counter() < end:
        step()
    times = []
    end = time.perf_counter() + a.seconds
    while time.perf_counter() < end or len(times) < 5:
        t0 = time.perf_counter()
        step()
        times.append(time.perf_counter() - t0)
ms = statistics.median(times) * 1e3
flops = B * (2 * H * T * (dc + dr) + 2 * H * T * dc + 2 * H * dc * (dn + dv))
print(f"pytorch {torch.__version__} einsum absorb, {a.threads} threads: B={B} H={H} T={T} f32: "
      f"{ms:.3f} ms/step, {B * T * (dc + dr) * 4 / ms / 1e6:.2f} GB/s, {flops / ms / 1e6:.2f} GFLOP/s ({len(times)} runs)")
