"""autograd.gradcheck / gradgradcheck: pass on correct gradients, raise (a RuntimeError) on a
deliberately wrong custom Function, handle several inputs and outputs and non-contiguous
inputs."""

import numpy as np
import pytest

import autograd
from autograd import Function

from _check import make_input

F64 = autograd.float64


class WrongSin(Function):
    """sin with a wrong derivative (cos scaled by 1.01)."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x.sin()

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * x.cos() * 1.01


class WrongBroadcast(Function):
    """a * b whose gradient for b forgets a."""

    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        return a * b

    @staticmethod
    def backward(ctx, g):
        a, b = ctx.saved_tensors
        return g * b, g


class RightCube(Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x ** 3

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return 3 * g * x * x


class WrongSecondDerivative(Function):
    """x**3 whose backward is right in value but built from a constant, so its own derivative
    is wrong (zero)."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x ** 3

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return 3 * g * x.detach() * x.detach()


def _x(*shape, seed=0):
    rng = np.random.default_rng(seed)
    return autograd.tensor(rng.standard_normal(shape), requires_grad=True)


def test_gradcheck_passes_on_correct_gradients():
    x = _x(2, 3)
    assert autograd.gradcheck(lambda t: (t.sin() * t).sum(1), (x,)) is True
    assert autograd.gradcheck(RightCube.apply, x) is True
    assert autograd.gradcheck(lambda a, b: a @ b, (_x(2, 3), _x(3, 2, seed=1)))


def test_gradcheck_raises_on_wrong_gradient():
    x = _x(3)
    with pytest.raises(RuntimeError, match="Jacobian mismatch"):
        autograd.gradcheck(WrongSin.apply, (x,))
    assert autograd.gradcheck(WrongSin.apply, (x,), raise_exception=False) is False


def test_gradcheck_raises_for_wrong_second_input():
    a, b = _x(2, 3), _x(3, seed=1)
    with pytest.raises(RuntimeError, match="input 1"):
        autograd.gradcheck(WrongBroadcast.apply, (a, b))


def test_gradcheck_ignores_inputs_without_grad():
    a = _x(2)
    c = autograd.tensor([1.0, 2.0], dtype=F64)
    assert autograd.gradcheck(lambda a, c, k: a * c * k, (a, c, 3.0))


def test_gradcheck_multiple_outputs():
    x = _x(2, 2)
    assert autograd.gradcheck(lambda t: (t.exp(), t.sum(0), t.max(1).values), (x,))


def test_gradcheck_needs_an_input_requiring_grad():
    with pytest.raises(ValueError):
        autograd.gradcheck(lambda t: t * 2, (autograd.ones(2, dtype=F64),))


def test_gradcheck_non_contiguous_inputs():
    v = np.random.default_rng(2).standard_normal((3, 4))
    for layout in ("transposed", "sliced"):
        x = make_input(v, layout)
        assert autograd.gradcheck(lambda t: t.exp() * t, (x,))
        with pytest.raises(RuntimeError):
            autograd.gradcheck(WrongSin.apply, (x,))
        # the input is left unchanged by the finite differences
        np.testing.assert_array_equal(np.asarray(x.array), v)


def test_gradcheck_tolerances():
    x = _x(3)
    # a 1% error passes with a loose rtol
    assert autograd.gradcheck(WrongSin.apply, (x,), rtol=0.05, atol=1e-3)


def test_gradcheck_warns_for_float32():
    x = autograd.randn(3, requires_grad=True)
    with pytest.warns(UserWarning):
        autograd.gradcheck(lambda t: t * 2, (x,), atol=1e-2, rtol=1e-2, eps=1e-3)


def test_gradgradcheck():
    x = _x(3)
    assert autograd.gradgradcheck(lambda t: (t.tanh() * t.exp()), (x,))
    assert autograd.gradgradcheck(RightCube.apply, (x,))
    with pytest.raises(RuntimeError):
        autograd.gradgradcheck(WrongSecondDerivative.apply, (x,))


def test_gradcheck_agrees_with_torch_on_failures():
    torch = pytest.importorskip("torch")

    class TWrong(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x.sin()

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return g * x.cos() * 1.01

    tx = torch.randn(3, dtype=torch.float64, requires_grad=True)
    assert not torch.autograd.gradcheck(TWrong.apply, (tx,), raise_exception=False)
    x = autograd.tensor(tx.detach().numpy(), requires_grad=True)
    assert not autograd.gradcheck(WrongSin.apply, (x,), raise_exception=False)


class ZeroGradIsOnes(Function):
    """2x whose backward is right except for a zero output gradient, where it gives ones."""

    @staticmethod
    def forward(ctx, x):
        return x * 2

    @staticmethod
    def backward(ctx, g):
        return g * 2 if bool((g != 0).any()) else g + 1


class Nondeterministic(Function):
    """x ** 2 whose backward adds a different tiny amount each call."""

    calls = 0

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        Nondeterministic.calls += 1
        return g * (2 * x + 1e-9 * Nondeterministic.calls)


def test_gradcheck_check_undefined_grad():
    x = _x(3)
    with pytest.raises(RuntimeError, match="undefined output grads"):
        autograd.gradcheck(ZeroGradIsOnes.apply, (x,))
    assert autograd.gradcheck(ZeroGradIsOnes.apply, (x,), check_undefined_grad=False)


def test_gradcheck_nondet_tol():
    x = _x(3)
    with pytest.raises(RuntimeError, match="not reentrant"):
        autograd.gradcheck(Nondeterministic.apply, (x,))
    assert autograd.gradcheck(Nondeterministic.apply, (x,), nondet_tol=1e-6)
    assert autograd.gradcheck(Nondeterministic.apply, (x,), nondet_tol=1e-6, fast_mode=True)
    with pytest.raises(ValueError):
        autograd.gradcheck(lambda t: t * 2, (x,), nondet_tol=-1.0)


def test_gradcheck_fast_mode():
    x, y = _x(3, 4), _x(4, seed=1)
    assert autograd.gradcheck(lambda a, b: (a.sin() * b, (a @ b).exp()), (x, y), fast_mode=True)
    with pytest.raises(RuntimeError, match="fast mode"):
        autograd.gradcheck(WrongSin.apply, (x,), fast_mode=True)
    assert autograd.gradcheck(WrongSin.apply, (x,), fast_mode=True,
                              raise_exception=False) is False
    # the inputs are restored after the finite differences
    np.testing.assert_array_equal(np.asarray(x.array), np.asarray(_x(3, 4).array))
