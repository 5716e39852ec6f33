"""arange on the device (kernels/arange.cl): the values made where they live, no upload."""

import struct

import carray
from carray.core._dtype import DTYPE_NAMES
from carray.opencl import _cache
from carray.opencl._launch import launch
from carray.opencl._layout import SCALAR_FORMATS
from carray.opencl._types import CL_TYPES, FLOAT64


def arange(n, num, first, second):
    """A device Array of n values of carray type num (int32, int64, float32 or float64): first,
    second, then first + i * (second - first) in the type's arithmetic (NumPy's algorithm, as
    carray.arange on the host). first and second are Python numbers already in range of num."""
    out = carray.empty((n,), dtype=DTYPE_NAMES[num], device="gpu")
    if n == 0:
        return out
    knl = _cache.kernel(("arange", num), "arange",
                        lambda: _cache.render("arange.cl", t=CL_TYPES[num]), "long",
                        num == FLOAT64)
    fmt = SCALAR_FORMATS[num]
    launch(knl, n, [out._cl()[0], struct.pack("q", n), struct.pack(fmt, first),
                    struct.pack(fmt, second)])
    return out
