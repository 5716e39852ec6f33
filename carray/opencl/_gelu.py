"""Exact GELU and its gradient on the device, one kernel launch each (gelu.cl), with no read
back to the host: float32's erf is the carray_erf_float polynomial of common.cl."""

import struct

from carray.opencl import _cache
from carray.opencl._launch import launch
from carray.opencl._layout import dense_operand
from carray.opencl._types import CL_TYPES, FLOAT32, FLOAT64


def _kernels(t):
    erf = "carray_erf_float" if t == FLOAT32 else "erf"
    return _cache.kernel(("gelu", t), ("gelu", "gelu_grad"),
                         lambda: _cache.render("gelu.cl", t=CL_TYPES[t], erf=erf),
                         "long", t == FLOAT64)


def gelu(x):
    """x Phi(x) of a float device Array (any strides; the result is C-contiguous)."""
    import carray
    y = carray.empty(x.shape, dtype=x.dtype, device="gpu")
    if x.size:
        launch(_kernels(x.dtype.num)[0], x.size,
               [y._cl()[0], *dense_operand(x), struct.pack("q", x.size)])
    return y


def gelu_grad(g, x):
    """g (Phi(x) + x phi(x)) of float device Arrays of one shape and dtype."""
    import carray
    gx = carray.empty(x.shape, dtype=x.dtype, device="gpu")
    if x.size:
        launch(_kernels(x.dtype.num)[1], x.size,
               [gx._cl()[0], *dense_operand(g), *dense_operand(x), struct.pack("q", x.size)])
    return gx
