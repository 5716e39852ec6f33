"""carray's OpenCL backend: device arrays and every op on them; also `carray.opencl`, the device.

Pure Python over pyopencl (imported on first use, never by `import carray`). The front ends in
carray.ops hand device arrays here after validating arguments and choosing dtypes, so results and
errors match the CPU path. Modules: _runtime (device, context, queue, pool), _cache (kernels/*.cl
templates, built kernels, launch plans), _layout (strides and kernel argument structs), _launch
(setting arguments and enqueueing), and one module per op family: _elementwise, _reduce, _scan,
_sort, _matmul, _index, _transfer, _nn.

As a public name, `carray.opencl` reports the device `device="gpu"` uses: `print(carray.opencl)`,
`carray.opencl.name`, `.queue`, `.context`, `.fp64` (the Runtime's attributes; reading one makes
the runtime, raising ImportError without pyopencl and RuntimeError without an OpenCL device).
`carray.opencl.device_count()` counts the devices a process may use and `select(i)` picks one
before the first GPU operation (one device per process; several GPUs: one process each).
"""

import sys
import types

from carray.opencl import _nn as nn
from carray.opencl._arange import arange
from carray.opencl._elementwise import run as elementwise
from carray.opencl._index import add_blocks, device_offsets, move_blocks
from carray.opencl._matmul import matmul
from carray.opencl._reduce import arg, reduce
from carray.opencl._runtime import (
    device_count,
    device_name,
    is_initialized,
    runtime,
    select,
    selected,
    suggest,
)
from carray.opencl._scan import scan
from carray.opencl._sort import sort_lanes
from carray.opencl._transfer import (
    copy_into,
    download,
    download_async,
    finish,
    pinned_empty,
    upload,
)

# The backend contract: what carray.ops and carray.core call for device arrays. A new backend
# provides these names; carray.nn calls the `nn` module's names, which carray.cpu._nn also has.
__all__ = ["runtime", "upload", "download", "copy_into", "elementwise", "reduce", "arg", "scan",
           "sort_lanes", "matmul", "move_blocks", "nn",
           # the devices (one per process): how many there are, which one this process uses
           "device_count", "device_name", "is_initialized", "select", "selected",
           "suggest",
           # a device-to-host copy that does not wait, into pinned memory (DDP's buckets)
           "download_async", "pinned_empty",
           # issue 14: integer-array indexing, add_at and arange made on the device
           "device_offsets", "add_blocks", "arange"]


def __getattr__(name):
    # carray.opencl.name, .queue, ...: the attributes of the Runtime (made on first use)
    if name.startswith("__"):
        raise AttributeError(name)
    return getattr(runtime(), name)


class _DeviceModule(types.ModuleType):
    """The module type of carray.opencl: its repr names the device (the Runtime's repr)."""

    def __repr__(self):
        return repr(runtime())


sys.modules[__name__].__class__ = _DeviceModule
