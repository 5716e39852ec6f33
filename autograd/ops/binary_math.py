"""Binary math functions with a gradient: atan2, hypot, fmod, logaddexp (broadcasting, either
argument may be a Python number; gradients go back through reduce_grad)."""

import carray
from autograd.ops._util import reduce_grad
from autograd.ops.elementwise import _Binary
from autograd.tensor import Tensor

__all__ = ["Atan2", "Fmod", "Hypot", "LogAddExp"]


def _save_both(need, a, b):
    """Both operands that are tensors (with their versions), for the backward formulas."""
    return tuple((x, x._vc[0]) if isinstance(x, Tensor) else (None, 0) for x in (a, b))


def _operands(ctx):
    """The operands as backward uses them: saved tensors, or the Python numbers given."""
    a, b = ctx.saved_tensors
    return (a if a is not None else ctx.a), (b if b is not None else ctx.b)


class Atan2(_Binary):
    """atan2(a, b), the angle of the point (b, a);  da = g b / (a^2 + b^2),
    db = -g a / (a^2 + b^2)."""

    save = staticmethod(_save_both)
    compute = staticmethod(carray.arctan2)

    @staticmethod
    def backward(ctx, g):
        a, b = _operands(ctx)
        need = ctx.needs_input_grad
        r2 = a * a + b * b
        return (reduce_grad(g * b / r2, ctx.a) if need[0] else None,
                reduce_grad(-g * a / r2, ctx.b) if need[1] else None)


class Hypot(_Binary):
    """hypot(a, b) = sqrt(a^2 + b^2);  da = g a / hypot(a, b), db = g b / hypot(a, b)."""

    save = staticmethod(_save_both)
    compute = staticmethod(carray.hypot)

    @staticmethod
    def backward(ctx, g):
        a, b = _operands(ctx)
        need = ctx.needs_input_grad
        h = Hypot.apply(a, b)
        return (reduce_grad(g * a / h, ctx.a) if need[0] else None,
                reduce_grad(g * b / h, ctx.b) if need[1] else None)


class Fmod(_Binary):
    """fmod(a, b), the remainder with the sign of a (C's fmod);  da = g,
    db = -g trunc(a / b)."""

    save = staticmethod(_save_both)

    @staticmethod
    def compute(a, b):
        kinds = [x.dtype.kind if isinstance(x, carray.Array) else
                 ("f" if isinstance(x, float) else "i") for x in (a, b)]
        if "f" not in kinds:
            zero = carray.any(carray.equal(b, 0)) if isinstance(b, carray.Array) else b == 0
            if zero:
                raise RuntimeError("ZeroDivisionError")
        return carray.fmod(a, b)

    @staticmethod
    def backward(ctx, g):
        a, b = _operands(ctx)
        need = ctx.needs_input_grad
        gb = None
        if need[1]:
            q = (a / b).array
            q = carray.where(carray.less(q, 0), carray.ceil(q), carray.floor(q))
            gb = reduce_grad(-g * Tensor._wrap(q), ctx.b)
        return (reduce_grad(g, ctx.a) if need[0] else None), gb


class LogAddExp(_Binary):
    """log(exp(a) + exp(b));  da = g sigmoid(a - b), db = g sigmoid(b - a)."""

    save = staticmethod(_save_both)
    compute = staticmethod(carray.logaddexp)

    @staticmethod
    def backward(ctx, g):
        a, b = _operands(ctx)
        need = ctx.needs_input_grad
        return (reduce_grad(g * (a - b).sigmoid(), ctx.a) if need[0] else None,
                reduce_grad(g * (b - a).sigmoid(), ctx.b) if need[1] else None)
