"""The LSTM and GRU cell steps and their gradients on the device, one kernel launch each
(rnn.cl), for carray.nn.lstm_cell / lstm_cell_grad / gru_cell / gru_cell_grad; and whole LSTM
layers, one launch per time step each way, for carray.nn.lstm_layer / lstm_layer_grad."""


from carray.opencl import _cache
from carray.opencl._launch import launch
from carray.opencl._layout import dense_operand, optional_operand, whole
from carray.opencl._layout import int_arg as _i
from carray.opencl._layout import long_arg as _q
from carray.opencl._runtime import runtime
from carray.opencl._types import CL_TYPES, FLOAT64

LSTM, LSTM_GRAD, GRU, GRU_GRAD, STEP, STEP_GRAD = range(6)    # positions in _kernels' tuple


def _kernels(t):
    return _cache.kernel(("rnn", t), ("lstm_cell", "lstm_cell_grad", "gru_cell", "gru_cell_grad",
                                      "lstm_step", "lstm_step_grad"),
                         lambda: _cache.render("rnn.cl", t=CL_TYPES[t], sj=_units()), "long",
                         t == FLOAT64)


def _units():
    """Units per work group of lstm_step (4 items each): 64, fewer on small devices."""
    return min(64, runtime().max_group // 4)


def _new(shape, like):
    import carray
    return carray.empty(shape, dtype=like.dtype, device="gpu")




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
                *dense_operand(c), *optional_operand(dh, c), *optional_operand(dc, c), _q(H),
                _q(n)])
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


def _steps(n, reverse):
    return range(n - 1, -1, -1) if reverse else range(n)


def lstm_layer(gi, w_hh, h0, c0, reverse):
    """(out, h_n, c_n, act, tc, cs) of an LSTM layer; one lstm_step launch per time step."""
    import carray
    n, B, H4 = gi.shape
    H = H4 // 4
    dt = h0.dtype
    out, cs, tc = (carray.empty((n, B, H), dtype=dt, device="gpu") for _ in range(3))
    act = carray.empty((n, B, H4), dtype=dt, device="gpu")
    if out.size == 0:
        return out, h0.copy(), c0.copy(), act, tc, cs
    kern = _kernels(dt.num)[STEP]
    gbuf, goff = carray.ascontiguousarray(gi)._cl()[:2]
    wbuf = whole(carray.ascontiguousarray(carray.swapaxes(w_hh, 0, 1)))._cl()[0]
    bufs = [a._cl() for a in (out, cs, act, tc)]
    hp, hpo = dense_operand(h0)
    cp, cpo = dense_operand(c0)
    m = B * H
    sj = _units()
    items, group = B * -(-H // sj) * 4 * sj, 4 * sj
    for t in _steps(n, reverse):
        launch(kern, items, [bufs[0][0], _q(bufs[0][1] + t * m), bufs[1][0], _q(bufs[1][1] + t * m),
                         bufs[2][0], _q(bufs[2][1] + t * 4 * m), bufs[3][0],
                         _q(bufs[3][1] + t * m), gbuf, _q(goff + t * 4 * m), hp, hpo, cp, cpo,
                         wbuf, _q(H)], group)
        hp, hpo = bufs[0][0], _q(bufs[0][1] + t * m)
        cp, cpo = bufs[1][0], _q(bufs[1][1] + t * m)
    last = 0 if reverse else n - 1
    return out, out[last].copy(), cs[last].copy(), act, tc, cs


def lstm_layer_grad(w_hh, h0, c0, out, act, tc, cs, dout, dh_n, dc_n, reverse):
    """(dgi, dw_hh, dh0, dc0) of lstm_layer; one lstm_step_grad launch per time step, then
    dh0 and dW_hh as matmuls."""
    import carray
    n, B, H = out.shape
    dt = out.dtype
    dg = carray.empty((n, B, 4 * H), dtype=dt, device="gpu")
    m = B * H
    if n == 0 or m == 0:
        return (dg.reshape((n, B, 4 * H)), carray.zeros(w_hh.shape, dtype=dt, device="gpu"),
                carray.zeros((B, H), dtype=dt, device="gpu"),
                carray.zeros((B, H), dtype=dt, device="gpu"))
    kern = _kernels(dt.num)[STEP_GRAD]
    W = whole(w_hh)
    has_dc = dc_n is not None
    dcb = dc_n.copy() if has_dc else carray.empty((B, H), dtype=dt, device="gpu")
    dgb, dgo = dg._cl()[:2]
    ab, ao = act._cl()[:2]
    tb, to = tc._cl()[:2]
    cb, co = cs._cl()[:2]
    dob, doo = carray.ascontiguousarray(dout)._cl()[:2] if dout is not None else (dgb, 0)
    dhb, dho = dense_operand(dh_n) if dh_n is not None else (dgb, _q(0))
    c0b, c0o = dense_operand(c0)
    order = list(_steps(n, not reverse))
    prev_t = None
    sj = _units()
    items, group = B * -(-H // sj) * 4 * sj, 4 * sj
    for t in order:
        first = t == order[-1]           # the step that reads c0
        launch(kern, items, [dgb, _q(dgo + t * 4 * m),
                         dgb, _q(dgo + (prev_t if prev_t is not None else 0) * 4 * m),
                         _i(prev_t is not None),
                         dob, _q(doo + t * m), _i(dout is not None),
                         dhb, dho, _i(dh_n is not None),
                         dcb._cl()[0], _i(has_dc),
                         ab, _q(ao + t * 4 * m), tb, _q(to + t * m),
                         *((c0b, c0o) if first else
                           (cb, _q(co + (t + 1 if reverse else t - 1) * m))),
                         W._cl()[0], _q(H)], group)
        has_dc = True
        prev_t = t
    dh0 = carray.matmul(dg[order[-1]], W)
    h0a = h0.reshape((1, B, H))
    prev = carray.concatenate([out[1:], h0a]) if reverse else carray.concatenate([h0a, out[:-1]])
    dw = carray.matmul(carray.swapaxes(dg.reshape((n * m // H, 4 * H)), 0, 1),
                       prev.reshape((n * B, H)))
    return dg, dw, dh0, dcb
