"""carray's top-level product functions (dot, vdot, inner, outer, kron, cross, einsum, trace,
diagonal) against NumPy on every device: every dtype kind (bool, ints, float32/64,
complex64/128), non-contiguous views, 0-d and empty operands, broadcasting, and NumPy's errors."""


import numpy as np
import pytest

import carray as ca

from conftest import on, to_numpy

RNG = np.random.default_rng(97531)
KINDS = ["bool", "int8", "int32", "uint16", "float32", "float64", "complex64", "complex128"]


def rand(shape, dtype="float64"):
    dt = np.dtype(dtype)
    if dt == np.bool_:
        return RNG.random(shape) < 0.5
    if dt.kind in "iu":
        return RNG.integers(0, 4, shape).astype(dt)
    x = RNG.standard_normal(shape)
    if dt.kind == "c":
        x = x + 1j * RNG.standard_normal(shape)
    return x.astype(dt)


def same(got, expect):
    g = to_numpy(got)
    e = np.asarray(expect)
    assert g.shape == e.shape and g.dtype == e.dtype, (g.shape, e.shape, g.dtype, e.dtype)
    lowp = e.dtype in (np.float32, np.complex64)
    np.testing.assert_allclose(g, e, rtol=1e-5 if lowp else 1e-12, atol=1e-5 if lowp else 1e-12)


def view(x, device):
    """x as a non-contiguous carray view on device (every other element of the last axis)."""
    wide = np.zeros(x.shape[:-1] + (2 * x.shape[-1],), x.dtype) if x.ndim else x
    if x.ndim:
        wide[..., ::2] = x
        return on(wide, device)[..., ::2]
    return on(x, device)


@pytest.mark.parametrize("dtype", KINDS)
def test_dtypes(device, dtype):
    a, b = rand((3, 4), dtype), rand((4, 2), dtype)
    v, u = rand((4,), dtype), rand((4,), dtype)
    x, y = on(a, device), on(b, device)
    same(ca.dot(x, y), np.dot(a, b))
    same(ca.vdot(on(v, device), on(u, device)), np.vdot(v, u))
    same(ca.inner(x, y.mT), np.inner(a, b.T))
    same(ca.outer(x, y), np.outer(a, b))
    same(ca.kron(x, y), np.kron(a, b))
    same(ca.einsum("ij,jk->ik", x, y), np.einsum("ij,jk->ik", a, b))
    same(ca.einsum("ij,kj", x, x), np.einsum("ij,kj", a, a))
    same(ca.trace(x), np.trace(a))
    same(ca.diagonal(x, 1), np.diagonal(a, 1))
    if dtype != "bool":                     # NumPy's cross subtracts: TypeError for bool
        c, d = rand((2, 3), dtype), rand((3,), dtype)
        same(ca.cross(on(c, device), on(d, device)), np.cross(c, d))
    r = ca.dot(x, y)
    assert r.device == device


@pytest.mark.parametrize("sa,sb", [((), (3,)), ((3,), ()), ((4,), (4,)), ((2, 4), (4,)),
                                   ((4,), (4, 3)), ((2, 3, 4), (4,)), ((2, 3, 4), (5, 4, 2)),
                                   ((3, 4), (2, 4, 5)), ((0, 4), (4, 0)), ((3, 0), (0, 2)),
                                   ((0,), (0,))])
def test_dot(device, sa, sb):
    a, b = rand(sa), rand(sb)
    same(ca.dot(on(a, device), on(b, device)), np.dot(a, b))
    if len(sa) and len(sb):
        same(ca.dot(view(a, device), view(b, device)), np.dot(a, b))


@pytest.mark.parametrize("sa,sb", [((), (3,)), ((4,), (4,)), ((2, 4), (3, 4)),
                                   ((2, 3, 4), (5, 4)), ((0, 4), (2, 4)), ((2, 0), (3, 0))])
def test_inner_vdot_outer_kron(device, sa, sb):
    a, b = rand(sa, "complex128"), rand(sb, "complex128")
    same(ca.inner(on(a, device), on(b, device)), np.inner(a, b))
    same(ca.outer(on(a, device), on(b, device)), np.outer(a, b))
    same(ca.kron(on(a, device), on(b, device)), np.kron(a, b))
    same(ca.vdot(on(a, device), on(a, device)), np.vdot(a, a))
    if len(sa) and len(sb):
        same(ca.inner(view(a, device), view(b, device)), np.inner(a, b))
        same(ca.kron(view(a, device), view(b, device)), np.kron(a, b))


def test_dot_out(device):
    a, b = rand((3, 4)), rand((4, 2))
    out = on(np.zeros((3, 2)), device)
    assert ca.dot(on(a, device), on(b, device), out) is out
    same(out, np.dot(a, b))
    with pytest.raises(ValueError, match="shape"):
        ca.dot(on(a, device), on(b, device), out=on(np.zeros((2, 3)), device))


def test_vdot_conjugates_first_and_flattens(device):
    a, b = rand((2, 3), "complex64"), rand((3, 2), "complex64")
    same(ca.vdot(on(a, device), on(b, device)), np.vdot(a, b))
    same(ca.vdot(view(a, device), on(b, device).mT), np.vdot(a, b.T))


@pytest.mark.parametrize("sa,sb,kw", [((3,), (3,), {}), ((4, 3), (3,), {}),
                                      ((3, 4), (4, 3), {"axisa": 0}),
                                      ((2, 3, 5), (5, 3), {"axisa": 1, "axisc": 0}),
                                      ((3, 2), (3, 2), {"axis": 0}), ((0, 3), (3,), {})])
def test_cross(device, sa, sb, kw):
    a, b = rand(sa), rand(sb)
    same(ca.cross(on(a, device), on(b, device), **kw), np.cross(a, b, **kw))


@pytest.mark.parametrize("sa,sb,kw,sizes", [((4, 2), (4, 2), {}, (2, 2)),
                                            ((4, 2), (3,), {"axisc": 0}, (2, 3)),
                                            ((3,), (5, 2), {}, (3, 2)), ((4,), (3,), {}, (4, 3))])
def test_cross_takes_3_vectors_only(device, sa, sb, kw, sizes):
    """2-vectors were deprecated in NumPy 2.0 and are refused since (and by the array API)."""
    a, b = on(rand(sa), device), on(rand(sb), device)
    with pytest.raises(ValueError, match=rf"must be \(arrays of\) 3-dimensional vectors, but "
                                         rf"they are {sizes[0]} and {sizes[1]} dimensional"):
        ca.cross(a, b, **kw)


@pytest.mark.parametrize("shape,args", [((3, 4), ()), ((4, 4), (1,)), ((4, 3), (-2,)),
                                        ((2, 3, 4), (0, 2, 1)), ((2, 3, 4), (1, -1, 0)),
                                        ((3, 2, 5), (-1, 0, -1)), ((0, 3), ()), ((3, 3), (5,))])
def test_trace_diagonal(device, shape, args):
    a = rand(shape)
    same(ca.diagonal(on(a, device), *args), np.diagonal(a, *args))
    same(ca.trace(on(a, device), *args), np.trace(a, *args))
    same(ca.diagonal(view(a, device), *args), np.diagonal(a, *args))
    i = rand(shape, "int32")
    same(ca.trace(on(i, device), *args), np.trace(i, *args))            # int64, as NumPy's sum
    same(ca.trace(on(i, device), *args, dtype="float32"), np.trace(i, *args, dtype=np.float32))


EINSUM = [
    ("ij,jk->ik", [(3, 4), (4, 5)]), ("ij,jk", [(3, 4), (4, 5)]), ("ij,kj", [(3, 4), (2, 4)]),
    ("ii", [(3, 3)]), ("ii->i", [(3, 3)]), ("iij->j", [(3, 3, 2)]), ("iii->i", [(2, 2, 2)]),
    ("ij->ji", [(3, 4)]), ("ij->", [(3, 4)]), ("ijk", [(2, 3, 4)]), ("kji", [(2, 3, 4)]),
    ("i,i", [(5,), (5,)]), ("i,j", [(3,), (4,)]), ("i,j->ji", [(3,), (4,)]),
    ("ij,ij->ij", [(3, 4), (3, 4)]), ("ij,ji", [(3, 4), (4, 3)]),
    ("bij,bjk->bik", [(2, 3, 4), (2, 4, 5)]), ("bij,bjk->bki", [(2, 3, 4), (2, 4, 5)]),
    ("...ij,...jk->...ik", [(2, 3, 4), (4, 5)]), ("...ij,...jk", [(5, 2, 3), (3, 2)]),
    ("ij...,jk...->ik...", [(2, 3, 4), (3, 2, 1)]), ("...,...", [(), (3,)]),
    ("i...->...", [(3, 2)]), ("...ii->...i", [(2, 3, 3)]),
    ("ij,jk,kl->il", [(2, 3), (3, 4), (4, 2)]), ("i,i,i", [(4,), (4,), (4,)]),
    ("ab,cd,bc->ad", [(2, 3), (4, 5), (3, 4)]), ("ij,jk", [(2, 1), (4, 2)]),
    ("ij,jk->ik", [(2, 0), (0, 3)]), ("ij,jk->ik", [(0, 3), (3, 2)]), ("->", [()]),
    ("i,->i", [(3,), ()]), ("Ab,bC->AC", [(2, 3), (3, 2)]),
]


@pytest.mark.parametrize("subs,shapes", EINSUM)
def test_einsum(device, subs, shapes):
    ops = [rand(s) for s in shapes]
    same(ca.einsum(subs, *[on(x, device) for x in ops]), np.einsum(subs, *ops))
    if all(len(s) for s in shapes):
        same(ca.einsum(subs, *[view(x, device) for x in ops], optimize=True),
             np.einsum(subs, *ops))


@pytest.mark.filterwarnings("ignore::numpy.exceptions.ComplexWarning")
@pytest.mark.parametrize("dtypes", [("int32", "int32"), ("bool", "bool"), ("int8", "uint8"),
                                    ("float32", "complex64"), ("float32", "int64"),
                                    ("complex128", "float32")])
def test_einsum_dtypes(device, dtypes):
    a, b = rand((3, 4), dtypes[0]), rand((4, 2), dtypes[1])
    for subs in ("ij,jk", "ij,jk->", "ij,jk->ijk", "ij,ik->jk"):
        b2 = b if subs != "ij,ik->jk" else rand((3, 2), dtypes[1])
        same(ca.einsum(subs, on(a, device), on(b2, device)), np.einsum(subs, a, b2))
    same(ca.einsum("ij,jk", on(a, device), on(b, device), dtype="float64"),
         np.einsum("ij,jk", a, b, dtype="float64", casting="unsafe"))


def test_einsum_out(device):
    a, b = rand((3, 4)), rand((4, 5))
    out = on(np.zeros((3, 5)), device)
    r = ca.einsum("ij,jk", on(a, device), on(b, device), out=out)
    assert r is out
    same(out, np.einsum("ij,jk", a, b))
    with pytest.raises(ValueError, match="shape"):
        ca.einsum("ij,jk", on(a, device), on(b, device), out=on(np.zeros(3), device))


def test_einsum_interleaved(device):
    a, b = rand((3, 4)), rand((4, 5))
    same(ca.einsum(on(a, device), [0, 1], on(b, device), [1, 2], [0, 2]),
         np.einsum(a, [0, 1], b, [1, 2], [0, 2]))
    same(ca.einsum(on(a, device), [Ellipsis, 1], on(b, device), [1, 2]),
         np.einsum(a, [Ellipsis, 1], b, [1, 2]))


@pytest.mark.parametrize("f,args", [
    ("dot", [(2, 3), (4,)]), ("dot", [(2, 3), (4, 5, 2)]), ("inner", [(2, 3), (2, 4)]),
    ("vdot", [(3,), (4,)]), ("diagonal", [(3,)]), ("trace", [(3,)]),
])
def test_errors(device, f, args):
    ops = [rand(s) for s in args]
    with pytest.raises(ValueError) as np_err:
        getattr(np, f)(*ops)
    with pytest.raises(ValueError) as ca_err:
        getattr(ca, f)(*[on(x, device) for x in ops])
    if f != "vdot":
        assert str(ca_err.value) == str(np_err.value)


def test_axis_errors(device):
    a = on(np.ones((2, 3)), device)
    with pytest.raises(ca.AxisError):
        ca.cross(a, a, axisa=5)
    with pytest.raises(ca.AxisError):
        ca.diagonal(a, 0, 0, 2)
    with pytest.raises(ValueError, match="axis1 and axis2 cannot be the same"):
        ca.trace(a, 0, 1, -1)


@pytest.mark.parametrize("subs,shapes", [
    ("ij,jk", [(2, 3), (4, 2)]), ("ii", [(2, 3)]), ("i->j", [(2,)]), ("ij", [(2,)]),
    ("ij->i", [(2, 3), (2,)]), ("i,i", [(2,)]), ("i->ii", [(2,)]), ("i-", [(2,)]),
    ("...i->i", [(2, 3)]), ("i..j..", [(2,)]),
])
def test_einsum_errors(device, subs, shapes):
    ops = [rand(s) for s in shapes]
    with pytest.raises(ValueError) as np_err:
        np.einsum(subs, *ops)
    with pytest.raises(ValueError) as ca_err:
        ca.einsum(subs, *[on(x, device) for x in ops])
    # (NumPy says "fewer operands" when there are more, and the converse: carray says what is)
    if subs not in ("ij,jk", "i-", "i..j..", "ij->i", "i,i"):
        assert str(ca_err.value) == str(np_err.value)


def test_mixed_devices(device):
    if device == "cpu":
        pytest.skip("needs a second device")
    a, b = on(np.ones(3), "cpu"), on(np.ones(3), device)
    for f in (ca.dot, ca.vdot, ca.inner, ca.outer, ca.kron, ca.cross):
        with pytest.raises(ca.DeviceMismatchError):
            f(a, b)
    with pytest.raises(ca.DeviceMismatchError):
        ca.einsum("i,i", a, b)
