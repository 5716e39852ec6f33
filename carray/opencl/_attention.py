"""Memory-efficient attention on the device (attention.cl), for carray.nn.attention and
attention_grad: one launch forward, two backward (dq, then dk/dv), the L x S scores never stored.

Operands are (..., rows, E) with unit stride along E; their leading dims (broadcast to one shape)
are merged into at most two, (B, H), each operand keeping its own strides there, so the
(B, H, T, E) views a transformer makes by transposing (B, T, H, E) are read in place. Operands
whose leading dims do not merge to two, or whose last dim is strided, are copied first.
"""

import carray
from carray.opencl import _cache
from carray.opencl._launch import launch
from carray.opencl._layout import broadcast_strides, coalesce, pack_scalar
from carray.opencl._layout import int_arg as _i
from carray.opencl._layout import long_arg as _q
from carray.opencl._types import CL_TYPES, FLOAT64

MAX_DIM = 128           # the largest E (of q/k and of v) the kernels keep in registers
ROWS = 64               # rows per work group (one work item each)
TILE = 32               # rows of the other operand per tile in local memory

FWD, DQ, DKV = range(3)


def supported(e, ev):
    """Whether the fused kernels take head dims e (query/key) and ev (value)."""
    return 0 < e <= MAX_DIM and 0 < ev <= MAX_DIM


def _kernels(t, e, ev):
    return _cache.kernel(("attention", t, e, ev), ("attn_fwd", "attn_dq", "attn_dkv"),
                         lambda: _cache.render("attention.cl", t=CL_TYPES[t], d=e, dv=ev,
                                               bq=ROWS, bk=TILE),
                         "long", t == FLOAT64)



def _operands(lead, arrays):
    """(B, H, [(buffer, offset, sb, sh, sr) per array]) with the leading dims `lead` merged to
    (B, H); arrays are copied when their last dim is strided or their leading dims do not
    merge to two."""
    arrays = [a if a.strides[-1] == a.itemsize or a.shape[-1] <= 1 else a.copy()
              for a in arrays]
    strides = [broadcast_strides(lead, a.shape[:-2], [s // a.itemsize for s in a.strides[:-2]])
               for a in arrays]
    shape, merged = coalesce(list(lead) or [1], [list(s) or [0] for s in strides])
    if len(shape) > 2:
        arrays = [carray.ascontiguousarray(carray.broadcast_to(a, tuple(lead) + a.shape[-2:]))
                  for a in arrays]
        return _operands(lead, arrays)
    if len(shape) == 1:
        shape, merged = [1] + shape, [[0] + m for m in merged]
    out = []
    for a, (sb, sh) in zip(arrays, merged):
        buf, off = a._cl()[:2]
        out.append([buf, _q(off), _q(sb), _q(sh), _q(a.strides[-2] // a.itemsize)])
    return shape[0], shape[1], out


def attention(q, k, v, lead, scale, causal):
    """(out (*lead, L, Ev), lse (*lead, L)) of softmax(scale q k^T [causal]) v; see attention.cl."""
    L, S, e, ev = q.shape[-2], k.shape[-2], q.shape[-1], v.shape[-1]
    t = q.dtype.num
    out = carray.empty(tuple(lead) + (L, ev), dtype=q.dtype, device="gpu")
    lse = carray.empty(tuple(lead) + (L,), dtype=q.dtype, device="gpu")
    if out.size == 0:
        return out, lse
    B, H, ops = _operands(lead, (q, k, v))
    nqb = -(-L // ROWS)
    launch(_kernels(t, e, ev)[FWD], B * H * nqb * ROWS,
           [out._cl()[0], lse._cl()[0], *ops[0], *ops[1], *ops[2], _q(H), _q(L), _q(S),
            _q(nqb), pack_scalar(t, scale), _i(causal)], ROWS)
    return out, lse


def attention_grad(q, k, v, out, lse, g, lead, scale, causal):
    """(dq, dk, dv) of attention at the broadcast leading shape `lead`, from its inputs, its
    outputs out and lse (C-contiguous, as attention made them) and the gradient g of out."""
    L, S, e, ev = q.shape[-2], k.shape[-2], q.shape[-1], v.shape[-1]
    t = q.dtype.num
    lead = tuple(lead)
    dq = carray.empty(lead + (L, e), dtype=q.dtype, device="gpu")
    dk = carray.empty(lead + (S, e), dtype=q.dtype, device="gpu")
    dv = carray.empty(lead + (S, ev), dtype=q.dtype, device="gpu")
    if dq.size == 0 and dk.size == 0 and dv.size == 0:
        return dq, dk, dv
    if L == 0:      # no query sees a key: dk and dv are 0
        dk[...] = 0
        dv[...] = 0
        return dq, dk, dv
    B, H, ops = _operands(lead, (q, k, v, g))
    out, lse = carray.ascontiguousarray(out), carray.ascontiguousarray(lse)
    D = carray.empty(lead + (L,), dtype=q.dtype, device="gpu")
    kern = _kernels(t, e, ev)
    common = [_q(H), _q(L), _q(S)]
    tail = [pack_scalar(t, scale), _i(causal)]
    nqb = -(-L // ROWS)
    launch(kern[DQ], B * H * nqb * ROWS,
           [dq._cl()[0], D._cl()[0], *ops[0], *ops[1], *ops[2], *ops[3], out._cl()[0],
            lse._cl()[0], *common, _q(nqb), *tail], ROWS)
    if S:
        nkb = -(-S // ROWS)
        launch(kern[DKV], B * H * nkb * ROWS,
               [dk._cl()[0], dv._cl()[0], *ops[0], *ops[1], *ops[2], *ops[3], lse._cl()[0],
                D._cl()[0], *common, _q(nkb), *tail], ROWS)
    return dq, dk, dv
