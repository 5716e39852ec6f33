"""Reductions whose result dtype differs from the input's (sum/prod of bool and int32 to int64,
`dtype=`, mean of ints in float64) read the input type and accumulate in the result type: no
cast copy of the whole input. Checked on the host through the caching allocator (a freed wide
copy would land in its free lists) and on the device through the runtime's allocations; the
values against NumPy for every axis combination, keepdims and views (ints exact, floats within
the relative bounds of test_reductions)."""

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import carray as ca

from _opcases import check_values, operand
from conftest import gpu_examples, to_numpy

N = 10**6
# NumPy warns about means of nothing (NaN, as carray's)
pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")


@pytest.fixture
def host_cache():
    """A caching host allocator that keeps every freed block (so a temporary shows in
    cache_info()), emptied first; the previous limit restored after."""
    old = ca.cache_info()[1]
    ca.set_cache_limit(1 << 31)
    ca.empty_cache()
    yield
    ca.set_cache_limit(old)


def _widening_calls(x, x32):
    """(name, thunk, expected) for reductions of bool x and int32 x32 into a wider type."""
    return [
        ("bool.sum", lambda: x.sum(), N),
        ("bool.sum(axis=0)", lambda: x.reshape(1000, 1000).sum(axis=0), None),
        ("bool.sum(axis=1)", lambda: x.reshape(1000, 1000).sum(axis=1), None),
        ("bool.prod", lambda: x.prod(), 1),
        ("bool.mean", lambda: ca.mean(x), 1.0),
        ("int32.sum(float64)", lambda: x32.sum(dtype="float64"), float(N)),
        ("int32.sum", lambda: x32.sum(), N),
        ("int32.prod", lambda: ca.prod(x32, dtype="int64"), 1),
        ("int32.mean", lambda: ca.mean(x32), 1.0),
    ]


def test_widening_reductions_make_no_wide_copy_on_host(host_cache):
    x = ca.ones(N, dtype="bool")
    x32 = ca.ones(N, dtype="int32")
    for name, call, expected in _widening_calls(x, x32):
        ca.empty_cache()
        r = call()
        held = ca.cache_info()[0]
        # the old path freed an 8-bytes-per-element copy of the input here
        assert held < N, f"{name}: {held} bytes of temporaries (a cast copy of the input?)"
        if expected is not None:
            assert r.item() == expected, name


def test_widening_reductions_make_no_wide_copy_on_device(monkeypatch):
    from conftest import have_gpu
    if not have_gpu():
        pytest.skip("no OpenCL device")
    rt = ca.opencl.runtime()
    x = ca.ones(N, dtype="bool", device="gpu")
    x32 = ca.ones(N, dtype="int32", device="gpu")
    sizes = []
    alloc = rt.alloc

    def recording_alloc(nbytes):
        sizes.append(nbytes)
        return alloc(nbytes)
    monkeypatch.setattr(rt, "alloc", recording_alloc)
    for name, call, expected in _widening_calls(x, x32):
        sizes.clear()
        r = call()
        assert max(sizes, default=0) < N, f"{name}: allocated {max(sizes)} bytes"
        if expected is not None:
            assert r.item() == expected, name


# (input dtype, dtype= (None: the default), reduction): the result dtype is NumPy's
CASES = [("bool", None, "sum"), ("int32", None, "sum"), ("bool", None, "prod"),
         ("int32", None, "prod"), ("int32", "float64", "sum"), ("float32", "float64", "sum"),
         ("float64", "float32", "sum"), ("int64", "int32", "sum"), ("bool", "float32", "sum"),
         ("float32", "int64", "sum"), ("int64", "bool", "sum"), ("bool", "int32", "prod"),
         ("float32", "float64", "prod"), ("bool", None, "mean"), ("int32", None, "mean"),
         ("int64", "float32", "mean"), ("float32", "float64", "mean")]


def _all_axes(nd):
    """None and every tuple of distinct axes (in order), including ()."""
    yield None
    for k in range(nd + 1):
        yield from itertools.combinations(range(nd), k)


def _check(r, ref, name, nd, device):
    if ref.dtype.kind != "f":
        check_values(r, ref, ref.dtype, device=device)
    elif name == "prod":
        check_values(r, ref, ref.dtype, exact=False, rtol=1e-4 if ref.dtype == np.float32
                     else 1e-12, atol=0, device=device)
    else:
        # sums / means of values below 1000 in magnitude: relative to the count's scale
        tol = 1e-4 if ref.dtype == np.float32 else 1e-12
        check_values(r, ref, ref.dtype, exact=False, rtol=tol, atol=tol * 1000, device=device)


@pytest.mark.parametrize("src, dtype, name", CASES)
@gpu_examples(3)
@given(data=st.data())
@settings(max_examples=6, deadline=None)
def test_widening_matches_numpy(src, dtype, name, device, data):
    shape = data.draw(st.sampled_from([(), (0,), (7,), (3, 0, 2), (4, 5), (2, 3, 4),
                                       (3, 1, 5, 2)]), label="shape")
    fix = (lambda v: np.where(np.abs(v) < 500, 1, -1).astype(v.dtype)) if name == "prod" \
        and src not in ("bool",) else None
    a, n = data.draw(operand(src, shape, fix=fix, device=device), label="x")
    fn, npfn = getattr(ca, name), getattr(np, name)
    for axis in _all_axes(len(shape)):
        for keepdims in (False, True):
            with np.errstate(all="ignore"):
                ref = np.asarray(npfn(n, axis=axis, dtype=dtype, keepdims=keepdims))
            r = fn(a, axis=axis, dtype=dtype, keepdims=keepdims)
            _check(r, ref, name, len(shape), device)
    np.testing.assert_array_equal(to_numpy(a), n)


def test_widening_large_parallel_matches_numpy(device):
    """Inputs past the parallel threshold, contiguous and transposed, every axis."""
    rng = np.random.default_rng(0)
    b = rng.random((300, 700)) < 0.3
    i = rng.integers(-1000, 1000, (300, 700), dtype=np.int32)
    for n in (b, i, b.T, i.T, b[::2, ::-3]):
        a = ca.asarray(n).to(device)
        for axis in (None, 0, 1, (0, 1)):
            check_values(ca.sum(a, axis=axis), np.sum(n, axis=axis), "int64", device=device)
            ref = np.sum(n, axis=axis, dtype=np.float64)
            check_values(ca.sum(a, axis=axis, dtype="float64"), ref, "float64", device=device)
            check_values(ca.mean(a, axis=axis), np.mean(n, axis=axis), "float64", exact=False,
                         device=device)
