"""nn.utils: clip_grad_norm_ / clip_grad_value_ / get_total_norm against hand-computed norms
and PyTorch on cpu and gpu (the norm stays a 0-d tensor on the gradients' device), and
parameters_to_vector / vector_to_parameters."""

import math

import numpy as np
import pytest

import autograd
from autograd import nn

from conftest import have_gpu

SHAPES = [(3, 4), (5,), (2, 1, 3)]


def _grads(seed, scale=1.0):
    rng = np.random.default_rng(seed)
    return [(scale * rng.standard_normal(s)).astype(np.float32) for s in SHAPES]


def _params(grads, device):
    params = [nn.Parameter(autograd.zeros(*g.shape, device=device)) for g in grads]
    for p, g in zip(params, grads):
        p.grad = autograd.tensor(g, device=device)
    return params


def _np_norm(grads, p):
    flat = np.concatenate([g.ravel().astype(np.float64) for g in grads])
    if p == math.inf:
        return np.abs(flat).max()
    if p == -math.inf:
        return np.abs(flat).min()
    return (np.abs(flat) ** p).sum() ** (1 / p)


@pytest.mark.parametrize("norm_type", [2.0, 1, 3.5, math.inf, -math.inf])
@pytest.mark.parametrize("max_norm", [0.5, 1e3])
def test_clip_grad_norm_by_hand(norm_type, max_norm, device):
    grads = _grads(1)
    params = _params(grads, device)
    total = nn.utils.clip_grad_norm_(params, max_norm, norm_type)
    want = _np_norm(grads, norm_type)
    assert total.shape == () and total.device == device and total.dtype == autograd.float32
    assert total.item() == pytest.approx(want, rel=1e-5)
    scale = min(max_norm / (want + 1e-6), 1.0)
    for p, g in zip(params, grads):
        np.testing.assert_allclose(p.grad.cpu().numpy(), g * scale, rtol=1e-5, atol=1e-7)
        assert p.grad.device == device


@pytest.mark.parametrize("norm_type", [2.0, 1, 0, 3.5, math.inf, -math.inf])
def test_clip_grad_norm_against_pytorch(norm_type, device):
    torch = pytest.importorskip("torch")
    grads = _grads(2, scale=3.0)
    params = _params(grads, device)
    tparams = [torch.nn.Parameter(torch.zeros(g.shape)) for g in grads]
    for q, g in zip(tparams, grads):
        q.grad = torch.from_numpy(g.copy())
    ours = nn.utils.clip_grad_norm_(params, 1.5, norm_type)
    theirs = torch.nn.utils.clip_grad_norm_(tparams, 1.5, norm_type)
    assert ours.item() == pytest.approx(theirs.item(), rel=1e-6)
    for p, q in zip(params, tparams):
        np.testing.assert_allclose(p.grad.cpu().numpy(), q.grad.numpy(), rtol=1e-5, atol=1e-7)


def test_clip_grad_norm_cases(device):
    p = nn.Parameter(autograd.ones(4, device=device))
    q = nn.Parameter(autograd.ones(2, device=device))  # no gradient: skipped
    p.grad = autograd.full((4,), 2.0, device=device)
    total = nn.utils.clip_grad_norm_(p, max_norm=1)  # a single tensor
    assert total.item() == pytest.approx(4.0)
    assert p.grad.cpu().tolist() == pytest.approx([0.5] * 4, rel=1e-5)
    assert nn.utils.clip_grad_norm_([q], 1.0).item() == 0.0
    p.grad = autograd.tensor([math.inf, 1.0, 0.0, 0.0], device=device)
    with pytest.raises(RuntimeError, match="non-finite, so it cannot be clipped"):
        nn.utils.clip_grad_norm_([p], 1.0, error_if_nonfinite=True)
    assert nn.utils.get_total_norm([autograd.tensor([3.0, 4.0], device=device)]).item() == 5.0
    g = autograd.tensor([3.0, 4.0], device=device)
    r = nn.Parameter(autograd.zeros(2, device=device))
    r.grad = g
    nn.utils.clip_grads_with_norm_([r], 1.0, autograd.tensor(10.0, device=device))
    assert r.grad.cpu().tolist() == pytest.approx([0.3, 0.4], rel=1e-5)


def test_clip_grad_norm_non_contiguous_grad(device):
    base = np.arange(24, dtype=np.float32).reshape(4, 6) / 10
    p = nn.Parameter(autograd.zeros(6, 4, device=device))
    p.grad = autograd.tensor(base, device=device).t()
    total = nn.utils.clip_grad_norm_([p], 1.0)
    assert total.item() == pytest.approx(np.linalg.norm(base), rel=1e-5)
    np.testing.assert_allclose(p.grad.cpu().numpy(), base.T / (np.linalg.norm(base) + 1e-6),
                               rtol=1e-5)


def test_clip_grad_value(device):
    grads = _grads(3, scale=2.0)
    params = _params(grads, device)
    assert nn.utils.clip_grad_value_(params, 0.7) is None
    for p, g in zip(params, grads):
        np.testing.assert_array_equal(p.grad.cpu().numpy(), np.clip(g, -0.7, 0.7))


def test_parameters_to_vector_and_back(device):
    model = nn.Linear(3, 2).to(device)
    vec = nn.utils.parameters_to_vector(model.parameters())
    assert vec.shape == (8,) and vec.device == device
    want = np.concatenate([model.weight.detach().cpu().numpy().ravel(),
                           model.bias.detach().cpu().numpy()])
    np.testing.assert_array_equal(vec.detach().cpu().numpy(), want)
    vec.sum().backward()  # differentiable
    assert model.weight.grad.cpu().tolist() == [[1.0] * 3] * 2
    new = autograd.arange(8, dtype=autograd.float32, device=device)
    nn.utils.vector_to_parameters(new, model.parameters())
    assert model.weight.detach().cpu().tolist() == [[0, 1, 2], [3, 4, 5]]
    assert model.bias.detach().cpu().tolist() == [6, 7]
    assert isinstance(model.weight, nn.Parameter) and model.weight.requires_grad
    with pytest.raises(TypeError, match="expected torch.Tensor, but got: list"):
        nn.utils.vector_to_parameters([1.0], model.parameters())


def test_parameters_on_two_devices():
    if not have_gpu():
        pytest.skip("no OpenCL device")
    ps = [nn.Parameter(autograd.zeros(2)), nn.Parameter(autograd.zeros(2, device="gpu"))]
    with pytest.raises(TypeError, match="different devices"):
        nn.utils.parameters_to_vector(ps)
