# Stub for the compiled module carray.cpu._kernels_generic: the elementwise and reduction
# loops built for the generic SIMD level (carray.ops._ufunc imports one build).
from typing import Any

# a capsule named "carray.KernelTable" holding this build's table of loops
def kernel_table() -> Any: ...
