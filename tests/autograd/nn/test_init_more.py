"""nn.init, the rest of torch.nn.init: dirac_ (exact), orthogonal_ (orthogonality, and its QR
against PyTorch's on the same matrix), trunc_normal_ and sparse_ (statistics), gains and fans
against PyTorch, the deprecated aliases; on cpu and gpu."""

import math

import numpy as np
import pytest

import autograd
import carray
from autograd import nn
from autograd.nn import init


def _np(t):
    return t.detach().cpu().numpy()


def test_dirac_exact(device):
    w = init.dirac_(autograd.empty(6, 4, 3, 5, device=device), groups=2)
    want = np.zeros((6, 4, 3, 5), np.float32)
    for g in range(2):
        for d in range(3):
            want[g * 3 + d, d, 1, 2] = 1
    np.testing.assert_array_equal(_np(w), want)
    w1 = init.dirac_(autograd.empty(2, 3, 4, device=device))
    assert _np(w1)[0, 0, 2] == 1 and _np(w1)[1, 1, 2] == 1 and _np(w1).sum() == 2
    w3 = init.dirac_(autograd.empty(2, 2, 3, 3, 3, device=device))
    assert _np(w3)[1, 1, 1, 1, 1] == 1 and _np(w3).sum() == 2
    x = autograd.randn(1, 4, 7, 7, device=device)
    conv = nn.Conv2d(4, 4, 3, padding=1, bias=False).to(device)
    init.dirac_(conv.weight)  # the identity convolution
    np.testing.assert_allclose(_np(conv(x)), _np(x), rtol=1e-6, atol=1e-6)
    with pytest.raises(ValueError, match="Only tensors with 3, 4, or 5 dimensions"):
        init.dirac_(autograd.empty(3, 3))
    with pytest.raises(ValueError, match="dim 0 must be divisible by groups"):
        init.dirac_(autograd.empty(5, 2, 3), groups=2)


def test_dirac_against_pytorch():
    torch = pytest.importorskip("torch")
    for shape, groups in (((6, 4, 3, 5), 2), ((3, 5, 4), 1), ((4, 2, 3, 2, 2), 4)):
        ours = init.dirac_(autograd.empty(*shape), groups)
        theirs = torch.nn.init.dirac_(torch.empty(shape), groups)
        np.testing.assert_array_equal(_np(ours), theirs.numpy())


@pytest.mark.parametrize("shape", [(30, 20), (10, 40), (8, 3, 2, 2), (7, 7)])
def test_orthogonal(shape, device):
    t = init.orthogonal_(autograd.empty(*shape, device=device), gain=1.5)
    assert t.device == device
    m = _np(t).reshape(shape[0], -1).astype(np.float64)
    rows, cols = m.shape
    gram = m.T @ m if rows >= cols else m @ m.T
    np.testing.assert_allclose(gram, 2.25 * np.eye(min(rows, cols)), atol=1e-5)
    with pytest.raises(ValueError, match="2 or more dimensions"):
        init.orthogonal_(autograd.empty(3))


def test_orthonormal_columns_equals_pytorch_qr():
    """The QR step: PyTorch's q * sign(diag(r)) on the same matrix."""
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(0)
    for shape in ((5, 3), (6, 6), (9, 1), (40, 17)):
        a = rng.standard_normal(shape)
        q = np.asarray(init._orthonormal_columns(carray.asarray(a)))
        tq, tr = torch.linalg.qr(torch.from_numpy(a))
        np.testing.assert_allclose(q, (tq * torch.diag(tr).sign()).numpy(), atol=1e-12)


def _truncated_moments(mean, std, a, b):
    alpha, beta = (a - mean) / std, (b - mean) / std
    pdf = lambda x: math.exp(-x * x / 2) / math.sqrt(2 * math.pi)  # noqa: E731
    cdf = lambda x: (1 + math.erf(x / math.sqrt(2))) / 2  # noqa: E731
    z = cdf(beta) - cdf(alpha)
    m = mean + std * (pdf(alpha) - pdf(beta)) / z
    var = std ** 2 * (1 + (alpha * pdf(alpha) - beta * pdf(beta)) / z
                      - ((pdf(alpha) - pdf(beta)) / z) ** 2)
    return m, math.sqrt(var)


# the first two take PyTorch's normal-rejection branch, the last two its uniform proposals
@pytest.mark.parametrize("mean,std,a,b", [(0.0, 1.0, -2.0, 2.0), (0.5, 2.0, -1.0, 3.0),
                                          (0.0, 1.0, 2.0, 3.0), (0.0, 0.02, -0.01, 0.005)])
def test_trunc_normal_statistics(mean, std, a, b, device):
    t = init.trunc_normal_(autograd.empty(200, 500, device=device), mean, std, a, b)
    v = _np(t).ravel().astype(np.float64)
    assert v.min() >= a and v.max() <= b
    m, s = _truncated_moments(mean, std, a, b)
    assert abs(v.mean() - m) < 0.01 * (b - a)
    assert abs(v.std() - s) < 0.01 * s + 0.002 * (b - a)
    with pytest.warns(UserWarning, match="more than 2 std"):
        init.trunc_normal_(autograd.empty(10, device=device), 5.0, 1.0, -1.0, 1.0)


def test_trunc_normal_generator_and_parameter():
    p = nn.Parameter(autograd.empty(50))
    g1, g2 = autograd.Generator().manual_seed(3), autograd.Generator().manual_seed(3)
    init.trunc_normal_(p, generator=g1)
    q = init.trunc_normal_(autograd.empty(50), generator=g2)
    np.testing.assert_array_equal(_np(p), _np(q))
    assert p.requires_grad and p.grad_fn is None


def test_sparse(device):
    t = init.sparse_(autograd.empty(40, 300, device=device), sparsity=0.3, std=0.5)
    v = _np(t)
    assert ((v == 0).sum(axis=0) == 12).all()
    nonzero = v[v != 0]
    assert abs(nonzero.std() - 0.5) < 0.02 and abs(nonzero.mean()) < 0.02
    with pytest.raises(ValueError, match="Only tensors with 2 dimensions"):
        init.sparse_(autograd.empty(3, 3, 3), 0.1)


NONLINEARITIES = ["linear", "conv1d", "conv2d", "conv3d", "conv_transpose1d",
                  "conv_transpose2d", "conv_transpose3d", "sigmoid", "tanh", "relu",
                  "leaky_relu", "selu"]


def test_gains_and_fans_against_pytorch():
    torch = pytest.importorskip("torch")
    for name in NONLINEARITIES:
        assert init.calculate_gain(name) == torch.nn.init.calculate_gain(name)
    for slope in (0, 0.2, 1, math.sqrt(5)):
        assert init.calculate_gain("leaky_relu", slope) == \
            torch.nn.init.calculate_gain("leaky_relu", slope)
    for shape in ((5, 3), (8, 4, 3, 2), (2, 3, 4), (0, 3), (6, 2, 1, 1, 5)):
        assert init._calculate_fan_in_and_fan_out(autograd.empty(*shape)) == \
            torch.nn.init._calculate_fan_in_and_fan_out(torch.empty(shape))


def test_deprecated_aliases():
    t = autograd.empty(3, 3)
    with pytest.warns(FutureWarning, match="`nn.init.eye` is now deprecated in favor of "
                                           "`nn.init.eye_`"):
        assert init.eye(t) is t
    np.testing.assert_array_equal(_np(t), np.eye(3))
    with pytest.warns(FutureWarning, match="nn.init.constant"):
        init.constant(t, 2.0)
    assert (_np(t) == 2).all()
