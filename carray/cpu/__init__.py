"""carray's CPU backend: typed loops and kernels, with the GIL released.

_kernels.pxi (the elementwise and reduction loops of every op-table row, compiled three times as
_kernels_generic/_avx2/_avx512, one per x86-64 SIMD level), _kernel_table.pxd (the table of those
loops by op and dtype), _gemm.h and _gemm_kernel.h (the packed, register-tiled GEMM), _math.h
(exp and sigmoid in float32), _nn (convolution, pooling, fused loss and SGD kernels), _random
(the Philox generator and its fills).
"""
