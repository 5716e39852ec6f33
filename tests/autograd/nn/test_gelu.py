"""Exact GELU as one Function on carray.erf (h12 item 2): against PyTorch on every device,
float64 gradcheck and gradgradcheck, and autograd.erf against PyTorch."""

import numpy as np
import pytest

import autograd
import autograd.nn.functional as F

from _torch_compare import compare


def _values(shape, dtype, seed=0):
    x = np.random.default_rng(seed).standard_normal(shape) * 3
    x.flat[:3] = (0.0, -8.0, 9.0)  # zero and the saturated tails
    return x.astype(dtype)


@pytest.mark.parametrize("noncontiguous", [False, True])
def test_gelu_matches_torch_float64(device, noncontiguous):
    torch = pytest.importorskip("torch")
    compare(F.gelu, torch.nn.functional.gelu, [_values((4, 7), np.float64)], device, torch,
            noncontiguous=noncontiguous, rtol=1e-12, atol=1e-14)


def test_gelu_matches_torch_float32(device):
    torch = pytest.importorskip("torch")
    compare(F.gelu, torch.nn.functional.gelu, [_values((3, 50), np.float32)], device, torch,
            rtol=2e-6, atol=1e-6)
    compare(autograd.nn.GELU(), torch.nn.GELU(), [_values((64,), np.float32, 1)], device, torch,
            rtol=2e-6, atol=1e-6)


def test_gelu_is_one_node():
    x = autograd.randn(5, requires_grad=True)
    y = F.gelu(x)
    assert y.grad_fn.name() == "GeluBackward0"
    assert y.grad_fn.next_functions[0][0].name() == "AccumulateGrad"


def test_gelu_empty(device):
    x = autograd.zeros(0, 3, device=device, requires_grad=True)
    y = F.gelu(x)
    y.sum().backward()
    assert tuple(y.shape) == (0, 3) and tuple(x.grad.shape) == (0, 3)


def test_gelu_gradcheck_float64(device):
    x = autograd.tensor(_values((3, 4), np.float64, 2), device=device, requires_grad=True)
    assert autograd.gradcheck(F.gelu, (x,))
    assert autograd.gradgradcheck(F.gelu, (x,))


def test_gelu_hand_derived_derivative():
    """d/dx x Phi(x) = Phi(x) + x phi(x), from math.erf (no torch needed)."""
    import math
    xs = [-3.0, -0.5, 0.0, 0.7, 2.5]
    x = autograd.tensor(xs, dtype=autograd.float64, requires_grad=True)
    F.gelu(x).sum().backward()
    for v, y, g in zip(xs, F.gelu(x).tolist(), x.grad.tolist()):
        cdf = 0.5 * (1 + math.erf(v / math.sqrt(2)))
        assert y == pytest.approx(v * cdf, rel=1e-14, abs=1e-15)
        assert g == pytest.approx(cdf + v * math.exp(-v * v / 2) / math.sqrt(2 * math.pi),
                                  rel=1e-14, abs=1e-15)


def test_gelu_bad_approximate():
    torch = pytest.importorskip("torch")
    from _torch_compare import same_error
    same_error(lambda: F.gelu(autograd.ones(2), approximate="fast"),
               lambda: torch.nn.functional.gelu(torch.ones(2), approximate="fast"))


def test_erf_matches_torch(device):
    torch = pytest.importorskip("torch")
    compare(autograd.erf, torch.erf, [_values((5, 6), np.float64)], device, torch,
            rtol=1e-12, atol=1e-14)
