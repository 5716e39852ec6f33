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
from autograd.ops.shape import Cat, Unbind

__all__ = ["ThnnFusedGruCell", "ThnnFusedLstmCell", "Unbind"]


def _tanh(x, out=None):
    """tanh(x) into out (a new array when None): carray's tanh, vectorised on the CPU."""
    return carray.tanh(x, out=out)


class ThnnFusedLstmCell(Builtin):
    """One LSTM step from the summed projections: (h', c') of gates gi + gh (B, 4H) and the
    cell state c (B, H); see the formulas above. Returns (h', c')."""

    @staticmethod
    def forward(ctx, gi, gh, c):
        n = c.array.shape[-1]
        act = carray.add(gi.array, gh.array)
        g = act[..., 2 * n:3 * n]
        carray.sigmoid(act[..., :2 * n], out=act[..., :2 * n])
        carray.sigmoid(act[..., 3 * n:], out=act[..., 3 * n:])
        _tanh(g, out=g)
        i, f, o = act[..., :n], act[..., n:2 * n], act[..., 3 * n:]
        c_new = carray.multiply(f, c.array)
        carray.add(c_new, carray.multiply(i, g), out=c_new)
        tc = _tanh(c_new)
        h_new = carray.multiply(o, tc)
        if True in ctx.needs_input_grad:
            ctx.save_for_backward(gi, gh, c)
            ctx.act, ctx.tc = act, tc
        return wrap(h_new), wrap(c_new)

    @staticmethod
    def backward(ctx, dh, dc_out):
        gi, gh, c = ctx.saved_tensors
        if _state.enabled:
            return _lstm_grads_composed(gi, gh, c, dh, dc_out)
        act, tc = ctx.act, ctx.tc
        n = tc.shape[-1]
        i, f, g, o = (act[..., k * n:(k + 1) * n] for k in range(4))
        up = carray.empty(act.shape, dtype=act.dtype, device=act.device)
        if dh is not None:
            dhd = dh.array
            dc = carray.multiply(tc, tc)                 # dc = dc' + dh o (1 - tc^2)
            carray.subtract(1.0, dc, out=dc)
            carray.multiply(dc, o, out=dc)
            carray.multiply(dc, dhd, out=dc)
            if dc_out is not None:
                carray.add(dc, dc_out.array, out=dc)
            carray.multiply(dhd, tc, out=up[..., 3 * n:])
        else:
            dc = dc_out.array
            up[..., 3 * n:] = 0.0
        carray.multiply(dc, g, out=up[..., :n])
        carray.multiply(dc, c.array, out=up[..., n:2 * n])
        carray.multiply(dc, i, out=up[..., 2 * n:3 * n])
        # the activations' derivatives: s(1 - s) for the sigmoids, 1 - g^2 for the tanh
        deriv = carray.subtract(1.0, act)
        carray.multiply(deriv, act, out=deriv)
        carray.subtract(1.0, carray.multiply(g, g), out=deriv[..., 2 * n:3 * n])
        carray.multiply(up, deriv, out=up)
        need = ctx.needs_input_grad
        dgates = wrap(up)
        dc_prev = wrap(carray.multiply(dc, f)) if need[2] else None
        return (dgates if need[0] else None), (dgates if need[1] else None), dc_prev


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
# GRU: gi = [gi_r, gi_z, gi_n], gh = [gh_r, gh_z, gh_n] (each H wide, biases included)
#     r = sigmoid(gi_r + gh_r),  z = sigmoid(gi_z + gh_z),  n = tanh(gi_n + r gh_n)
#     h' = (1 - z) n + z h
# With upstream dh':  dn = dh' (1 - z) (1 - n^2),  dz = dh' (h - n) z (1 - z),
#     dr = dn gh_n r (1 - r);   dgi = [dr, dz, dn],  dgh = [dr, dz, dn r],  dh = dh' z
# ---------------------------------------------------------------------------------------------


class ThnnFusedGruCell(Builtin):
    """One GRU step: h' of the input projection gi (B, 3H), the hidden projection gh (B, 3H)
    and the hidden state h (B, H); see the formulas above."""

    @staticmethod
    def forward(ctx, gi, gh, h):
        n = h.array.shape[-1]
        gid, ghd = gi.array, gh.array
        rz = carray.add(gid[..., :2 * n], ghd[..., :2 * n])
        carray.sigmoid(rz, out=rz)
        r, z = rz[..., :n], rz[..., n:]
        nt = carray.multiply(r, ghd[..., 2 * n:])
        carray.add(nt, gid[..., 2 * n:], out=nt)
        _tanh(nt, out=nt)
        h_new = carray.subtract(h.array, nt)          # n + z (h - n)
        carray.multiply(h_new, z, out=h_new)
        carray.add(h_new, nt, out=h_new)
        if True in ctx.needs_input_grad:
            ctx.save_for_backward(gi, gh, h)
            ctx.rz, ctx.n = rz, nt
        return wrap(h_new)

    @staticmethod
    def backward(ctx, dh):
        gi, gh, h = ctx.saved_tensors
        if _state.enabled:
            return _gru_grads_composed(gi, gh, h, dh)
        rz, nt = ctx.rz, ctx.n
        n = nt.shape[-1]
        r, z = rz[..., :n], rz[..., n:]
        dhd = dh.array
        dgi = carray.empty(rz.shape[:-1] + (3 * n,), dtype=rz.dtype, device=rz.device)
        dn = dgi[..., 2 * n:]
        carray.multiply(nt, nt, out=dn)                 # dn = dh (1 - z) (1 - n^2)
        carray.subtract(1.0, dn, out=dn)
        carray.multiply(dn, carray.subtract(1.0, z), out=dn)
        carray.multiply(dn, dhd, out=dn)
        deriv = carray.subtract(1.0, rz)                # s (1 - s) for r and z
        carray.multiply(deriv, rz, out=deriv)
        dr = dgi[..., :n]
        carray.multiply(dn, gh.array[..., 2 * n:], out=dr)
        dz = dgi[..., n:2 * n]
        carray.subtract(h.array, nt, out=dz)
        carray.multiply(dz, dhd, out=dz)
        carray.multiply(dgi[..., :2 * n], deriv, out=dgi[..., :2 * n])
        need = ctx.needs_input_grad
        dgh = None
        if need[1]:
            dgh = dgi.copy()
            carray.multiply(dn, r, out=dgh[..., 2 * n:])
            dgh = wrap(dgh)
        dh_prev = wrap(carray.multiply(dhd, z)) if need[2] else None
        return (wrap(dgi) if need[0] else None), dgh, dh_prev


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
