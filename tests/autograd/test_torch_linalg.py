"""autograd.linalg's factorisations (torch.linalg): forward and gradients against PyTorch, and
autograd.gradcheck in float64, on cpu and gpu. Eigen- and singular vectors have arbitrary signs,
so they are checked through sign-invariant functions of them (U @ Vh, V diag(c) V^T);
symmetric inputs are made inside the checked function (X + X^T), so that finite differences
keep them symmetric."""

import numpy as np
import pytest

import autograd
from autograd import linalg as la

RNG = np.random.default_rng(7)


def rand(*shape):
    return RNG.standard_normal(shape)


def well(*shape):
    """Well-conditioned square matrices: random plus n on the diagonal."""
    return rand(*shape) + shape[-1] * np.eye(shape[-1])


def leaf(x, device):
    return autograd.tensor(x, dtype=autograd.float64, device=device, requires_grad=True)


def sym(x):
    return x + x.mT


def spd(x):
    return x.matmul(x.mT) + x.shape[-1] * _eye_like(x)


def _eye_like(x):
    n = x.shape[-1]
    if hasattr(x, "array"):
        return autograd.eye(n, dtype=x.dtype, device=x.device)
    import torch
    return torch.eye(n, dtype=x.dtype)


# name, ours, PyTorch's (given torch), input arrays
CASES = [
    ("inv", lambda a: la.inv(a), lambda t: t.linalg.inv, [well(2, 3, 3)]),
    ("solve", lambda a, b: la.solve(a, b), lambda t: t.linalg.solve, [well(2, 3, 3), rand(3, 2)]),
    ("solve_vector", lambda a, b: la.solve(a, b), lambda t: t.linalg.solve,
     [well(2, 3, 3), rand(2, 3)]),
    ("solve_right", lambda a, b: la.solve(a, b, left=False),
     lambda t: lambda a, b: t.linalg.solve(a, b, left=False), [well(3, 3), rand(2, 3)]),
    ("det", lambda a: la.det(a), lambda t: t.linalg.det, [well(2, 3, 3)]),
    ("slogdet", lambda a: la.slogdet(a).logabsdet, lambda t: lambda a: t.linalg.slogdet(a)[1],
     [rand(2, 4, 4)]),
    ("cholesky", lambda x: la.cholesky(spd(x)), lambda t: lambda x: t.linalg.cholesky(spd(x)),
     [rand(2, 3, 3)]),
    ("cholesky_upper", lambda x: la.cholesky(spd(x), upper=True),
     lambda t: lambda x: t.linalg.cholesky(spd(x), upper=True), [rand(3, 3)]),
    ("qr_tall", lambda a: la.qr(a), lambda t: t.linalg.qr, [rand(2, 5, 3)]),
    ("qr_square", lambda a: la.qr(a, mode="complete"),
     lambda t: lambda a: t.linalg.qr(a, mode="complete"), [rand(4, 4)]),
    ("qr_wide", lambda a: la.qr(a), lambda t: t.linalg.qr, [rand(3, 5)]),
    ("svdvals", lambda a: la.svdvals(a), lambda t: t.linalg.svdvals, [rand(2, 4, 3)]),
    ("svd_tall", lambda a: _svd_inv(la, a), lambda t: lambda a: _svd_inv(t.linalg, a),
     [rand(5, 3)]),
    ("svd_wide", lambda a: _svd_inv(la, a), lambda t: lambda a: _svd_inv(t.linalg, a),
     [rand(2, 3, 4)]),
    ("svd_full", lambda a: _svd_inv(la, a, True), lambda t: lambda a: _svd_inv(t.linalg, a, True),
     [rand(4, 3)]),
    ("eigh", lambda x: _eigh_inv(la, x), lambda t: lambda x: _eigh_inv(t.linalg, x),
     [rand(2, 4, 4)]),
    ("eigh_upper", lambda x: _eigh_inv(la, x, "U"), lambda t: lambda x: _eigh_inv(t.linalg, x, "U"),
     [rand(3, 3)]),
    ("eigvalsh", lambda x: la.eigvalsh(sym(x)), lambda t: lambda x: t.linalg.eigvalsh(sym(x)),
     [rand(4, 4)]),
    ("pinv", lambda a: la.pinv(a), lambda t: t.linalg.pinv, [rand(2, 4, 3)]),
    ("matrix_power", lambda a: la.matrix_power(a, 3),
     lambda t: lambda a: t.linalg.matrix_power(a, 3), [rand(2, 3, 3)]),
    ("matrix_power_neg", lambda a: la.matrix_power(a, -2),
     lambda t: lambda a: t.linalg.matrix_power(a, -2), [well(3, 3)]),
    ("matrix_norm_nuc", lambda a: la.matrix_norm(a, "nuc"),
     lambda t: lambda a: t.linalg.matrix_norm(a, "nuc"), [rand(2, 3, 4)]),
    ("matrix_norm_2", lambda a: la.matrix_norm(a, 2, dim=(0, 2), keepdim=True),
     lambda t: lambda a: t.linalg.matrix_norm(a, 2, dim=(0, 2), keepdim=True), [rand(3, 2, 4)]),
    ("cross", lambda a, b: la.cross(a, b), lambda t: t.linalg.cross, [rand(2, 3), rand(1, 3)]),
    ("cross_dim0", lambda a, b: la.cross(a, b, dim=0),
     lambda t: lambda a, b: t.linalg.cross(a, b, dim=0), [rand(3, 2), rand(3, 2)]),
    ("vecdot", lambda a, b: la.vecdot(a, b), lambda t: t.linalg.vecdot, [rand(2, 4), rand(4)]),
    ("torch_det", lambda a: autograd.det(a), lambda t: t.det, [well(2, 3, 3)]),
    ("inverse_method", lambda a: a.inverse(), lambda t: lambda a: a.inverse(), [well(3, 3)]),
    ("logdet", lambda x: autograd.logdet(spd(x)), lambda t: lambda x: t.logdet(spd(x)),
     [rand(2, 3, 3)]),
    ("slogdet_method", lambda a: a.slogdet()[1], lambda t: lambda a: a.slogdet()[1],
     [rand(3, 3)]),
    ("solve_triangular", lambda a, b: la.solve_triangular(a, b, upper=False),
     lambda t: lambda a, b: t.linalg.solve_triangular(a, b, upper=False),
     [well(2, 3, 3), rand(3, 2)]),
    ("solve_triangular_unit_right",
     lambda a, b: la.solve_triangular(a, b, upper=True, left=False, unitriangular=True),
     lambda t: lambda a, b: t.linalg.solve_triangular(a, b, upper=True, left=False,
                                                      unitriangular=True),
     [rand(3, 3), rand(2, 3)]),
    ("multi_dot", lambda a, b, c: la.multi_dot([a, b, c]), lambda t: lambda a, b, c:
     t.linalg.multi_dot([a, b, c]), [rand(3), rand(3, 4), rand(4, 2)]),
    ("cond", lambda a: la.cond(a), lambda t: t.linalg.cond, [well(2, 3, 3)]),
    ("lstsq", lambda a, b: la.lstsq(a, b).solution, lambda t: lambda a, b: t.linalg.lstsq(a, b)[0],
     [rand(5, 3), rand(5, 2)]),
]


def _svd_inv(mod, a, full=False):
    """Sign-invariant functions of the SVD: S, U[:, :k] @ Vh[:k], U[:, :k] diag(1..k) U[:, :k]^T."""
    u, s, vh = mod.svd(a, full_matrices=full)
    k = s.shape[-1]
    u, vh = u[..., :k], vh[..., :k, :]
    w = s.detach() * 0 + _arange_like(s, k)
    return s, u.matmul(vh), (u * w.unsqueeze(-2)).matmul(u.mT)


def _eigh_inv(mod, x, uplo="L"):
    """Sign-invariant functions of eigh(x + x^T): w and V diag(1..n) V^T."""
    w, v = mod.eigh(sym(x), UPLO=uplo)
    c = w.detach() * 0 + _arange_like(w, w.shape[-1])
    return w, (v * c.unsqueeze(-2)).matmul(v.mT)


def _arange_like(t, n):
    if hasattr(t, "array"):
        return autograd.arange(1, n + 1, dtype=t.dtype, device=t.device)
    import torch
    return torch.arange(1, n + 1, dtype=t.dtype)


@pytest.mark.parametrize("name, ours, theirs, arrays", CASES, ids=[c[0] for c in CASES])
def test_against_torch(name, ours, theirs, arrays, device):
    torch = pytest.importorskip("torch")
    xs = [leaf(a, device) for a in arrays]
    ts = [torch.tensor(a, requires_grad=True) for a in arrays]
    out, ref = ours(*xs), theirs(torch)(*ts)
    outs = out if isinstance(out, tuple) else (out,)
    refs = ref if isinstance(ref, tuple) else (ref,)
    loss_o, loss_t = 0, 0
    rng = np.random.default_rng(0)
    for o, r in zip(outs, refs):
        assert tuple(o.shape) == tuple(r.shape), name
        assert str(o.device) == device
        # (QR: both follow LAPACK's Householder signs, so Q and R compare directly)
        np.testing.assert_allclose(o.detach().cpu().numpy(), r.detach().numpy(),
                                   rtol=1e-9, atol=1e-10, err_msg=name)
        g = rng.standard_normal(tuple(r.shape))
        loss_o = loss_o + (o * autograd.tensor(g, device=device)).sum()
        loss_t = loss_t + (r * torch.tensor(g)).sum()
    loss_o.backward()
    loss_t.backward()
    for x, t in zip(xs, ts):
        assert x.grad is not None and str(x.grad.device) == device
        np.testing.assert_allclose(x.grad.cpu().numpy(), t.grad.numpy(), rtol=1e-7, atol=1e-9,
                                   err_msg=name)


@pytest.mark.parametrize("name, ours, theirs, arrays", CASES, ids=[c[0] for c in CASES])
def test_gradcheck(name, ours, theirs, arrays, device):
    xs = [leaf(a, device) for a in arrays]
    assert autograd.gradcheck(ours, tuple(xs))


def test_second_derivative_against_torch():
    torch = pytest.importorskip("torch")
    a = well(3, 3)
    x, t = leaf(a, "cpu"), torch.tensor(a, requires_grad=True)
    (gx,) = autograd.grad(la.det(la.inv(x)).sum(), x, create_graph=True)
    (gt,) = torch.autograd.grad(torch.linalg.det(torch.linalg.inv(t)).sum(), t, create_graph=True)
    (gx * gx).sum().backward()
    (gt * gt).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), t.grad.numpy(), rtol=1e-8, atol=1e-10)


def test_errors(device):
    s = autograd.tensor([[1.0, 2.0], [2.0, 4.0]], device=device)
    with pytest.raises(la.LinAlgError, match="Singular"):
        la.inv(s)
    with pytest.raises(la.LinAlgError, match="Singular"):
        la.solve(s, autograd.ones(2, device=device))
    with pytest.raises(la.LinAlgError, match="positive definite"):
        la.cholesky(-autograd.eye(2, device=device))
    assert issubclass(la.LinAlgError, RuntimeError)
    with pytest.raises(RuntimeError, match="square"):
        la.inv(autograd.ones(2, 3, device=device))
    with pytest.raises(RuntimeError, match="floating point"):
        la.det(autograd.ones(2, 2, dtype=autograd.int64, device=device))
    with pytest.raises(RuntimeError, match="mode"):
        la.qr(autograd.ones(2, 2, device=device), mode="bogus")
    a = leaf(rand(4, 2), device)
    q, r = la.qr(a, mode="complete")
    with pytest.raises(RuntimeError, match="not differentiable"):
        q.sum().backward()


def test_results_and_dtypes(device):
    a = autograd.tensor(well(3, 3), dtype=autograd.float32, device=device)
    for f in (la.inv, la.det, la.svdvals, la.eigvalsh, la.pinv):
        assert f(a).dtype == autograd.float32
    assert la.svd(a)._fields == ("U", "S", "Vh")
    assert la.eigh(a)._fields == ("eigenvalues", "eigenvectors")
    assert la.qr(a)._fields == ("Q", "R")
    assert la.slogdet(a)._fields == ("sign", "logabsdet")
    assert la.matrix_rank(a).tolist() == 3
    z = autograd.zeros(0, 3, 3, device=device)
    assert tuple(la.inv(z).shape) == (0, 3, 3)
    assert tuple(la.matrix_power(a, 0).shape) == (3, 3)


def test_cond_other_norms(device):
    """PyTorch's cond with p other than None/2/-2 has no backward (it modifies a saved tensor in
    place): the values against PyTorch, the gradient by gradcheck."""
    torch = pytest.importorskip("torch")
    a = well(2, 3, 3)
    for p in ("fro", "nuc", 1, -np.inf):
        got = la.cond(autograd.tensor(a, device=device), p).cpu().numpy()
        np.testing.assert_allclose(got, torch.linalg.cond(torch.tensor(a), p).numpy(), rtol=1e-9)
    assert autograd.gradcheck(lambda x: la.cond(x, "fro"), (leaf(a, device),))
