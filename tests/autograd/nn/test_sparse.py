"""Embedding and EmbeddingBag (and F.embedding, F.embedding_bag) against PyTorch: lookups,
weight gradients (padding_idx, scale_grad_by_freq, per_sample_weights), max_norm's in-place
renormalisation, from_pretrained, init, reprs, errors; and gradcheck in float64."""

import numpy as np
import pytest

import autograd
from autograd import nn
from autograd.nn import functional as F

from _torch_modules import load_torch_state, to_autograd

rng = np.random.default_rng(0)


def _idx(*shape, high=10):
    return rng.integers(0, high, shape).astype(np.int64)


def _run_both(mine, theirs, device, *args, **kwargs):
    """Forward both on the NumPy args (int ones as indices), backward the same random grad;
    compare outputs, the weight gradients and the weights (max_norm changes them)."""
    torch = pytest.importorskip("torch")
    load_torch_state(mine, theirs, device)
    ins = [None if a is None else to_autograd(a, device) for a in args]
    tins = [None if a is None else torch.from_numpy(np.array(a)).requires_grad_(
        a.dtype.kind == "f") for a in args]
    out = mine(*ins, **kwargs)
    ref = theirs(*tins, **kwargs)
    np.testing.assert_allclose(out.detach().cpu().numpy(), ref.detach().numpy(), rtol=1e-5,
                               atol=1e-6)
    g = rng.standard_normal(tuple(ref.shape)).astype(np.float32)
    out.backward(autograd.from_numpy(g).to(device))
    ref.backward(torch.from_numpy(g))
    np.testing.assert_allclose(mine.weight.grad.cpu().numpy(), theirs.weight.grad.numpy(),
                               rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(mine.weight.detach().cpu().numpy(),
                               theirs.weight.detach().numpy(), rtol=1e-5, atol=1e-6)
    for a, t in zip(ins, tins):
        if a is not None and a.requires_grad:
            np.testing.assert_allclose(a.grad.cpu().numpy(), t.grad.numpy(), rtol=1e-5,
                                       atol=1e-6)


@pytest.mark.parametrize("kwargs", [{}, {"padding_idx": 3}, {"padding_idx": -2},
                                    {"scale_grad_by_freq": True, "padding_idx": 0},
                                    {"max_norm": 1.0}, {"max_norm": 2.0, "norm_type": 1.0}])
def test_embedding_against_torch(device, kwargs):
    torch = pytest.importorskip("torch")
    _run_both(nn.Embedding(10, 4, **kwargs), torch.nn.Embedding(10, 4, **kwargs), device,
              _idx(3, 5))


def test_embedding_transposed_indices_and_empty(device):
    torch = pytest.importorskip("torch")
    idx = np.ascontiguousarray(_idx(5, 3).T).T
    _run_both(nn.Embedding(10, 4), torch.nn.Embedding(10, 4), device, idx)
    out = nn.Embedding(10, 4).to(device)(autograd.zeros(0, 2, dtype=autograd.int64,
                                                        device=device))
    assert out.shape == (0, 2, 4)


def test_embedding_init_and_padding_row():
    autograd.manual_seed(0)
    m = nn.Embedding(1000, 8, padding_idx=5)
    w = m.weight.detach().numpy()
    assert abs(w.std() - 1) < 0.05 and abs(w.mean()) < 0.05  # N(0, 1)
    assert not w[5].any() and m.padding_idx == 5
    assert nn.Embedding(10, 3, padding_idx=-1).padding_idx == 9
    assert list(m.state_dict()) == ["weight"]


def test_from_pretrained():
    w = autograd.randn(4, 3)
    m = nn.Embedding.from_pretrained(w)
    assert not m.weight.requires_grad and m.num_embeddings == 4 and m.embedding_dim == 3
    np.testing.assert_array_equal(m(autograd.tensor([2])).numpy()[0], w.numpy()[2])
    assert nn.Embedding.from_pretrained(w, freeze=False, padding_idx=1).weight.requires_grad
    bag = nn.EmbeddingBag.from_pretrained(w, mode="sum")
    assert not bag.weight.requires_grad and bag.mode == "sum"
    with pytest.raises(AssertionError, match="2-dimensional"):
        nn.Embedding.from_pretrained(autograd.randn(3))


def test_reprs():
    assert repr(nn.Embedding(5, 3, padding_idx=1, max_norm=2)) == \
        "Embedding(5, 3, padding_idx=1, max_norm=2)"
    assert repr(nn.Embedding(5, 3, norm_type=1.0, scale_grad_by_freq=True)) == \
        "Embedding(5, 3, norm_type=1.0, scale_grad_by_freq=True)"
    assert repr(nn.EmbeddingBag(5, 3)) == "EmbeddingBag(5, 3, mode='mean')"
    assert repr(nn.EmbeddingBag(5, 3, mode="max", padding_idx=0)) == \
        "EmbeddingBag(5, 3, mode='max', padding_idx=0)"


def test_embedding_errors(device):
    m = nn.Embedding(5, 3).to(device)
    for bad in ([[1, 5]], [[-1, 0]]):
        with pytest.raises(IndexError, match="index out of range in self"):
            # on the gpu the lookup checks on the device: the error comes at the next read
            m(autograd.tensor(bad, device=device)).sum().item()
    with pytest.raises(RuntimeError, match="Long, Int"):
        m(autograd.tensor([1.0], device=device))
    with pytest.raises(AssertionError, match="Padding_idx must be within num_embeddings"):
        nn.Embedding(5, 3, padding_idx=7)
    with pytest.raises(RuntimeError, match="sparse"):
        nn.Embedding(5, 3, sparse=True)


def test_embedding_gradcheck():
    w = autograd.randn(6, 3, dtype=autograd.float64, requires_grad=True)
    idx = autograd.tensor([[0, 2, 2], [5, 1, 0]])
    assert autograd.gradcheck(lambda w: F.embedding(idx, w), (w,))
    F.embedding(idx, w, padding_idx=2).sum().backward()  # by design not the true gradient
    np.testing.assert_array_equal(w.grad.numpy(), [[2] * 3, [1] * 3, [0] * 3, [0] * 3,
                                                   [0] * 3, [1] * 3])
    w2 = autograd.randn(6, 3, dtype=autograd.float64, requires_grad=True)
    F.embedding(idx, w2, scale_grad_by_freq=True).sum().backward()  # counts divided out
    np.testing.assert_array_equal(w2.grad.numpy()[:, 0], [1, 1, 1, 0, 0, 1])


BAG_CASES = [
    # (input, offsets, mode, include_last_offset, padding_idx, per_sample_weights)
    (_idx(3, 4), None, "mean", False, None, False),
    (_idx(3, 4), None, "sum", False, 2, True),
    (_idx(3, 4), None, "max", False, None, False),
    (_idx(9), np.array([0, 2, 2, 7]), "sum", False, None, True),
    (_idx(9), np.array([0, 2, 2, 7]), "mean", False, 1, False),
    (_idx(9), np.array([0, 3, 3, 9]), "max", True, None, False),
    (_idx(9), np.array([0, 4, 9]), "mean", True, None, False),
    (np.array([4, 4, 1, 4], dtype=np.int64), np.array([0, 2]), "mean", False, 4, False),
]


@pytest.mark.parametrize("case", range(len(BAG_CASES)))
def test_embedding_bag_against_torch(device, case):
    torch = pytest.importorskip("torch")
    inp, offsets, mode, last, pad, psw = BAG_CASES[case]
    kw = {"mode": mode, "include_last_offset": last, "padding_idx": pad}
    args = [inp, offsets, rng.standard_normal(inp.shape).astype(np.float32) if psw else None]
    _run_both(nn.EmbeddingBag(10, 3, **kw), torch.nn.EmbeddingBag(10, 3, **kw), device, *args)


def test_embedding_bag_gradcheck():
    w = autograd.randn(6, 3, dtype=autograd.float64, requires_grad=True)
    psw = autograd.randn(5, dtype=autograd.float64, requires_grad=True)
    idx, off = autograd.tensor([0, 2, 5, 1, 3]), autograd.tensor([0, 2, 2])
    assert autograd.gradcheck(lambda w, p: F.embedding_bag(idx, w, off, mode="sum",
                                                           per_sample_weights=p), (w, psw))
    assert autograd.gradcheck(lambda w: F.embedding_bag(idx, w, off, mode="mean"), (w,))
    assert autograd.gradcheck(lambda w: F.embedding_bag(idx, w, off, mode="max"), (w,))


def test_embedding_bag_errors(device):
    w = autograd.randn(5, 3, device=device)
    i1 = autograd.tensor([1, 2], device=device)
    off = autograd.tensor([0], device=device)
    with pytest.raises(NotImplementedError, match="only supported for mode='sum'"):
        F.embedding_bag(i1, w, off, mode="mean",
                        per_sample_weights=autograd.ones(2, device=device))
    with pytest.raises(ValueError, match="if input is 2D, then offsets has to be None"):
        F.embedding_bag(autograd.tensor([[1, 2]], device=device), w, off)
    with pytest.raises(ValueError, match="offsets has to be a 1D Tensor but got None"):
        F.embedding_bag(i1, w)
    with pytest.raises(ValueError, match="mode has to be one of sum, mean or max"):
        F.embedding_bag(i1, w, off, mode="foo")
    with pytest.raises(IndexError, match="index out of range"):
        F.embedding_bag(autograd.tensor([1, 7], device=device), w, off)
    with pytest.raises(RuntimeError, match=r"offsets\[0\] has to be 0"):
        F.embedding_bag(i1, w, autograd.tensor([1], device=device))
    with pytest.raises(RuntimeError, match=r"offsets\[-1\] can not be greater"):
        F.embedding_bag(i1, w, autograd.tensor([0, 3], device=device))
    with pytest.raises(ValueError, match="must have the same shape as the input"):
        F.embedding_bag(i1, w, off, mode="sum", per_sample_weights=autograd.ones(3))
    with pytest.raises(ValueError, match="max mode does not support scaling"):
        F.embedding_bag(i1, w, off, mode="max", scale_grad_by_freq=True)
