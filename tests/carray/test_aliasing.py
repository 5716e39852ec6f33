"""Aliasing and lifetimes: writes through views reach the base and back (as NumPy's), read-only
broadcasts, zero-copy exchange with NumPy (np.asarray, carray.asarray, DLPack, memoryview), memory
kept alive by every kind of reference, freed when the last one goes, and reused safely."""

import gc
import weakref

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import carray as ca

from conftest import (
    DTYPES,
    assert_same,
    draw_view_op,
    make_pair,
    owner_of,
    pairs,
    random_values,
    same_bits,
    seeds,
    to_numpy,
)


def _churn(n=50):
    """Allocate and free arrays of many sizes so that freed blocks get reused."""
    keep = []
    for i in range(n):
        x = ca.full((1 + (i * 37) % 300,), -7, dtype="int64")
        y = ca.ones((i % 9, 3), dtype="float32")
        keep.append(x if i % 3 else y)
    del keep
    gc.collect()


def _view_chain(data, a, n, max_steps=5):
    """Apply random view ops (reshape may copy, as NumPy's) to a and n in lockstep."""
    for _ in range(data.draw(st.integers(1, max_steps), label="steps")):
        desc, f = draw_view_op(data.draw, n.shape)
        a, n = f(ca, a), f(np, n)
        assert a.shape == n.shape
    return a, n


# ---------------------------------------------------------------------------------------------
# writes through views
# ---------------------------------------------------------------------------------------------

@settings(max_examples=120, deadline=None)
@given(pairs(max_dims=5), st.data())
def test_write_through_random_view_reaches_base(pair, data):
    a, n = pair
    v, nv = _view_chain(data, a, n)
    vals = random_values(n.dtype, nv.shape, data.draw(seeds))
    if not nv.flags.writeable:                      # a broadcast somewhere in the chain
        assert not v.flags.writeable
        with pytest.raises(ValueError):
            nv[...] = vals
        with pytest.raises(ValueError):
            v[...] = ca.asarray(vals)
        with pytest.raises(ValueError):
            v[...] = 0
        assert same_bits(to_numpy(a), n)
        return
    nv[...] = vals
    v[...] = ca.asarray(vals)
    assert same_bits(to_numpy(a), n)               # the base sees exactly NumPy's changes
    assert same_bits(to_numpy(v), nv)


@settings(max_examples=120, deadline=None)
@given(pairs(max_dims=5), st.data())
def test_write_base_reaches_random_view(pair, data):
    a, n = pair
    v, nv = _view_chain(data, a, n)
    vals = random_values(n.dtype, n.shape, data.draw(seeds))
    n[...] = vals
    a[...] = ca.asarray(vals)
    assert same_bits(to_numpy(v), nv)              # the view sees the base's new values


@settings(max_examples=80, deadline=None)
@given(pairs(max_dims=4), st.data())
def test_write_through_numpy_view_of_carray_view(pair, data):
    """np.asarray(view) is zero-copy: NumPy writes through it land in the carray base."""
    a, n = pair
    v, nv = _view_chain(data, a, n)
    m = np.asarray(v)
    assert m.flags.writeable == nv.flags.writeable == v.flags.writeable
    if m.size:
        assert np.shares_memory(m, to_numpy(owner_of(v)))
    if not m.flags.writeable:
        with pytest.raises(ValueError):
            m[...] = 0
        return
    vals = random_values(n.dtype, nv.shape, data.draw(seeds))
    m[...] = vals
    nv[...] = vals
    assert same_bits(to_numpy(a), n)


@pytest.mark.parametrize("dtype", DTYPES)
def test_write_through_each_kind_of_view(dtype):
    base, nbase = make_pair(dtype, (4, 6), seed=30)
    views = [
        lambda xp, x: x[1:3, ::-2],
        lambda xp, x: x.T,
        lambda xp, x: x.transpose(1, 0)[::2],
        lambda xp, x: x.reshape(2, 2, 6),
        lambda xp, x: x.reshape(-1)[5:17],
        lambda xp, x: xp.expand_dims(x, (0, 2)),
        lambda xp, x: x[:, None, 2],
        lambda xp, x: x[None, :1].squeeze(),
        lambda xp, x: x.swapaxes(0, 1)[..., 3],
        lambda xp, x: x[2],
        lambda xp, x: x[-1, -1, ...],
    ]
    for k, f in enumerate(views):
        v, nv = f(ca, base), f(np, nbase)
        assert v.base is base
        vals = random_values(dtype, nv.shape, 100 + k)
        v[...] = ca.asarray(vals)
        nv[...] = vals
        assert same_bits(to_numpy(base), nbase), k
        # and back: write the base, read the view
        vals = random_values(dtype, nbase.shape, 200 + k)
        base[...] = ca.asarray(vals)
        nbase[...] = vals
        assert same_bits(to_numpy(v), nv), k


def test_scalar_and_item_writes_through_views():
    a = ca.zeros((3, 4), dtype="int64")
    v = a.T[1:, ::-1]
    v[0, 0] = 5                      # a[2, 1]
    v[-1] = 7                        # a[:, 3] reversed
    a.T[0][1:] = 9                   # a[1:, 0]
    assert a.tolist() == [[0, 0, 0, 7], [9, 0, 0, 7], [9, 5, 0, 7]]
    assert v.item(0, 0) == 5 and v.tolist()[0] == [5, 0, 0]


def test_broadcast_is_readonly_everywhere():
    a, n = make_pair("float64", (3, 1), seed=31)
    b, nb = ca.broadcast_to(a, (2, 3, 4)), np.broadcast_to(n, (2, 3, 4))
    assert not b.flags.writeable and not nb.flags.writeable
    for key in [(Ellipsis,), (0,), (0, 0, 0), ([0],), (slice(None), 1)]:
        with pytest.raises(ValueError):
            nb[key] = 1.0
        with pytest.raises(ValueError):
            b[key] = 1.0
    with pytest.raises(ValueError):
        b.fill(0)
    for f in (lambda x: x[0], lambda x: x.T, lambda x: x[..., None],
              lambda x: x.reshape(2, 3, 2, 2)[0], lambda x: x.reshape(6, 4)):
        view, nview = f(b), f(nb)
        assert view.flags.writeable == nview.flags.writeable
        if not nview.flags.writeable:
            with pytest.raises(ValueError):
                view[...] = 2.0
    # reshape of a broadcast copies, as NumPy's: the copy is writeable and separate
    r, nr = b.reshape(24), nb.reshape(24)
    assert r.flags.writeable == nr.flags.writeable
    # the exports are read-only too
    m = np.asarray(b)
    assert not m.flags.writeable
    with pytest.raises(ValueError):
        m[...] = 0
    assert memoryview(b).readonly
    d = np.from_dlpack(b)
    assert not d.flags.writeable
    assert same_bits(d, nb)
    # the base stays writeable, and its writes show through the broadcast
    a[...] = ca.asarray(np.arange(3.0).reshape(3, 1))
    n[...] = np.arange(3.0).reshape(3, 1)
    assert same_bits(to_numpy(b), nb)
    assert same_bits(m, nb) and same_bits(d, nb)


# ---------------------------------------------------------------------------------------------
# zero-copy exchange with NumPy, both ways
# ---------------------------------------------------------------------------------------------

@settings(max_examples=80, deadline=None)
@given(pairs(max_dims=4), st.data())
def test_carray_asarray_of_numpy_shares_both_ways(pair, data):
    _, n = pair
    # any strided NumPy view: negative steps and transposes too
    key = tuple(slice(None, None, data.draw(st.sampled_from([1, 2, -1, -3]))) for _ in n.shape)
    key += (Ellipsis,)                  # a 0-d view, not a NumPy scalar, for 0-d n
    nv = n[key].T if data.draw(st.booleans()) else n[key]
    c = ca.asarray(nv)
    # (NumPy exports canonical strides for size-1 dims of contiguous arrays: compare the rest)
    assert_same(c, nv, strides=False)
    if nv.size:
        assert [s for s, d in zip(c.strides, c.shape) if d > 1] == \
            [s for s, d in zip(nv.strides, nv.shape) if d > 1]
    assert c.base is None
    if nv.size:
        assert np.shares_memory(to_numpy(c), n)
    # NumPy writes -> carray reads
    vals = random_values(n.dtype, nv.shape, data.draw(seeds))
    nv[...] = vals
    assert same_bits(to_numpy(c), vals)
    # carray writes (through a view of c) -> NumPy reads
    vals2 = random_values(n.dtype, nv.shape, data.draw(seeds))
    c[...] = ca.asarray(vals2)
    assert same_bits(nv, vals2)
    if nv.ndim and nv.shape[0]:
        c[::-1][0] = ca.asarray(vals[-1])
        assert same_bits(nv[-1], vals[-1])
    # copy=True / ca.array copy
    snapshot = nv.copy()
    d = ca.asarray(nv, copy=True)
    e = ca.array(nv)
    nv[...] = vals
    assert same_bits(to_numpy(d), snapshot) and same_bits(to_numpy(e), snapshot)
    assert same_bits(to_numpy(c), vals)


@settings(max_examples=100, deadline=None)
@given(pairs(max_dims=5), st.data())
def test_exports_of_random_views(pair, data):
    """np.asarray, memoryview, np.from_dlpack and carray.from_dlpack of any view (negative and
    zero strides, 0-d, empty) show the view's elements, zero-copy, and writes go through."""
    a, n = pair
    v, nv = _view_chain(data, a, n)
    exports = [np.asarray(v), np.from_dlpack(v), np.asarray(ca.from_dlpack(v)),
               np.asarray(ca.asarray(np.asarray(v)))]
    mv = memoryview(v)
    assert mv.shape == nv.shape and mv.strides == v.strides
    assert mv.readonly == (not nv.flags.writeable)
    assert mv.format in ("?", "b", "h", "i", "l", "q", "B", "H", "I", "Q", "f", "d") and \
        mv.itemsize == n.itemsize
    exports.append(np.asarray(mv))
    for e in exports:
        assert same_bits(e, nv)
        if nv.size:
            assert np.shares_memory(e, to_numpy(owner_of(v)))
    c = ca.from_dlpack(v)
    assert c.shape == v.shape and c.strides == v.strides and c.flags.writeable == v.flags.writeable
    if nv.flags.writeable and nv.size:
        vals = random_values(n.dtype, nv.shape, data.draw(seeds))
        exports[1][...] = vals                      # through np.from_dlpack(view)
        nv[...] = vals
        assert same_bits(to_numpy(a), n)
        c[...] = ca.asarray(vals[..., ::-1].copy()) if nv.ndim else ca.asarray(vals)
        nv[...] = vals[..., ::-1] if nv.ndim else vals
        assert same_bits(to_numpy(a), n)


def test_carray_asarray_of_readonly_numpy():
    n = np.arange(6.0).reshape(2, 3)
    n.flags.writeable = False
    c = ca.asarray(n)
    assert not c.flags.writeable
    with pytest.raises(ValueError):
        c[0] = 1.0
    with pytest.raises(ValueError):
        c.T[...] = 1.0
    assert n.tolist() == np.arange(6.0).reshape(2, 3).tolist()
    c2 = ca.array(n)                       # a copy is writeable
    c2[0] = 1.0
    assert n[0, 0] == 0.0 and c2.tolist()[0] == [1.0, 1.0, 1.0]


def test_from_dlpack_numpy_shares_both_ways():
    n = np.arange(12, dtype=np.int32).reshape(3, 4)[:, ::-1]
    c = ca.from_dlpack(n)
    assert_same(c, n)
    c[0] = ca.asarray([1, 2, 3, 4], dtype="int32")
    assert n[0].tolist() == [1, 2, 3, 4]
    n[1] = -1
    assert c.tolist()[1] == [-1] * 4
    d = np.from_dlpack(c)
    assert np.shares_memory(d, n)
    d[2, 0] = 99
    assert c.tolist()[2][0] == 99 and n[2, 0] == 99


ALIAS_OF = {          # another object over the same bytes as the carray array a
    "np.asarray": lambda a: np.asarray(a),
    "ca.asarray(np.asarray)": lambda a: ca.asarray(np.asarray(a)),
    "np.from_dlpack": lambda a: np.from_dlpack(a),
    "ca.from_dlpack": lambda a: ca.from_dlpack(a),
    "memoryview": lambda a: memoryview(a),
}


@settings(max_examples=60, deadline=None)
@given(pairs(min_dims=1, max_dims=3, min_side=1), st.sampled_from(sorted(ALIAS_OF)), st.data())
def test_assign_from_alias_overlapping(pair, alias, data):
    """a[dst] = <alias of a>[src] with overlapping regions: as if the value were copied first
    (NumPy's semantics), also when the value reaches a's memory through another object."""
    a, n = pair
    m = n.shape[0]
    s = data.draw(st.integers(0, m - 1))
    how = data.draw(st.sampled_from(["forward", "backward", "flip", "advanced"]))
    if how == "forward":
        dst, src = slice(s, None), slice(None, m - s)
    elif how == "backward":
        dst, src = slice(None, m - s), slice(s, None)
    elif how == "flip":
        dst, src = slice(None), slice(None, None, -1)
    else:
        dst, src = np.random.default_rng(s).permutation(m), slice(None)
    value = np.asarray(ALIAS_OF[alias](a)) if alias == "memoryview" else ALIAS_OF[alias](a)
    n[dst] = n[src]
    a[dst] = value[src]
    assert same_bits(to_numpy(a), n)


# ---------------------------------------------------------------------------------------------
# lifetimes: every reference keeps the memory alive; the last one frees it
# ---------------------------------------------------------------------------------------------

# name: (export of a carray array a, the same selection of a NumPy array)
EXPORTS = {
    "view": (lambda a: a[1:][::-1], lambda n: n[1:][::-1]),
    "transpose": (lambda a: a.T, lambda n: n.T),
    "reshape": (lambda a: a.reshape(-1), lambda n: n.reshape(-1)),
    "expand_dims": (lambda a: ca.expand_dims(a[:, 2], 0), lambda n: np.expand_dims(n[:, 2], 0)),
    "memoryview": (lambda a: memoryview(a), lambda n: n),
    "memoryview(view)": (lambda a: memoryview(a[::-2]), lambda n: n[::-2]),
    "np.asarray": (lambda a: np.asarray(a), lambda n: n),
    "np.asarray(view)": (lambda a: np.asarray(a[::2, 1:]), lambda n: n[::2, 1:]),
    "np.from_dlpack": (lambda a: np.from_dlpack(a), lambda n: n),
    "np.from_dlpack(view)": (lambda a: np.from_dlpack(a.T[::-1]), lambda n: n.T[::-1]),
    "ca.asarray(np.asarray)": (lambda a: ca.asarray(np.asarray(a)), lambda n: n),
    "ca.from_dlpack": (lambda a: ca.from_dlpack(a), lambda n: n),
}


@pytest.mark.parametrize("dtype", ["float64", "int32", "bool"])
@pytest.mark.parametrize("kind", sorted(EXPORTS))
def test_export_keeps_memory_alive(kind, dtype):
    export, select = EXPORTS[kind]
    n = random_values(dtype, (5, 7), 40)
    a = ca.array(n)
    ref = weakref.ref(a)
    x = export(a)
    expect = np.array(select(n), copy=True)
    assert same_bits(np.asarray(x), expect)
    if a.size and not isinstance(x, memoryview):
        assert np.shares_memory(np.asarray(x), to_numpy(a))
    del a
    gc.collect()
    _churn()
    assert same_bits(np.asarray(x), expect)      # intact after the original is gone
    if not isinstance(x, memoryview) or not x.readonly:
        np.asarray(x)[...] = expect[::-1] if expect.ndim == 1 else expect  # still writable
    del x
    gc.collect()
    assert ref() is None, f"{kind}: the array was not freed when its last reference went"


@pytest.mark.parametrize("dtype", ["float32", "int64"])
def test_carray_asarray_keeps_numpy_alive(dtype):
    n = random_values(dtype, (4, 5), 41)
    expect = n.copy()
    nref = weakref.ref(n) if hasattr(n, "__weakref__") else None
    c = ca.asarray(n[:, 1:])
    v = c[::-1]
    del n
    gc.collect()
    _churn()
    assert same_bits(to_numpy(c), expect[:, 1:])
    assert same_bits(to_numpy(v), expect[::-1, 1:])
    del c
    gc.collect()
    _churn()
    assert same_bits(to_numpy(v), expect[::-1, 1:])
    del v
    gc.collect()
    if nref is not None:
        assert nref() is None, "the NumPy array was not released"


def test_from_dlpack_keeps_numpy_alive_and_releases():
    n = np.arange(20.0)
    nref = weakref.ref(n)
    c = ca.from_dlpack(n)[5:]
    del n
    gc.collect()
    _churn()
    assert c.tolist() == [float(i) for i in range(5, 20)]
    del c
    gc.collect()
    assert nref() is None


def test_chain_of_exports_lifetime():
    """carray -> NumPy -> carray -> view -> NumPy: only the last object is kept."""
    a = ca.asarray(np.arange(24, dtype=np.int64).reshape(4, 6))
    ref = weakref.ref(a)
    x = np.asarray(ca.asarray(np.asarray(a.T))[1:, ::-1])
    x2 = np.from_dlpack(ca.from_dlpack(x))
    del a, x
    gc.collect()
    _churn()
    assert x2.tolist() == np.arange(24).reshape(4, 6).T[1:, ::-1].tolist()
    del x2
    gc.collect()
    assert ref() is None


def test_unconsumed_dlpack_capsule_does_not_leak():
    a = ca.ones(10)
    ref = weakref.ref(a)
    caps = [a.__dlpack__(), a.__dlpack__(max_version=(1, 0))]
    del a
    gc.collect()
    assert ref() is not None            # the capsules keep it alive
    del caps
    gc.collect()
    assert ref() is None


def test_views_free_owner_when_last_goes():
    a = ca.arange(100)
    ref = weakref.ref(a)
    v1, v2 = a[10:20], a.reshape(10, 10).T
    assert v1.base is a and v2.base is a
    del a
    gc.collect()
    _churn()
    assert ref() is not None and v1.base is ref()
    assert v1.tolist() == list(range(10, 20))
    del v1
    gc.collect()
    assert v2.tolist()[0] == list(range(0, 100, 10))
    del v2
    gc.collect()
    assert ref() is None


# ---------------------------------------------------------------------------------------------
# the caching allocator: reused memory never corrupts live arrays
# ---------------------------------------------------------------------------------------------

@settings(max_examples=15, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 3000), st.sampled_from(DTYPES), st.booleans()),
                min_size=20, max_size=120), seeds)
def test_allocator_reuse_keeps_contents(plan, seed):
    rng = np.random.default_rng(seed)
    live = {}
    for step, (size, dt, free_one) in enumerate(plan):
        n = random_values(dt, (size,), step)
        a = ca.empty((size,), dtype=dt)
        a[...] = ca.asarray(n)
        if a.size:
            assert a.data_ptr % 64 == 0, "host memory must be 64-byte aligned"
        live[step] = (a, n)
        if free_one and live:
            k = list(live)[rng.integers(0, len(live))]
            del live[k]                      # refcounting frees it here (no cycles)
        # a full check every few steps
        if step % 10 == 0:
            for b, bn in live.values():
                assert same_bits(to_numpy(b), bn)
    for b, bn in live.values():
        assert same_bits(to_numpy(b), bn)
    # distinct live arrays never share memory
    ptrs = sorted((b.data_ptr, b.nbytes) for b, _ in live.values() if b.nbytes)
    for (p0, n0), (p1, _) in zip(ptrs, ptrs[1:]):
        assert p0 + n0 <= p1


def test_allocator_cache_limits_and_empty_cache():
    held, limit = ca.cache_info()
    try:
        a = [ca.full((1000 + i,), i, dtype="int64") for i in range(20)]
        del a[::2]
        gc.collect()
        assert ca.cache_info()[0] >= 0
        ca.empty_cache()
        assert ca.cache_info()[0] == 0
        ca.set_cache_limit(0)                   # no caching: memory goes straight back
        b = [ca.full((500,), -i, dtype="int32") for i in range(10)]
        del b[1::2]
        gc.collect()
        assert ca.cache_info()[0] == 0
        c = [ca.full((500,), 7, dtype="int32") for _ in range(10)]
        for i, x in enumerate(a):
            assert x.tolist() == [2 * i + 1] * (1001 + 2 * i)
        for i, x in enumerate(b):
            assert x.tolist() == [-2 * i] * 500
        for x in c:
            assert x.tolist() == [7] * 500
        with pytest.raises(ValueError):
            ca.set_cache_limit(-1)
    finally:
        ca.set_cache_limit(limit)


# in-place ops on views with size-1 dims, repeated (a device launch plan is made on the first
# call and reused after: it must keep reading the view's own elements)
INPLACE_ON_VIEWS = {
    "row_iadd": ((3, 4), lambda x: x[1:2], lambda xp, v: v.__iadd__(1)),
    "col_imul": ((3, 4), lambda x: x[:, 2:3], lambda xp, v: v.__imul__(2)),
    "negative_out": ((9,), lambda x: x.reshape(3, 1, 3)[::2],
                     lambda xp, v: xp.negative(v, out=v)),
    "add_self_out": ((2, 1, 5), lambda x: x[1:, :, 1:4], lambda xp, v: xp.add(v, v, out=v)),
    "row_iadd_row": ((4, 3), lambda x: x[2:3], lambda xp, v: v.__iadd__(v[:, ::-1])),
}


@pytest.mark.parametrize("case", sorted(INPLACE_ON_VIEWS))
def test_inplace_op_on_view_with_size_1_dims_repeated(device, case):
    shape, view, op = INPLACE_ON_VIEWS[case]
    n = np.arange(np.prod(shape), dtype="float32").reshape(shape)
    a = ca.asarray(n).to(device)
    va, vn = view(a), view(n)
    for step in range(4):
        op(ca, va)
        op(np, vn)
        assert_same(a.to("cpu"), n, strides=False), f"after call {step + 1}"
