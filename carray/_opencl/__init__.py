"""carray's OpenCL backend: device arrays and every op on them.

Pure Python over pyopencl (imported on first use, never by `import carray`). The Cython ops hand
device arrays here after validating arguments and choosing dtypes, so results and errors match
the CPU path. Modules: _runtime (device, context, queue, pool), _cache (.cl templates, built
kernels), _layout (strides and kernel argument structs), and one module per family of ops.
"""

from carray._opencl._runtime import runtime
from carray._opencl._transfer import copy_into, download, upload
from carray._opencl import _elementwise

__all__ = ["runtime", "copy_into", "download", "upload", "elementwise"]


def elementwise(kind, code, t, out, inputs):
    """out[...] = op(*inputs) on the device (see _elementwise.run)."""
    return _elementwise.run(kind, code, t, out, inputs)


from carray._opencl._reduce import arg, reduce  # noqa: E402
from carray._opencl._matmul import matmul  # noqa: E402
from carray._opencl import _nn as nn  # noqa: E402
from carray._opencl._index import move_blocks  # noqa: E402
from carray._opencl._scan import scan  # noqa: E402
from carray._opencl._sort import sort_lanes  # noqa: E402
