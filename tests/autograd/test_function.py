"""autograd.Function: PyTorch's custom-function API (forward/backward static methods, ctx,
save_for_backward, saved_tensors, needs_input_grad, mark_non_differentiable,
set_materialize_grads, once_differentiable, mark_dirty) and gradient shape reduction."""

import math

import numpy as np
import pytest

import autograd
from autograd import Function

from _check import check_op


class Exp(Function):
    @staticmethod
    def forward(ctx, x):
        y = x.exp()
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, g):
        (y,) = ctx.saved_tensors
        return g * y


class MulAdd(Function):
    """a * b + c with a non-tensor argument k scaling c."""

    @staticmethod
    def forward(ctx, a, b, c, k):
        ctx.save_for_backward(a, b)
        ctx.k = k
        return a * b + c * k

    @staticmethod
    def backward(ctx, g):
        a, b = ctx.saved_tensors
        need = ctx.needs_input_grad
        return (g * b if need[0] else None, g * a if need[1] else None,
                g * ctx.k if need[2] else None, None)


def test_custom_exp_values_and_gradcheck():
    check_op(Exp.apply, np.exp, (2, 3))
    x = autograd.tensor([0.0, 1.0], requires_grad=True)
    y = Exp.apply(x)
    assert y.grad_fn is not None and type(y.grad_fn) is Exp
    assert y.grad_fn.name() == "ExpBackward"
    y.sum().backward()
    np.testing.assert_allclose(x.grad.tolist(), [1.0, math.e], rtol=1e-6)


def test_forward_runs_without_grad_mode():
    seen = {}

    class Probe(Function):
        @staticmethod
        def forward(ctx, x):
            seen["enabled"] = autograd.is_grad_enabled()
            y = x * 2
            seen["inner_requires_grad"] = y.requires_grad
            return y

        @staticmethod
        def backward(ctx, g):
            return g * 2

    x = autograd.ones(2, requires_grad=True)
    out = Probe.apply(x)
    assert seen == {"enabled": False, "inner_requires_grad": False}
    assert out.requires_grad and autograd.is_grad_enabled()


def test_needs_input_grad_and_non_tensor_args():
    a = autograd.randn(3, dtype=autograd.float64, requires_grad=True)
    b = autograd.randn(3, dtype=autograd.float64)
    c = autograd.randn(3, dtype=autograd.float64, requires_grad=True)
    out = MulAdd.apply(a, b, c, 2.0)
    assert out.grad_fn.needs_input_grad == (True, False, True, False)
    out.sum().backward()
    np.testing.assert_allclose(np.asarray(a.grad.array), np.asarray(b.array))
    np.testing.assert_allclose(np.asarray(c.grad.array), np.full(3, 2.0))
    assert b.grad is None
    assert autograd.gradcheck(lambda a, c: MulAdd.apply(a, b, c, 3.0), (a, c))


def test_no_input_requires_grad_gives_plain_tensor():
    out = Exp.apply(autograd.ones(2))
    assert not out.requires_grad and out.grad_fn is None
    with autograd.no_grad():
        out = Exp.apply(autograd.ones(2, requires_grad=True))
    assert not out.requires_grad and out.grad_fn is None


def test_broadcast_gradient_reduced_to_input_shape():
    class BroadcastAdd(Function):
        @staticmethod
        def forward(ctx, a, b):
            return a + b

        @staticmethod
        def backward(ctx, g):
            return g, g  # full-size gradients: the engine sums them to each input's shape

    a = autograd.randn(3, 1, dtype=autograd.float64, requires_grad=True)
    b = autograd.randn(4, dtype=autograd.float64, requires_grad=True)
    BroadcastAdd.apply(a, b).sum().backward()
    assert a.grad.shape == (3, 1) and b.grad.shape == (4,)
    assert a.grad.tolist() == [[4.0]] * 3 and b.grad.tolist() == [3.0] * 4


def test_wrong_gradient_shape_and_count_raise():
    class BadShape(Function):
        @staticmethod
        def forward(ctx, x):
            return x * 1

        @staticmethod
        def backward(ctx, g):
            return autograd.ones(5)

    class BadCount(Function):
        @staticmethod
        def forward(ctx, x):
            return x * 1

        @staticmethod
        def backward(ctx, g):
            return g, g

    x = autograd.ones(2, requires_grad=True)
    with pytest.raises(RuntimeError, match="invalid gradient"):
        BadShape.apply(x).sum().backward()
    with pytest.raises(RuntimeError, match="incorrect number of gradients"):
        BadCount.apply(x).sum().backward()


def test_multiple_outputs_and_materialized_zero_grads():
    seen = []

    class Two(Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2, x * 3

        @staticmethod
        def backward(ctx, g1, g2):
            seen.append((g1.tolist(), g2.tolist()))
            return g1 * 2 + g2 * 3

    x = autograd.ones(2, requires_grad=True)
    a, b = Two.apply(x)
    assert a.grad_fn is b.grad_fn and a.output_nr == 0 and b.output_nr == 1
    a.sum().backward()
    assert seen == [([1.0, 1.0], [0.0, 0.0])]  # the unused output's gradient is zeros
    assert x.grad.tolist() == [2.0, 2.0]


def test_set_materialize_grads_false_gives_none():
    seen = []

    class Two(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.set_materialize_grads(False)
            return x * 2, x * 3

        @staticmethod
        def backward(ctx, g1, g2):
            seen.append((g1 is None, g2 is None))
            return g1 * 2 if g1 is not None else None

    x = autograd.ones(2, requires_grad=True)
    a, b = Two.apply(x)
    a.sum().backward()
    assert seen == [(False, True)]


def test_mark_non_differentiable():
    class SortLike(Function):
        @staticmethod
        def forward(ctx, x):
            idx = x.argmax()
            doubled = x * 2
            mask = x > 0
            ctx.mark_non_differentiable(idx, mask)
            return doubled, idx, mask

        @staticmethod
        def backward(ctx, g, g_idx, g_mask):
            return g * 2

    x = autograd.tensor([1.0, 3.0, 2.0], requires_grad=True)
    d, i, m = SortLike.apply(x)
    assert d.requires_grad and not i.requires_grad and not m.requires_grad
    d.sum().backward()
    assert x.grad.tolist() == [2.0, 2.0, 2.0]

    class FloatNonDiff(Function):
        @staticmethod
        def forward(ctx, x):
            out = x * 2
            ctx.mark_non_differentiable(out)
            return out

        @staticmethod
        def backward(ctx, g):
            return g

    assert not FloatNonDiff.apply(x).requires_grad


def test_saved_tensors_freed_after_backward():
    x = autograd.ones(2, requires_grad=True)
    y = Exp.apply(x)
    y.sum().backward()
    with pytest.raises(RuntimeError, match="retain_graph=True"):
        y.grad_fn.saved_tensors
    with pytest.raises(RuntimeError, match="retain_graph=True"):
        y.sum().backward()


def test_saved_input_modified_in_place_raises():
    class Square(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return 2 * g * x

    a = autograd.ones(2, requires_grad=True)
    h = a * 1
    out = Square.apply(h)
    h.mul_(3)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        out.sum().backward()


def test_save_for_backward_rejects_non_tensors():
    class Bad(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x, 3)
            return x * 1

        @staticmethod
        def backward(ctx, g):
            return g

    with pytest.raises(TypeError):
        Bad.apply(autograd.ones(2, requires_grad=True))


def test_once_differentiable_backward_is_not_recorded():
    class Cube(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x ** 3

        @staticmethod
        @autograd.once_differentiable
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return 3 * g * x * x

    x = autograd.tensor([2.0], requires_grad=True)
    (g,) = autograd.grad(Cube.apply(x), x, create_graph=True)
    assert g.tolist() == [12.0]
    assert not g.requires_grad  # the backward ran without recording


def test_double_backward_through_custom_function():
    class Cube(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x ** 3

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return 3 * g * x * x

    x = autograd.tensor([2.0, -1.0], dtype=autograd.float64, requires_grad=True)
    (g,) = autograd.grad(Cube.apply(x).sum(), x, create_graph=True)
    assert g.tolist() == [12.0, 3.0]
    (g2,) = autograd.grad(g.sum(), x)
    assert g2.tolist() == [12.0, -6.0]
    assert autograd.gradgradcheck(Cube.apply, (x,))


def test_saved_output_round_trip():
    x = autograd.randn(3, dtype=autograd.float64, requires_grad=True)
    y = Exp.apply(x)
    (saved,) = y.grad_fn.saved_tensors
    np.testing.assert_array_equal(np.asarray(saved.array), np.asarray(y.array))


def test_mark_dirty_in_place_function():
    class AddOneInPlace(Function):
        @staticmethod
        def forward(ctx, x):
            x.array[...] = x.array + 1
            ctx.mark_dirty(x)
            return x

        @staticmethod
        def backward(ctx, g):
            return g

    a = autograd.tensor([1.0, 2.0], requires_grad=True)
    h = a * 2
    out = AddOneInPlace.apply(h)
    assert out is h and h.tolist() == [3.0, 5.0]
    (out * out).sum().backward()
    assert a.grad.tolist() == [12.0, 20.0]
    with pytest.raises(RuntimeError, match="leaf"):
        AddOneInPlace.apply(autograd.ones(2, requires_grad=True))


def test_function_register_hook_on_node():
    x = autograd.ones(2, requires_grad=True)
    y = x * 2
    calls = []
    y.grad_fn.register_hook(lambda gin, gout: calls.append((len(gin), len(gout))))
    y.sum().backward()
    assert calls and calls[0][1] == 1


def test_custom_function_against_torch_semantics():
    torch = pytest.importorskip("torch")

    class TExp(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            y = x.exp()
            ctx.save_for_backward(y)
            return y

        @staticmethod
        def backward(ctx, g):
            (y,) = ctx.saved_tensors
            return g * y

    vals = [[0.5, -1.0], [2.0, 0.1]]
    x = autograd.tensor(vals, dtype=autograd.float64, requires_grad=True)
    tx = torch.tensor(vals, dtype=torch.float64, requires_grad=True)
    (Exp.apply(x) * x).sum().backward()
    (TExp.apply(tx) * tx).sum().backward()
    np.testing.assert_allclose(np.asarray(x.grad.array), tx.grad.numpy(), rtol=1e-14)
