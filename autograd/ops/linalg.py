"""Linear algebra: the matrix product (matmul, mm, bmm, dot and F.linear's composed form),
with its gradient."""

import carray
from autograd.ops._util import Builtin, meta, reduce_grad, wrap

__all__ = ["MatMul"]


class MatMul(Builtin):
    """a @ b with NumPy's rules for 1-d operands and batch broadcasting;
    da = g @ b^T, db = a^T @ g, each summed back to its operand's shape."""

    autocast_policy = "lower"

    @staticmethod
    def forward(ctx, a, b):
        need = ctx.needs_input_grad
        if True in need:
            ctx.save_for_backward(a if need[1] else None, b if need[0] else None)
            ctx.a, ctx.b = meta(a), meta(b)
        try:
            return wrap(carray.matmul(a.array, b.array))
        except ValueError as e:
            raise RuntimeError(str(e)) from None

    @staticmethod
    def backward(ctx, g):
        a, b = ctx.saved_tensors
        need = ctx.needs_input_grad
        (ashape, _), (bshape, _) = ctx.a, ctx.b
        a1, b1 = len(ashape) == 1, len(bshape) == 1
        # treat 1-d operands as matrices: a (k,) -> (1, k), b (k,) -> (k, 1)
        if a1:
            g = g.unsqueeze(max(g.ndim - 1, 0))  # (-2), also for a 0-d g (1-d @ 1-d)
        if b1:
            g = g.unsqueeze(-1)
        ga = gb = None
        if need[0]:
            b2 = b.unsqueeze(-1) if b1 else b
            ga = g.matmul(b2.transpose(-1, -2))
            ga = reduce_grad(ga.squeeze(-2) if a1 else ga, ctx.a)
        if need[1]:
            a2 = a.unsqueeze(0) if a1 else a
            gb = a2.transpose(-1, -2).matmul(g)
            gb = reduce_grad(gb.squeeze(-1) if b1 else gb, ctx.b)
        return ga, gb

