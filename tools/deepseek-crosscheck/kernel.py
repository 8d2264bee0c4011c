# Stub for DeepSeek's triton kernels: only used for fp8 weights, never in this f32 cross-check.
def act_quant(*a, **k): raise NotImplementedError("act_quant (fp8) not available")
def weight_dequant(*a, **k): raise NotImplementedError("weight_dequant (fp8) not available")
def fp8_gemm(*a, **k): raise NotImplementedError("fp8_gemm (fp8) not available")
