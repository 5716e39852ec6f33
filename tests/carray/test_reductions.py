"""carray's reductions (sum, prod, max, min; functions and methods) against NumPy 2.

axis None / int / negative int / tuple (any order, mixed signs) with keepdims, on random shapes
(0-d, empty, up to 5-d) and views, every dtype. Result dtypes are NumPy's (sum/prod of bool and
int32 give int64). Integers, max and min are exact (NaN propagates); float sums are within
1e-4 (float32) / 1e-12 (float64) of the float64 sum relative to the sum of |x|, float products
within the same relative bound. Also: empty reductions, a 10**7-element float32 sum no less
accurate than NumPy's, parallel (2 and 3 threads) against serial results, axis errors.
"""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import carray as ca

from _opcases import REDUCTIONS, check_values, operand, small_shapes
from conftest import ALL_DTYPES, DTYPES, gpu_examples, on, random_values, to_numpy

SET = settings(max_examples=50, deadline=None)
NAMES = REDUCTIONS
NP = {"sum": np.sum, "prod": np.prod, "max": np.max, "min": np.min}
ERRSTATE = dict(all="ignore")


def _prod_values(v):
    """Factors in [0.9, 1.1] with random signs (NaN kept) so products neither overflow nor
    underflow; integers and bools unchanged (integer products wrap, as NumPy's)."""
    if v.dtype.kind != "f":
        return v
    return np.where(v < 0, -1.0, 1.0) * (1 + 0.1 * np.tanh(v / 300))


@st.composite
def axis_spec(draw, nd):
    """None, an int (either sign), or a tuple of distinct axes (any order, either sign)."""
    kind = draw(st.sampled_from(["none", "int", "tuple"] if nd else ["none", "tuple"]))
    if kind == "none":
        return None
    if kind == "int":
        return draw(st.integers(-nd, nd - 1))
    axes = draw(st.lists(st.integers(0, nd - 1), unique=True, max_size=nd)) if nd else []
    return tuple(ax - nd if draw(st.booleans()) else ax for ax in axes)


def _reduced_count(shape, axis):
    if axis is None:
        return int(np.prod(shape))
    axes = axis if isinstance(axis, tuple) else (axis,)
    return int(np.prod([shape[a] for a in axes]))


def check_reduction(name, r, n, axis, keepdims, device=None):
    """r (carray, on `device` when given) against NumPy's reduction `name` of n over axis."""
    with np.errstate(**ERRSTATE):
        ref = np.asarray(NP[name](n, axis=axis, keepdims=keepdims))
    dt = ref.dtype
    if dt.kind != "f" or name in ("max", "min"):
        check_values(r, ref, dt, device=device)
        return
    # floats: against the float64 result, relative to the sum of |x| (sum) or to |result| (prod)
    with np.errstate(**ERRSTATE):
        ref64 = np.asarray(NP[name](n.astype(np.float64), axis=axis, keepdims=keepdims))
        scale = np.sum(np.abs(n.astype(np.float64)), axis=axis, keepdims=keepdims) \
            if name == "sum" else np.abs(ref64)
    assert isinstance(r, ca.Array)
    assert r.shape == ref.shape and r.dtype.name == dt.name
    assert device is None or r.device == device
    m = to_numpy(r).astype(np.float64)
    rtol = 1e-4 if dt == np.float32 else 1e-12
    finite = np.isfinite(ref64)
    np.testing.assert_array_equal(m[~finite], ref64[~finite])          # NaN / inf where NumPy's
    err = np.abs(m[finite] - ref64[finite])
    bound = (rtol * scale + 1e-30)[finite]
    assert (err <= bound).all(), (m, ref64, scale)


@pytest.mark.parametrize("name", NAMES)
@gpu_examples(10)
@given(data=st.data())
@SET
def test_reduction(name, device, data):
    dt = data.draw(st.sampled_from(ALL_DTYPES), label="dtype")
    shape = data.draw(small_shapes(), label="shape")
    a, n = data.draw(operand(dt, shape, special=True,
                             fix=_prod_values if name == "prod" else None, device=device),
                     label="x")
    axis = data.draw(axis_spec(len(shape)), label="axis")
    keepdims = data.draw(st.booleans(), label="keepdims")
    form = data.draw(st.sampled_from(["function", "method", "positional"]), label="form")
    if form == "function":
        call = lambda: getattr(ca, name)(a, axis=axis, keepdims=keepdims)      # noqa: E731
    elif form == "method":
        call = lambda: getattr(a, name)(axis=axis, keepdims=keepdims)          # noqa: E731
    else:
        call = lambda: getattr(ca, name)(a, axis)                              # noqa: E731
        keepdims = False
    if name in ("max", "min") and _reduced_count(shape, axis) == 0:
        with pytest.raises(ValueError) as en:
            NP[name](n, axis=axis, keepdims=keepdims)
        with pytest.raises(ValueError) as ec:
            call()
        assert str(ec.value) == str(en.value)
        return
    r = call()
    check_reduction(name, r, n, axis, keepdims, device)
    np.testing.assert_array_equal(to_numpy(a), n)            # the input is untouched


def test_aliases_and_methods(device):
    n = random_values("float32", (3, 4), 1)
    a = on(n, device)
    check_values(ca.amax(a, axis=0), n.max(axis=0), "float32")
    check_values(ca.amin(a, axis=1), n.min(axis=1), "float32")
    check_values(a.max(), n.max(), "float32")
    check_values(a.prod(axis=(1, 0), keepdims=True), n.prod(axis=(1, 0), keepdims=True),
                 "float32", exact=False, rtol=1e-5, atol=0)


def test_result_dtypes():
    for dt, s, m in (("bool", "int64", "bool"), ("int32", "int64", "int32"),
                     ("int64", "int64", "int64"), ("float32", "float32", "float32"),
                     ("float64", "float64", "float64"), ("int8", "int64", "int8"),
                     ("int16", "int64", "int16"), ("uint8", "uint64", "uint8"),
                     ("uint16", "uint64", "uint16"), ("uint32", "uint64", "uint32"),
                     ("uint64", "uint64", "uint64")):
        a = ca.ones((2, 3), dtype=dt)
        assert ca.sum(a).dtype.name == s == np.sum(np.ones((2, 3), dt)).dtype.name
        assert ca.prod(a, axis=0).dtype.name == s
        assert ca.max(a).dtype.name == m and ca.min(a, axis=1).dtype.name == m
    # dtype= as NumPy's
    n = random_values("int32", (5, 7), 2)
    check_values(ca.sum(ca.array(n), dtype="float64"), np.sum(n, dtype=np.float64), "float64")
    check_values(ca.sum(ca.array(n), axis=1, dtype="int32"), np.sum(n, axis=1, dtype=np.int32),
                 "int32")
    b = np.array([True, True, False])
    check_values(ca.sum(ca.array(b), dtype="int32"), np.sum(b, dtype=np.int32), "int32")
    check_values(ca.sum(ca.array(b)), np.sum(b), "int64")
    assert int(ca.sum(ca.array(b))) == 2


def test_nan_and_inf(device):
    x = np.array([[1.0, np.nan, 3.0], [-np.inf, 2.0, 0.5], [np.inf, -np.inf, 1.0]], np.float32)
    a = on(x, device)
    with np.errstate(**ERRSTATE):
        for name in NAMES:
            for axis in (None, 0, 1, -1, (0, 1)):
                for dt in ("float32", "float64"):
                    v, vn = on(x.astype(dt), device), x.astype(dt)
                    check_values(getattr(ca, name)(v, axis=axis), NP[name](vn, axis=axis), dt,
                                 device=device)
        assert np.isnan(float(ca.max(a))) and np.isnan(float(ca.min(a)))
        # NaN first, last, alone, in a transposed / reversed view
        for y in ([np.nan, 1, 2], [1, 2, np.nan], [np.nan], [-np.inf, np.nan, np.inf]):
            yn = np.array(y, np.float32)
            for name in ("max", "min"):
                assert np.isnan(float(getattr(ca, name)(on(yn, device)))), (name, y)
                assert np.isnan(float(getattr(ca, name)(on(yn, device)[::-1]))), (name, y)
        check_values(ca.max(a.T, axis=0), np.max(x.T, axis=0), "float32")


def test_empty_reductions(device):
    for dt in DTYPES:
        e = ca.zeros((0,), dtype=dt, device=device)
        en = np.zeros((0,), dt)
        check_values(ca.sum(e), np.sum(en), np.sum(en).dtype)          # 0
        check_values(ca.prod(e), np.prod(en), np.prod(en).dtype)       # 1
        assert float(ca.sum(e)) == 0 and float(ca.prod(e)) == 1
        for name, word in (("max", "maximum"), ("min", "minimum")):
            with pytest.raises(ValueError,
                               match=f"^zero-size array to reduction operation {word} which has "
                                     f"no identity$"):
                getattr(ca, name)(e)
        z = ca.zeros((0, 3), dtype=dt, device=device)
        zn = np.zeros((0, 3), dt)
        for name in NAMES:
            # along the non-empty axis: an empty result, no error
            ref = NP[name](zn, axis=1)
            check_values(getattr(ca, name)(z, axis=1), ref, ref.dtype)
            check_values(getattr(ca, name)(z, axis=1, keepdims=True),
                         NP[name](zn, axis=1, keepdims=True), NP[name](zn, axis=1).dtype)
        check_values(ca.sum(z, axis=0), np.sum(zn, axis=0), np.sum(zn).dtype)
        check_values(ca.prod(z, axis=0, keepdims=True), np.prod(zn, axis=0, keepdims=True),
                     np.prod(zn).dtype)
        for shape, axis in (((0, 3), 0), ((0, 3), None), ((0, 3), (0, 1)), ((0, 0), 0),
                            ((0, 0), 1), ((2, 0), 1), ((0, 2, 0), 2)):
            for name in ("max", "min"):
                with pytest.raises(ValueError, match="zero-size array"):
                    NP[name](np.zeros(shape, dt), axis=axis)
                with pytest.raises(ValueError, match="zero-size array"):
                    getattr(ca, name)(ca.zeros(shape, dtype=dt, device=device), axis=axis)
        assert ca.max(ca.zeros((0, 2, 0), dtype=dt, device=device), axis=1).shape == (0, 0)
        assert ca.max(ca.zeros((3, 0), dtype=dt, device=device), axis=0).shape == (0,)
        assert ca.max(ca.zeros((0,), dtype=dt, device=device), axis=()).shape == (0,)


def test_axis_errors():
    a = ca.ones((2, 3))
    n = np.ones((2, 3))
    for name in NAMES:
        f = getattr(ca, name)
        for axis in (2, -3, (0, 2), (-3,), 100):
            with pytest.raises(ca.AxisError) as e:
                f(a, axis=axis)
            assert isinstance(e.value, ValueError) and isinstance(e.value, IndexError)
            with pytest.raises(np.exceptions.AxisError):
                NP[name](n, axis=axis)
        # a 0-d array: NumPy's ufunc reductions accept axis 0 and -1 (a legacy rule), not more
        for axis in (1, -2, (0,)):
            with pytest.raises(ca.AxisError):
                f(ca.array(1.0), axis=axis)
        for axis in ((0, 0), (1, -1), (0, 1, 0)):
            with pytest.raises(ValueError, match="duplicate"):
                f(a, axis=axis)
            with pytest.raises(ValueError):
                NP[name](n, axis=axis)
        for axis in (1.0, "0"):
            with pytest.raises(TypeError):
                f(a, axis=axis)
            with pytest.raises(TypeError):
                NP[name](n, axis=axis)
        # NumPy integers are axes too
        check_values(f(a, axis=np.int64(1)), NP[name](n, axis=1), "float32")


def test_reduction_out(device):
    n = random_values("float32", (4, 5), 3)
    a = on(n, device)
    o = ca.zeros(5, dtype="float32", device=device)
    assert ca.sum(a, axis=0, out=o) is o
    check_values(o, n.sum(axis=0), "float32", exact=False)
    o64 = ca.zeros((4, 1), dtype="float64", device=device)
    assert ca.max(a, axis=1, keepdims=True, out=o64) is o64
    check_values(o64, n.max(axis=1, keepdims=True).astype(np.float64), "float64")
    with pytest.raises(ValueError):
        ca.sum(a, axis=0, out=ca.zeros(4, dtype="float32", device=device))
    # reductions cast into out unsafely, as NumPy's (computed in the reduction's dtype, then cast)
    h = np.arange(20, dtype=np.float32).reshape(4, 5) * 1.5
    for name in NAMES:
        for od in DTYPES:
            outn = np.zeros(5, od)
            NP[name](h, axis=0, out=outn)
            outa = ca.zeros(5, dtype=od, device=device)
            assert getattr(ca, name)(on(h, device), axis=0, out=outa) is outa
            check_values(outa, outn, od)


# -------------------------------------------------------------------------------------------------
# large arrays: accuracy, parallel against serial
# -------------------------------------------------------------------------------------------------

@pytest.fixture
def restore_threads():
    prev = ca.get_num_threads()
    yield
    ca.set_num_threads(prev)


def test_float32_sum_accuracy_1e7(restore_threads):
    """The float32 sum of 10**7 elements is no less accurate than NumPy's float32 sum (pairwise
    summation; a naive running sum would be off by ~1e3), with 1 and 2 threads; with 3 threads
    (a different split) within 2e-7 relative of the exact sum."""
    rng = np.random.default_rng(0)
    for x in (rng.random(10**7, dtype=np.float32),
              (rng.standard_normal(10**7) + 0.5).astype(np.float32)):
        exact = float(np.sum(x, dtype=np.float64))
        scale = float(np.sum(np.abs(x), dtype=np.float64))
        err_np = abs(float(np.sum(x)) - exact)
        err_np_rev = abs(float(np.sum(x[::-1])) - exact)
        a = ca.array(x)
        results = {}
        for nt in (1, 2, 3):
            ca.set_num_threads(nt)
            r = ca.sum(a)
            assert r.dtype.name == "float32" and r.shape == ()
            results[nt] = float(r)
            err = abs(results[nt] - exact)
            if nt < 3:
                assert err <= 1.01 * err_np + 1e-9 * scale, (nt, err, err_np)
                err_rev = abs(float(ca.sum(a[::-1])) - exact)
                assert err_rev <= 1.01 * err_np_rev + 1e-9 * scale, (nt, err_rev, err_np_rev)
            else:
                assert err <= 2e-7 * scale, (nt, err, err_np)
        assert results[1] == results[2]       # the same pairwise tree with one or two threads


@pytest.mark.parametrize("dt", ["float32", "float64", "int32", "int64", "bool", "int8", "uint16",
                                "uint64"])
def test_parallel_matches_serial(dt, restore_threads):
    """Reductions big enough to run in parallel (over the outermost dim, reduced or not) against
    one thread and against NumPy: exact for ints/bools/max/min, within the float bound for sums."""
    n = random_values(dt, (256, 1031), 11, special=dt in ("int32", "int64"))
    if dt in ("float32", "float64"):
        n = np.abs(n)
    a = ca.array(n)
    views = [(a, n), (a.T, n.T), (a[::-1, ::3], n[::-1, ::3]),
             (ca.broadcast_to(a[:1], (256, 1031)), np.broadcast_to(n[:1], (256, 1031)))]
    cases = [(name, axis, axis in (1, (1, 0))) for name in NAMES for axis in (None, 0, 1, (1, 0))
             if not (name == "prod" and dt[0] == "f")]
    for k, (v, vn) in enumerate(views):
        for name, axis, keepdims in cases:
            got = []
            for nt in ((1, 2, 3) if k == 0 else (1, 2)):
                ca.set_num_threads(nt)
                r = getattr(ca, name)(v, axis=axis, keepdims=keepdims)
                check_reduction(name, r, vn, axis, keepdims)
                got.append(to_numpy(r).copy())
            if dt[0] != "f" or name in ("max", "min"):
                for g in got[1:]:
                    np.testing.assert_array_equal(g, got[0], strict=True)


@pytest.mark.parametrize("shape,dtype", [((300, 1031), None), ((3, 40, 700), None),
                                         ((300, 1031), "float64"), ((2, 1, 70000), None)])
def test_rows_in_parallel_are_numpys_row_sums(shape, dtype, restore_threads):
    """Folding the last dim of a C-contiguous array in parallel (the rows shared out among the
    threads) sums each row whole in NumPy's pairwise order: bit-equal to NumPy's float32 row
    sums and to one thread, whatever the thread count; max/min/prod/mean too (to one thread)."""
    x = np.random.default_rng(len(shape)).standard_normal(shape).astype(np.float32)
    a = ca.array(x)
    ref = np.sum(x, axis=-1, dtype=dtype)
    first = {}
    for nt in (1, 2, 3):
        ca.set_num_threads(nt)
        got = ca.sum(a, axis=-1, dtype=dtype)
        np.testing.assert_array_equal(to_numpy(got), ref, strict=True)
        for name in ("max", "min", "prod", "mean"):
            r = to_numpy(getattr(ca, name)(a, axis=-1, keepdims=True))
            first.setdefault(name, r)
            np.testing.assert_array_equal(r, first[name], strict=True)
            if name != "prod":          # (a product of thousands of normals under/overflows)
                np.testing.assert_allclose(r, getattr(np, name)(x, axis=-1, keepdims=True),
                                           rtol=2e-6)


def test_float_prod_large(device):
    x = (1 + np.random.default_rng(5).standard_normal(200_000) * 1e-4).astype(np.float32)
    ref = float(np.prod(x.astype(np.float64)))
    assert abs(float(ca.prod(on(x, device))) - ref) <= 1e-3 * abs(ref)
    y = np.array([2.0, np.inf, 0.5], np.float32)
    check_values(ca.prod(on(y, device)), np.prod(y), "float32", device=device)
    with np.errstate(**ERRSTATE):
        z = np.array([0.0, np.inf], np.float32)
        check_values(ca.prod(on(z, device)), np.prod(z), "float32", device=device)     # nan


# -------------------------------------------------------------------------------------------------
# mean, var, std
# -------------------------------------------------------------------------------------------------

MOMENTS = {"mean": np.mean, "var": np.var, "std": np.std}


@pytest.mark.filterwarnings("ignore::RuntimeWarning")   # NumPy: ddof >= n, mean of empty
@pytest.mark.parametrize("name", list(MOMENTS))
@gpu_examples(5)
@given(data=st.data())
@settings(max_examples=40, deadline=None)
def test_mean_var_std(name, device, data):
    """Random views, axes and ddof (ddof >= n included: NumPy divides by max(n - ddof, 0), so
    inf, or NaN for 0 / 0)."""
    dt = data.draw(st.sampled_from(ALL_DTYPES), label="dtype")
    shape = data.draw(small_shapes(0, 4), label="shape")
    a, n = data.draw(operand(dt, shape, device=device), label="x")
    axis = data.draw(axis_spec(len(shape)), label="axis")
    keepdims = data.draw(st.booleans(), label="keepdims")
    kw = {"axis": axis, "keepdims": keepdims}
    if name != "mean":
        kw["ddof"] = data.draw(st.integers(0, 3), label="ddof")
    with np.errstate(**ERRSTATE):
        ref = np.asarray(MOMENTS[name](n, **kw))
    r = getattr(ca, name)(a, **kw)
    check_values(r, ref, ref.dtype, exact=False, rtol=1e-4 if ref.dtype == np.float32 else 1e-9,
                 atol=1e-4 if ref.dtype == np.float32 else 1e-9, device=device)


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_var_std_ddof_at_least_n(device):
    """NumPy divides by max(n - ddof, 0): inf where the deviations are not all 0, else NaN."""
    n = np.array([[1.0, 3.0], [2.0, 2.0]], np.float32)
    a = on(n, device)
    for ddof in (2, 3):
        with np.errstate(**ERRSTATE):
            check_values(ca.var(a, axis=1, ddof=ddof), np.var(n, axis=1, ddof=ddof), "float32")
            check_values(ca.std(a, ddof=4), np.std(n, ddof=4), "float32")          # [inf]
            check_values(a.var(axis=0, ddof=ddof), n.var(axis=0, ddof=ddof), "float32")


def test_zero_d_reductions_accept_axis_0_and_minus_1(device):
    """NumPy's ufunc reductions and argmax/argmin take axis 0 or -1 on a 0-d array (reducing
    over nothing); mean/var/std do not."""
    for dt in DTYPES:
        n = random_values(dt, (), 4)
        a = on(n, device)
        for axis in (0, -1, np.int64(0)):
            for name in NAMES + ("argmax", "argmin", "any", "all"):
                for keepdims in (False, True):
                    ref = getattr(np, name)(n, axis=axis, keepdims=keepdims)
                    check_values(getattr(ca, name)(a, axis=axis, keepdims=keepdims), ref,
                                 np.asarray(ref).dtype)
            for name in MOMENTS:
                with pytest.raises(np.exceptions.AxisError):
                    MOMENTS[name](n, axis=axis)
                with pytest.raises(ca.AxisError):
                    getattr(ca, name)(a, axis=axis)


def test_mean_integer_dtype_and_out_cast(device):
    """mean(dtype=<int>) truncates to that dtype; mean and var write any dtype of out (cast
    unsafely, as NumPy's); std checks out's dtype (sqrt's same_kind rule)."""
    n = np.arange(24, dtype=np.int64).reshape(4, 6) * 7 - 30
    a = on(n, device)
    for dt in ("int32", "int64", "bool", "float32"):
        ref = np.mean(n, axis=1, dtype=dt)
        check_values(ca.mean(a, axis=1, dtype=dt), ref, dt)
    h = n.astype(np.float64) / 3
    for name in ("mean", "var"):
        for od in DTYPES:
            outn = np.zeros(4, od)
            MOMENTS[name](h, axis=1, out=outn)
            outa = ca.zeros(4, dtype=od, device=device)
            assert getattr(ca, name)(on(h, device), axis=1, out=outa) is outa
            check_values(outa, outn, od)
    with pytest.raises(TypeError):
        np.std(h, axis=1, out=np.zeros(4, "int64"))
    with pytest.raises(TypeError):
        ca.std(on(h, device), axis=1, out=ca.zeros(4, dtype="int64", device=device))
