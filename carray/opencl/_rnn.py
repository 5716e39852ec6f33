"""The LSTM and GRU cell steps and their gradients on the device, one kernel launch each
(rnn.cl), for carray.nn.lstm_cell / lstm_cell_grad / gru_cell / gru_cell_grad."""

import struct

from carray.opencl import _cache
from carray.opencl._launch import launch
from carray.opencl._types import CL_TYPES, FLOAT64

_NAMES = ("lstm_cell", "lstm_cell_grad", "gru_cell", "gru_cell_grad")


def _kernels(t):
    return dict(zip(_NAMES, _cache.kernel(("rnn", t), _NAMES,
                                          lambda: _cache.render("rnn.cl", t=CL_TYPES[t]),
                                          "long", t == FLOAT64)))


def _arg(a):
    """(buffer, offset as a long) of a C-contiguous device array."""
    buf, off = a._cl()[:2]
    return buf, struct.pack("q", off)


def _new(shape, like):
    import carray
    return carray.empty(shape, dtype=like.dtype, device="gpu")


def _c(a):
    return a if a.flags.c_contiguous else a.copy()


def lstm_cell(gi, gh, c):
    """(h', c', act, tanh(c')) of an LSTM step; see rnn.cl."""
    gi, gh, c = _c(gi), _c(gh), _c(c)
    h_new, c_new, act, tc = _new(c.shape, c), _new(c.shape, c), _new(gi.shape, gi), \
        _new(c.shape, c)
    n, H = c.size, c.shape[-1]
    if n:
        launch(_kernels(c.dtype.num)["lstm_cell"], n,
               [h_new._cl()[0], c_new._cl()[0], act._cl()[0], tc._cl()[0], *_arg(gi),
                *_arg(gh), *_arg(c), struct.pack("q", H), struct.pack("q", n)])
    return h_new, c_new, act, tc


def lstm_cell_grad(act, tc, c, dh, dc):
    """(dgates, dc_prev) of an LSTM step from its saved act, tc, the input c and the upstream
    dh, dc (either may be None)."""
    act, tc, c = _c(act), _c(tc), _c(c)
    dgates, dc_prev = _new(act.shape, act), _new(c.shape, c)
    n, H = c.size, c.shape[-1]
    if n:
        dh_args = [*_arg(_c(dh)), struct.pack("i", 1)] if dh is not None else \
            [tc._cl()[0], struct.pack("q", 0), struct.pack("i", 0)]
        dc_args = [*_arg(_c(dc)), struct.pack("i", 1)] if dc is not None else \
            [tc._cl()[0], struct.pack("q", 0), struct.pack("i", 0)]
        launch(_kernels(c.dtype.num)["lstm_cell_grad"], n,
               [dgates._cl()[0], dc_prev._cl()[0], act._cl()[0], tc._cl()[0], *_arg(c),
                *dh_args, *dc_args, struct.pack("q", H), struct.pack("q", n)])
    return dgates, dc_prev


def gru_cell(gi, gh, h):
    """(h', rz, n) of a GRU step; see rnn.cl."""
    gi, gh, h = _c(gi), _c(gh), _c(h)
    shape = h.shape
    h_new, rz, nt = _new(shape, h), _new(shape[:-1] + (2 * shape[-1],), h), _new(shape, h)
    n, H = h.size, shape[-1]
    if n:
        launch(_kernels(h.dtype.num)["gru_cell"], n,
               [h_new._cl()[0], rz._cl()[0], nt._cl()[0], *_arg(gi), *_arg(gh), *_arg(h),
                struct.pack("q", H), struct.pack("q", n)])
    return h_new, rz, nt


def gru_cell_grad(rz, nt, gh, h, dh):
    """(dgi, dgh, dh_prev) of a GRU step from its saved rz, n, the inputs gh, h and dh."""
    rz, nt, gh, h, dh = _c(rz), _c(nt), _c(gh), _c(h), _c(dh)
    shape = h.shape
    dgi, dgh, dh_prev = _new(gh.shape, gh), _new(gh.shape, gh), _new(shape, h)
    n, H = h.size, shape[-1]
    if n:
        launch(_kernels(h.dtype.num)["gru_cell_grad"], n,
               [dgi._cl()[0], dgh._cl()[0], dh_prev._cl()[0], rz._cl()[0], nt._cl()[0],
                *_arg(gh), *_arg(h), *_arg(dh), struct.pack("q", H), struct.pack("q", n)])
    return dgi, dgh, dh_prev
