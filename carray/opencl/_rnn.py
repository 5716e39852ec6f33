"""The LSTM and GRU cell steps and their gradients on the device, one kernel launch each
(rnn.cl), for carray.nn.lstm_cell / lstm_cell_grad / gru_cell / gru_cell_grad."""

import struct

from carray.opencl import _cache
from carray.opencl._launch import launch
from carray.opencl._layout import dense_operand, whole
from carray.opencl._types import CL_TYPES, FLOAT64

LSTM, LSTM_GRAD, GRU, GRU_GRAD = range(4)     # positions in _kernels' tuple


def _kernels(t):
    return _cache.kernel(("rnn", t), ("lstm_cell", "lstm_cell_grad", "gru_cell", "gru_cell_grad"),
                         lambda: _cache.render("rnn.cl", t=CL_TYPES[t]), "long", t == FLOAT64)


def _new(shape, like):
    import carray
    return carray.empty(shape, dtype=like.dtype, device="gpu")


def _q(v):
    return struct.pack("q", v)


def _optional(a, fallback):
    """(buffer, offset, present flag) of an optional operand; absent: fallback's buffer, unread."""
    if a is None:
        return [fallback._cl()[0], _q(0), struct.pack("i", 0)]
    return [*dense_operand(a), struct.pack("i", 1)]


def lstm_cell(gi, gh, c):
    """(h', c', act, tanh(c')) of an LSTM step; see rnn.cl."""
    h_new, c_new, act, tc = _new(c.shape, c), _new(c.shape, c), _new(gi.shape, gi), \
        _new(c.shape, c)
    n, H = c.size, c.shape[-1]
    if n:
        launch(_kernels(c.dtype.num)[LSTM], n,
               [h_new._cl()[0], c_new._cl()[0], act._cl()[0], tc._cl()[0], *dense_operand(gi),
                *dense_operand(gh), *dense_operand(c), _q(H), _q(n)])
    return h_new, c_new, act, tc


def lstm_cell_grad(act, tc, c, dh, dc):
    """(dgates, dc_prev) of an LSTM step from its saved act, tc, the input c and the upstream
    dh, dc (either may be None)."""
    dgates, dc_prev = _new(act.shape, act), _new(c.shape, c)
    n, H = c.size, c.shape[-1]
    if n:
        launch(_kernels(c.dtype.num)[LSTM_GRAD], n,
               [dgates._cl()[0], dc_prev._cl()[0], whole(act)._cl()[0], whole(tc)._cl()[0],
                *dense_operand(c), *_optional(dh, c), *_optional(dc, c), _q(H), _q(n)])
    return dgates, dc_prev


def gru_cell(gi, gh, h):
    """(h', rz, n) of a GRU step; see rnn.cl."""
    shape = h.shape
    h_new, rz, nt = _new(shape, h), _new(shape[:-1] + (2 * shape[-1],), h), _new(shape, h)
    n, H = h.size, shape[-1]
    if n:
        launch(_kernels(h.dtype.num)[GRU], n,
               [h_new._cl()[0], rz._cl()[0], nt._cl()[0], *dense_operand(gi),
                *dense_operand(gh), *dense_operand(h), _q(H), _q(n)])
    return h_new, rz, nt


def gru_cell_grad(rz, nt, gh, h, dh):
    """(dgi, dgh, dh_prev) of a GRU step from its saved rz, n, the inputs gh, h and dh."""
    shape = h.shape
    dgi, dgh, dh_prev = _new(gh.shape, gh), _new(gh.shape, gh), _new(shape, h)
    n, H = h.size, shape[-1]
    if n:
        launch(_kernels(h.dtype.num)[GRU_GRAD], n,
               [dgi._cl()[0], dgh._cl()[0], dh_prev._cl()[0], whole(rz)._cl()[0],
                whole(nt)._cl()[0],
                *dense_operand(gh), *dense_operand(h), *dense_operand(dh), _q(H), _q(n)])
    return dgi, dgh, dh_prev
