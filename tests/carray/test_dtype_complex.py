"""complex64 / complex128 against NumPy on every device: construction, casts, views of the parts,
promotion (with every dtype and with Python scalars), elementwise math (special values
included), reductions, matmul, sorting, printing and the interchange protocols."""

import cmath
import math

import numpy as np
import pytest

import carray as ca

from conftest import ALL_DTYPES, on

CPLX = ("complex64", "complex128")
INF, NAN = math.inf, math.nan


def _values(dtype, shape, seed=0, special=False):
    rng = np.random.default_rng(seed)
    z = (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dtype)
    if special and z.size:
        flat = z.reshape(-1)
        picks = [complex(INF, 1), complex(-INF, 0.5), complex(1, INF), complex(NAN, 1),
                 complex(2, NAN), complex(0, 0), complex(-0.0, 0), complex(INF, INF)]
        for i, v in enumerate(picks[: flat.size]):
            flat[(i * 7) % flat.size] = v
    return z


def _host(a):
    return np.asarray(a.to("cpu"))


def _close(a, expected, rtol=None):
    got = _host(a)
    assert got.dtype == expected.dtype, (got.dtype, expected.dtype)
    assert got.shape == expected.shape
    tol = rtol or (2e-5 if expected.dtype in (np.complex64, np.float32) else 1e-12)
    np.testing.assert_allclose(got, expected, rtol=tol, atol=tol, equal_nan=True)


# -- construction, parts, casts ----------------------------------------------------------------

def test_construction_and_scalars(device):
    a = ca.asarray([1 + 2j, 3, -1j], device=device)
    assert a.dtype == ca.complex64 and a.device == on(a, device).device
    assert a.tolist() == [1 + 2j, 3 + 0j, -1j]
    assert ca.asarray(1j).dtype == ca.complex64
    assert ca.asarray([1.5, 2j], dtype="complex128").dtype == ca.complex128
    assert complex(ca.asarray(2 - 3j)) == 2 - 3j
    assert ca.asarray(np.float64(1.0) * np.ones(2)).dtype == ca.float64
    assert ca.asarray([np.float64(1.0), 1j]).dtype == ca.complex128     # as float64 + 1j
    z = ca.zeros((2, 3), dtype="complex128", device=device)
    assert _host(z).dtype == np.complex128 and not _host(z).any()
    f = ca.full((2,), 1 - 1j, dtype="complex64", device=device)
    assert f.tolist() == [1 - 1j, 1 - 1j]
    assert ca.ones(2, dtype=ca.complex64).tolist() == [1 + 0j, 1 + 0j]


@pytest.mark.parametrize("dtype", CPLX)
def test_numpy_round_trip_and_dlpack(dtype):
    z = _values(dtype, (3, 4))
    a = ca.asarray(z)
    assert a.dtype == dtype
    m = np.asarray(a)
    assert m.dtype == z.dtype and np.array_equal(m, z)
    assert np.shares_memory(m, z)                                   # zero-copy both ways
    assert np.array_equal(np.from_dlpack(a), z)
    torch = pytest.importorskip("torch")
    t = torch.from_dlpack(a)
    assert str(t.dtype) == f"torch.{dtype}"
    assert np.array_equal(ca.from_dlpack(t).tolist(), z.tolist())


def test_real_imag_views(device):
    z = _values("complex128", (3, 4))
    a = on(z, device)
    v = a[:, ::2]
    _close(v.real, z[:, ::2].real)
    _close(v.imag, z[:, ::2].imag)
    v.imag[...] = 5.0               # writable views of the same memory, as NumPy's
    z[:, ::2].imag = 5.0
    _close(a, z)
    a.real = 0
    z.real = 0
    _close(a, z)
    r = on(np.arange(3.0), device)
    assert r.real is r and _host(r.imag).tolist() == [0.0, 0.0, 0.0]
    with pytest.raises(TypeError):
        r.imag = 1.0


@pytest.mark.parametrize("src", ALL_DTYPES + CPLX)
def test_casts_both_ways(src, device):
    n = np.asarray([0, 1, 2, 0, 1]).astype(src)
    for dst in CPLX:
        _close(on(n, device).astype(dst), n.astype(dst))
    z = np.asarray([1.5 + 2j, -2.25, 0j, 3j, 0.5 - 1j], dtype="complex128")
    if src not in CPLX and np.dtype(src).kind in "iu":
        z = np.asarray([1 + 2j, 2, 0j, 3j, 0 - 1j])
    with np.errstate(all="ignore"):
        import warnings
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            expected = z.astype(src)                  # complex -> real drops the imaginary part
    got = _host(on(z, device).astype(src))
    assert got.dtype == expected.dtype and np.array_equal(got, expected)


def test_moves_views_and_joins(device):
    z = _values("complex64", (4, 5))
    a = on(z, device)
    _close(a[::-1, 1::2].copy(), z[::-1, 1::2])
    _close(a[ca.asarray([2, 0, 3], device=device)], z[[2, 0, 3]])
    _close(a.T, z.T)
    _close(ca.concatenate([a, a[:1]]), np.concatenate([z, z[:1]]))
    _close(ca.stack([a, a]), np.stack([z, z]))
    _close(ca.flip(a, axis=1), np.flip(z, axis=1))
    _close(ca.roll(a, 2, axis=1), np.roll(z, 2, axis=1))
    _close(ca.where(a.real > 0, a, 0), np.where(z.real > 0, z, 0).astype("complex64"))
    b = a.copy()
    b[1, :] = 1j
    zz = z.copy()
    zz[1, :] = 1j
    _close(b, zz)
    e = on(np.zeros((0, 3), "complex64"), device)
    _close(e + e, np.zeros((0, 3), "complex64"))


# -- promotion ---------------------------------------------------------------------------------

@pytest.mark.parametrize("other", ALL_DTYPES + CPLX)
@pytest.mark.parametrize("dtype", CPLX)
def test_promotion_with_every_dtype(dtype, other):
    assert ca.result_type(dtype, other) == np.result_type(dtype, other)
    a = ca.asarray(np.ones(2, dtype))
    b = ca.asarray(np.ones(2, other))
    assert (a + b).dtype == np.result_type(dtype, other)


def test_weak_complex_scalars():
    # carray's default complex is complex64, as its default float is float32
    assert (ca.ones(2, dtype="float64") + 1j).dtype == ca.complex128
    assert (ca.ones(2, dtype="float32") + 1j).dtype == ca.complex64
    assert (ca.ones(2, dtype="int64") + 1j).dtype == ca.complex64
    assert (ca.ones(2, dtype="complex128") + 1.0).dtype == ca.complex128
    assert (ca.ones(2, dtype="complex64") + 2).dtype == ca.complex64
    assert ca.result_type(1j) == ca.complex64
    assert ca.result_type(ca.float64, 1j) == ca.complex128
    assert ca.result_type(ca.int8, 1j, 1.0) == ca.complex64
    assert ((1 + 1j) * ca.ones(1, dtype="complex128")).tolist() == [1 + 1j]
    assert ca.isdtype(ca.complex64, "complex floating")
    assert ca.finfo(ca.complex64).dtype == ca.float32
    info = ca.__array_namespace_info__()
    assert info.default_dtypes()["complex floating"] == ca.complex64
    assert set(info.dtypes(kind="complex floating")) == set(CPLX)


# -- elementwise -------------------------------------------------------------------------------

BINARY = ("add", "subtract", "multiply", "divide", "equal", "not_equal", "less", "greater_equal",
          "maximum", "minimum")
UNARY = ("negative", "absolute", "square", "sqrt", "exp", "expm1", "log", "log1p", "log2",
         "log10", "sin", "cos", "tan", "sinh", "cosh", "tanh", "arcsin", "arccos", "arctan",
         "arcsinh", "arccosh", "arctanh", "reciprocal", "sign", "conjugate", "isnan", "isfinite",
         "isinf", "logical_not")


@pytest.mark.parametrize("dtype", CPLX)
def test_binary_ops(dtype, device):
    x = _values(dtype, (3, 4), 1)
    y = _values(dtype, (4,), 2)                  # broadcast
    a, b = on(x, device), on(y, device)
    # (PoCL compiles each new kernel once per process: the gpu checks a few ops; they share
    # their composition with the rest)
    for name in BINARY if device == "cpu" else ("multiply", "divide", "less", "maximum"):
        with np.errstate(all="ignore"):
            expected = getattr(np, name)(x, y)
        _close(getattr(ca, name)(a, b), expected)
    _close(a[:, ::2] / b[::2], x[:, ::2] / y[::2])             # non-contiguous views
    _close(a ** 2, x ** 2)
    if device == "cpu":
        _close(a ** -1, x ** -1, rtol=1e-4)
        _close(a ** (0.5 + 1j), (x ** (0.5 + 1j)).astype(dtype), rtol=1e-4)
        _close(ca.pow(a, b), x ** y, rtol=1e-4)
    # Smith's division: no overflow where the naive formula would overflow
    big = np.asarray([1e300 + 1e300j], "complex128")
    _close(on(big, device) / on(big, device), big / big)


@pytest.mark.parametrize("dtype", CPLX)
def test_unary_ops(dtype, device):
    x = _values(dtype, (2, 3), 3) * 0.7
    a = on(x, device)
    for name in UNARY if device == "cpu" else ("absolute", "sqrt", "exp", "log", "tanh",
                                               "arcsin", "sign", "isnan"):
        expected = getattr(np, name)(x)
        rtol = 1e-4 if dtype == "complex64" else 1e-9
        _close(getattr(ca, name)(a), expected, rtol)
    _close(ca.angle(a), np.angle(x))
    _close(ca.round(on(x * 10, device)), np.round(x * 10))
    zero_d = on(np.asarray(0.5 - 2j, dtype), device)
    _close(ca.exp(zero_d), np.exp(np.asarray(0.5 - 2j, dtype)))


@pytest.mark.parametrize("name", ("exp", "log", "sqrt", "sinh", "cosh", "tanh", "arcsinh",
                                  "arctanh", "sin", "arccos"))
def test_special_values_as_c99(name):
    """Infinite and NaN parts give C99 Annex G's values (cmath's, which follows it)."""
    cm = {"arcsinh": "asinh", "arctanh": "atanh", "arccos": "acos"}.get(name, name)
    for z in (complex(INF, 0.0), complex(-INF, 1.0), complex(NAN, 0.0), complex(1.0, NAN),
              complex(INF, NAN), complex(0.0, INF) if name not in ("sinh", "cosh") else 0j):
        got = complex(getattr(ca, name)(ca.asarray(z, dtype="complex128")))
        try:
            want = getattr(cmath, cm)(z)
        except ValueError:
            continue
        for g, w in ((got.real, want.real), (got.imag, want.imag)):
            assert (math.isnan(g) and math.isnan(w)) or g == w, (name, z, got, want)


def test_special_values_in_arrays(device):
    z = _values("complex128", (16,), 4, special=True)
    a = on(z, device)
    with np.errstate(all="ignore"):
        _close(ca.isnan(a), np.isnan(z))
        _close(ca.isfinite(a), np.isfinite(z))
        _close(ca.abs(a), np.abs(z))
        _close(ca.exp(a), np.exp(z))
        _close(ca.log(a), np.log(z))
        _close(ca.sqrt(a), np.sqrt(z))


def test_unsupported_ops_raise_typeerror():
    a = ca.asarray([1 + 1j])
    for fn in (ca.floor, ca.ceil, ca.floor_divide, ca.remainder, ca.bitwise_and):
        with pytest.raises(TypeError, match="not supported"):
            fn(a) if fn in (ca.floor, ca.ceil) else fn(a, a)
    with pytest.raises(TypeError):
        ca.zeros(2)[0] = ca.asarray(1j).item()


# -- reductions, products, sorting ---------------------------------------------------------------

@pytest.mark.parametrize("dtype", CPLX)
def test_reductions(dtype, device):
    x = _values(dtype, (3, 5), 5)
    a = on(x, device)
    rtol = 1e-4 if dtype == "complex64" else 1e-10
    for axis in (None, 0, 1, (0, 1)):
        _close(ca.sum(a, axis=axis), np.sum(x, axis=axis), rtol)
        _close(ca.prod(a, axis=axis), np.prod(x, axis=axis), rtol)
        _close(ca.mean(a, axis=axis), np.mean(x, axis=axis), rtol)
        _close(ca.var(a, axis=axis), np.var(x, axis=axis), rtol)
        _close(ca.std(a, axis=axis, keepdims=True), np.std(x, axis=axis, keepdims=True), rtol)
    x[1, 2] = complex(x[1, 2].real, math.nan)
    x[0, 1] = x[0, 3].real + 0j                   # ties of the real parts
    a = on(x, device)
    for name in ("argmax", "argmin", "max", "min"):
        for axis in (None, 1):
            got = getattr(ca, name)(a, axis=axis)
            assert str(_host(got).tolist()) == str(getattr(np, name)(x, axis=axis).tolist())
    _close(ca.any(a, axis=0), np.any(x, axis=0))
    _close(ca.all(a), np.all(x))
    _close(ca.sum(a[:0]), np.sum(x[:0]))
    _close(ca.prod(a[:, :0], axis=1), np.prod(x[:, :0], axis=1))


@pytest.mark.parametrize("dtype", CPLX)
def test_matmul_vecdot(dtype, device):
    x = _values(dtype, (2, 3, 4), 6)
    y = _values(dtype, (4, 5), 7)
    a, b = on(x, device), on(y, device)
    rtol = 1e-4 if dtype == "complex64" else 1e-10
    _close(a @ b, x @ y, rtol)
    _close(ca.matmul(a, on(np.ones(4, "float32"), device)), x @ np.ones(4, "float32"), rtol)
    _close(ca.vecdot(a, a[0]), np.vecdot(x, x[0]), rtol)       # conjugates x1


@pytest.mark.parametrize("dtype", CPLX)
def test_sort_lexicographic(dtype, device):
    x = np.asarray([2 + 1j, 1 + 3j, 2 - 1j, 1 + 3j, -1 + 0j, 1 - 2j], dtype)
    a = on(x, device)
    _close(ca.sort(a), np.sort(x))
    _close(ca.argsort(a), np.argsort(x, kind="stable"))
    m = x.reshape(2, 3)
    _close(ca.sort(on(m, device), axis=0), np.sort(m, axis=0))


# -- printing and bad input ------------------------------------------------------------------------

def test_repr_and_str():
    z = np.asarray([1 + 2j, -1j, complex(NAN, 1), complex(INF, -INF)], "complex64")
    assert repr(ca.asarray(z)) == repr(z)
    assert str(ca.asarray(z)) == str(z)
    w = np.asarray([1.5 + 2j, 1e-7j])
    assert repr(ca.asarray(w)) == repr(w).replace("])", "], dtype=complex128)")
    assert repr(ca.asarray(np.complex64(1 + 2j))) == repr(np.asarray(np.complex64(1 + 2j)))
    assert str(ca.asarray(np.complex64(0.1 + 2j))) == str(np.complex64(0.1 + 2j))


def test_bad_input_messages():
    with pytest.raises(TypeError, match="complex"):
        ca.asarray([1.0, 2.0])[0] = 1j
    with pytest.raises(TypeError):
        ca.asarray(["a", 1j])


def test_scans_and_factories(device):
    z = (_values("complex64", (3, 4), 8) * 0.8).astype("complex64")
    a = on(z, device)
    _close(ca.cumsum(a, axis=1), np.cumsum(z, axis=1))
    _close(ca.cumprod(a, axis=0), np.cumprod(z, axis=0), 1e-4)
    _close(ca.linspace(0, 1 + 2j, 5, device=device), np.linspace(0, 1 + 2j, 5).astype("complex64"))
    _close(ca.arange(3, dtype="complex128", device=device), np.arange(3, dtype="complex128"))
    _close(ca.eye(2, dtype="complex64", device=device), np.eye(2, dtype="complex64"))


def test_linalg(device):
    rng = np.random.default_rng(9)
    m = rng.standard_normal((2, 3, 3)) + 1j * rng.standard_normal((2, 3, 3))
    v = rng.standard_normal((3, 2)) + 1j * rng.standard_normal((3, 2))
    a, b = on(m, device), on(v, device)
    L = ca.linalg
    _close(L.inv(a), np.linalg.inv(m))
    _close(L.solve(a, b), np.linalg.solve(m, v))
    _close(L.det(a), np.linalg.det(m))
    sign, logabs = L.slogdet(a)
    _close(sign, np.linalg.slogdet(m)[0])
    _close(logabs, np.linalg.slogdet(m)[1])
    _close(L.pinv(b), np.linalg.pinv(v))
    _close(L.svdvals(a), np.linalg.svd(m, compute_uv=False))
    h = m + np.conj(np.swapaxes(m, -1, -2))
    _close(L.eigvalsh(on(h, device)), np.linalg.eigvalsh(h))
    _close(L.matrix_norm(a, ord="fro"), np.linalg.matrix_norm(m, ord="fro"))
    _close(L.vector_norm(b), np.linalg.vector_norm(v))
    assert int(L.matrix_rank(b)) == np.linalg.matrix_rank(v)
    _close(L.cholesky(on(h @ h, device)), np.linalg.cholesky(h @ h))
    _close(L.cholesky(on(h @ h, device), upper=True), np.linalg.cholesky(h @ h, upper=True))
    q, r = L.qr(b)
    _close(q @ r, v)
    _close(r, np.linalg.qr(v)[1])                         # LAPACK's reflections: real diagonal
    assert np.array_equal(_host(r), np.triu(_host(r)))
    u, s, vh = L.svd(a)                   # the vectors: test_linalg_complex_decomp.py
    _close(u @ (s[..., None] * vh), m)
