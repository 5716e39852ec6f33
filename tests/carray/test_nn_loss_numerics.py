"""carray.nn.softmax_cross_entropy for logits of any size: loss_i = log(sum(exp(x - m))) -
(x_t - m), the difference to the row max taken first, so huge logits keep the loss (equal logits
of -1e38 give log 3, not 0). Against a NumPy float64 reference of that formula, autograd's
log_softmax + nll_loss (and its fused cross_entropy), and torch's cross_entropy when installed;
the gradient too; float32 and float64, cpu and gpu."""

import numpy as np
import pytest

import autograd
from autograd.nn import functional as F
from carray import nn

from conftest import on, to_numpy

REDUCTIONS = ("none", "sum", "mean")


def _logits(dtype):
    """(x, t): rows of huge logits, equal, tied and spread, with their targets."""
    big = 1e38 if dtype == "float32" else 1e300
    rng = np.random.default_rng(0)
    rows = [[-1e38] * 3, [1e38] * 3, [1e16] * 3, [-1e16, -1e16, 0.0], [1e16, 1e16 * 1.5, -1e16],
            [big, big, big], [-big, -big, -big, -big], [big, 0.0, -big], [3e37, 3e37, 1.0]]
    x = np.zeros((len(rows) + 6, 4), dtype)
    x[:] = -big
    for i, r in enumerate(rows):
        x[i, :len(r)] = r
    # near-equal huge values: ulp-sized differences
    for i in range(len(rows), x.shape[0]):
        scale = 10.0 ** rng.integers(16, 38)
        base = np.asarray(scale, dtype)
        x[i] = np.nextafter(base, np.asarray(np.inf, dtype)) if i % 2 else base
        x[i, rng.integers(0, 4)] = base
        x[i] *= 1 if i % 3 else -1
    t = rng.integers(0, 3, x.shape[0])
    return x, t


def _reference(x, t):
    """Per-row loss and softmax, float64, x - max first."""
    x = x.astype(np.float64)
    m = x.max(axis=1, keepdims=True)
    e = np.exp(x - m)
    s = e.sum(axis=1, keepdims=True)
    rows = np.arange(len(t))
    loss = np.log(s[:, 0]) - (x[rows, t] - m[:, 0])
    return loss, e / s


def _tol(dtype):
    return dict(rtol=1e-6, atol=1e-6) if dtype == "float32" else dict(rtol=1e-13, atol=1e-13)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_equal_logits_of_minus_1e38_give_log_3(device, dtype):
    x = on(np.full((2, 3), -1e38, dtype), device)
    for reduction in REDUCTIONS:
        loss = nn.softmax_cross_entropy(x, on(np.array([0, 2]), device), reduction=reduction)[0]
        expected = np.log(3) * (2 if reduction == "sum" else 1)
        np.testing.assert_allclose(to_numpy(loss), np.broadcast_to(expected, loss.shape),
                                   **_tol(dtype))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_huge_logits_match_the_reference(device, dtype, reduction):
    xn, tn = _logits(dtype)
    ref_loss, ref_p = _reference(xn, tn)
    loss, probs, count = nn.softmax_cross_entropy(on(xn, device), on(tn, device),
                                                  reduction=reduction)
    ref = {"none": ref_loss, "sum": ref_loss.sum(), "mean": ref_loss.mean()}[reduction]
    np.testing.assert_allclose(to_numpy(loss), ref, **_tol(dtype))
    np.testing.assert_allclose(to_numpy(probs), ref_p, **_tol(dtype))
    g = np.asarray(1.0 if reduction != "none" else np.linspace(0.5, 2, len(tn)), dtype)
    gx = nn.softmax_cross_entropy_grad(probs, on(tn, device), on(g, device),
                                       count if reduction == "mean" else None)
    onehot = np.eye(xn.shape[1])[tn]
    ref_gx = (ref_p - onehot) * (g[:, None] if g.ndim else g)
    if reduction == "mean":
        ref_gx /= len(tn)
    np.testing.assert_allclose(to_numpy(gx), ref_gx, **_tol(dtype))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_fused_cross_entropy_agrees_with_log_softmax_nll(device, dtype):
    xn, tn = _logits(dtype)
    target = autograd.tensor(tn, device=device)
    results = []
    for fused in (True, False):
        x = autograd.tensor(xn, device=device, requires_grad=True)
        loss = F.cross_entropy(x, target, reduction="none") if fused \
            else F.nll_loss(F.log_softmax(x, 1), target, reduction="none")
        loss.sum().backward()
        results.append((loss.detach().cpu().numpy(), x.grad.cpu().numpy()))
    np.testing.assert_allclose(results[0][0], results[1][0], **_tol(dtype))
    np.testing.assert_allclose(results[0][1], results[1][1], **_tol(dtype))
    np.testing.assert_allclose(results[0][0], _reference(xn, tn)[0], **_tol(dtype))

    torch = pytest.importorskip("torch")
    tx = torch.tensor(xn, requires_grad=True)
    tl = torch.nn.functional.cross_entropy(tx, torch.tensor(tn), reduction="none")
    tl.sum().backward()
    np.testing.assert_allclose(results[0][0], tl.detach().numpy(), **_tol(dtype))
    np.testing.assert_allclose(results[0][1], tx.grad.numpy(), **_tol(dtype))
