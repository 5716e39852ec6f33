"""carray.sort / argsort (functions and methods; Array.sort sorts in place) against NumPy 2's
stable sort, on every device.

Random shapes (0-d, empty, up to 5-d) and views (transposed, negative steps, broadcast), every
dtype with NaN/inf/-0.0 and many ties, axis None / either sign: values bit for bit (NaNs last,
ties in their original order), int64 indices equal to np.argsort(..., stable=True), results
C-contiguous. Also long lanes (the merge passes and the threaded path) and NumPy's errors.
"""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import carray as ca

from _opcases import operand, small_shapes
from conftest import ALL_DTYPES, assert_raises_like, gpu_examples, on, random_values
from conftest import assert_same as _assert_same


def assert_same(a, n):
    """conftest's assert_same without the strides: NumPy keeps a transposed input's layout,
    carray's result is always C-contiguous."""
    assert a.flags.c_contiguous
    _assert_same(a, n, strides=False)

SET = settings(max_examples=40, deadline=None)


def _ties(v):
    """Values rounded so that ties are common (NaN, inf and -0.0 stay)."""
    if v.dtype.kind == "f":
        return np.round(v / 40)
    return v // np.array(min(300, np.iinfo(v.dtype).max // 4), v.dtype) if v.dtype.kind in "iu" \
        else v


@gpu_examples(15)
@given(data=st.data())
@SET
def test_matches_numpy(device, data):
    dtype = data.draw(st.sampled_from(ALL_DTYPES))
    a, n = data.draw(operand(dtype, data.draw(small_shapes()), special=True, fix=_ties,
                             device=device))
    nd = n.ndim
    axis = data.draw(st.one_of(st.none(), st.integers(-nd, nd - 1)) if nd else st.none())
    r = ca.sort(a, axis=axis)
    assert r.device == device and r.flags.c_contiguous
    assert_same(r, np.sort(n, axis=axis, kind="stable"))
    i = ca.argsort(a, axis=axis)
    assert i.flags.c_contiguous
    assert_same(i, np.argsort(n, axis=axis, stable=True))
    if axis is not None:
        assert_same(a.argsort(axis=axis), np.argsort(n, axis=axis, stable=True))
        c, m = a.copy(), n.copy()
        assert c.sort(axis=axis) is None
        m.sort(axis=axis, kind="stable")
        assert_same(c, m)


@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_long_lanes(device, dtype):
    n = _ties(random_values(dtype, (70, 600), 3, special=True))   # 42000 elements: threaded
    a = on(n, device)
    for axis in (0, 1):
        assert_same(ca.sort(a, axis=axis), np.sort(n, axis=axis, kind="stable"))
        assert_same(ca.argsort(a, axis=axis), np.argsort(n, axis=axis, stable=True))
    assert_same(ca.argsort(a[::-3, 5:], axis=None), np.argsort(n[::-3, 5:], axis=None,
                                                               stable=True))


def test_in_place_on_a_view(device):
    n = random_values("float32", (4, 9), 5, special=True)
    a = on(n, device)
    view = a[::-1, 1::2]
    view.sort(axis=0)
    expected = n.copy()
    expected[::-1, 1::2] = np.sort(n[::-1, 1::2], axis=0, kind="stable")
    assert_same(a, expected)


def test_zero_d_and_errors(device):
    n = np.array(3.0)
    z = on(n, device)
    assert_same(ca.sort(z, axis=None), np.sort(n, axis=None))
    for axis in (-1, 0, None):
        assert_same(ca.argsort(z, axis=axis), np.argsort(n, axis=axis))
    assert_raises_like(lambda: ca.sort(z), lambda: np.sort(n))
    assert_raises_like(lambda: ca.argsort(z, axis=1), lambda: np.argsort(n, axis=1))
    m = np.ones((2, 3))
    a = on(m, device)
    for axis in (2, -3):
        assert_raises_like(lambda: ca.sort(a, axis=axis), lambda: np.sort(m, axis=axis))
        assert_raises_like(lambda: ca.argsort(a, axis=axis), lambda: np.argsort(m, axis=axis))
        assert_raises_like(lambda: a.sort(axis=axis), lambda: m.copy().sort(axis=axis))
    assert_raises_like(lambda: ca.sort(a, kind="bogus"), lambda: np.sort(m, kind="bogus"))
    assert_raises_like(lambda: a.sort(axis=None), lambda: m.copy().sort(axis=None))
    assert_raises_like(lambda: ca.sort(a, order="x"), lambda: np.sort(m, order="x"))
    assert ca.sort(a, kind="mergesort", stable=True).shape == (2, 3)
