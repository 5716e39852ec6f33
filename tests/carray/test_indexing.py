"""Indexing against NumPy: advanced keys (integer arrays, lists, boolean masks of any rank, bool
scalars, mixed with ints/slices/None/Ellipsis, the result-dims placement rule), and __setitem__
with basic and advanced keys, broadcast values of any dtype and overlapping self-assignment."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import carray as ca

from conftest import (
    DTYPES,
    assert_raises_like,
    assert_same,
    basic_getitem,
    gpu_examples,
    make_pair,
    on,
    pairs,
    random_basic_key,
    random_slice,
    random_values,
    same_bits,
    seeds,
    shapes,
    to_numpy,
)

IDX = settings(max_examples=200, deadline=None)


# ---------------------------------------------------------------------------------------------
# random advanced keys: (NumPy key, carray key) pairs describing the same index
# ---------------------------------------------------------------------------------------------

def _bcast_member(draw, bshape):
    """A shape that broadcasts to bshape: a suffix of it with some dims set to 1."""
    k = draw(st.integers(0, len(bshape)))
    tail = bshape[len(bshape) - k:]
    return tuple(1 if draw(st.integers(0, 3)) == 0 else s for s in tail)


def _as_form(draw, idx, device="cpu"):
    """The same index array for carray: a nested list, a carray array (on `device`, or on the
    host) or the NumPy array."""
    form = draw(st.sampled_from(["list", "carray", "numpy"]))
    if form == "list" and idx.size > 0 and np.asarray(idx.tolist()).shape == idx.shape:
        return idx.tolist()
    if form == "carray":
        return on(idx, device if draw(st.booleans()) else "cpu")
    return idx


def _to(pair, device):
    """A (carray array, NumPy array) pair with the carray array moved to `device`."""
    a, n = pair
    return (a if device == "cpu" else a.to(device)), n


@st.composite
def advanced_keys(draw, shape, require_advanced=True, device="cpu"):
    """(numpy_key, carray_key) for an array of `shape`: ints, slices, None, at most one Ellipsis,
    integer arrays (int32/int64, negative values too, broadcasting to a common shape), boolean
    masks over 0..k dims and bool scalars."""
    nd = len(shape)
    bshape = draw(shapes(0, 3, 0, 3))
    bsize = int(np.prod(bshape))
    rng = np.random.default_rng(draw(seeds))

    def items_for(lo, hi):
        out, d = [], lo
        while d < hi:
            kind = draw(st.sampled_from(["int", "slice", "intarr", "intarr", "mask", "none",
                                         "boolscalar"]))
            if kind == "int" and shape[d] > 0:
                i = int(rng.integers(-shape[d], shape[d]))
                i = draw(st.sampled_from([i, i, np.int64(i)]))
                out.append((i, i))
                d += 1
            elif kind == "intarr" and (shape[d] > 0 or bsize == 0):
                ishape = _bcast_member(draw, bshape) if shape[d] > 0 else bshape
                dt = draw(st.sampled_from([np.int32, np.int64]))
                idx = rng.integers(-shape[d], max(shape[d], 1), size=ishape).astype(dt) \
                    if shape[d] > 0 else np.zeros(ishape, dt)
                out.append((idx, _as_form(draw, idx, device)))
                d += 1
            elif kind == "mask":
                k = draw(st.integers(0, min(3, hi - d)))
                m = np.asarray(rng.random(shape[d:d + k]) < draw(st.sampled_from([0.3, 0.7, 1.0])))
                out.append((m, _as_form(draw, m, device) if k > 0 else ca.asarray(m)))
                d += k
            elif kind == "none":
                out.append((None, None))
            elif kind == "boolscalar":
                b = draw(st.booleans())
                out.append((b, b))
            else:
                s = random_slice(draw, shape[d])
                out.append((s, s))
                d += 1
        return out

    use_ellipsis = draw(st.booleans())
    p = draw(st.integers(0, nd))
    if use_ellipsis:
        q = draw(st.integers(p, nd))
        items = items_for(0, p) + [(Ellipsis, Ellipsis)] + items_for(q, nd)
    else:
        items = items_for(0, p)
    if require_advanced and not any(isinstance(x[0], (np.ndarray, bool)) for x in items):
        # add an integer array (or a bool scalar) somewhere
        if nd > p and not use_ellipsis and shape[p] > 0:
            idx = rng.integers(-shape[p], shape[p], size=bshape)
            items.append((idx, _as_form(draw, idx, device)))
        else:
            b = draw(st.booleans())
            items.insert(draw(st.integers(0, len(items))), (b, b))
    nkey = tuple(x[0] for x in items)
    ckey = tuple(x[1] for x in items)
    if len(items) == 1 and draw(st.booleans()):
        return nkey[0], ckey[0]
    return nkey, ckey


def _gather(a, n, nkey, ckey):
    """a[ckey] vs n[nkey]: same result or the same kind of error."""
    try:
        rn = n[nkey]
    except IndexError:
        with pytest.raises(IndexError):
            a[ckey]
        return None
    rc = a[ckey]
    rn = np.asarray(rn)
    assert_same(rc, rn, strides=False)
    return rc, rn


@gpu_examples(20)
@IDX
@given(pairs(max_dims=4), st.data())
def test_advanced_getitem_random(device, pair, data):
    a, n = _to(pair, device)
    nkey, ckey = data.draw(advanced_keys(n.shape, device=device), label="key")
    out = _gather(a, n, nkey, ckey)
    if out is not None:
        rc, rn = out
        # a new array: C-contiguous, owning its memory (unless NumPy made it a view of 0-d int
        # arrays, which NumPy treats as plain integers)
        assert rc.flags.writeable and rc.device == device
        if rc.base is None:
            assert rc.flags.c_contiguous
            if rc.size and device == "cpu":
                assert not np.shares_memory(to_numpy(rc), to_numpy(a))


@gpu_examples(10)
@settings(max_examples=100, deadline=None)
@given(pairs(max_dims=4), st.data())
def test_advanced_getitem_of_views(device, pair, data):
    """Advanced indexing of non-contiguous views (negative steps, transposes, broadcasts)."""
    a, n = _to(pair, device)
    key = data.draw(random_basic_key(n.shape, allow_none=True))
    va, vn = a[key], basic_getitem(n, key)
    if data.draw(st.booleans()):
        va, vn = va.T, vn.T
    if data.draw(st.booleans()) and vn.ndim:
        shp = (2,) + vn.shape
        va, vn = ca.broadcast_to(va, shp), np.broadcast_to(vn, shp)
    nkey, ckey = data.draw(advanced_keys(vn.shape, device=device), label="key")
    _gather(va, vn, nkey, ckey)


@gpu_examples(10)
@settings(max_examples=100, deadline=None)
@given(pairs(min_dims=1, max_dims=4), st.data())
def test_boolean_mask_whole_array(device, pair, data):
    a, n = _to(pair, device)
    m = np.asarray(np.random.default_rng(data.draw(seeds)).random(n.shape) < 0.5)
    for ck in (m, on(m, device)) + ((m.tolist(),) if m.size else ()):
        rc = a[ck]
        assert_same(rc, n[m])
    # a mask of the array's own values (bool arrays) / a comparison computed by NumPy
    if n.dtype == np.bool_:
        assert_same(a[a], n[n])


@pytest.mark.parametrize("key", [
    (slice(None), [0, 2], slice(None), [1, 3]),     # non-adjacent: broadcast dims go first
    (slice(None), [0, 2], [1, 3]),                  # adjacent: in place
    ([0, 1], slice(None), [1, 2]),
    (0, slice(None), [1, 2]),                       # an int counts as an advanced index
    (slice(None), 0, [1, 0, 2]),                    # adjacent int + array
    ([0, 1], None, [1, 2]),                         # None separates them
    ([0], Ellipsis, [1]),                           # so does an Ellipsis, even an empty one
    (Ellipsis, [[0], [1]], [0, 2]),
    ([[0, 1], [1, 0]], slice(None, None, -1), 0, slice(1, None)),
    (slice(None), [[0, 1]], slice(None), [[1], [2]]),
    (True, [0, 1]),
    ([0, 1], True),
    (slice(None), True, [0, 2], slice(None)),
    (False, slice(None), [0]),
    (None, [1], None, slice(None), [-1, -2]),
])
def test_result_dim_placement(key, device):
    a, n = make_pair("int64", (2, 3, 4, 5), seed=11, device=device)
    nkey = tuple(np.asarray(k) if isinstance(k, list) else k for k in key)
    rn = n[nkey]
    assert_same(a[key], rn, strides=False)
    assert_same(a[nkey], rn, strides=False)
    ckey = tuple(ca.asarray(k) if isinstance(k, list) else k for k in key)
    assert_same(a[ckey], rn, strides=False)


@pytest.mark.parametrize("key", [
    [], [[]], ([],), (slice(None), []), ([], Ellipsis), np.array([], dtype=np.int64),
    (np.zeros((0, 2), np.int32), slice(None)), ([], []), (0, []),
    np.zeros((3,), bool), (np.zeros((3, 4), bool),), (slice(None), np.zeros(4, bool)),
])
def test_empty_indices(key):
    a, n = make_pair("float32", (3, 4), seed=12)
    assert_same(a[key], n[key], strides=False)


@pytest.mark.parametrize("key", [True, False, (True,), (Ellipsis, False), (None, True),
                                 (True, True), (0, True), (True, 1, slice(None)),
                                 np.True_, np.array(True), np.array(False)])
@pytest.mark.parametrize("shape", [(), (3,), (2, 3)])
def test_bool_scalar_index(key, shape):
    a, n = make_pair("int32", shape, seed=13)
    try:
        rn = n[key]
    except IndexError:
        with pytest.raises(IndexError):
            a[key]
        return
    assert_same(a[key], np.asarray(rn), strides=False)


def test_zero_d_int_array_index():
    """0-d integer arrays place their dim like ints but gather a copy, as NumPy's."""
    a, n = make_pair("float64", (4, 3), seed=14)
    for k in (np.array(2), ca.asarray(2), np.array(-1, np.int32)):
        for ck, nk in [(k, np.asarray(k)), ((k, slice(1, None)), (np.asarray(k), slice(1, None))),
                       ((slice(None, None, -1), k), (slice(None, None, -1), np.asarray(k)))]:
            r, rn = a[ck], n[nk]
            assert_same(r, rn, strides=False)
            assert r.base is None and not np.shares_memory(rn, n)


def test_numpy_integer_scalars_index_like_ints():
    """np.int64(1) etc. are basic indices: views, as NumPy's (and writes go through)."""
    a, n = make_pair("int64", (4, 3, 2), seed=25)
    for k in [np.int64(1), np.int32(-1), np.uint8(2), (np.int64(0), slice(None, None, -1)),
              (Ellipsis, np.int16(1)), (None, np.intp(3), np.int64(-2))]:
        r, rn = a[k], n[k]
        assert np.shares_memory(rn, n)
        assert_same(r, np.asarray(rn))
        assert r.base is a
    a[np.int64(1), np.int32(2), np.uint8(0)] = 77
    n[np.int64(1), np.int32(2), np.uint8(0)] = 77
    a[np.int64(0)][...] = -5
    n[np.int64(0)][...] = -5
    assert same_bits(to_numpy(a), n)
    # mixed with an array index: an int in the advanced group
    assert_same(a[np.int64(1), [0, 2]], n[np.int64(1), [0, 2]], strides=False)
    assert_same(a[[0, 2], :, np.int32(1)], n[[0, 2], :, np.int32(1)], strides=False)


@pytest.mark.parametrize("key", [
    [4], [-5], ([0], [3]), (slice(None), [0, 3]), np.array([[5]]),
    np.zeros(3, bool), np.zeros((4, 2), bool), (slice(None), np.ones(4, bool)),
    ([0, 1], [0, 1, 2]), (np.zeros((2, 1), int), np.zeros(3, int), np.zeros(4, int)),
    (0, 0, 0), ([0], [0], [0]), (Ellipsis, Ellipsis, [0]), [0.5], np.array([1.0]),
    (1.0,), (slice(None), "a"), np.array([], dtype=np.float64),
    10**30, (-10**30,), [10**30], ([0], 10**30), (slice(None), -10**30), np.array([2**62]),
])
def test_index_errors(key):
    a, n = make_pair("float32", (4, 3), seed=15)
    assert_raises_like(lambda: a[key], lambda: n[key])
    assert_raises_like(lambda: a.__setitem__(key, 0), lambda: n.__setitem__(key, 0))


@pytest.mark.parametrize("shape, key", [
    ((3, 4), (5, [])), ((3, 4), ([], 4)), ((3, 4), ([], -5)), ((0, 2), (0, [])),
    ((2, 0, 3), (-3, np.zeros(0, bool))), ((4, 0), (np.zeros((2, 0), int), 4)),
    ((3, 4), (slice(None), [], 9)), ((1, 0, 2), (np.zeros((1, 0), bool), 2)),
])
def test_int_out_of_bounds_beside_an_empty_index(shape, key):
    """An integer in an advanced key is bounds-checked even when the index arrays select
    nothing (NumPy checks it up front)."""
    a, n = make_pair("float32", shape, seed=16)
    assert_raises_like(lambda: a[key], lambda: n[key])
    assert_raises_like(lambda: a.__setitem__(key, 1), lambda: n.__setitem__(key, 1))


@pytest.mark.parametrize("shape, key", [
    ((3, 1, 2), (Ellipsis, np.zeros(0, bool))), ((3, 4, 5), np.zeros((0, 0), bool)),
    ((3, 4, 5), np.zeros((3, 0), bool)), ((3, 4), (slice(None), np.zeros(0, bool))),
    ((3, 4, 5), (np.zeros(0, bool), np.zeros(0, bool))), ((3, 4, 5), np.zeros((3, 4, 0), bool)),
    ((3, 4, 5), (slice(None), np.zeros((0, 5), bool))),
])
def test_empty_boolean_index_dims_match_any_length(shape, key):
    """A length-0 dim of a boolean index matches a dim of any length (NumPy's rule); its other
    dims must still match."""
    a, n = make_pair("int64", shape, seed=17)
    assert_same(a[key], n[key], strides=False)
    a[key] = 5
    n[key] = 5
    assert same_bits(to_numpy(a), n)


@pytest.mark.parametrize("shape, key", [
    ((2, 3), (np.zeros((0, 7), bool), 1)), ((3, 4, 5), np.zeros((0, 7), bool)),
    ((3, 4, 5), np.zeros((5, 0), bool)), ((3, 4, 5), np.zeros((3, 0, 9), bool)),
    ((3, 4, 5), np.zeros((2, 0), bool)),
])
def test_empty_boolean_index_mismatch_errors(shape, key):
    a, n = make_pair("int64", shape, seed=18)
    assert_raises_like(lambda: a[key], lambda: n[key])


def test_duplicate_and_negative_indices():
    a, n = make_pair("int64", (5, 2), seed=16)
    for key in ([0, 0, -1, -5, 4], [[1, -1], [-2, 2]], ([4, -4], [-1, 0])):
        assert_same(a[key], n[tuple(key) if isinstance(key, tuple) else key], strides=False)


# ---------------------------------------------------------------------------------------------
# __setitem__
# ---------------------------------------------------------------------------------------------

def _value_for(draw, target_shape, seed):
    """(NumPy value, carray value) that broadcasts to target_shape: a Python scalar, a list,
    a NumPy array or a carray array, of a random dtype."""
    form = draw(st.sampled_from(["pyscalar", "list", "numpy", "carray", "numpy0d"]))
    dt = draw(st.sampled_from(DTYPES))
    if form == "pyscalar":
        v = random_values(dt, (), seed).item()
        return v, v
    vshape = _bcast_member(draw, target_shape) if form != "numpy0d" else ()
    v = random_values(dt, vshape, seed)
    if dt in ("float32", "float64"):
        v = np.round(v, 1).astype(dt)         # exact in every float dtype? close enough: cast below
    if form == "list" and v.size > 0 and np.asarray(v.tolist()).shape == v.shape:
        return v, v.tolist()
    if form == "carray":
        return v, ca.asarray(v)
    return v, v


def _assign(a, n, nkey, ckey, vn, vc):
    """n[nkey] = vn and a[ckey] = vc (both in place); the same outcome (values, or the same
    error kind and both arrays unchanged)."""
    before = n.copy()
    try:
        with np.errstate(all="ignore"):
            n[nkey] = vn
    except (IndexError, ValueError, TypeError, OverflowError) as e:
        assert same_bits(n, before)
        with pytest.raises(type(e) if not isinstance(e, IndexError) else IndexError):
            a[ckey] = vc
        assert same_bits(to_numpy(a), n), "a failed assignment changed the array"
        return
    a[ckey] = vc
    m = to_numpy(a)
    assert same_bits(m, n), f"after a[{ckey!r}] = {vc!r}:\ncarray {m!r}\nnumpy  {n!r}"


def _safe_value(vn, target_dtype):
    """Skip values that do not fit an integer target: a float's cast is undefined, and a list
    of them raises where an array wraps."""
    vn = np.asarray(vn)
    if np.dtype(target_dtype).kind not in "iu" or vn.dtype.kind not in "iuf" or not vn.size:
        return True
    info = np.iinfo(target_dtype)
    if vn.dtype.kind == "f" and not np.all(np.isfinite(vn)):
        return False
    return bool(np.trunc(vn.min()) >= info.min and np.trunc(vn.max()) <= info.max)


@gpu_examples(20)
@IDX
@given(pairs(max_dims=4), st.data())
def test_setitem_basic_random(device, pair, data):
    a, n = _to(pair, device)
    key = data.draw(random_basic_key(n.shape))
    target = np.asarray(basic_getitem(n, key)).shape
    vn, vc = _value_for(data.draw, target, data.draw(seeds))
    if _safe_value(vn, n.dtype):
        _assign(a, n, key, key, vn, vc)


@gpu_examples(20)
@IDX
@given(pairs(max_dims=4), st.data())
def test_setitem_advanced_random(device, pair, data):
    a, n = _to(pair, device)
    nkey, ckey = data.draw(advanced_keys(n.shape, device=device), label="key")
    try:
        target = n[nkey].shape
    except IndexError:
        with pytest.raises(IndexError):
            a[ckey] = 0
        return
    vn, vc = _value_for(data.draw, target, data.draw(seeds))
    if _safe_value(vn, n.dtype):
        _assign(a, n, nkey, ckey, vn, vc)


@gpu_examples(10)
@settings(max_examples=100, deadline=None)
@given(pairs(max_dims=4), st.data())
def test_setitem_into_views(device, pair, data):
    """Assigning through a random (non-contiguous) view writes the owner as NumPy's does."""
    a, n = _to(pair, device)
    key = data.draw(random_basic_key(n.shape))
    va, vn = a[key], basic_getitem(n, key)
    if data.draw(st.booleans()):
        va, vn = va.T, vn.T
    if data.draw(st.booleans()):
        nkey, ckey = data.draw(advanced_keys(vn.shape, device=device), label="key")
    else:
        nkey = ckey = data.draw(random_basic_key(vn.shape))
    try:
        target = np.asarray(vn[nkey]).shape
    except IndexError:
        return
    value = random_values(n.dtype, _bcast_member(data.draw, target), data.draw(seeds))
    vn[nkey] = value
    va[ckey] = on(value, device)
    assert same_bits(to_numpy(a), n)


@gpu_examples(10)
@settings(max_examples=100, deadline=None)
@given(pairs(min_dims=1, max_dims=4, min_side=1), st.data())
def test_setitem_overlapping_self(device, pair, data):
    """a[region] = another region of a that overlaps it: the result as if the value were copied
    first (NumPy's semantics), for shifts in either direction and flips."""
    a, n = _to(pair, device)
    ax = data.draw(st.integers(0, n.ndim - 1))
    m = n.shape[ax]
    s = data.draw(st.integers(0, m - 1)) if m > 1 else 0
    pre = (slice(None),) * ax
    how = data.draw(st.sampled_from(["forward", "backward", "flip", "flipall", "advanced"]))
    if how == "forward":
        dst, src = pre + (slice(s, None),), pre + (slice(None, m - s),)
    elif how == "backward":
        dst, src = pre + (slice(None, m - s),), pre + (slice(s, None),)
    elif how == "flip":
        dst, src = pre + (slice(None),), pre + (slice(None, None, -1),)
    elif how == "flipall":
        dst, src = (Ellipsis,), tuple(slice(None, None, -1) for _ in n.shape)
    else:
        perm = np.random.default_rng(s).permutation(m)
        dst, src = pre + (perm,), pre + (slice(None),)
    n[dst] = n[src]
    a[dst] = a[src]
    assert same_bits(to_numpy(a), n)


def test_setitem_overlap_hand_cases():
    n = np.arange(10, dtype=np.int64)
    a = ca.asarray(n.copy())
    a[1:] = a[:-1]
    assert a.tolist() == [0, 0, 1, 2, 3, 4, 5, 6, 7, 8]
    a = ca.arange(10)
    a[:-1] = a[1:]
    assert a.tolist() == [1, 2, 3, 4, 5, 6, 7, 8, 9, 9]
    a = ca.arange(10)
    a[::-1] = a
    assert a.tolist() == list(range(9, -1, -1))
    a = ca.arange(10)
    a[::2] = a[1::2]
    assert a.tolist() == [1, 1, 3, 3, 5, 5, 7, 7, 9, 9]
    m = ca.asarray(np.arange(9.0).reshape(3, 3))
    m[...] = m.T
    assert m.tolist() == np.arange(9.0).reshape(3, 3).T.tolist()
    m = ca.asarray(np.arange(9.0).reshape(3, 3))
    m[[0, 1, 2]] = m[::-1]
    assert m.tolist() == np.arange(9.0).reshape(3, 3)[::-1].tolist()
    m = ca.asarray(np.arange(9.0).reshape(3, 3))
    m[:, [2, 0]] = m[:, :2]
    expect = np.arange(9.0).reshape(3, 3)
    expect[:, [2, 0]] = expect[:, :2].copy()
    assert m.tolist() == expect.tolist()
    # a broadcast value that is a view of the destination
    m = ca.asarray(np.arange(9.0).reshape(3, 3))
    m[1:] = m[0]
    assert m.tolist() == [[0.0, 1.0, 2.0]] * 3
    m = ca.asarray(np.arange(9.0).reshape(3, 3))
    m[:, 1:] = m[:, :1]
    assert m.tolist() == [[0.0, 0.0, 0.0], [3.0, 3.0, 3.0], [6.0, 6.0, 6.0]]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("value", [True, False, 0, 1, -3, 7, 2.75, -2.5, 0.0, -0.0, 1e10,
                                   [1.5, -2.5, 0.0], [True, False, True], [3, -4, 5],
                                   np.float64(2.5), np.int32(-7), np.bool_(True),
                                   np.array([1.9, -1.9, 0.1]), np.array([0, 2, -3], np.int32)])
def test_setitem_casts_like_numpy(dtype, value, device):
    """Values of another type are cast as NumPy's assignment casts them (unsafe casting:
    float -> int truncates, x -> bool is x != 0)."""
    a, n = make_pair(dtype, (2, 3), seed=17, device=device)
    if dtype == "int32" and isinstance(value, float) and value == 1e10:
        assert_raises_like(lambda: a.__setitem__((0, 1), value),
                           lambda: n.__setitem__((0, 1), value))
        return
    for key in [(0,), (slice(None), 1), (Ellipsis, [0, 2, 1]), (1, [True, False, True])]:
        v = value
        target = np.asarray(n[key]).shape
        if np.ndim(v) == 1 and target[-1:] != (3,):
            continue
        _assign(a, n, key, key, v, v)


@pytest.mark.parametrize("dtype", ["int32", "int64", "float32", "float64", "bool"])
def test_setitem_special_values_errors(dtype, device):
    a, n = make_pair(dtype, (3,), seed=18, device=device)
    for v in (float("nan"), float("inf"), 2**31, -2**31 - 1, 2**63, -2**63,
              [1, 2], [[1, 2, 3]] * 2, [1, [2, 3], 4]):
        if not isinstance(v, list):
            # (NumPy's single-element assignment of a list raises TypeError or ValueError by
            # dtype, or stores True in a bool array: not a rule to copy)
            _assign(a, n, 0, 0, v, v)
        _assign(a, n, slice(None), slice(None), v, v)
        _assign(a, n, [0, 2], [0, 2], v, v)


def test_setitem_broadcast_shapes_and_errors(device):
    a, n = make_pair("float64", (2, 3, 4), seed=19, device=device)
    for key, shape in [((Ellipsis,), (4,)), ((Ellipsis,), (3, 1)), ((Ellipsis,), (1, 1, 1, 4)),
                       ((0,), (1, 4)), (([0, 1],), (3, 4)), (([0, 1], 0), (2, 1)),
                       ((slice(None), [0, 2], [1, 3]), (2, 1)), ((Ellipsis,), (5,)),
                       ((Ellipsis,), (2, 2, 3, 4)), (([0, 1],), (2, 2, 4)), ((0,), (2, 3, 4))]:
        v = random_values("float64", shape, 20)
        _assign(a, n, key, key, v, on(v, device))
        _assign(a, n, key, key, v, v.tolist())


def test_setitem_readonly(device):
    a, n = make_pair("float32", (3, 4), seed=21, device=device)
    b, bn = ca.broadcast_to(a, (2, 3, 4)), np.broadcast_to(n, (2, 3, 4))
    for key in [(0,), (Ellipsis,), ([0, 1],), (np.ones((2, 3, 4), bool),), (0, 0, 0)]:
        assert_raises_like(lambda: b.__setitem__(key, 1.0), lambda: bn.__setitem__(key, 1.0))
    assert same_bits(to_numpy(a), n)


@pytest.mark.parametrize("dtype", DTYPES)
def test_setitem_zero_d_and_empty(dtype, device):
    a, n = make_pair(dtype, (), seed=22, device=device)
    for key, v in [((), 1), ((Ellipsis,), 0), ((Ellipsis,), np.array([[2]])), ((None,), [3]),
                   ((Ellipsis,), ca.asarray([[True]])), ((None, None), np.array([4]))]:
        _assign(a, n, key, key, np.asarray(v), v)
    e, en = make_pair(dtype, (0, 3), seed=23, device=device)
    for key, v in [((Ellipsis,), 5), ((slice(None),), [1, 2, 3]), (([],), 7), ((Ellipsis,), [])]:
        _assign(e, en, key, key, v, v)


def test_setitem_mask_with_values():
    a, n = make_pair("int64", (3, 4), seed=24)
    m = n > 0
    _assign(a, n, m, ca.asarray(m), 0, 0)
    k = int(m.sum())
    _assign(a, n, m, m, np.arange(k), ca.arange(k))
    _assign(a, n, m, m, np.arange(k + 1), ca.arange(k + 1))      # wrong length: ValueError
    _assign(a, n, (m[:, 0], slice(None)), (m[:, 0], slice(None)), np.arange(4), ca.arange(4))


def test_empty_slices_have_numpy_strides(device):
    """A slice that selects nothing gets the stride of step 1 (NumPy's rule), whatever its step:
    layouts derived from strides (concatenate's result) then follow NumPy's too."""
    base = np.arange(60).reshape(3, 4, 5)
    for key in [np.s_[:, :, 2:2:2], np.s_[1:1:-3], np.s_[::2, 3:1:2, ::-1], np.s_[..., 4:0:3]]:
        a = on(base, device)[key]
        assert a.shape == base[key].shape and a.strides == base[key].strides, key
    x = np.array([False, True]).reshape(1, 2, 1)
    empty = np.zeros((1, 2, 3), bool)[:, :, 0:0:2]
    got = ca.concatenate([on(x, device), on(np.zeros((1, 2, 3), bool), device)[:, :, 0:0:2]],
                         axis=-1)
    assert got.strides == np.concatenate([x, empty], axis=-1).strides


def test_setitem_repeated_indices_last_wins(device):
    """NumPy assigns the last of repeated indices; on a parallel device the earlier ones are
    skipped (work items run in any order)."""
    rng = np.random.default_rng(8)
    for _ in range(20):
        n, k = int(rng.integers(1, 6)), int(rng.integers(2, 64))
        idx, v = rng.integers(-n, n, k), rng.standard_normal(k)
        expected = np.zeros((n, 3))
        expected[idx, 1:] = v[:, None]
        a = on(np.zeros((n, 3)), device)
        a[on(idx, device), 1:] = on(v[:, None], device)
        assert np.array_equal(np.asarray(a.to("cpu")), expected)
    a = on(np.zeros((1, 1, 1), bool), device)
    a[[0, 0]] = on(np.array([[[False]], [[True]]]), device)
    assert a.to("cpu").tolist() == [[[True]]]


def test_deleting_elements_raises_as_numpy():
    a, n = ca.arange(4), np.arange(4)
    for key in (0, slice(None), (Ellipsis,)):
        assert_raises_like(lambda: a.__delitem__(key), lambda: n.__delitem__(key))
    with pytest.raises(ValueError, match="cannot delete array elements"):
        del a[0]
    assert a.tolist() == [0, 1, 2, 3]


def test_boolean_mask_assignment_takes_a_0d_or_1d_value_as_numpy():
    # found by the op-program fuzzer: carray broadcast an n-d value into the selection
    n = np.arange(6, dtype="float32").reshape(2, 3)
    m = n > 2
    for value in (np.zeros((4, 0), "float32"), np.ones((1, 1), "float32"),
                  np.ones((3, 1), "float32")):
        a = ca.asarray(n.copy())
        assert_raises_like(lambda: a.__setitem__(ca.asarray(m), ca.asarray(value)),
                           lambda: n.copy().__setitem__(m, value))
        np.testing.assert_array_equal(np.asarray(a), n)      # unchanged
    for value in (np.ones((1,), "float32") * 5, np.float32(7), np.arange(3, dtype="float32")):
        a, ref = ca.asarray(n.copy()), n.copy()
        a[ca.asarray(m)] = ca.asarray(value)
        ref[m] = value
        np.testing.assert_array_equal(np.asarray(a), ref)


@pytest.mark.parametrize("shape, key", [((2, 2), (0, 1)), ((), ()), ((3,), (-1,))])
@pytest.mark.parametrize("value", [[5.0], (1.0,), np.ones((1, 1)), np.ones(1)])
def test_one_element_assignment_refuses_sequences_as_numpy(shape, key, value):
    # NumPy 2: an all-integer key assigns one element; an n-d value (even of size 1) raises
    n, c = np.zeros(shape), ca.zeros(shape)
    with pytest.raises(ValueError, match="setting an array element with a sequence"):
        n[key] = value
    with pytest.raises(ValueError, match="setting an array element with a sequence"):
        c[key] = ca.asarray(value) if isinstance(value, np.ndarray) else value
    c[key] = ca.asarray(np.float64(7.0))        # a 0-d array is one element
    c[(...,) if key == () else key[:-1] + (slice(None),)] = ca.ones((1,) if shape else ())
    n[key] = 7.0
    n[(...,) if key == () else key[:-1] + (slice(None),)] = np.ones((1,) if shape else ())
    np.testing.assert_array_equal(np.asarray(c), n)
