"""carray.nn's fused row kernels on the device (norm.cl), with the signatures of
carray/cpu/_nn_norm.pyx (re-exported by carray.opencl._nn): softmax and log_softmax over the
middle axis of x viewed as (outer, n, inner), layer norm and RMS norm over rows of n, and their
gradients. W lanes per row and several short rows per work group (_rows.lanes: a local-memory
tree for the max and the sums), so the rows spread over the device's compute units whatever
their number and length; softmax rows `inner` apart run one work item per row when there are
many (neighbouring items read neighbouring elements); the weight and bias gradients are
partial column sums per chunk of rows (no atomics), summed on the device afterwards."""

import struct

from carray.opencl import _cache, _rows
from carray.opencl._launch import launch
from carray.opencl._layout import dense_operand
from carray.opencl._layout import int_arg as _i
from carray.opencl._layout import long_arg as _q
from carray.opencl._runtime import runtime
from carray.opencl._types import CL_TYPES, FLOAT64

_NAMES = ("softmax_rows", "softmax_grad_rows", "norm_rows", "norm_grad_rows", "norm_grad_cols")
_ROWS_PER_CHUNK = 16    # rows per partial column sum of the weight and bias gradients


_COLUMN_ROWS = 1024     # softmax rows `inner` apart: one item per row from this many rows


def _kernels(t, wg):
    return _cache.kernel(("norm", t, wg), _NAMES,
                         lambda: _cache.render("norm.cl", t=CL_TYPES[t], wg=wg),
                         "long", t == FLOAT64)


def _softmax_lanes(rows, n, inner):
    if inner > 1 and rows >= _COLUMN_ROWS:
        return runtime().max_group, 1
    return _rows.lanes(n)




def _real(v, t):
    return struct.pack("d" if t == FLOAT64 else "f", v)


def _empty(shape, dtype):
    import carray
    return carray.empty(shape, dtype=dtype, device="gpu")


def _softmax(x, outer, n, inner, lg, masked):
    y = _empty(x.shape, x.dtype)
    rows = outer * inner
    if rows and n:
        wg, w = _softmax_lanes(rows, n, inner)
        xb, xo = dense_operand(x)
        launch(_kernels(x.dtype.num, wg)[0], _rows.groups(rows, wg, w),
               [y._cl()[0], xb, xo, _q(n), _q(inner), _i(lg), _i(masked), _q(rows), _i(w)], wg)
    return y


def _softmax_grad(y, g, outer, n, inner, lg):
    gx = _empty(y.shape, y.dtype)
    rows = outer * inner
    if rows and n:
        wg, w = _softmax_lanes(rows, n, inner)
        yb, yo = dense_operand(y)
        gb, go = dense_operand(g)
        launch(_kernels(y.dtype.num, wg)[1], _rows.groups(rows, wg, w),
               [gx._cl()[0], yb, yo, gb, go, _q(n), _q(inner), _i(lg), _q(rows), _i(w)], wg)
    return gx


def softmax_rows(x, outer, n, inner, masked=False):
    """softmax of x over the middle axis of (outer, n, inner); masked: all -inf rows give 0."""
    return _softmax(x, outer, n, inner, False, masked)


def log_softmax_rows(x, outer, n, inner):
    """log_softmax of x over the middle axis of (outer, n, inner)."""
    return _softmax(x, outer, n, inner, True, False)


def softmax_grad_rows(y, g, outer, n, inner):
    """y (g - sum(g y)) over the middle axis of (outer, n, inner)."""
    return _softmax_grad(y, g, outer, n, inner, False)


def log_softmax_grad_rows(y, g, outer, n, inner):
    """g - exp(y) sum(g) over the middle axis of (outer, n, inner)."""
    return _softmax_grad(y, g, outer, n, inner, True)


def _norm(x, rows, n, weight, bias, eps, center):
    t = x.dtype.num
    y = _empty(x.shape, x.dtype)
    mean, rstd = _empty((rows,), x.dtype), _empty((rows,), x.dtype)
    if rows and n:
        wg, w = _rows.lanes(n)
        xb, xo = dense_operand(x)
        wb, wo = dense_operand(weight) if weight is not None else (xb, xo)
        bb, bo = dense_operand(bias) if bias is not None else (xb, xo)
        launch(_kernels(t, wg)[2], _rows.groups(rows, wg, w),
               [y._cl()[0], mean._cl()[0], rstd._cl()[0], xb, xo, wb, wo, bb, bo, _q(n),
                _real(eps, t), _i(weight is not None), _i(bias is not None), _i(center),
                _q(rows), _i(w)], wg)
    elif rows:                  # rows of nothing: mean NaN, rstd 1 / sqrt(NaN) (as 0 / 0)
        mean.fill(float("nan") if center else 0.0)
        rstd.fill(float("nan"))
    return y, mean, rstd


def _norm_grad(g, x, mean, rstd, weight, rows, n, center, need_x, need_w, need_b):
    import carray
    t = x.dtype.num
    gx = gw = gb = None
    xb, xo = dense_operand(x)
    gbuf, go = dense_operand(g)
    mb, mo = dense_operand(mean) if center else (xb, xo)
    rb, ro = dense_operand(rstd)
    if need_x:
        gx = _empty(x.shape, x.dtype)
        if rows and n:
            wg, w = _rows.lanes(n)
            wb, wo = dense_operand(weight) if weight is not None else (xb, xo)
            launch(_kernels(t, wg)[3], _rows.groups(rows, wg, w),
                   [gx._cl()[0], gbuf, go, xb, xo, mb, mo, rb, ro, wb, wo, _q(n),
                    _i(weight is not None), _i(center), _q(rows), _i(w)], wg)
    need_b = need_b and center
    if need_w or need_b:
        chunks = max(1, -(-rows // _ROWS_PER_CHUNK))
        chunk = -(-rows // chunks) if rows else 0
        pw = _empty((chunks, n), x.dtype)
        pb = _empty((chunks, n), x.dtype) if need_b else pw
        if n:
            launch(_kernels(t, runtime().max_group)[4], chunks * n,
                   [pw._cl()[0], pb._cl()[0], gbuf, go, xb, xo, mb, mo, rb, ro, _q(rows), _q(n),
                    _q(chunks), _q(chunk), _i(center), _i(need_b)])
        if need_w:
            gw = carray.sum(pw, axis=0)
        if need_b:
            gb = carray.sum(pb, axis=0)
    return gx, gw, gb


def layer_norm_rows(x, rows, n, weight, bias, eps):
    """(y, mean, rstd) of layer norm over rows of n (mean and rstd of shape (rows,))."""
    return _norm(x, rows, n, weight, bias, eps, True)


def layer_norm_grad_rows(g, x, mean, rstd, weight, rows, n, need_x, need_w, need_b):
    """(dx, dweight, dbias) of layer norm (each None unless needed)."""
    return _norm_grad(g, x, mean, rstd, weight, rows, n, True, need_x, need_w, need_b)


def rms_norm_rows(x, rows, n, weight, eps):
    """(y, rstd) of RMS norm over rows of n."""
    y, _, rstd = _norm(x, rows, n, weight, None, eps, False)
    return y, rstd


def rms_norm_grad_rows(g, x, rstd, weight, rows, n, need_x, need_w):
    """(dx, dweight) of RMS norm (each None unless needed)."""
    gx, gw, _ = _norm_grad(g, x, None, rstd, weight, rows, n, False, need_x, need_w, False)
    return gx, gw
