"""SmoothL1Loss, HuberLoss, KLDivLoss, CosineEmbeddingLoss, F.normalize, F.cosine_similarity,
F.pairwise_distance, and cross_entropy's option combinations, against PyTorch; gradchecks."""

import warnings

import numpy as np
import pytest

import autograd
from autograd import nn
from autograd.nn import functional as F

from _torch_modules import compare_fn, compare_module

rng = np.random.default_rng(0)


def _randn(*shape):
    return rng.standard_normal(shape).astype(np.float32)


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_regression_losses_against_torch(device, reduction):
    torch = pytest.importorskip("torch")
    x, t = _randn(4, 5) * 2, _randn(4, 5)
    for mine, theirs in ((nn.SmoothL1Loss(reduction=reduction, beta=0.5),
                          torch.nn.SmoothL1Loss(reduction=reduction, beta=0.5)),
                         (nn.SmoothL1Loss(reduction=reduction, beta=0.0),
                          torch.nn.SmoothL1Loss(reduction=reduction, beta=0.0)),
                         (nn.HuberLoss(reduction=reduction, delta=0.7),
                          torch.nn.HuberLoss(reduction=reduction, delta=0.7))):
        compare_module(mine, theirs, [x, t], device)
        assert repr(mine) == repr(theirs)
    w = np.abs(_randn(4, 5))
    compare_fn(lambda x, t, w: F.huber_loss(x, t, reduction, 1.5, w),
               lambda x, t, w: torch.nn.functional.huber_loss(x, t, reduction, 1.5, w),
               [x, t, w], device)


@pytest.mark.parametrize("reduction", ["batchmean", "sum", "none", "mean"])
@pytest.mark.parametrize("log_target", [False, True])
def test_kl_div_against_torch(device, reduction, log_target):
    torch = pytest.importorskip("torch")
    x = np.log(np.abs(_randn(3, 4)) + 0.1)
    t = np.abs(_randn(3, 4))
    if log_target:
        t = np.log(t + 0.2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        compare_module(nn.KLDivLoss(reduction=reduction, log_target=log_target),
                       torch.nn.KLDivLoss(reduction=reduction, log_target=log_target), [x, t],
                       device)


def test_kl_div_zero_target_contributes_zero(device):
    x = autograd.randn(2, 3, device=device, requires_grad=True)
    t = autograd.tensor([[0.0, 0.5, 0.5], [1.0, 0.0, 0.0]], device=device)
    loss = F.kl_div(x, t, reduction="none")
    ref = np.where(t.cpu().numpy() > 0, t.cpu().numpy() * (np.log(np.where(
        t.cpu().numpy() > 0, t.cpu().numpy(), 1)) - x.detach().cpu().numpy()), 0)
    np.testing.assert_allclose(loss.detach().cpu().numpy(), ref, rtol=1e-6, atol=1e-7)
    loss.sum().backward()
    np.testing.assert_allclose(x.grad.cpu().numpy(), -t.cpu().numpy())


def test_kl_div_mean_warns():
    with pytest.warns(UserWarning, match="'batchmean' divides only by the batch size"):
        F.kl_div(autograd.randn(2, 3), autograd.rand(2, 3))


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_cosine_embedding_loss_against_torch(device, reduction):
    torch = pytest.importorskip("torch")
    x1, x2 = _randn(6, 5), _randn(6, 5)
    y = np.array([1, -1, 1, -1, -1, 1], dtype=np.int64)
    compare_module(nn.CosineEmbeddingLoss(margin=0.2, reduction=reduction),
                   torch.nn.CosineEmbeddingLoss(margin=0.2, reduction=reduction), [x1, x2, y],
                   device)
    compare_fn(F.cosine_embedding_loss, torch.nn.functional.cosine_embedding_loss,
               [x1[0], x2[0], np.array(-1, dtype=np.int64)], device)


def test_distances_against_torch(device):
    torch = pytest.importorskip("torch")
    TF = torch.nn.functional
    x1, x2 = _randn(4, 5), _randn(4, 5)
    xt = np.ascontiguousarray(x1.T).T
    for p in (2.0, 1.0, 3.0):
        compare_fn(lambda x: F.normalize(x, p, 0), lambda x: TF.normalize(x, p, 0), [xt], device)
        compare_fn(lambda a, b: F.pairwise_distance(a, b, p), lambda a, b:
                   TF.pairwise_distance(a, b, p), [x1, x2], device)
    compare_fn(F.normalize, TF.normalize, [x1], device)
    compare_fn(F.cosine_similarity, TF.cosine_similarity, [x1, x2], device)
    compare_fn(lambda a, b: F.cosine_similarity(a, b, dim=0),
               lambda a, b: TF.cosine_similarity(a, b, dim=0), [xt, x2[:1]], device)
    compare_fn(lambda a, b: F.pairwise_distance(a, b, keepdim=True),
               lambda a, b: TF.pairwise_distance(a, b, keepdim=True), [x1, x2[0]], device)


def test_gradchecks():
    def r(*shape):
        return autograd.from_numpy(rng.standard_normal(shape)).requires_grad_(True)
    x, t, y = r(3, 4), r(3, 4), r(3, 4)
    assert autograd.gradcheck(lambda x, t: F.smooth_l1_loss(x, t, beta=0.5), (x, t))
    assert autograd.gradcheck(lambda x, t: F.huber_loss(x, t, delta=0.5), (x, t))
    pos = autograd.from_numpy(np.abs(rng.standard_normal((3, 4))) + 0.1).requires_grad_(True)
    assert autograd.gradcheck(lambda x, t: F.kl_div(x, t, reduction="batchmean"), (x, pos))
    assert autograd.gradcheck(lambda x, t: F.kl_div(x, t, reduction="sum", log_target=True),
                              (x, t))
    target = autograd.tensor([1, -1, 1])
    assert autograd.gradcheck(lambda a, b: F.cosine_embedding_loss(a, b, target, 0.1), (x, y))
    assert autograd.gradcheck(lambda a: F.normalize(a, 3.0, 1), (x,))
    assert autograd.gradcheck(lambda a, b: F.cosine_similarity(a, b), (x, y))
    assert autograd.gradcheck(lambda a, b: F.pairwise_distance(a, b), (x, y))


@pytest.mark.parametrize("weight", [False, True])
@pytest.mark.parametrize("smoothing", [0.0, 0.2])
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_cross_entropy_combinations_against_torch(device, weight, smoothing, reduction):
    torch = pytest.importorskip("torch")
    x = _randn(6, 4, 3)
    idx = rng.integers(0, 4, (6, 3)).astype(np.int64)
    idx[1, 2] = idx[4, 0] = -7  # ignored
    probs = np.abs(_randn(6, 4, 3))
    probs /= probs.sum(1, keepdims=True)
    w = np.abs(_randn(4)) + 0.1 if weight else None
    kw = {"label_smoothing": smoothing, "reduction": reduction}
    compare_module(nn.CrossEntropyLoss(weight=None if w is None else autograd.from_numpy(w),
                                       ignore_index=-7, **kw).to(device),
                   torch.nn.CrossEntropyLoss(weight=None if w is None else torch.from_numpy(w),
                                             ignore_index=-7, **kw), [x, idx], device, load=False)
    compare_module(nn.CrossEntropyLoss(weight=None if w is None else autograd.from_numpy(w),
                                       **kw).to(device),
                   torch.nn.CrossEntropyLoss(weight=None if w is None else torch.from_numpy(w),
                                             **kw), [x, probs], device, load=False)


def test_errors():
    x = autograd.randn(3, 5)
    with pytest.raises(RuntimeError, match="huber_loss does not support non-positive values"):
        F.huber_loss(x, x, delta=-1)
    with pytest.raises(RuntimeError, match="smooth_l1_loss does not support negative values"):
        F.smooth_l1_loss(x, x, beta=-1)
    with pytest.raises(ValueError, match="foo is not a valid value for reduction"):
        F.kl_div(x, x, reduction="foo")
    with pytest.raises(RuntimeError, match="0D or 1D target tensor expected"):
        F.cosine_embedding_loss(x, x, autograd.ones(3, 1))
    with pytest.raises(RuntimeError, match="1D target tensor expects 2D input tensors"):
        F.cosine_embedding_loss(x[0], x[0], autograd.ones(3))
    with pytest.raises(IndexError, match="Dimension out of range"):
        F.normalize(x, dim=3)
    with pytest.raises(ValueError, match="Weights and input must have the same size"):
        F.huber_loss(x, x, weight=autograd.ones(5))
