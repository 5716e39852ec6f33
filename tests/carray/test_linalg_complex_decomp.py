"""carray.linalg's eigh and svd (and what is built on them: eigvalsh, svdvals, pinv, matrix_rank,
lstsq) on complex64/complex128 against numpy.linalg on every device: batched, non-contiguous,
empty and 1 x 1 inputs, one triangle read, repeated eigenvalues, singular and extreme-magnitude
matrices; eigen- and singular vectors (whose phases are arbitrary) through reconstruction and
unitarity; LinAlgError for NaN input."""

import numpy as np
import pytest

from carray import linalg as la

from conftest import on, to_numpy

RNG = np.random.default_rng(4321)
CPLX = ["complex64", "complex128"]


def tol(dtype):
    return 2e-5 if np.dtype(dtype) in (np.complex64, np.float32) else 1e-12


def crand(shape, dtype="complex128"):
    return (RNG.standard_normal(shape) + 1j * RNG.standard_normal(shape)).astype(dtype)


def hermitian(batch, n, dtype="complex128"):
    m = crand(batch + (n, n))
    return (m + np.conj(np.swapaxes(m, -1, -2))).astype(dtype)


def ct(x):
    return np.conj(np.swapaxes(x, -1, -2))


def noncontig(x, device):
    """x as a non-contiguous carray view on device (every other column of a wider array)."""
    wide = np.zeros(x.shape[:-1] + (2 * x.shape[-1],), x.dtype)
    wide[..., ::2] = x
    return on(wide, device)[..., ::2]


def check_unitary_columns(u, dtype):
    k = u.shape[-1]
    np.testing.assert_allclose(ct(u) @ u, np.broadcast_to(np.eye(k), u.shape[:-2] + (k, k)),
                               atol=tol(dtype) * 20)


def same(got, expect, dtype, scale=1.0):
    g = to_numpy(got)
    expect = np.asarray(expect)
    assert g.shape == expect.shape and g.dtype == expect.dtype, (g.shape, g.dtype, expect.dtype)
    np.testing.assert_allclose(g, expect, rtol=tol(dtype), atol=tol(dtype) * scale)


# ---------------------------------------------------------------- eigh

@pytest.mark.parametrize("dtype", CPLX)
@pytest.mark.parametrize("batch,n", [((), 5), ((3,), 4), ((2, 0), 3), ((2,), 0), ((), 1),
                                     ((), 40)])
@pytest.mark.parametrize("uplo", ["L", "U"])
def test_eigh(device, dtype, batch, n, uplo):
    a = hermitian(batch, n, dtype)
    junk = a.copy()                       # the triangle not read, and the diagonal's imaginary
    rows, cols = np.triu_indices(n, 1) if uplo == "L" else np.tril_indices(n, -1)
    junk[..., rows, cols] = 7.0 - 3.0j    # part, must not matter
    junk[..., np.arange(n), np.arange(n)] += 5.0j
    w, v = la.eigh(on(junk, device), UPLO=uplo)
    assert isinstance(la.eigh(on(junk, device)), la.EighResult)
    assert w.device == device and v.device == device
    ew = np.linalg.eigvalsh(junk, UPLO=uplo)
    same(w, ew, dtype, 10 * max(n, 1))
    same(la.eigvalsh(on(junk, device), UPLO=uplo), ew, dtype, 10 * max(n, 1))
    vn = to_numpy(v)
    assert vn.dtype == np.dtype(dtype) and vn.shape == a.shape
    check_unitary_columns(vn, dtype)
    np.testing.assert_allclose(a @ vn, vn * ew[..., None, :], atol=tol(dtype) * 50 * max(n, 1))


@pytest.mark.parametrize("dtype", CPLX)
def test_eigh_noncontiguous_and_degenerate(device, dtype):
    a = hermitian((2,), 4, dtype)
    w, v = la.eigh(noncontig(a, device))
    same(w, np.linalg.eigvalsh(a), dtype, 10)
    check_unitary_columns(to_numpy(v), dtype)
    q, _ = np.linalg.qr(crand((6, 6)))
    for d in ([1.0] * 6, [1.0, 1.0, 2.0, 2.0, -3.0, -3.0]):
        m = ((q * np.array(d)) @ ct(q)).astype(dtype)
        for x in (np.diag(d).astype(dtype), m):          # the identity: no rotation at all
            w, v = la.eigh(on(x, device))
            same(w, np.linalg.eigvalsh(x), dtype, 10)
            vn, wn = to_numpy(v), to_numpy(w)
            check_unitary_columns(vn, dtype)
            np.testing.assert_allclose((vn * wn) @ ct(vn), x, atol=tol(dtype) * 50)


def test_eigh_nan_and_extreme(device):
    a = hermitian((2,), 3)
    bad = a.copy()
    bad[1, 2, 0] = np.nan
    for f in (la.eigh, la.eigvalsh):
        with pytest.raises(la.LinAlgError, match="did not converge"):
            f(on(bad, device))
    w = la.eigvalsh(on(bad, device), UPLO="U")           # NaN in the triangle not read
    same(w, np.linalg.eigvalsh(bad, UPLO="U"), "complex128", 10)
    for scale in (1e300, 1e-300):
        x = a[0] * scale
        x[0, 2] = 1e308                                   # garbage in the triangle not read
        w, v = la.eigh(on(x, device))
        ew = np.linalg.eigvalsh(x)
        np.testing.assert_allclose(to_numpy(w), ew, rtol=1e-12, atol=scale * 1e-13)
        check_unitary_columns(to_numpy(v), "complex128")


# ---------------------------------------------------------------- svd

@pytest.mark.parametrize("dtype", CPLX)
@pytest.mark.parametrize("shape", [(4, 4), (6, 3), (3, 6), (2, 5, 2), (2, 0, 3, 3), (4, 0),
                                   (0, 3), (1, 1), (3, 12)])
@pytest.mark.parametrize("full", [True, False])
def test_svd(device, dtype, shape, full):
    a = crand(shape, dtype)
    u, s, vh = la.svd(noncontig(a, device), full_matrices=full)
    assert isinstance(la.svd(on(a, device)), la.SVDResult)
    assert u.device == device and s.device == device and vh.device == device
    eu, es, evh = np.linalg.svd(a, full_matrices=full)
    assert (u.shape, s.shape, vh.shape) == (eu.shape, es.shape, evh.shape)
    assert (u.dtype.name, s.dtype.name, vh.dtype.name) == (eu.dtype, es.dtype, evh.dtype)
    same(s, es, dtype, 10)
    un, sn, vhn = to_numpy(u), to_numpy(s), to_numpy(vh)
    k = sn.shape[-1]
    np.testing.assert_allclose((un[..., :k] * sn[..., None, :]) @ vhn[..., :k, :], a,
                               atol=tol(dtype) * 50)
    check_unitary_columns(un, dtype)
    check_unitary_columns(ct(vhn), dtype)
    same(la.svdvals(on(a, device)), es, dtype, 10)
    same(la.svd(on(a, device), compute_uv=False), es, dtype, 10)


def test_svd_singular_nan_and_extreme(device):
    a = crand((6, 2)) @ crand((2, 5))                     # rank 2
    for x in (a, a.T.copy(), np.zeros((3, 4), complex)):
        u, s, vh = map(to_numpy, la.svd(on(x, device)))
        k = min(x.shape)
        np.testing.assert_allclose(s, np.linalg.svd(x, compute_uv=False), atol=1e-12)
        check_unitary_columns(u, "complex128")
        check_unitary_columns(ct(vh), "complex128")
        np.testing.assert_allclose((u[:, :k] * s) @ vh[:k], x, atol=1e-12)
    bad = crand((2, 3, 3))
    bad[1, 0, 0] = np.nan
    for f in (la.svd, la.svdvals):
        with pytest.raises(la.LinAlgError, match="did not converge"):
            f(on(bad, device))
    for scale in (1e300, 1e-300, 1e-310):
        x = crand((3, 4)) * scale
        u, s, vh = map(to_numpy, la.svd(on(x, device)))
        want = np.linalg.svd(x, compute_uv=False)
        np.testing.assert_allclose(s, want, rtol=1e-10, atol=want[0] * 1e-14)
        np.testing.assert_allclose((u * s) @ vh[:3], x, rtol=0, atol=want[0] * 1e-10)


# ---------------------------------------------------------------- built on them

@pytest.mark.parametrize("dtype", CPLX)
def test_pinv_matrix_rank_lstsq(device, dtype):
    a = crand((5, 3), dtype)
    low = a[:, [0, 0, 1]]                                  # rank 2
    same(la.pinv(on(a, device)), np.linalg.pinv(a), dtype, 10)
    same(la.pinv(on(low, device)), np.linalg.pinv(low), dtype, 10)
    assert int(la.matrix_rank(on(a, device)).tolist()) == 3
    assert int(la.matrix_rank(on(low, device)).tolist()) == 2
    for x in (a, low, a.T[:, :3].copy()):
        for b in (crand((x.shape[0], 2), dtype), crand((x.shape[0],), dtype),
                  RNG.standard_normal((x.shape[0],)).astype("float32")):
            got = la.lstsq(on(x, device), on(b, device))
            want = np.linalg.lstsq(x, b)
            assert got[2] == want[2]
            for g, e in zip((got[0], got[1], got[3]), (want[0], want[1], want[3])):
                assert g.device == device
                same(g, e, dtype, 10)
    with pytest.raises(la.LinAlgError):
        la.lstsq(on(a, device), on(crand((4,), dtype), device))


@pytest.mark.parametrize("dtype", CPLX)
def test_norm_of_all_elements(device, dtype):
    a = crand((2, 3), dtype)
    same(la.norm(on(a, device)), np.linalg.norm(a), dtype)
    same(la.norm(on(a, device), keepdims=True), np.linalg.norm(a, keepdims=True), dtype)
    same(la.norm(on(a, device), ord=2), np.linalg.norm(a, ord=2), dtype)
