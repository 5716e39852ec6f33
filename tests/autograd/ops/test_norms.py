"""The vector norm's gradient is 0, not NaN, where the norm is 0 (h12 item 4), for p = 2 and
general p; the functions built on it (normalize, cosine_similarity, pairwise_distance) too."""

import math

import numpy as np
import pytest

import autograd
import autograd.nn.functional as F

from _torch_compare import compare

PS = [2, 1, 3, 1.5, 0.5, math.inf, -math.inf]


def _with_zero_rows(shape, seed=0):
    x = np.random.default_rng(seed).standard_normal(shape)
    x[0] = 0.0
    return x


@pytest.mark.parametrize("p", PS)
@pytest.mark.parametrize("dim,keepdim", [(None, False), (1, False), (-1, True), ((0, 2), False)])
def test_norm_matches_torch(device, p, dim, keepdim):
    torch = pytest.importorskip("torch")
    x = _with_zero_rows((3, 4, 5))
    if dim is None:
        x = np.random.default_rng(1).standard_normal((3, 4, 5))
    compare(lambda t: autograd.norm(t, p, dim, keepdim), lambda t: torch.norm(t, p, dim, keepdim),
            [x], device, torch, noncontiguous=True, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("p", [2, 1, 3, 1.5, 0.5, math.inf])
def test_norm_of_zeros_has_zero_gradient(device, p):
    x = autograd.zeros(4, dtype=autograd.float64, device=device, requires_grad=True)
    y = autograd.norm(x, p)
    assert y.item() == 0.0
    y.backward()
    assert x.grad.tolist() == [0.0] * 4


def test_norm_p0_counts_nonzeros_and_gives_no_gradient(device):
    x = autograd.tensor([0.0, 2.0, -1.0, 0.0], device=device, requires_grad=True)
    y = autograd.norm(x, 0)
    assert y.item() == 2.0
    y.backward()
    assert x.grad is None


def test_normalize_cosine_similarity_at_zero_match_torch(device):
    torch = pytest.importorskip("torch")
    a, b = _with_zero_rows((3, 6)), _with_zero_rows((3, 6), 1)
    compare(lambda t: F.normalize(t, dim=1), lambda t: torch.nn.functional.normalize(t, dim=1),
            [a], device, torch, rtol=1e-10, atol=1e-12)
    compare(F.cosine_similarity, torch.nn.functional.cosine_similarity, [a, b], device, torch,
            rtol=1e-10, atol=1e-12)
    compare(lambda u, v: F.pairwise_distance(u, v, eps=0.0),
            lambda u, v: torch.nn.functional.pairwise_distance(u, v, eps=0.0), [a, a.copy()],
            device, torch, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("p", [2, 3, 1.5])
def test_norm_gradcheck_float64(device, p):
    x = autograd.tensor(_with_zero_rows((2, 3), 3) + 0.5, device=device, requires_grad=True)
    assert autograd.gradcheck(lambda t: autograd.norm(t, p, 1), (x,))
    assert autograd.gradgradcheck(lambda t: autograd.norm(t, p, 1), (x,))


def test_norm_errors():
    torch = pytest.importorskip("torch")
    from _torch_compare import same_error
    same_error(lambda: autograd.norm(autograd.empty(0), math.inf),
               lambda: torch.linalg.vector_norm(torch.empty(0), math.inf))
    with pytest.raises(RuntimeError, match="vector_norm.*floating point"):
        autograd.linalg.vector_norm(autograd.arange(3))
