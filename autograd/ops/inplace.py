"""In-place ops (add_, mul_, zero_, copy_, t[key] = v, ...) and how they keep the graph right.

Outside the graph (grad mode off, or nothing involved requires grad) an in-place op writes into
the tensor's memory and bumps its version counter, which is all an optimizer step needs.

Inside the graph the op is computed out of place as a normal recorded op (on a clone of the
tensor when the op saves its input) and the result is written into the tensor's memory; the
tensor then takes the result's history. When the tensor is a view, its base takes a CopySlices
node instead (the base with the view's region replaced), and the view is remade on top of it:
this is how PyTorch rebases history after in-place ops on views.
"""

import carray
from autograd import function as _function
from autograd._defaults import scalar_type_name
from autograd.function import _check_inplace_allowed, replay, view_path
from autograd.grad_mode import _state
from autograd.ops._composite import Composite
from autograd.ops._util import Builtin, data_of, meta, reduce_grad
from autograd.ops.shape import Clone
from autograd.tensor import Tensor


def records(t, *others):
    """True when an in-place op on t (with these other arguments) must be recorded."""
    if not _state.enabled:
        return False
    if t._rg:
        return True
    for o in others:
        if isinstance(o, Tensor) and o._rg:
            return True
    return False


def inplace(t, graph_op, raw_op, others=(), saves_self=False):
    """Run an in-place op on t: raw_op() (writes t.array) when nothing is recorded, else
    graph_op(src) out of place and commit its result into t. Returns t. Raises RuntimeError for
    a leaf that requires grad (or a view of one) while grad mode is on."""
    if records(t, *others):
        _check_inplace_allowed(t)
        src = Clone.apply(t) if saves_self else t
        commit(t, graph_op(src))
    elif _function._tracer is not None:  # onnx area: autograd.onnx records the op
        if t._base is not None:
            raise RuntimeError("an in-place operation on a view cannot be exported to ONNX; "
                               "use the out-of-place operation")
        TracedCommit.apply(t, graph_op(t))
    else:
        try:
            raw_op()
        except (ValueError, TypeError) as e:
            raise RuntimeError(str(e)) from None
        t._vc[0] += 1
    return t


class TracedCommit(Composite):
    """An in-place op while autograd.onnx traces (grad mode off): `new`, the op computed out of
    place, written into t's memory; the tracer then takes t as `new`'s value (onnx area)."""

    @staticmethod
    def compute(t, new):
        t.array[...] = new.array
        t._vc[0] += 1
        return t


def commit(t, new):
    """Write the recorded result `new` into t's memory and give t its history."""
    if new.array.shape != t.array.shape:
        raise RuntimeError(f"output with shape {list(t.array.shape)} doesn't match the broadcast "
                           f"shape {list(new.array.shape)}")
    _check_cast(new.array.dtype, t.array.dtype)
    if t._base is None:
        t.array[...] = new.array
        t._vc[0] += 1
        t.grad_fn = new.grad_fn
        t._output_nr = new._output_nr
        t._rg = new._rg
        return
    base = t._base
    path = view_path(t)
    CopySlices.apply(base, new, path)
    remade = replay(base, path)
    t.grad_fn = remade.grad_fn
    t._output_nr = remade._output_nr
    t._rg = remade._rg
    t._view_version = t._vc[0]


def _check_cast(src, dst):
    if src != dst and carray.result_type(src, dst) != dst:
        raise RuntimeError(f"result type {scalar_type_name(src)} can't be cast to the desired "
                           f"output type {scalar_type_name(dst)}")


class CopySlices(Builtin):
    """base with the region `path` selects replaced by value (in place on base);
    dbase = g with that region zeroed, dvalue = g's region."""

    @staticmethod
    def forward(ctx, base, value, path):
        region = replay(base.detach(), path)
        region.array[...] = value.array
        base._vc[0] += 1
        ctx.path = path
        ctx.value = meta(value)
        ctx.mark_dirty(base)
        return base

    @staticmethod
    def backward(ctx, g):
        need = ctx.needs_input_grad
        gbase = gvalue = None
        if need[1]:
            gvalue = reduce_grad(replay(g, ctx.path).clone(), ctx.value)
        if need[0]:
            gbase = g.clone()
            region = replay(gbase.detach(), ctx.path)
            region.array[...] = 0
        return gbase, gvalue, None


def raw_binary(fn, t, other):
    """raw_op for `t.array = fn(t.array, other)` written in place."""
    def run():
        fn(t.array, data_of(other), out=t.array)
    return run
