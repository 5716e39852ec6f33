# Stub for the compiled module carray.ops._matmul: matrix products (the `@` operator) on the
# packed, register-tiled GEMM.
from typing import Any

from carray.core._array import Array, _ArrayLike

def matmul(x1: _ArrayLike, x2: _ArrayLike, /, out: Array | None = None) -> Array: ...

# -- tuning and test hooks (private) --------------------------------------------------------

# names of the micro-kernel variants this CPU can run, slowest first
def _gemm_kernels() -> list[str]: ...

# use the variant `name` (None: the best one); returns the previous name
def _set_gemm_kernel(name: str | None = None) -> str: ...

# {"kernel": name, "float32": (mr, nr, kc, nc, mc), "float64": (...)}
def _gemm_info() -> dict[str, Any]: ...

# override the block sizes (0: the kernel's own); returns the previous overrides
def _gemm_tune(kc: int = 0, nc: int = 0, mc: int = 0) -> tuple[int, int, int]: ...

# C := alpha * op(A) @ op(B) + beta * C on contiguous float arrays; returns C
def _gemm(
    trans_a: bool,
    trans_b: bool,
    M: int,
    N: int,
    K: int,
    alpha: float,
    A: Array,
    lda: int,
    B: Array,
    ldb: int,
    beta: float,
    C: Array,
    ldc: int,
) -> Array: ...
