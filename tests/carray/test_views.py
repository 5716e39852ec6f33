"""Views against NumPy: random chains of view operations in lockstep, strides, flags, base,
view-vs-copy for reshape, and copies (copy, ascontiguousarray, astype) of random views.

The random-chain tests run on every device: a view of a device array is metadata only (the
same strides, flags and base as on the host); memory sharing is checked through NumPy on the
host and through `base` on a device."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import carray as ca

from conftest import (
    DTYPES,
    assert_flags_like,
    assert_raises_like,
    assert_same,
    draw_reshape_target,
    draw_view_op,
    gpu_examples,
    make_pair,
    owner_of,
    pairs,
    same_bits,
    to_numpy,
)

CHAIN = settings(max_examples=150, deadline=None)


def _to(pair, device):
    """A (carray array, NumPy array) pair with the carray array moved to `device`."""
    a, n = pair
    return (a if device == "cpu" else a.to(device)), n


def _shares(x, y):
    """x and y (carray arrays) share memory, checked through NumPy (host arrays only)."""
    return x.device != "cpu" or np.shares_memory(to_numpy(x), to_numpy(y))


def _apply_chain(data, a, n, max_steps=6, check=True):
    """Apply 1..max_steps random view ops to a (carray) and n (NumPy); check after each step.

    Returns the final (a, n) and the list of steps' descriptions."""
    owner = owner_of(a)
    steps = []
    for _ in range(data.draw(st.integers(1, max_steps), label="steps")):
        desc, f = draw_view_op(data.draw, n.shape)
        steps.append(desc)
        rn = f(np, n)
        ra = f(ca, a)
        if check:
            _check_step(a, n, ra, rn, owner, desc, steps)
        if ra.base is not owner and ra is not owner:      # a copy (reshape): new owner
            owner = owner_of(ra)
        a, n = ra, rn
    return a, n, steps


def _check_step(a, n, ra, rn, owner, desc, steps):
    assert_same(ra, rn)
    assert_flags_like(ra, rn)
    # a new view object, except where NumPy returns the array itself (squeeze with no 1s)
    assert (ra is a) == (rn is n), (desc, steps)
    if ra is a:
        return
    # base is always the owner, never a view of a view
    assert ra.base is None or ra.base.base is None, steps
    if desc.startswith(("reshape", "xp.reshape")):
        c_view = ra.base is owner
        if rn.size > 0:
            n_view = np.shares_memory(rn, n)
            assert c_view == n_view, \
                f"reshape copied={not c_view}, NumPy's copied={not n_view}: {steps}"
            assert ra.device != "cpu" or _shares(ra, a) == n_view
        if not c_view:
            assert ra.flags.writeable and ra.flags.c_contiguous
            return
    assert ra.base is owner, f"a view's base must be the owner: {steps}"
    assert ra.device == owner.device
    if ra.size > 0:
        assert _shares(ra, owner), steps


# ---------------------------------------------------------------------------------------------
# random chains
# ---------------------------------------------------------------------------------------------

@gpu_examples(20)
@CHAIN
@given(pairs(), st.data())
def test_random_view_chain(device, pair, data):
    a, n = _to(pair, device)
    _apply_chain(data, a, n)


@settings(max_examples=60, deadline=None)
@given(pairs(dtype="float64", shape=(4, 3, 5), special=True), st.data())
def test_random_view_chain_float64_specials(pair, data):
    a, n = pair
    _apply_chain(data, a, n, max_steps=8)


@gpu_examples(5)
@settings(max_examples=40, deadline=None)
@given(st.sampled_from(DTYPES), st.data())
def test_random_view_chain_0d(device, dtype, data):
    a, n = make_pair(dtype, (), seed=data.draw(st.integers(0, 100)), device=device)
    _apply_chain(data, a, n)


@gpu_examples(5)
@settings(max_examples=40, deadline=None)
@given(pairs(shape=None, min_dims=1, max_dims=4).filter(lambda p: p[1].size == 0), st.data())
def test_random_view_chain_empty(device, pair, data):
    a, n = _to(pair, device)
    _apply_chain(data, a, n)


@gpu_examples(10)
@CHAIN
@given(pairs(), st.data())
def test_copies_of_random_views(device, pair, data):
    a, n = _to(pair, device)
    v, nv, steps = _apply_chain(data, a, n, max_steps=4, check=False)
    # copy(): C-contiguous, owns its memory, shares nothing
    for c, cn in ((v.copy(), nv.copy()), (ca.copy(v), np.copy(nv, order="C"))):
        assert_same(c, cn)
        assert_flags_like(c, cn)
        assert c.base is None and c.device == device
        if c.size and device == "cpu":
            assert not np.shares_memory(to_numpy(c), to_numpy(v))
    # copy(order="F")
    cf = v.copy(order="F")
    assert_same(cf, nv.copy(order="F"))
    assert_flags_like(cf, nv.copy(order="F"))
    # ascontiguousarray: the array itself when it already is C-contiguous
    c = ca.ascontiguousarray(v)
    cn = np.ascontiguousarray(nv)
    assert_same(c, cn)
    assert c.flags.c_contiguous
    if nv.ndim > 0:
        assert (c is v) == (cn is nv), steps
    # astype to every dtype (values as NumPy's casts; C order)
    for dt in DTYPES:
        with np.errstate(invalid="ignore", over="ignore"):
            expect = nv.astype(dt, order="C")
        if nv.dtype.kind == "f" and np.dtype(dt).kind in "iu":
            ok = np.isfinite(nv) & (np.abs(nv) < 2**31)       # out-of-range casts are undefined
            got = to_numpy(v.astype(dt))
            assert got.shape == expect.shape and got.dtype == expect.dtype
            assert np.array_equal(got[ok], expect[ok])
            continue
        r = v.astype(dt)
        assert_same(r, expect)
        assert r.flags.c_contiguous and r.base is None and r.flags.writeable
    assert v.astype(v.dtype, copy=False) is v
    r = v.astype(v.dtype)
    assert r is not v
    assert_same(r, nv.astype(nv.dtype, order="C"))


@gpu_examples(10)
@settings(max_examples=80, deadline=None)
@given(pairs(), st.data())
def test_ravel_flatten_of_random_views(device, pair, data):
    a, n = _to(pair, device)
    v, nv, steps = _apply_chain(data, a, n, max_steps=4, check=False)
    r, rn = v.ravel(), nv.ravel()
    assert_same(r, rn)
    if rn.size:
        assert (r.base is owner_of(v)) == np.shares_memory(rn, nv), steps
    f = v.flatten()
    assert_same(f, nv.flatten())
    assert f.base is None or f.base.base is None
    if f.size and device == "cpu":
        assert not np.shares_memory(to_numpy(f), to_numpy(v))


# ---------------------------------------------------------------------------------------------
# reshape: view exactly when NumPy's is, -1, errors
# ---------------------------------------------------------------------------------------------

@gpu_examples(15)
@settings(max_examples=150, deadline=None)
@given(pairs(min_dims=1, max_dims=4, min_side=1), st.data())
def test_reshape_view_iff_numpy(device, pair, data):
    a, n = _to(pair, device)
    # a random non-contiguous (sliced and/or transposed) view, then a random reshape
    key = tuple(slice(None, None, data.draw(st.sampled_from([1, 1, 2, -1, -2]))) for _ in n.shape)
    perm = data.draw(st.permutations(range(n.ndim)))
    v, nv = a[key].transpose(perm), n[key].transpose(perm)
    target = draw_reshape_target(data.draw, nv.shape)
    r, rn = v.reshape(target), nv.reshape(target)
    assert_same(r, rn)
    assert_flags_like(r, rn)
    if rn.size:
        assert (r.base is a) == np.shares_memory(rn, n), (key, perm, target)


@pytest.mark.parametrize("shape,target,view", [
    ((2, 3, 4), (6, 4), True), ((2, 3, 4), (-1,), True), ((2, 3, 4), (4, -1), True),
    ((2, 3, 4), (2, 1, 3, 1, 4, 1), True), ((2, 3, 4), (), None), ((1,), (), True),
    ((1, 1), (1, 1, 1), True), ((0, 3), (3, 0), True), ((0, 3), (-1, 3), True),
])
@pytest.mark.parametrize("dtype", ["float64", "int32"])
def test_reshape_contiguous(shape, target, view, dtype):
    a, n = make_pair(dtype, shape, seed=1)
    if view is None:
        assert_raises_like(lambda: a.reshape(target), lambda: n.reshape(target))
        return
    r, rn = a.reshape(target), n.reshape(target)
    assert_same(r, rn)
    assert r.base is a
    assert_flags_like(r, rn)


def test_reshape_noncontiguous_copies_and_views():
    a, n = make_pair("float64", (4, 6), seed=2)
    # transposed: merging dims needs a copy; splitting one does not
    r, rn = a.T.reshape(24), n.T.reshape(24)
    assert_same(r, rn)
    assert r.base is not a and not np.shares_memory(rn, n)
    assert r.base.base is None and r.flags.c_contiguous
    r, rn = a.T.reshape(2, 3, 4), n.T.reshape(2, 3, 4)
    assert_same(r, rn)
    assert r.base is a and np.shares_memory(rn, n)
    # columns with a step: merging rows with the stepped column is a copy
    r, rn = a[:, 1:4].reshape(-1), n[:, 1:4].reshape(-1)
    assert_same(r, rn)
    assert r.base is not a and not np.shares_memory(rn, n)
    # ... but a step-2 column slice of 3 of 6 columns is evenly spaced: a view
    r, rn = a[:, ::2].reshape(-1), n[:, ::2].reshape(-1)
    assert_same(r, rn)
    assert r.base is a and np.shares_memory(rn, n)
    r, rn = a[::2, :].reshape(2, 2, 3), n[::2, :].reshape(2, 2, 3)
    assert_same(r, rn)
    assert r.base is a
    # negative steps: a view when only splitting
    r, rn = a[::-1].reshape(2, 2, 3, 2), n[::-1].reshape(2, 2, 3, 2)
    assert_same(r, rn)
    assert r.base is a
    # writes through the copy do not reach a
    c = a.T.reshape(24)
    c[...] = 0
    assert same_bits(to_numpy(a), n)


@pytest.mark.parametrize("target", [(5,), (2, -1, -1), (-1, -1), (7, -1), (0, -1), (25,)])
def test_reshape_errors(target):
    a, n = make_pair("float32", (2, 3, 4))
    assert_raises_like(lambda: a.reshape(target), lambda: n.reshape(target))


def test_reshape_errors_empty():
    a, n = make_pair("float32", (0, 3))
    for target in [(0, -1), (-1, 0), (2,), (1, -1, 0)]:
        assert_raises_like(lambda: a.reshape(target), lambda: n.reshape(target))


def test_reshape_order_f():
    a, n = make_pair("int64", (3, 4), seed=3)
    for target in [(4, 3), (2, 6), (12,), (2, 2, 3)]:
        r, rn = a.reshape(target, order="F"), n.reshape(target, order="F")
        assert_same(r, rn)
        r, rn = a.T.reshape(target, order="F"), n.T.reshape(target, order="F")
        assert_same(r, rn)
        assert r.base is a


# ---------------------------------------------------------------------------------------------
# single operations: hand cases, 0-d, empty, errors
# ---------------------------------------------------------------------------------------------

def test_transpose_forms():
    a, n = make_pair("float64", (2, 3, 4), seed=4)
    for f in (lambda xp, x: x.T, lambda xp, x: x.transpose(), lambda xp, x: x.transpose(None),
              lambda xp, x: x.transpose(1, 0, 2), lambda xp, x: x.transpose((2, 0, 1)),
              lambda xp, x: x.transpose([-1, 0, -2]), lambda xp, x: xp.transpose(x),
              lambda xp, x: xp.transpose(x, (0, 2, 1)), lambda xp, x: xp.permute_dims(x, (1, 2, 0)),
              lambda xp, x: xp.moveaxis(x, 0, -1), lambda xp, x: xp.moveaxis(x, (0, 1), (2, 0)),
              lambda xp, x: x.swapaxes(0, 2), lambda xp, x: x.mT):
        r, rn = f(ca, a), f(np, n)
        assert_same(r, rn)
        assert_flags_like(r, rn)
        assert r.base is a


@pytest.mark.parametrize("bad", [(0, 1), (0, 1, 1), (0, 1, 3), (0, 1, -4), (0, 1, 2, 3), (),
                                 []])
def test_transpose_errors(bad):
    a, n = make_pair("float32", (2, 3, 4))
    assert_raises_like(lambda: a.transpose(bad), lambda: n.transpose(bad))
    assert_raises_like(lambda: ca.transpose(a, bad), lambda: np.transpose(n, bad))
    assert_raises_like(lambda: ca.permute_dims(a, bad), lambda: np.permute_dims(n, bad))


def test_transpose_empty_axes_of_0d_and_1d():
    """axes=() is a permutation of a 0-d array's dims only; a 1-d array needs (0,)."""
    a, n = make_pair("int32", ())
    assert_same(a.transpose(()), n.transpose(()))
    b, m = make_pair("int32", (3,))
    assert_raises_like(lambda: b.transpose(()), lambda: m.transpose(()))
    assert_same(b.transpose((0,)), m.transpose((0,)))


def test_swapaxes_squeeze_expand_dims_errors():
    a, n = make_pair("float32", (2, 1, 3))
    for fa, fn in [
        (lambda: a.swapaxes(0, 3), lambda: n.swapaxes(0, 3)),
        (lambda: a.swapaxes(-4, 0), lambda: n.swapaxes(-4, 0)),
        (lambda: a.squeeze(0), lambda: n.squeeze(0)),
        (lambda: a.squeeze(3), lambda: n.squeeze(3)),
        (lambda: a.squeeze((1, 1)), lambda: n.squeeze((1, 1))),
        (lambda: ca.expand_dims(a, 4), lambda: np.expand_dims(n, 4)),
        (lambda: ca.expand_dims(a, -5), lambda: np.expand_dims(n, -5)),
        (lambda: ca.expand_dims(a, (0, 0)), lambda: np.expand_dims(n, (0, 0))),
        (lambda: ca.broadcast_to(a, (3, 2, 3)), lambda: np.broadcast_to(n, (3, 2, 3))),
        (lambda: ca.broadcast_to(a, (1, 3)), lambda: np.broadcast_to(n, (1, 3))),
        (lambda: ca.broadcast_to(a, (2, -1, 3)), lambda: np.broadcast_to(n, (2, -1, 3))),
    ]:
        assert_raises_like(fa, fn)


@pytest.mark.parametrize("dtype", DTYPES)
def test_zero_d_views(dtype):
    a, n = make_pair(dtype, (), seed=5)
    for f in (lambda xp, x: x.T, lambda xp, x: x.transpose(), lambda xp, x: x.reshape(()),
              lambda xp, x: x.reshape(1), lambda xp, x: x.reshape(1, 1, -1),
              lambda xp, x: xp.expand_dims(x, 0), lambda xp, x: x.squeeze(), lambda xp, x: x[()],
              lambda xp, x: x[...], lambda xp, x: x[None], lambda xp, x: x[None, ..., None],
              lambda xp, x: xp.broadcast_to(x, (2, 3)), lambda xp, x: xp.broadcast_to(x, ())):
        r, rn = f(ca, a), f(np, n)
        if isinstance(rn, np.generic):         # n[()] is a NumPy scalar; a[()] a 0-d view
            rn = np.asarray(rn)
            assert_same(r, rn)
            continue
        assert_same(r, rn)
        assert_flags_like(r, rn)
        assert (r is a) == (rn is n)
        assert r.base is a or r is a
    assert_raises_like(lambda: a[0], lambda: n[0])
    assert_raises_like(lambda: a[:], lambda: n[:])
    assert_raises_like(lambda: a.reshape(2), lambda: n.reshape(2))


def test_zero_d_ascontiguousarray_copy():
    a, n = make_pair("float64", (), seed=6)
    assert_same(a.copy(), n.copy())
    assert_same(ca.copy(a), np.copy(n))
    # NumPy's ascontiguousarray returns at least 1-d
    r, rn = ca.ascontiguousarray(a), np.ascontiguousarray(n)
    assert_same(r, rn)
    assert_same(a.astype("int32"), n.astype("int32"))
    assert_flags_like(a, n)


@pytest.mark.parametrize("shape", [(0,), (3, 0), (0, 4, 2), (2, 0, 0, 1)])
def test_empty_views(shape):
    a, n = make_pair("float32", shape)
    for f in (lambda xp, x: x.T, lambda xp, x: x.reshape(-1), lambda xp, x: x[::-1],
              lambda xp, x: x[..., None], lambda xp, x: xp.expand_dims(x, 0),
              lambda xp, x: x.squeeze(), lambda xp, x: xp.broadcast_to(x, (2,) + shape),
              lambda xp, x: x.reshape(shape[::-1]), lambda xp, x: x.copy(),
              lambda xp, x: xp.ascontiguousarray(x[::-1]), lambda xp, x: x.astype("int64")):
        r, rn = f(ca, a), f(np, n)
        assert_same(r, rn)
        assert_flags_like(r, rn)
        assert r.size == 0 and r.nbytes == 0
        assert r.tolist() == rn.tolist()


def test_broadcast_to_is_readonly_stride0():
    a, n = make_pair("float64", (3, 1), seed=7)
    b, bn = ca.broadcast_to(a, (2, 3, 4)), np.broadcast_to(n, (2, 3, 4))
    assert_same(b, bn)
    assert b.strides == (0, 8, 0)
    assert_flags_like(b, bn)
    assert b.base is a
    # views of a read-only view stay read-only, as NumPy's
    for f in (lambda x: x[0], lambda x: x.T, lambda x: x[..., None], lambda x: x[:, ::-1]):
        assert_flags_like(f(b), f(bn))
    # broadcast_arrays
    outs = ca.broadcast_arrays(a, ca.asarray(np.arange(4.0)))
    nouts = np.broadcast_arrays(n, np.arange(4.0))
    for o, on in zip(outs, nouts):
        assert_same(o, on)
        assert not o.flags.writeable
    assert ca.broadcast_shapes((3, 1), (2, 1, 4), ()) == np.broadcast_shapes((3, 1), (2, 1, 4), ())


def test_expand_dims_squeeze_strides_like_numpy():
    a, n = make_pair("float32", (3, 4, 5), seed=8)
    v, nv = a[:, ::2, ::-1], n[:, ::2, ::-1]
    for axis in [0, 1, 3, -1, (0, 4), (1, 2), (-1, -2)]:
        r, rn = ca.expand_dims(v, axis), np.expand_dims(nv, axis)
        assert_same(r, rn)
        assert_flags_like(r, rn)
        assert_same(r.squeeze(), rn.squeeze())


def test_flags_of_owner_and_views():
    a, n = make_pair("int32", (3, 4), seed=9)
    assert_flags_like(a, n)
    for key in [(slice(None), 0), (0,), (slice(None, None, -1),), (None, 1),
                (slice(1, 2), slice(None))]:
        assert_flags_like(a[key], n[key])
        assert_flags_like(a.T[key], n.T[key])
    assert a.flags["ALIGNED"] and a.flags.aligned
    with pytest.raises(KeyError):
        a.flags["NOPE"]
