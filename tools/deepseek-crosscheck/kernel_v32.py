"""Stand-ins, in numpy/PyTorch on the CPU, for what DeepSeek-V3.2-Exp's inference/model.py imports and Debian's
torch 1.13 lacks: kernel.py's tilelang kernels (act_quant, fp8_index; fp8_gemm is never reached with f32
weights), fast_hadamard_transform.hadamard_transform, einops.rearrange, and the float8_e4m3fn dtype.

Written from the definitions in DeepSeek's kernel.py (not copied):
- act_quant(x, 128, scale_fmt): per block of 128, amax = max(max|x|, 1e-4); s = amax * f32(1/448) (the kernel
  multiplies by fp8_max_inv); with scale_fmt (ue8m0) s becomes 2^ceil(log2 s) from the float's bits
  (fast_round_scale: exponent - 127, + 1 when the mantissa is not zero); y = e4m3(clamp(x / s, -448, 448)),
  rounded to nearest even. Returns (codes as uint8, s as f32 [..., N/128]).
- fp8_index(q, w, k, k_s): o[b, m, n] = k_s[b, n] * sum_h max(q[b, m, h, :] . k[b, n, :], 0) * w[b, m, h], the
  dot products of the e4m3 values (exact products, f32 sums), as the kernel's gemm, ReLU * q_s, reduce_sum, * k_s.
- hadamard_transform(x, scale): x @ H_n * scale with H_n the Sylvester Hadamard matrix (symmetric), computed in
  float64 and rounded once to x's dtype.
- torch.float8_e4m3fn is aliased to torch.uint8, so model.py's k_cache holds e4m3 codes (decoded by fp8_index).
"""
import sys, types
import numpy as np
import torch


def e4m3_table():
    """e4m3fn by its definition (bias 7, no infinities, S.1111.111 NaN), in float64."""
    t = np.zeros(256)
    for b in range(256):
        s, e, m = b >> 7, (b >> 3) & 15, b & 7
        v = m / 8 * 2.0 ** -6 if e == 0 else (1 + m / 8) * 2.0 ** (e - 7)
        t[b] = np.nan if (e == 15 and m == 7) else (-v if s else v)
    return t


E4M3 = e4m3_table()
E4M3_T = torch.from_numpy(E4M3.astype(np.float32))
_POS = E4M3[:127]                       # codes 0 ... 126: 0 ... 448, increasing


def e4m3_encode(v):
    """float32 array (|v| <= 448) -> e4m3 codes, round to nearest, ties to the even code; the sign bit kept (-0 -> 0x80)."""
    v = np.asarray(v, np.float32)
    a = np.abs(v).astype(np.float64)
    hi = np.clip(np.searchsorted(_POS, a, side="left"), 0, 126)
    lo = np.clip(hi - 1, 0, 126)
    dlo, dhi = a - _POS[lo], _POS[hi] - a
    code = np.where(dhi < dlo, hi, np.where(dlo < dhi, lo, np.where(hi % 2 == 0, hi, lo)))
    code = np.where(a == _POS[hi], hi, code)
    return (code | np.where(np.signbit(v), 0x80, 0)).astype(np.uint8)


INV_FP8_MAX = np.float32(1 / 448.0)


def pow2_ceil(s):
    """fast_round_scale: 2^(exponent - 127 + (mantissa != 0)) of a positive normal float32."""
    bits = np.asarray(s, np.float32).view(np.uint32)
    e = ((bits >> 23) & 0xFF).astype(np.int64) - 127 + ((bits & 0x7FFFFF) != 0)
    return np.ldexp(np.float32(1), e).astype(np.float32)


def act_quant(x, block_size=128, scale_fmt=None):
    assert x.size(-1) % block_size == 0, x.shape
    n = x.size(-1)
    X = x.detach().to(torch.float32).contiguous().numpy().reshape(-1, n // block_size, block_size)
    amax = np.maximum(np.abs(X).max(-1), np.float32(1e-4)).astype(np.float32)
    s = (amax * INV_FP8_MAX).astype(np.float32)
    if scale_fmt is not None:
        s = pow2_ceil(s)
    y = np.clip((X / s[..., None]).astype(np.float32), np.float32(-448), np.float32(448))
    codes = e4m3_encode(y).reshape(x.shape)
    return torch.from_numpy(codes), torch.from_numpy(s.reshape(*x.shape[:-1], n // block_size))


def dequant(codes, scales, block_size=128):
    """e4m3(code) * scale per block, in f32 (the fp8 latent cache's values)."""
    c = codes.numpy()
    v = E4M3.astype(np.float32)[c].reshape(*c.shape[:-1], -1, block_size)
    return torch.from_numpy((v * scales.numpy()[..., None]).astype(np.float32).reshape(c.shape))


def fp8_index(q, q_s, k, k_s):
    qv = E4M3_T[q.long()]                   # [b, m, h, d]
    kv = E4M3_T[k.long()]                   # [b, n, d]
    logits = torch.einsum("bmhd,bnd->bmnh", qv, kv)
    w = q_s.reshape(q.shape[0], q.shape[1], q.shape[2]).to(torch.float32)
    o = (torch.relu(logits) * w[:, :, None, :]).sum(-1)
    return o * k_s.reshape(k.shape[0], k.shape[1])[:, None, :].to(torch.float32)


def fp8_gemm(*a, **k):
    raise NotImplementedError("fp8_gemm: the cross-check hands model.py f32 weights")


def weight_dequant(*a, **k):
    raise NotImplementedError("weight_dequant: the cross-check hands model.py f32 weights")


def sylvester(n):
    h = np.ones((1, 1))
    while h.shape[0] < n:
        h = np.block([[h, h], [h, -h]])
    assert h.shape[0] == n, "Hadamard size must be a power of two"
    return h


def hadamard_transform(x, scale=1.0):
    h = torch.from_numpy(sylvester(x.size(-1)))
    return ((x.to(torch.float64) @ h) * scale).to(x.dtype)


def rearrange(x, pattern, **axes):
    """The one einops pattern model.py uses: 'b s (h d) -> b s h d' with d given."""
    assert pattern.replace(" ", "") == "bs(hd)->bshd" and "d" in axes, pattern
    return x.view(*x.shape[:-1], -1, axes["d"])


def install():
    """Registers the stand-ins as the modules model.py imports (kernel, fast_hadamard_transform, einops)."""
    torch.float8_e4m3fn = torch.uint8
    me = sys.modules[__name__]
    sys.modules["kernel"] = me
    sys.modules["fast_hadamard_transform"] = types.SimpleNamespace(hadamard_transform=hadamard_transform)
    sys.modules["einops"] = types.SimpleNamespace(rearrange=rearrange)
