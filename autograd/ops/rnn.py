"""The Functions behind the recurrent layers (autograd/nn/rnn.py): each time step's gate math as
one node with an explicit backward on the carray data, and the split of a sequence's input
projections into its time steps as one node.

A layer projects the inputs of all time steps at once (one matmul, x @ W_ih^T), splits the
result into steps with Unbind, and then records per step only the matmul h @ W_hh^T and one
gate Function, not the dozen elementwise ops the gate formulas would record. Under create_graph
(grad mode on during backward) the gate Functions build their gradients from differentiable ops
instead, so gradients of gradients work. Names are PyTorch's nodes' (ThnnFusedLstmCellBackward0,
ThnnFusedGruCellBackward0, UnbindBackward0).
"""

import carray
from autograd.grad_mode import _state
from autograd.ops._util import Builtin, wrap
from autograd.ops.shape import Cat, Stack, Unbind

__all__ = ["LstmLayer", "ThnnFusedGruCell", "ThnnFusedLstmCell", "Unbind"]


class ThnnFusedLstmCell(Builtin):
    """One LSTM step from the summed projections: (h', c') of gates gi + gh (B, 4H) and the
    cell state c (B, H); see the formulas above (carray.nn.lstm_cell: one kernel on the GPU).
    Returns (h', c')."""

    autocast_policy = "float32"

    @staticmethod
    def forward(ctx, gi, gh, c):
        h_new, c_new, act, tc = carray.nn.lstm_cell(gi.array, gh.array, c.array)
        if True in ctx.needs_input_grad:
            ctx.save_for_backward(gi, gh, c)
            ctx.act, ctx.tc = act, tc
        return wrap(h_new), wrap(c_new)

    @staticmethod
    def backward(ctx, dh, dc_out):
        gi, gh, c = ctx.saved_tensors
        if _state.enabled:
            return _lstm_grads_composed(gi, gh, c, dh, dc_out)
        dgates, dc_prev = carray.nn.lstm_cell_grad(
            ctx.act, ctx.tc, c.array, None if dh is None else dh.array,
            None if dc_out is None else dc_out.array)
        need = ctx.needs_input_grad
        dgates = wrap(dgates)
        return ((dgates if need[0] else None), (dgates if need[1] else None),
                wrap(dc_prev) if need[2] else None)


def _lstm_grads_composed(gi, gh, c, dh, dc_out):
    """ThnnFusedLstmCell's gradients from differentiable ops (backward under create_graph)."""
    i, f, g, o = (gi + gh).chunk(4, -1)
    i, f, g, o = i.sigmoid(), f.sigmoid(), g.tanh(), o.sigmoid()
    tc = (f * c + i * g).tanh()
    if dh is not None:
        dc = dh * o * (1 - tc * tc)
        if dc_out is not None:
            dc = dc + dc_out
        do = dh * tc
    else:
        dc, do = dc_out, dc_out * 0
    dgates = Cat.apply(-1, dc * g * i * (1 - i), dc * c * f * (1 - f), dc * i * (1 - g * g),
                       do * o * (1 - o))
    return dgates, dgates, dc * f


# ---------------------------------------------------------------------------------------------
# A whole LSTM layer (one direction, no projection) as one node: the time loop runs on carray
# arrays, one h @ W_hh^T and one cell kernel per step forward, one cell gradient and one
# dgates @ W_hh per step backward, and dW_hh as one matmul over all steps at the end:
#     dW_hh = sum_t dgates_t^T h_{t-1}
# so a step costs a few launches and no autograd bookkeeping (the per-step recording of
# ThnnFusedLstmCell + Addmm is what the layers of recurrent language models spent their time on).
# ---------------------------------------------------------------------------------------------


def _steps(n, reverse):
    return range(n - 1, -1, -1) if reverse else range(n)


class LstmLayer(Builtin):
    """(out (T, B, H), h_T, c_T) of an LSTM layer over the input projections gi (T, B, 4H,
    biases included) with hidden weights w_hh (4H, H) from the state h0, c0 (B, H); reverse
    runs the steps from T - 1 down to 0 (a bidirectional layer's backward direction).
    carray.nn.lstm_layer and lstm_layer_grad: one kernel launch per step each way on the GPU."""

    autocast_policy = "float32"

    @staticmethod
    def forward(ctx, gi, w_hh, h0, c0, reverse):
        out, h_n, c_n, act, tc, cs = carray.nn.lstm_layer(gi.array, w_hh.array, h0.array,
                                                          c0.array, reverse)
        if True in ctx.needs_input_grad:
            ctx.save_for_backward(gi, w_hh, h0, c0)
            ctx.state = (out, act, tc, cs, reverse)
        return wrap(out), wrap(h_n), wrap(c_n)

    @staticmethod
    def backward(ctx, dout, dh_n, dc_n):
        gi, w_hh, h0, c0 = ctx.saved_tensors
        out, act, tc, cs, reverse = ctx.state
        if _state.enabled:
            return _lstm_layer_grads_composed(gi, w_hh, h0, c0, reverse, dout, dh_n, dc_n)
        grads = carray.nn.lstm_layer_grad(
            w_hh.array, h0.array, c0.array, out, act, tc, cs,
            *(None if d is None else d.array for d in (dout, dh_n, dc_n)), reverse)
        return (*(wrap(g) if need else None for g, need in zip(grads, ctx.needs_input_grad)),
                None)


def _lstm_layer_grads_composed(gi, w_hh, h0, c0, reverse, dout, dh_n, dc_n):
    """LstmLayer's gradients from differentiable ops (backward under create_graph): the steps
    replayed with ThnnFusedLstmCell, then the reverse loop of _lstm_grads_composed."""
    n = gi.shape[0]
    steps = Unbind.apply(gi, 0)
    wt = w_hh.transpose(0, 1)
    h, c = h0, c0
    saved = [None] * n
    for t in _steps(n, reverse):
        gh = h.matmul(wt)
        saved[t] = (gh, c, h)
        h, c = ThnnFusedLstmCell.apply(steps[t], gh, c)
    douts = Unbind.apply(dout, 0) if dout is not None else [None] * n
    dG = [None] * n
    dW = None
    dh, dc = dh_n, dc_n
    for t in _steps(n, not reverse):
        gh, c_prev, h_prev = saved[t]
        up = dh if douts[t] is None else douts[t] if dh is None else douts[t] + dh
        if up is None and dc is None:
            up = gh.new_zeros(c_prev.shape)
        dgates, _, dc = _lstm_grads_composed(steps[t], gh, c_prev, up, dc)
        dG[t] = dgates
        dh = dgates.matmul(w_hh)
        step_dw = dgates.transpose(0, 1).matmul(h_prev)
        dW = step_dw if dW is None else dW + step_dw
    return Stack.apply(0, *dG), dW, dh, dc, None


# ---------------------------------------------------------------------------------------------
# GRU: gi = [gi_r, gi_z, gi_n], gh = [gh_r, gh_z, gh_n] (each H wide, biases included)
#     r = sigmoid(gi_r + gh_r),  z = sigmoid(gi_z + gh_z),  n = tanh(gi_n + r gh_n)
#     h' = (1 - z) n + z h
# With upstream dh':  dn = dh' (1 - z) (1 - n^2),  dz = dh' (h - n) z (1 - z),
#     dr = dn gh_n r (1 - r);   dgi = [dr, dz, dn],  dgh = [dr, dz, dn r],  dh = dh' z
# ---------------------------------------------------------------------------------------------


class ThnnFusedGruCell(Builtin):
    """One GRU step: h' of the input projection gi (B, 3H), the hidden projection gh (B, 3H)
    and the hidden state h (B, H); see the formulas above (carray.nn.gru_cell: one kernel on
    the GPU)."""

    autocast_policy = "float32"

    @staticmethod
    def forward(ctx, gi, gh, h):
        h_new, rz, nt = carray.nn.gru_cell(gi.array, gh.array, h.array)
        if True in ctx.needs_input_grad:
            ctx.save_for_backward(gi, gh, h)
            ctx.rz, ctx.n = rz, nt
        return wrap(h_new)

    @staticmethod
    def backward(ctx, dh):
        gi, gh, h = ctx.saved_tensors
        if _state.enabled:
            return _gru_grads_composed(gi, gh, h, dh)
        dgi, dgh, dh_prev = carray.nn.gru_cell_grad(ctx.rz, ctx.n, gh.array, h.array, dh.array)
        need = ctx.needs_input_grad
        return ((wrap(dgi) if need[0] else None), (wrap(dgh) if need[1] else None),
                wrap(dh_prev) if need[2] else None)


def _gru_grads_composed(gi, gh, h, dh):
    """ThnnFusedGruCell's gradients from differentiable ops (backward under create_graph)."""
    gi_r, gi_z, gi_n = gi.chunk(3, -1)
    gh_r, gh_z, gh_n = gh.chunk(3, -1)
    r, z = (gi_r + gh_r).sigmoid(), (gi_z + gh_z).sigmoid()
    nt = (gi_n + r * gh_n).tanh()
    dn = dh * (1 - z) * (1 - nt * nt)
    dz = dh * (h - nt) * z * (1 - z)
    dr = dn * gh_n * r * (1 - r)
    return Cat.apply(-1, dr, dz, dn), Cat.apply(-1, dr, dz, dn * r), dh * z
