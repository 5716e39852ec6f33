"""Exact GELU and its gradient on the device, one kernel launch each (gelu.cl), with no read
back to the host: float32's erf is the carray_erf_float polynomial of common.cl."""

import struct

from carray.opencl import _cache
from carray.opencl._launch import launch
from carray.opencl._types import CL_TYPES, FLOAT32, FLOAT64


def _kernels(t):
    erf = "carray_erf_float" if t == FLOAT32 else "erf"
    return _cache.kernel(("gelu", t), ("gelu", "gelu_grad"),
                         lambda: _cache.render("gelu.cl", t=CL_TYPES[t], erf=erf),
                         "long", t == FLOAT64)


def _contiguous(a):
    return a if a.flags.c_contiguous else a.copy()


def gelu(x):
    """x Phi(x) of a float device Array (any strides; the result is C-contiguous)."""
    import carray
    x = _contiguous(x)
    y = carray.empty(x.shape, dtype=x.dtype, device="gpu")
    if x.size:
        buf, off = x._cl()[:2]
        launch(_kernels(x.dtype.num)[0], x.size,
               [y._cl()[0], buf, struct.pack("q", off), struct.pack("q", x.size)])
    return y


def gelu_grad(g, x):
    """g (Phi(x) + x phi(x)) of float device Arrays of one shape and dtype."""
    import carray
    x, g = _contiguous(x), _contiguous(g)
    gx = carray.empty(x.shape, dtype=x.dtype, device="gpu")
    if x.size:
        xb, xo = x._cl()[:2]
        gb, go = g._cl()[:2]
        launch(_kernels(x.dtype.num)[1], x.size,
               [gx._cl()[0], gb, struct.pack("q", go), xb, struct.pack("q", xo),
                struct.pack("q", x.size)])
    return gx
