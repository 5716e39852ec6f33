"""carray.linalg against numpy.linalg on every device: random, batched, non-contiguous, empty,
ill-conditioned (cond 1e6) and singular inputs; eigen- and singular vectors (whose signs are
arbitrary) through reconstruction and orthogonality; LinAlgError where NumPy raises it."""

import math

import numpy as np
import pytest

import carray as ca
from carray import linalg as la

from conftest import on, to_numpy

RNG = np.random.default_rng(1234)
BATCHES = [(), (3,), (2, 0), (2, 2)]


def tol(dtype):
    return 2e-4 if np.dtype(dtype) == np.float32 else 1e-10


def close(got, expect, dtype, scale=1.0):
    """got (carray) has expect's shape and dtype (NumPy's result) and its values within the
    tolerance of dtype (the inputs')."""
    g = to_numpy(got)
    expect = np.asarray(expect)
    assert g.shape == expect.shape, f"shape {g.shape} != NumPy's {expect.shape}"
    assert g.dtype == expect.dtype, f"dtype {g.dtype} != NumPy's {expect.dtype}"
    np.testing.assert_allclose(g, expect, rtol=tol(dtype), atol=tol(dtype) * scale)


def rand(shape, dtype="float64"):
    return RNG.standard_normal(shape).astype(dtype)


def spd(batch, n, dtype="float64"):
    a = rand(batch + (n, n))
    return (a @ np.swapaxes(a, -1, -2) + n * np.eye(n)).astype(dtype)


def ill(n, cond=1e6):
    """A float64 matrix with singular values from 1 to 1/cond."""
    u, _ = np.linalg.qr(rand((n, n)))
    v, _ = np.linalg.qr(rand((n, n)))
    return (u * np.logspace(0, -math.log10(cond), n)) @ v.T


def noncontig(x, device):
    """x as a non-contiguous carray view on device (every other column of a wider array)."""
    wide = np.zeros(x.shape[:-1] + (2 * x.shape[-1],), x.dtype)
    wide[..., ::2] = x
    return on(wide, device)[..., ::2]


# ---------------------------------------------------------------- LU family

@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("batch", BATCHES)
def test_det_slogdet_inv_solve(device, dtype, batch):
    n = 4
    a = rand(batch + (n, n), dtype)
    b = rand(batch + (n, 2), dtype)
    A = noncontig(a, device)
    close(la.det(A), np.linalg.det(a), dtype, 10)
    sign, logabs = la.slogdet(A)
    es, el = np.linalg.slogdet(a)
    close(sign, es, dtype)
    close(logabs, el, dtype, 10)
    close(la.inv(A), np.linalg.inv(a), dtype, 100)
    close(la.solve(A, on(b, device)), np.linalg.solve(a, b), dtype, 100)
    assert la.inv(A).device == A.device


def test_solve_vector_and_broadcast(device):
    a = rand((2, 3, 3))
    close(la.solve(on(a, device), on(np.ones(3), device)), np.linalg.solve(a, np.ones(3)),
          "float64")
    b = rand((3, 2))
    close(la.solve(on(a, device), on(b, device)), np.linalg.solve(a, b), "float64")


def test_integer_promotes_to_float64(device):
    a = np.array([[2, 1], [1, 3]], np.int32)
    close(la.det(on(a, device)), np.linalg.det(a), "float64")
    close(la.inv(on(a, device)), np.linalg.inv(a), "float64")
    close(la.cholesky(on(a, device)), np.linalg.cholesky(a), "float64")


def test_ill_conditioned_and_singular(device):
    a = ill(6)
    x = rand((6,))
    b = a @ x
    # backward stable: the residual is small even where x is not accurate
    got = to_numpy(la.solve(on(a, device), on(b, device)))
    assert np.linalg.norm(a @ got - b) < 1e-12 * np.linalg.norm(b)
    close(la.det(on(a, device)), np.linalg.det(a), "float64")
    np.testing.assert_allclose(to_numpy(la.svdvals(on(a, device))), np.linalg.svdvals(a),
                               rtol=1e-9, atol=1e-15)
    for n in (6, 40):
        u, _ = np.linalg.qr(rand((n, n)))
        h = (u * np.logspace(0, -6, n)) @ u.T          # symmetric positive, cond 1e6
        np.testing.assert_allclose(to_numpy(la.eigvalsh(on(h, device))), np.linalg.eigvalsh(h),
                                   rtol=1e-8, atol=1e-15)
        got = to_numpy(la.cholesky(on(h, device)))
        np.testing.assert_allclose(got @ got.T, h, atol=1e-15)
    s = np.array([[1.0, 2.0], [2.0, 4.0]])
    assert float(to_numpy(la.det(on(s, device)))) == 0.0
    sign, logabs = la.slogdet(on(s, device))
    assert to_numpy(sign) == 0 and to_numpy(logabs) == -np.inf
    for f in (la.inv, lambda m: la.solve(m, on(np.ones(2), device))):
        with pytest.raises(la.LinAlgError, match="Singular matrix"):
            f(on(s, device))
    assert la.matrix_rank(on(s, device)).tolist() == 1


def test_blocked_lu_cholesky_qr(device):
    """Matrices from 160 on take the blocked path (panel loops plus GEMM updates)."""
    n = 170
    a = rand((2, n, n))
    A = on(a, device)
    got = to_numpy(la.inv(A))
    np.testing.assert_allclose(got, np.linalg.inv(a), rtol=1e-8, atol=1e-10)
    b = rand((n, 20))
    np.testing.assert_allclose(to_numpy(la.solve(A, on(b, device))), np.linalg.solve(a, b),
                               rtol=1e-8, atol=1e-10)
    close(la.slogdet(A)[1], np.linalg.slogdet(a)[1], "float64", 100)
    s = spd((2,), n)
    close(la.cholesky(on(s, device)), np.linalg.cholesky(s), "float64", 100)
    with pytest.raises(la.LinAlgError, match="positive definite"):
        la.cholesky(on(-s, device))
    for shape in ((2, n + 10, n), (n, n + 20)):      # blocked Householder QR
        x = rand(shape)
        for mode in ("reduced", "complete"):
            q, r = la.qr(on(x, device), mode=mode)
            eq, er = np.linalg.qr(x, mode=mode)
            np.testing.assert_allclose(to_numpy(q), eq, atol=1e-12)
            np.testing.assert_allclose(to_numpy(r), er, atol=1e-11)
    z = np.eye(n)
    z[n - 1, n - 1] = 0.0
    with pytest.raises(la.LinAlgError, match="Singular"):
        la.inv(on(z, device))


def test_errors(device):
    assert issubclass(la.LinAlgError, ValueError)
    for f in (la.det, la.slogdet, la.inv, la.cholesky, la.eigh, la.eigvalsh):
        with pytest.raises(la.LinAlgError, match="square"):
            f(on(rand((2, 3)), device))
        with pytest.raises(la.LinAlgError, match="1-dimensional"):
            f(on(rand((3,)), device))
    for f in (la.qr, la.svd, la.svdvals, la.pinv):
        with pytest.raises(la.LinAlgError, match="two-dimensional"):
            f(on(rand((3,)), device))
    with pytest.raises(la.LinAlgError, match="positive definite"):
        la.cholesky(on(-np.eye(3), device))
    # the message names the matrix of the batch and where it failed
    with pytest.raises(la.LinAlgError, match=r"matrix 1 of the batch: the leading minor of "
                                             r"order 3 is not positive definite"):
        la.cholesky(on(np.stack([np.eye(3), np.diag([1.0, 1.0, -1.0])]), device))
    with pytest.raises(la.LinAlgError, match=r"Singular matrix \(U\[1, 1\] is exactly zero\)"):
        la.inv(on(np.array([[1.0, 2.0], [2.0, 4.0]]), device))
    nan = on(np.array([[np.nan, 1.0], [1.0, 1.0]]), device)
    with pytest.raises(la.LinAlgError, match="did not converge"):
        la.svd(nan)
    with pytest.raises(la.LinAlgError, match="Singular"):       # as NumPy's (LAPACK's) inv
        la.inv(nan)
    with np.errstate(invalid="ignore"):
        assert to_numpy(la.det(nan)) == np.linalg.det(to_numpy(nan))
    with pytest.raises(ValueError, match="rows"):
        la.solve(on(np.eye(3), device), on(np.ones(4), device))
    with pytest.raises(TypeError, match="integer"):
        la.matrix_power(on(np.eye(2), device), 1.5)
    with pytest.raises(ValueError, match="mode"):
        la.qr(on(np.eye(2), device), mode="bogus")
    with pytest.raises(ValueError, match="size 3"):
        la.cross(on(np.ones(2), device), on(np.ones(2), device))
    with pytest.raises(ValueError, match="one-dimensional"):
        la.outer(on(np.ones((2, 2)), device), on(np.ones(2), device))
    with pytest.raises(ValueError, match="at least 2"):
        la.matrix_transpose(on(np.ones(2), device))


def test_mixed_devices_raise():
    from conftest import have_gpu
    if not have_gpu():
        pytest.skip("no OpenCL device")
    a, g = ca.ones(3, dtype=ca.float64), ca.ones(3, dtype=ca.float64).to("gpu")
    m, mg = ca.eye(3, dtype=ca.float64), ca.eye(3, dtype=ca.float64).to("gpu")
    for f in (lambda: la.cross(a, g), lambda: la.outer(a, g), lambda: la.vecdot(a, g),
              lambda: la.tensordot(m, mg), lambda: la.solve(m, g), lambda: la.lstsq(m, g)):
        with pytest.raises(ca.DeviceMismatchError):
            f()


def test_empty_matrices(device):
    for f in (np.linalg.det, np.linalg.inv, np.linalg.cholesky, np.linalg.eigvalsh):
        z = np.zeros((2, 0, 0))
        close(getattr(la, f.__name__)(on(z, device)), f(z), "float64")
    z = np.zeros((0, 3))
    u, s, vh = la.svd(on(z, device))
    assert (u.shape, s.shape, vh.shape) == ((0, 0), (0,), (3, 3))
    close(vh, np.eye(3), "float64")
    close(la.pinv(on(z, device)), np.linalg.pinv(z), "float64")


# ---------------------------------------------------------------- Cholesky, QR

@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("batch", BATCHES)
def test_cholesky(device, dtype, batch):
    a = spd(batch, 4, dtype)
    close(la.cholesky(on(a, device)), np.linalg.cholesky(a), dtype, 10)
    close(la.cholesky(on(a, device), upper=True), np.linalg.cholesky(a, upper=True), dtype, 10)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("shape", [(4, 4), (5, 3), (3, 5), (2, 4, 3), (0, 3, 2), (3, 0)])
@pytest.mark.parametrize("mode", ["reduced", "complete"])
def test_qr_matches_lapack(device, dtype, shape, mode):
    a = rand(shape, dtype)
    q, r = la.qr(noncontig(a, device), mode=mode)
    eq, er = np.linalg.qr(a, mode=mode)
    close(q, eq, dtype, 10)     # same Householder sign convention as LAPACK's geqrf
    close(r, er, dtype, 10)
    close(la.qr(on(a, device), mode="r"), np.linalg.qr(a, mode="r"), dtype, 10)


# ---------------------------------------------------------------- eigh, svd

def _check_orthonormal_columns(u, dtype):
    k = u.shape[-1]
    eye = np.broadcast_to(np.eye(k), u.shape[:-2] + (k, k))
    np.testing.assert_allclose(np.swapaxes(u, -1, -2) @ u, eye, atol=tol(dtype) * 10)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("batch", BATCHES)
@pytest.mark.parametrize("uplo", ["L", "U"])
@pytest.mark.parametrize("n", [5, 40])      # cyclic Jacobi below 32, tridiagonal QL above
def test_eigh(device, dtype, batch, uplo, n):
    a = rand(batch + (n, n), dtype)
    a = a + np.swapaxes(a, -1, -2)
    a[..., 0, 0] = a[..., 1, 1]            # a repeated-ish diagonal
    junk = a.copy()                        # the ignored triangle must not matter
    if uplo == "L":
        junk[..., np.triu_indices(n, 1)[0], np.triu_indices(n, 1)[1]] = 7.0
    else:
        junk[..., np.tril_indices(n, -1)[0], np.tril_indices(n, -1)[1]] = 7.0
    w, v = la.eigh(on(junk, device), UPLO=uplo)
    ew = np.linalg.eigvalsh(a)
    close(w, ew, dtype, 10)
    close(la.eigvalsh(on(junk, device), UPLO=uplo), ew, dtype, 10)
    vn = to_numpy(v)
    _check_orthonormal_columns(vn, dtype)
    np.testing.assert_allclose(a @ vn, vn * ew[..., None, :], atol=tol(dtype) * 50)


@pytest.mark.parametrize("n", [6, 36])
def test_eigh_degenerate(device, n):
    q, _ = np.linalg.qr(rand((n, n)))
    a = (q * np.repeat([1.0, 2.0, -3.0], n // 3)) @ q.T
    w, v = la.eigh(on(a, device))
    close(w, np.linalg.eigvalsh(a), "float64")
    vn = to_numpy(v)
    _check_orthonormal_columns(vn, "float64")
    np.testing.assert_allclose((vn * to_numpy(w)[None, :]) @ vn.T, a, atol=1e-12)
    bad = a.copy()
    bad[n - 1, 0] = np.nan
    with pytest.raises(la.LinAlgError, match="did not converge"):
        la.eigh(on(bad, device))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("shape", [(4, 4), (6, 3), (3, 6), (2, 5, 2), (2, 0, 3, 3), (4, 0)])
@pytest.mark.parametrize("full", [True, False])
def test_svd(device, dtype, shape, full):
    a = rand(shape, dtype)
    u, s, vh = la.svd(noncontig(a, device), full_matrices=full)
    eu, es, evh = np.linalg.svd(a, full_matrices=full)
    assert (u.shape, s.shape, vh.shape) == (eu.shape, es.shape, evh.shape)
    close(s, es, dtype, 10)
    un, sn, vhn = to_numpy(u), to_numpy(s), to_numpy(vh)
    k = sn.shape[-1]
    np.testing.assert_allclose((un[..., :k] * sn[..., None, :]) @ vhn[..., :k, :], a,
                               atol=tol(dtype) * 50)
    _check_orthonormal_columns(un, dtype)
    _check_orthonormal_columns(np.swapaxes(vhn, -1, -2), dtype)
    close(la.svdvals(on(a, device)), es, dtype, 10)


def test_svd_rank_deficient(device):
    a = rand((6, 2)) @ rand((2, 5))              # rank 2
    u, s, vh = la.svd(on(a, device))
    un, sn, vhn = map(to_numpy, (u, s, vh))
    np.testing.assert_allclose(sn, np.linalg.svd(a, compute_uv=False), atol=1e-12)
    _check_orthonormal_columns(un, "float64")
    _check_orthonormal_columns(vhn.T, "float64")
    np.testing.assert_allclose((un[:, :5] * sn) @ vhn, a, atol=1e-12)
    assert int(la.matrix_rank(on(a, device)).tolist()) == 2
    close(la.pinv(on(a, device)), np.linalg.pinv(a), "float64", 10)
    for shape in ((3, 2), (8, 3), (3, 8)):     # (8, 3) and (3, 8): QR-preconditioned
        z = la.svd(on(np.zeros(shape), device))
        _check_orthonormal_columns(to_numpy(z.U), "float64")
        _check_orthonormal_columns(to_numpy(z.Vh).T, "float64")
    for a in (rand((12, 2)) @ rand((2, 4)), rand((4, 2)) @ rand((2, 12))):
        u, s, vh = map(to_numpy, la.svd(on(a, device)))
        np.testing.assert_allclose(s, np.linalg.svd(a, compute_uv=False), atol=1e-12)
        _check_orthonormal_columns(u, "float64")
        _check_orthonormal_columns(vh.T, "float64")
        np.testing.assert_allclose((u[:, :4] * s) @ vh[:4], a, atol=1e-12)


# ---------------------------------------------------------------- built on them

def test_pinv_matrix_rank_matrix_power_lstsq(device):
    a = rand((2, 5, 3))
    close(la.pinv(on(a, device)), np.linalg.pinv(a), "float64", 10)
    close(la.pinv(on(a, device), rtol=None), np.linalg.pinv(a, rtol=None), "float64", 10)
    close(la.matrix_rank(on(a, device)), np.linalg.matrix_rank(a), "int64")
    assert la.matrix_rank(on(np.zeros(3), device)) == 0
    m = rand((2, 3, 3))
    for n in (0, 1, 2, 5, -1, -3):
        close(la.matrix_power(on(m, device), n), np.linalg.matrix_power(m, n), "float64", 100)
    i = np.array([[1, 1], [0, 1]], np.int64)
    close(la.matrix_power(on(i, device), 3), np.linalg.matrix_power(i, 3), "int64")
    x = rand((6, 3))
    for y in (rand((6,)), rand((6, 2))):
        got = la.lstsq(on(x, device), on(y, device))
        exp = np.linalg.lstsq(x, y)
        for g, e in zip(got, exp):
            if isinstance(g, int):
                assert g == e
            else:
                close(g, e, "float64", 10)
    got = la.lstsq(on(x.T, device), on(rand((3,)), device))     # underdetermined: no residuals
    assert got[1].shape == (0,) and got[2] == 3
    d = np.array([[1.0, 0.0], [0.0, 0.0], [0.0, 0.0]])            # rank-deficient
    for rcond in (None, -1, 0.5):
        got = la.lstsq(on(d, device), on(np.arange(3.0), device), rcond=rcond)
        exp = np.linalg.lstsq(d, np.arange(3.0), rcond=rcond)
        close(got[0], exp[0], "float64")
        assert got[2] == exp[2] and got[1].shape == exp[1].shape


# ---------------------------------------------------------------- products and norms

@pytest.mark.parametrize("dtype", ["int32", "int64", "float32", "float64"])
def test_products(device, dtype):
    a = (rand((2, 3, 4)) * 5).astype(dtype)
    b = (rand((4, 5)) * 5).astype(dtype)
    A, B = on(a, device), on(b, device)
    close(la.matmul(A, B), a @ b, dtype, 10)
    close(la.matrix_transpose(A), np.linalg.matrix_transpose(a), dtype)
    close(la.tensordot(A, B, axes=1), np.linalg.tensordot(a, b, axes=1), dtype, 10)
    close(la.tensordot(A, on(a, device), axes=([1, 2], [1, 2])),
          np.linalg.tensordot(a, a, axes=([1, 2], [1, 2])), dtype, 100)
    close(la.tensordot(A, B, axes=0), np.linalg.tensordot(a, b, axes=0), dtype, 10)
    v = (rand((4,)) * 5).astype(dtype)
    close(la.vecdot(A, on(v, device)), np.linalg.vecdot(a, v), dtype, 10)
    close(la.vecdot(A, A, axis=1), np.linalg.vecdot(a, a, axis=1), dtype, 10)
    close(la.outer(on(v, device), on(v[:3], device)), np.linalg.outer(v, v[:3]), dtype, 10)
    c = (rand((2, 3)) * 5).astype(dtype)
    close(la.cross(on(c, device), on(c[::-1], device)), np.linalg.cross(c, c[::-1]), dtype, 10)
    close(la.cross(on(c.T, device), on(c[0][:, None], device), axis=0),
          np.linalg.cross(c.T, c[0][:, None], axis=0), dtype, 10)
    for off in (0, 1, -2, 7):
        close(la.diagonal(A, offset=off), np.linalg.diagonal(a, offset=off), dtype)
        close(la.trace(A, offset=off), np.linalg.trace(a, offset=off), dtype, 10)
    bools = RNG.random((2, 4)) < 0.5
    close(la.vecdot(on(bools, device), on(bools[::-1], device)),
          np.linalg.vecdot(bools, bools[::-1]), "bool")
    with pytest.raises(ValueError, match="same size"):
        la.vecdot(A, on(v[:3], device))
    with pytest.raises(ValueError, match="shape-mismatch"):
        la.tensordot(A, B, axes=2)


@pytest.mark.parametrize("dtype", ["int32", "float32", "float64"])
def test_norms(device, dtype):
    a = (rand((2, 3, 4)) * 5).astype(dtype)
    A = on(a, device)
    fdt = "float32" if dtype == "float32" else "float64"
    for ord in (2, 1, 0, np.inf, -np.inf, 3, 0.5):
        for axis in (None, -1, (0, 2)):
            close(la.vector_norm(A, ord=ord, axis=axis),
                  np.linalg.vector_norm(a, ord=ord, axis=axis), fdt, 10)
    close(la.vector_norm(A, axis=1, keepdims=True),
          np.linalg.vector_norm(a, axis=1, keepdims=True), fdt, 10)
    for ord in ("fro", "nuc", 1, -1, 2, -2, np.inf, -np.inf):
        for keepdims in (False, True):
            close(la.matrix_norm(A, ord=ord, keepdims=keepdims),
                  np.linalg.matrix_norm(a, ord=ord, keepdims=keepdims), fdt, 10)
    close(la.norm(A), np.linalg.norm(a), fdt, 10)
    close(la.norm(A, axis=(2, 0), ord=1), np.linalg.norm(a, axis=(2, 0), ord=1), fdt, 10)
    close(la.norm(on(a[0], device), ord=np.inf), np.linalg.norm(a[0], ord=np.inf), fdt, 10)
    close(la.norm(A, axis=1, ord=1, keepdims=True),
          np.linalg.norm(a, axis=1, ord=1, keepdims=True), fdt, 10)
    with pytest.raises(ValueError, match="norm order"):
        la.matrix_norm(A, ord=3)


def test_multi_dot_and_cond(device):
    a, b, c, v = rand((3, 5)), rand((5, 2)), rand((2, 4)), rand((4,))
    close(la.multi_dot([on(a, device), on(b, device), on(c, device), on(v, device)]),
          np.linalg.multi_dot([a, b, c, v]), "float64", 10)
    close(la.multi_dot([on(a[0], device), on(b, device), on(c[:, 0], device)]),
          np.linalg.multi_dot([a[0], b, c[:, 0]]), "float64", 10)
    with pytest.raises(ValueError, match="at least two"):
        la.multi_dot([on(a, device)])
    m = np.stack([well_conditioned(4), np.array([[1.0, 2, 0, 0], [2, 4, 0, 0], [0, 0, 1, 0],
                                                 [0, 0, 0, 1]])])
    for p in (None, 2, -2, "fro", "nuc", 1, -1, np.inf, -np.inf):
        got, exp = to_numpy(la.cond(on(m[:1], device), p)), np.linalg.cond(m[:1], p)
        np.testing.assert_allclose(got, exp, rtol=1e-9)
        if p not in (None, 2, -2):              # the singular one: inf, as NumPy
            assert to_numpy(la.cond(on(m, device), p))[1] == np.inf


def well_conditioned(n):
    return rand((n, n)) + n * np.eye(n)


def test_namespace():
    assert ca.linalg is la
    for name in ("matmul", "matrix_transpose", "vecdot", "tensordot", "outer", "cross",
                 "diagonal", "trace", "vector_norm", "matrix_norm", "det", "slogdet", "inv",
                 "solve", "cholesky", "qr", "svd", "svdvals", "eigh", "eigvalsh", "pinv",
                 "matrix_rank", "matrix_power", "lstsq", "norm", "LinAlgError", "multi_dot",
                 "cond"):
        assert callable(getattr(la, name)), name
    r = la.qr(ca.eye(3, dtype=ca.float64))
    assert r._fields == ("Q", "R")
    assert la.svd(ca.eye(2, dtype=ca.float64))._fields == ("U", "S", "Vh")
    assert la.eigh(ca.eye(2, dtype=ca.float64))._fields == ("eigenvalues", "eigenvectors")
    assert la.slogdet(ca.eye(2, dtype=ca.float64))._fields == ("sign", "logabsdet")
    with pytest.raises(TypeError, match="unsupported in linalg"):
        la.det(ca.eye(2, dtype=ca.float64).astype(ca.bool_).astype(_no_float16()))


def _no_float16():
    """A dtype carray.linalg has no loops for (float16 where carray has it)."""
    try:
        return ca.dtype("float16")
    except Exception:
        pytest.skip("carray has no float16 yet")


@pytest.mark.parametrize("x", [
    np.full((2, 2), 1e300) + np.array([[0.0, 1e299], [0.0, 0.0]]),
    np.array([[1e200, 1e200], [1e200, 1e-200]]),
    np.ones((3, 7)) * 1e250 + np.eye(3, 7) * 1e249,
    np.array([[1.25592606, 1.7156269, 1.7156269], [-0.650115167, 0.237958667, 0.237958667],
              [6.06445260e-312, 8.28417106e-312, 8.28417106e-312]]),   # a subnormal row
    np.full((5, 2), 1e-300) + np.eye(5, 2) * 1e-301,
], ids=["1e300", "1e200-mixed", "1e250-wide", "subnormal-row", "1e-300-tall"])
def test_svd_of_extreme_magnitudes(x):
    """Entries near the ends of float64's range neither overflow nor stall Jacobi: the matrix is
    scaled first (found by the array API suite: "SVD did not converge")."""
    s = np.asarray(ca.linalg.svdvals(ca.asarray(x)))
    want = np.linalg.svd(x, compute_uv=False)
    np.testing.assert_allclose(s, want, rtol=1e-10, atol=want[0] * 1e-14)
    u, s2, vh = (np.asarray(a) for a in ca.linalg.svd(ca.asarray(x), full_matrices=False))
    np.testing.assert_allclose((u * s2) @ vh, x, rtol=1e-10, atol=want[0] * 1e-13)


@pytest.mark.parametrize("n", [4, 40])
@pytest.mark.parametrize("scale", [1e300, 1e-300])
def test_eigh_of_extreme_magnitudes(device, n, scale):
    """Entries near the ends of float64's range: the triangle read is scaled first (Jacobi's
    sum of squares overflowed at 1e300); the other triangle's garbage does not set the scale."""
    a = rand((n, n))
    a = (a + a.T) * scale
    junk = a.copy()
    junk[0, n - 1] = 1e308
    w, v = la.eigh(on(junk, device))
    want = np.linalg.eigvalsh(a)
    np.testing.assert_allclose(to_numpy(w), want, rtol=1e-12, atol=np.abs(want).max() * 1e-13)
    vn = to_numpy(v)
    _check_orthonormal_columns(vn, "float64")
