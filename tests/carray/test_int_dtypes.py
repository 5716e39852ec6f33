"""The narrow and unsigned integer dtypes (int8, int16, uint8, uint16, uint32, uint64) against
NumPy on every device: wrap-around arithmetic, NumPy's integer division rules, weak Python ints
(OverflowError out of range, compared by value), casts between every pair, sums into
int64/uint64, factories, index arrays, joins, buffers/DLPack/pickling and printing. (The op
families' own tests draw these dtypes too; this file checks what is particular to them.)"""

import pickle

import numpy as np
import pytest

import carray as ca

from conftest import ALL_DTYPES, SMALL_INTS, on, to_numpy

ERR = {"all": "ignore"}


def same(a, n):
    """carray a equals NumPy n in dtype and values."""
    m = to_numpy(a)
    assert m.dtype == n.dtype, (m.dtype, n.dtype)
    np.testing.assert_array_equal(m, n)


def edges(dt):
    """min, max and a few values around 0 of integer dtype dt."""
    info = np.iinfo(dt)
    vals = [info.min, info.min + 1, 0, 1, 2, 7, info.max - 1, info.max]
    if info.min < 0:
        vals += [-1, -2, -7]
    return np.array(vals, dt)


@pytest.mark.parametrize("dt", SMALL_INTS)
def test_arithmetic_wraps_as_numpy(dt, device):
    n = edges(dt)
    m = n[::-1].copy()
    a, b = on(n, device), on(m, device)
    with np.errstate(**ERR):
        same(a + b, n + m)
        same(a - b, n - m)
        same(a * b, n * m)
        same(-a, -n)
        same(abs(a), np.abs(n))
        same(a * a, np.square(n))
        same(ca.square(a), np.square(n))
        same(~a, ~n)
        e = np.resize(np.array([0, 1, 2, 3, 5, 8], dt), n.shape)
        same(a ** on(e, device), n ** e)
        same(ca.reciprocal(a), np.reciprocal(n))
        same(ca.sign(a), np.sign(n))
        same(a & b, n & m)
        same(a | b, n | m)
        same(a ^ b, n ^ m)
        same(ca.maximum(a, b), np.maximum(n, m))
        same(a < b, n < m)
        same(a == b, n == m)


@pytest.mark.parametrize("dt", SMALL_INTS)
def test_integer_division_rules(dt, device):
    """floor_divide, remainder and fmod as NumPy: floor for signed, 0 for division by 0, the
    most negative value // -1 wraps."""
    n = np.repeat(edges(dt), edges(dt).size)
    m = np.tile(edges(dt), edges(dt).size)
    a, b = on(n, device), on(m, device)
    with np.errstate(**ERR):
        same(a // b, n // m)
        same(a % b, n % m)
        same(ca.fmod(a, b), np.fmod(n, m))
        same(a / b, n / m)


def test_negative_powers_of_signed_ints_raise(device):
    for dt in ("int8", "int16"):
        with pytest.raises(ValueError, match="negative integer powers"):
            on(np.array([2, 3], dt), device) ** on(np.array([1, -1], dt), device)
    same(on(np.array([2, 3], "uint8"), device) ** 9, np.array([2, 3], "uint8") ** 9)


@pytest.mark.parametrize("dt", SMALL_INTS)
def test_weak_python_ints(dt, device):
    """In-range Python ints keep the dtype; out of range raise OverflowError (NumPy 2), except
    in comparisons, which compare by value."""
    info = np.iinfo(dt)
    n = np.array([0, 3, info.max], dt)
    a = on(n, device)
    with np.errstate(**ERR):
        same(a + 3, n + 3)
        same(3 * a, 3 * n)
    for bad in (info.max + 1, info.min - 1):
        with pytest.raises(OverflowError, match=f"{bad} out of bounds for {dt}"):
            a + bad
        with pytest.raises(OverflowError):
            n + bad                                     # as NumPy
        for cmp in ("__eq__", "__lt__", "__gt__", "__ne__"):
            same(getattr(a, cmp)(bad), getattr(n, cmp)(bad))
    assert (a + 1.5).dtype == ca.float32                # the default float (NumPy: float64)


def test_result_types_of_mixed_arrays(device):
    pairs = [("uint8", "int8", "int16"), ("uint16", "int8", "int32"), ("uint32", "int16", "int64"),
             ("uint64", "int64", "float64"), ("int8", "float32", "float32"),
             ("uint16", "float32", "float32"), ("uint32", "float32", "float64"),
             ("uint8", "bool", "uint8"), ("uint64", "uint8", "uint64")]
    for t1, t2, expect in pairs:
        n1, n2 = np.array([1, 2], t1), np.array([3, 4], t2)
        assert (n1 + n2).dtype == expect
        same(on(n1, device) + on(n2, device), n1 + n2)
        same(ca.where(on(np.array([True, False]), device), on(n1, device), on(n2, device)),
             np.where([True, False], n1, n2))


def test_float_ops_of_ints_and_same_kind_out(device):
    # as NumPy: float16 for 1-byte ints, float32 for 2-byte ints, float64 for wider ones
    assert ca.sqrt(on(np.array([4], "uint8"), device)).dtype == ca.float16
    assert ca.arctan2(on(np.array([1], "int8"), device), on(np.array([1], "uint16"), device)) \
        .dtype == ca.float32 == np.arctan2(np.int8(1), np.uint16(1)).dtype
    assert ca.exp(on(np.array([1], "uint32"), device)).dtype == ca.float64
    assert (on(np.array([1], "uint8"), device) / 2).dtype == ca.float64
    with pytest.raises(TypeError, match="int8.*uint8|same_kind"):
        ca.add(on(np.array([1], "int8"), device), 1, out=on(np.zeros(1, "uint8"), device))
    out = on(np.zeros(1, "int16"), device)
    ca.add(on(np.array([200], "uint8"), device), 100, out=out)
    same(out, np.array([44], "int16"))                  # uint8 arithmetic, then cast


@pytest.mark.parametrize("src", ALL_DTYPES)
def test_astype_between_every_pair(src, device):
    """Values every dtype holds convert exactly; floats truncate toward zero; ints wrap."""
    n = np.array([0, 1, 5, 100, 127], src)
    a = on(n, device)
    # (each pair is one kernel to compile on the device: it checks a sample)
    targets = ALL_DTYPES if device == "cpu" else ("bool", "uint8", "int16", "uint64", "float32")
    for dst in targets:
        same(a.astype(dst), n.astype(dst))
    if n.dtype.kind == "f":
        f = np.array([-2.75, -0.5, 0.5, 2.75, 126.9], src)
        for dst in ("int8", "int16", "int32", "int64"):
            same(on(f, device).astype(dst), f.astype(dst))
        for dst in ("uint8", "uint16", "uint32", "uint64"):
            same(on(f[2:], device).astype(dst), f[2:].astype(dst))
        # negative floats to unsigned types as NumPy casts them on x86 (through a signed
        # integer: -1.0 is 255 in uint8): NVIDIA's OpenCL cast saturated to 0 (np.pad of a
        # uint8 array with constant_values=-1.0 padded with 0)
        g = np.array([-1.0, -2.75, -129.5, -70000.0, 3.5], src)
        for dst in ("uint8", "uint16", "uint32", "uint64"):
            with np.errstate(invalid="ignore"):
                same(on(g, device).astype(dst), g.astype(dst))
    if n.dtype.kind in "iu":
        w = np.array([np.iinfo(src).max, np.iinfo(src).min], src)
        for dst in targets:
            with np.errstate(**ERR):
                same(on(w, device).astype(dst), w.astype(dst))


@pytest.mark.parametrize("dt", SMALL_INTS)
def test_reductions_and_scans(dt, device):
    info = np.iinfo(dt)
    n = np.array([[info.max, info.max, 1], [info.min, 2, 3]], dt)
    a = on(n, device)
    with np.errstate(**ERR):
        for f in ("sum", "prod", "max", "min", "argmax", "argmin", "cumsum", "cumprod"):
            same(getattr(a, f)(axis=1), getattr(n, f)(axis=1))
        same(a.sum(), n.sum())                          # int64 / uint64, as NumPy 2
        same(a.sum(dtype=dt), n.sum(dtype=dt))          # wraps in the dtype
        same(a.mean(axis=0), n.mean(axis=0))
        same(ca.sort(a, axis=1), np.sort(n, axis=1))
        same(ca.argsort(a, axis=0), np.argsort(n, axis=0, stable=True))
        same(a @ a.T, n @ n.T)


@pytest.mark.parametrize("dt", SMALL_INTS)
def test_factories(dt, device):
    same(ca.arange(10, dtype=dt, device=device), np.arange(10, dtype=dt))
    same(ca.zeros((2, 3), dtype=dt, device=device), np.zeros((2, 3), dt))
    same(ca.ones(3, dtype=dt, device=device), np.ones(3, dt))
    same(ca.full(3, 7, dtype=dt, device=device), np.full(3, 7, dt))
    same(ca.eye(3, dtype=dt, device=device), np.eye(3, dtype=dt))
    same(ca.linspace(0, 9, 4, dtype=dt, device=device), np.linspace(0, 9, 4, dtype=dt))
    same(ca.asarray([1, 2], dtype=dt, device=device), np.asarray([1, 2], dtype=dt))
    info = np.iinfo(dt)
    for bad in (info.max + 1, info.min - 1):
        with pytest.raises(OverflowError):
            np.full(2, bad, dtype=dt)
        with pytest.raises(OverflowError, match=str(bad)):
            ca.full(2, bad, dtype=dt, device=device)
        with pytest.raises(OverflowError):
            ca.asarray([bad], dtype=dt)
    same(ca.arange(250, 260, dtype="uint8", device=device), np.arange(250, 260, dtype="uint8"))
    with pytest.raises(OverflowError, match="-2 out of bounds for uint8"):
        ca.arange(-2, 3, dtype="uint8")


@pytest.mark.parametrize("it", SMALL_INTS)
def test_index_arrays_of_every_int_dtype(it, device):
    n = np.arange(12).reshape(3, 4) * 10
    a = on(n, device)
    idx = np.array([2, 0, 2], it)
    same(a[on(idx, device)], n[idx])
    same(a[:, on(idx, device)], n[:, idx])
    b, m = a.copy(), n.copy()
    b[on(idx, device)] = 5
    m[idx] = 5
    same(b, m)
    # a bool array stays a mask; uint8 ones and zeros index
    mask = np.array([1, 0, 1], "uint8")
    same(a[on(mask, device)], n[mask])
    same(a[on(mask.astype(bool), device)], n[mask.astype(bool)])


def test_promotion_of_many_dtypes_is_numpys():
    """NumPy promotes several dtypes through the highest one (not pairwise): int8, uint16 and
    float32 give float32; a signed int array against a uint64 one compares exactly."""
    for ts in (("int8", "uint16", "float32"), ("int16", "uint16", "float32"),
               ("int8", "uint8", "uint16"), ("int64", "uint64", "float32")):
        expect = np.result_type(*ts)
        assert ca.result_type(*ts) == expect
        assert ca.concatenate([ca.zeros(1, dtype=t) for t in ts]).dtype == expect
    u = np.array([2**53 + 1, 2**64 - 1, 5], np.uint64)
    i = np.array([2**53, -1, 5], np.int64)
    for f in ("equal", "not_equal", "less", "less_equal", "greater", "greater_equal"):
        np.testing.assert_array_equal(np.asarray(getattr(ca, f)(ca.asarray(u), ca.asarray(i))),
                                      getattr(np, f)(u, i))
        np.testing.assert_array_equal(np.asarray(getattr(ca, f)(ca.asarray(i), ca.asarray(u))),
                                      getattr(np, f)(i, u))
    out = ca.zeros(3, dtype="int8")
    assert ca.less(ca.asarray(i), ca.asarray(u), out=out) is out
    np.testing.assert_array_equal(np.asarray(out), np.less(i, u).astype("int8"))
    with pytest.raises(TypeError, match="greater: out must be a carray Array"):
        ca.greater(ca.asarray(u), ca.asarray(i), out="out")


def test_join_promotes(device):
    x, y = np.array([1, 2], "uint8"), np.array([-1], "int8")
    same(ca.concatenate([on(x, device), on(y, device)]), np.concatenate([x, y]))
    same(ca.stack([on(x, device), on(x[::-1], device)]), np.stack([x, x[::-1]]))
    u = np.array([2**64 - 1], "uint64")
    same(ca.concatenate([on(u, device), on(np.array([-1]), device)]),
         np.concatenate([u, np.array([-1])]))


@pytest.mark.parametrize("dt", SMALL_INTS)
def test_exports_round_trip(dt):
    n = edges(dt)[:8].reshape(2, -1)[:, ::-1]
    a = ca.asarray(n)
    assert np.shares_memory(np.asarray(a), n)           # zero-copy both ways
    m = memoryview(ca.ascontiguousarray(a))
    assert m.format == {"int8": "b", "int16": "h", "uint8": "B", "uint16": "H", "uint32": "I",
                        "uint64": "Q"}[dt]
    same(ca.asarray(m), np.asarray(m))
    same(ca.from_dlpack(a), n)
    same(ca.asarray(np.from_dlpack(a)), n)
    same(pickle.loads(pickle.dumps(a)), n)
    assert a.tolist() == n.tolist() and type(a[0, 0].item()) is int
    assert a[0, 0].item() == n[0, 0].item() and int(a[1, 1]) == int(n[1, 1])
    assert repr(a) == repr(n) and str(a) == str(n)
    assert repr(a[0, 0]) == f"array({n[0, 0]}, dtype={dt})"


def test_dtype_objects():
    for name in SMALL_INTS:
        d = getattr(ca, name)
        assert d == np.dtype(name) and d.itemsize == np.dtype(name).itemsize
        assert d.kind == np.dtype(name).kind and d.char == np.dtype(name).char
        assert ca.dtype(name) is d and ca.dtype(np.dtype(name).type) is d
