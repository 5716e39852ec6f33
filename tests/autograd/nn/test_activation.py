"""The activation modules and functions added for issue 12 (GELU ... Threshold) against PyTorch:
forward, gradients, parameters, reprs, errors; plus float64 gradchecks."""

import numpy as np
import pytest

import autograd
from autograd import nn
from autograd.nn import functional as F
from autograd.ops.elementwise import Erf

from _torch_modules import compare_fn, compare_module

rng = np.random.default_rng(0)
X = (rng.standard_normal((4, 6)) * 3).astype(np.float32)
XT = np.ascontiguousarray(X.T).T  # the same values, transposed in memory

MODULES = [
    ("GELU", (), {}), ("GELU", ("tanh",), {}), ("SiLU", (), {}), ("LeakyReLU", (0.2,), {}),
    ("ELU", (0.7,), {}), ("CELU", (1.3,), {}), ("SELU", (), {}), ("Softplus", (2.0, 3.0), {}),
    ("Mish", (), {}), ("Hardswish", (), {}), ("Hardsigmoid", (), {}),
    ("Hardtanh", (-0.5, 2.0), {}), ("ReLU6", (), {}), ("PReLU", (), {}), ("PReLU", (6,), {}),
    ("GLU", (), {}), ("GLU", (0,), {}), ("LogSigmoid", (), {}), ("Softsign", (), {}),
    ("Tanhshrink", (), {}), ("Threshold", (0.1, 20.0), {}),
]


@pytest.mark.parametrize("name,args,kwargs", MODULES)
@pytest.mark.parametrize("x", [X, XT], ids=["contiguous", "transposed"])
def test_module_against_torch(device, name, args, kwargs, x):
    torch = pytest.importorskip("torch")
    theirs = getattr(torch.nn, name)(*args, **kwargs)
    mine = getattr(nn, name)(*args, **kwargs)
    compare_module(mine, theirs, [x], device)
    assert repr(mine) == repr(theirs)


@pytest.mark.parametrize("name", ["SiLU", "Mish", "SELU", "ELU", "CELU", "Hardswish",
                                  "Hardsigmoid", "LeakyReLU", "Hardtanh", "ReLU6"])
def test_inplace_against_torch(device, name):
    torch = pytest.importorskip("torch")
    mine = getattr(nn, name)(inplace=True)
    theirs = getattr(torch.nn, name)(inplace=True)
    assert repr(mine) == repr(theirs)
    a = autograd.from_numpy(X.copy()).to(device)
    out = mine(a)
    np.testing.assert_allclose(a.cpu().numpy(), theirs(torch.from_numpy(X.copy())).numpy(),
                               rtol=1e-5, atol=1e-6)
    assert out is a


def test_threshold_inplace(device):
    a = autograd.from_numpy(X.copy()).to(device)
    F.threshold(a, 0.5, -1.0, inplace=True)
    np.testing.assert_array_equal(a.cpu().numpy(), np.where(X > 0.5, X, -1.0))


def test_prelu_on_images_and_params(device):
    torch = pytest.importorskip("torch")
    x = rng.standard_normal((2, 3, 4, 5)).astype(np.float32)
    theirs = torch.nn.PReLU(3, init=0.1)
    mine, _ = compare_module(nn.PReLU(3, init=0.1), theirs, [x], device)
    assert list(mine.state_dict()) == ["weight"] and mine.weight.shape == (3,)
    assert nn.PReLU(init=0.3).weight.tolist() == pytest.approx([0.3])


def test_gelu_exact_accuracy():
    """Exact gelu's erf to float64 accuracy, and gelu in float32 as PyTorch's (which loses the
    far negative tail to cancellation in 1 + erf, as ours does)."""
    import math
    x = np.linspace(-8, 8, 2001)
    got = Erf.apply(autograd.from_numpy(x)).numpy()
    np.testing.assert_allclose(got, [math.erf(v) for v in x], rtol=1e-14, atol=1e-300)
    torch = pytest.importorskip("torch")
    x32 = x.astype(np.float32)
    np.testing.assert_allclose(F.gelu(autograd.from_numpy(x32)).numpy(),
                               torch.nn.functional.gelu(torch.from_numpy(x32)).numpy(),
                               rtol=1e-6, atol=2e-6)  # |x| * float32 eps, from 1 + erf


@pytest.mark.parametrize("fn", [
    lambda x: F.gelu(x), lambda x: F.gelu(x, approximate="tanh"), F.silu, F.mish, F.selu,
    lambda x: F.celu(x, 0.5), F.logsigmoid, F.softsign, F.tanhshrink, F.hardswish,
    F.hardsigmoid, lambda x: F.glu(x, 1), lambda x: F.threshold(x, 0.1, 2.0),
    lambda x: F.elu(x, 0.3), lambda x: F.softplus(x, 2.0, 5.0)])
def test_gradcheck(fn):
    x = autograd.from_numpy(rng.standard_normal((3, 4)) * 2).requires_grad_(True)
    assert autograd.gradcheck(fn, (x,))


def test_prelu_gradcheck():
    x = autograd.from_numpy(rng.standard_normal((3, 4, 2))).requires_grad_(True)
    w = autograd.from_numpy(rng.standard_normal(4)).requires_grad_(True)
    assert autograd.gradcheck(F.prelu, (x, w))


def test_functional_against_torch(device):
    torch = pytest.importorskip("torch")
    TF = torch.nn.functional
    for mine, theirs in ((F.logsigmoid, TF.logsigmoid), (F.softsign, TF.softsign),
                         (F.tanhshrink, TF.tanhshrink), (F.selu, TF.selu),
                         (lambda x: F.glu(x, 0), lambda x: TF.glu(x, 0))):
        compare_fn(mine, theirs, [X * 10], device)


def test_errors():
    with pytest.raises(RuntimeError, match="Halving dimension must be even, but dimension 1 "
                                           "is size 5"):
        F.glu(autograd.randn(3, 5))
    with pytest.raises(RuntimeError, match="Mismatch of parameter numbers and input channel "
                                           "size"):
        F.prelu(autograd.randn(3, 5), autograd.ones(2))
    with pytest.raises(AssertionError, match="max_val"):
        nn.Hardtanh(1.0, 0.0)
    with pytest.raises(RuntimeError, match="approximate"):
        F.gelu(autograd.randn(3), approximate="fast")
