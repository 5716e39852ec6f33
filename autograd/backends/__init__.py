"""autograd.backends: the flags PyTorch programs set on torch.backends, and what they mean here.

    autograd.backends.cudnn.benchmark = True          # accepted; no effect (no cuDNN)
    autograd.backends.cuda.matmul.allow_tf32 = True   # accepted; GEMM stays full float32

carray's kernels have no TF32, cuDNN or autotuning, so every flag is stored and read back as
PyTorch's would be, and changes no result. `set_float32_matmul_precision` /
`get_float32_matmul_precision` (autograd.*, as torch.*) share their state with
`cuda.matmul.allow_tf32`, as PyTorch's do.
"""

from autograd.backends import cuda, cudnn, mps, opencl
from autograd.backends._precision import (
    get_float32_matmul_precision,
    set_float32_matmul_precision,
)

__all__ = ["cuda", "cudnn", "mps", "opencl", "get_float32_matmul_precision",
           "set_float32_matmul_precision"]
