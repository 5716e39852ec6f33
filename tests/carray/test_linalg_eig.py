"""carray.linalg.eig and eigvals against numpy.linalg on every device: real, integer and complex
input, batches, non-contiguous views, empty and 1 x 1 matrices, rotations (complex eigenvalues
of real matrices), triangular, repeated-eigenvalue and defective matrices, extreme magnitudes.

The order of the eigenvalues differs from NumPy's (it balances, and runs the real double-shift
QR on real input), so eigenvalues are matched to NumPy's by nearest distance; every pair is
checked through A v = w v and unit norm, and where eigenvalues are distinct the vectors equal
NumPy's up to a unit phase. Results are always complex (the array API standard), where NumPy
returns a real array when all eigenvalues are real."""

import numpy as np
import pytest

import carray as ca
from carray import linalg as la

from conftest import on, to_numpy

RNG = np.random.default_rng(2468)
COMPLEX_OF = {"float32": "complex64", "float64": "complex128", "complex64": "complex64",
              "complex128": "complex128", "int32": "complex128", "int64": "complex128",
              "bool": "complex128", "uint8": "complex128"}


def tol(dtype):
    return 2e-4 if np.dtype(dtype) in (np.complex64, np.float32) else 1e-10


def rand(shape, dtype):
    x = RNG.standard_normal(shape)
    if np.dtype(dtype).kind == "c":
        x = x + 1j * RNG.standard_normal(shape)
    return x.astype(dtype)


def match(got, expect, atol):
    """got's eigenvalues (..., n) permuted, per matrix, to the nearest of expect's."""
    got = got.reshape((-1, got.shape[-1]))
    exp = np.asarray(expect, dtype=complex).reshape(got.shape)
    perms = []
    for g, e in zip(got, exp):
        free = list(range(len(g)))
        perm = []
        for x in e:
            j = min(free, key=lambda i: abs(g[i] - x))
            free.remove(j)
            perm.append(j)
        np.testing.assert_allclose(g[perm], e, atol=atol * (1 + np.abs(e).max()))
        perms.append(perm)
    return perms


def check_pairs(a, w, v, dtype):
    """A v = w v for every pair, unit columns, the largest component real and positive."""
    a = a.astype(complex)
    scale = 1 + (np.abs(a).max() if a.size else 0)
    np.testing.assert_allclose(a @ v, v * w[..., None, :], atol=tol(dtype) * scale * 10)
    if v.size:
        np.testing.assert_allclose(np.linalg.norm(v, axis=-2), 1, atol=tol(dtype))
        top = np.take_along_axis(v, np.argmax(np.abs(v), axis=-2)[..., None, :], axis=-2)
        assert np.all(np.abs(top.imag) <= tol(dtype)) and np.all(top.real > 0)


@pytest.mark.parametrize("dtype", ["float32", "float64", "complex64", "complex128", "int32"])
@pytest.mark.parametrize("batch,n", [((), 4), ((3,), 5), ((2, 2), 3), ((), 1), ((), 30),
                                     ((2,), 0), ((0,), 3)])
def test_eig_matches_numpy(device, dtype, batch, n):
    a = rand(batch + (n, n), dtype) if dtype != "int32" else \
        RNG.integers(-5, 6, batch + (n, n)).astype(dtype)
    w, v = la.eig(on(a, device))
    assert isinstance(la.eig(on(a, device)), la.EigResult)
    assert w.device == device and v.device == device
    cd = COMPLEX_OF[dtype]
    gw, gv = to_numpy(w), to_numpy(v)
    assert gw.dtype == cd and gv.dtype == cd
    assert gw.shape == batch + (n,) and gv.shape == batch + (n, n)
    a64 = a.astype(np.complex128)
    ew, ev = np.linalg.eig(a64)
    if ew.size:
        perms = match(gw, ew, tol(dtype))
        # distinct eigenvalues: the vectors equal NumPy's up to a unit phase
        gv2 = gv.reshape((-1, n, n))
        for m, perm in enumerate(perms):
            ws = ew.reshape((-1, n))[m]
            if n > 1 and np.min(np.abs(ws[:, None] - ws[None, :]) + np.eye(n)) < 1e-2:
                continue                        # (nearly) repeated: the vectors are not unique
            e = ev.reshape((-1, n, n))[m]
            g = gv2[m][:, perm]
            phase = np.sum(np.conj(e) * g, axis=0)
            np.testing.assert_allclose(np.abs(phase), 1, atol=tol(dtype) * 100)
    check_pairs(a64, gw.astype(complex), gv.astype(complex), dtype)
    wv = to_numpy(la.eigvals(on(a, device)))
    assert wv.dtype == cd and wv.shape == batch + (n,)
    np.testing.assert_array_equal(wv, gw)     # the same iteration, without the vectors


@pytest.mark.parametrize("seed", [0, 2, 3])
def test_eig_complex_order_and_vectors_as_numpy(seed):
    # complex input: the same algorithm as zgeev, so order and normalisation come out as
    # NumPy's for most small matrices (not all: the shifts differ in rounding), these among them
    r = np.random.default_rng(seed)
    a = r.standard_normal((6, 6)) + 1j * r.standard_normal((6, 6))
    w, v = la.eig(ca.asarray(a))
    ew, ev = np.linalg.eig(a)
    np.testing.assert_allclose(to_numpy(w), ew, atol=1e-12)
    np.testing.assert_allclose(to_numpy(v), ev, atol=1e-10)


def test_eig_non_contiguous(device):
    a = rand((3, 4, 8), "float64")
    x = on(a, device)[..., ::2]                # (3, 4, 4) strided view
    w, v = la.eig(x)
    check_pairs(a[..., ::2], to_numpy(w), to_numpy(v), "float64")
    match(to_numpy(w), np.linalg.eigvals(a[..., ::2]), 1e-10)
    t = on(rand((5, 5), "complex64"), device).mT
    w, v = la.eig(t)
    check_pairs(to_numpy(t), to_numpy(w), to_numpy(v), "complex64")


@pytest.mark.parametrize("a,expect", [
    ([[0.0, -1.0], [1.0, 0.0]], [1j, -1j]),                              # rotation by 90
    ([[np.cos(0.3), -np.sin(0.3)], [np.sin(0.3), np.cos(0.3)]],
     [np.exp(0.3j), np.exp(-0.3j)]),
    ([[2.0, 1.0, 4.0], [0.0, 3.0, 5.0], [0.0, 0.0, -1.0]], [2, 3, -1]),   # triangular
    ([[2.0, 0.0, 0.0], [1.0, 3.0, 0.0], [4.0, 5.0, -1.0]], [2, 3, -1]),
    ([[1.0, 1.0], [0.0, 1.0]], [1, 1]),                                  # defective
    ([[2.0, 1.0, 0.0], [0.0, 2.0, 1.0], [0.0, 0.0, 2.0]], [2, 2, 2]),     # Jordan block
    (np.eye(4), [1, 1, 1, 1]),                                           # repeated
    (np.zeros((3, 3)), [0, 0, 0]),
    ([[0.0, 1.0, 0.0], [0.0, 0.0, 1.0], [1.0, 0.0, 0.0]],                # cyclic permutation
     [1, np.exp(2j * np.pi / 3), np.exp(-2j * np.pi / 3)]),
    ([[1e300, 2e300], [3e300, 4e300]], np.linalg.eigvals([[1.0, 2.0], [3.0, 4.0]]) * 1e300),
    ([[1e-300, 2e-300], [3e-300, 4e-300]], np.linalg.eigvals([[1.0, 2.0], [3.0, 4.0]]) * 1e-300),
])
def test_eig_special_matrices(device, a, expect):
    a = np.asarray(a, dtype=np.float64)
    w, v = la.eig(on(a, device))
    gw, gv = to_numpy(w), to_numpy(v)
    s = np.abs(a).max() or 1.0
    match(gw / s, np.asarray(expect) / s, 1e-7)     # a defective eigenvalue: sqrt(eps) accurate
    check_pairs(a / s, gw / s, gv, "float64")
    assert np.all(np.isfinite(gv))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_eig_real_input_as_dgeev(device, dtype):
    # real input: real eigenvalues exactly real with real vectors, the others exact conjugate
    # pairs with conjugate vectors, as NumPy's (dgeev's) results
    r = np.random.default_rng(11)
    a = r.standard_normal((6, 7, 7)).astype(dtype)
    w, v = la.eig(on(a, device))
    gw, gv = to_numpy(w), to_numpy(v)
    ew = np.linalg.eigvals(a)
    for m in range(a.shape[0]):
        real = gw[m].imag == 0
        assert real.sum() == (ew[m].imag == 0).sum()
        assert np.all(gv[m][:, real].imag == 0)
        cplx = np.flatnonzero(~real)
        for i in cplx:
            j = cplx[np.argmin(np.abs(gw[m][cplx] - np.conj(gw[m][i])))]
            assert gw[m][j] == np.conj(gw[m][i])
            np.testing.assert_array_equal(gv[m][:, j], np.conj(gv[m][:, i]))
    check_pairs(a.astype(np.float64), gw.astype(complex), gv.astype(complex), dtype)
    np.testing.assert_array_equal(to_numpy(la.eigvals(on(a, device))), gw)


def test_eig_badly_scaled(device):
    # D M D^-1 with D from 1e-6 to 1e6: balancing keeps M's eigenvalues accurate
    m = RNG.standard_normal((8, 8))
    d = np.logspace(-6, 6, 8)
    a = d[:, None] * m / d[None, :]
    w, v = la.eig(on(a, device))
    match(to_numpy(w), np.linalg.eigvals(m), 1e-9)
    check_pairs(a, to_numpy(w), to_numpy(v), "float64")


def test_eig_companion_and_larger():
    # the companion matrix of (x - 1)(x - 2)...(x - 6): eigenvalues 1..6
    c = np.poly(np.arange(1, 7))
    comp = np.diag(np.ones(5), -1)
    comp[0] = -c[1:]
    w = to_numpy(la.eigvals(ca.asarray(comp)))
    match(w, np.arange(1, 7), 1e-8)
    a = rand((60, 60), "float64")
    w, v = la.eig(ca.asarray(a))
    check_pairs(a, to_numpy(w), to_numpy(v), "float64")
    match(to_numpy(w), np.linalg.eigvals(a), 1e-9)


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_eig_non_finite(device, bad):
    a = np.eye(3)
    a[1, 2] = bad
    for f in (la.eig, la.eigvals):
        with pytest.raises(la.LinAlgError, match="Array must not contain infs or NaNs"):
            f(on(a, device))
    with pytest.raises(np.linalg.LinAlgError, match="Array must not contain infs or NaNs"):
        np.linalg.eig(a)


def test_eig_errors(device):
    for f in (la.eig, la.eigvals):
        with pytest.raises(la.LinAlgError, match="square"):
            f(on(np.ones((2, 3)), device))
        with pytest.raises(la.LinAlgError, match="at least two-dimensional"):
            f(on(np.ones(3), device))
        with pytest.raises(TypeError, match="float16"):
            f(on(np.ones((2, 2), np.float16), device))
    assert issubclass(la.LinAlgError, ValueError)


def test_eig_bool_and_int_promote(device):
    a = np.array([[True, False], [True, True]])
    w = la.eigvals(on(a, device))
    assert w.dtype == ca.complex128
    match(to_numpy(w), np.linalg.eigvals(a.astype(float)), 1e-7)
    w = la.eigvals(on(np.array([[2, 1], [1, 2]], np.int64), device))
    match(to_numpy(w), [1, 3], 1e-12)
