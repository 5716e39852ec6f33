"""The tensor functions of issue 12 item 1 against PyTorch (forward, every input gradient) on
every device, float64 gradchecks of the new Functions (these run without torch), and the
errors of the index-taking ops."""

import math

import numpy as np
import pytest

import autograd

RNG = np.random.default_rng(0)


def _ag(x, device, grad=True):
    t = autograd.tensor(x, device=device)
    return t.requires_grad_() if grad and x.dtype.kind == "f" else t


def compare(f_ag, f_torch, arrays, device, rtol=1e-5, atol=1e-6, grads=True):
    """f_ag on autograd tensors and f_torch on torch tensors of the same NumPy arrays: equal
    results and (grads) equal gradients of every float input under a random upstream grad."""
    torch = pytest.importorskip("torch")
    ta = [_ag(a, device, grads) for a in arrays]
    tt = [torch.tensor(a, requires_grad=grads and a.dtype.kind == "f") for a in arrays]
    out, ref = f_ag(*ta), f_torch(*tt)
    outs, refs = (out, ref) if isinstance(out, tuple) else ((out,), (ref,))
    for o, r in zip(outs, refs):
        assert o.device == device
        assert tuple(o.shape) == tuple(r.shape), (o.shape, r.shape)
        assert str(o.dtype) == str(r.dtype).replace("torch.", ""), (o.dtype, r.dtype)
        np.testing.assert_allclose(np.asarray(o.detach().cpu().numpy(), dtype=np.float64),
                                   r.detach().numpy().astype(np.float64), rtol=rtol, atol=atol)
    if not grads or not (refs[0].requires_grad):
        return
    g = RNG.standard_normal(tuple(refs[0].shape)).astype(arrays[0].dtype
                                                          if arrays[0].dtype.kind == "f"
                                                          else np.float32)
    outs[0].backward(autograd.tensor(g, device=device))
    refs[0].backward(torch.tensor(g))
    for a, t in zip(ta, tt):
        if t.requires_grad:
            want = t.grad.numpy() if t.grad is not None else np.zeros(t.shape)
            got = a.grad.cpu().numpy() if a.grad is not None else np.zeros(a.shape)
            np.testing.assert_allclose(got, want, rtol=rtol, atol=atol)


def r(*shape, lo=-2.0, hi=2.0, dtype=np.float32):
    return RNG.uniform(lo, hi, shape).astype(dtype)


# -- elementwise math --------------------------------------------------------------------------

UNARY_DOMAINS = {"asin": (-0.9, 0.9), "acos": (-0.9, 0.9), "atan": (-3, 3), "sinh": (-3, 3),
                 "cosh": (-3, 3), "asinh": (-3, 3), "acosh": (1.1, 4), "atanh": (-0.9, 0.9),
                 "erf": (-3, 3), "erfinv": (-0.95, 0.95)}


@pytest.mark.parametrize("name", sorted(UNARY_DOMAINS))
def test_unary_math(name, device):
    torch = pytest.importorskip("torch")
    lo, hi = UNARY_DOMAINS[name]
    x = r(3, 4, lo=lo, hi=hi)
    compare(getattr(autograd, name), getattr(torch, name), [x], device)
    compare(lambda t: getattr(t, name)(), lambda t: getattr(t, name)(), [x[:, ::2]], device)
    # integers give the default float, as PyTorch
    i = np.array([0, 1], np.int64)
    assert getattr(autograd, name)(autograd.tensor(i)).dtype == autograd.float32


@pytest.mark.parametrize("name", ["atan2", "hypot", "fmod", "logaddexp"])
def test_binary_math(name, device):
    torch = pytest.importorskip("torch")
    a, b = r(3, 4), r(4, lo=0.5, hi=2)
    compare(getattr(autograd, name), getattr(torch, name), [a, b], device)
    compare(lambda x, y: getattr(x, name)(y), lambda x, y: getattr(x, name)(y), [a.T, b[:3]],
            device)
    if name == "fmod":                  # (torch takes a number only for fmod's other)
        compare(lambda x: autograd.fmod(x, 1.5), lambda x: torch.fmod(x, 1.5), [a], device)
    ia, ib = np.array([7, -7, 3]), np.array([3, 2, 5])
    if name in ("hypot", "logaddexp"):
        with pytest.raises(NotImplementedError, match=f"{name}.*Long"):
            getattr(torch, name)(torch.tensor(ia), torch.tensor(ib))
        with pytest.raises(NotImplementedError, match=f"{name}.*Long"):
            getattr(autograd, name)(autograd.tensor(ia, device=device), autograd.tensor(ib))
    else:
        compare(getattr(autograd, name), getattr(torch, name), [ia, ib], device, grads=False)


@pytest.mark.parametrize("name", ["atan2", "hypot", "fmod", "logaddexp"])
def test_binary_math_gradcheck(name):
    a = autograd.tensor(r(2, 3, dtype=np.float64) + 3.0, requires_grad=True)
    b = autograd.tensor(r(3, lo=0.5, hi=1.5, dtype=np.float64), requires_grad=True)
    assert autograd.gradcheck(getattr(autograd, name), (a, b))


def test_fmod_integer_zero_divisor():
    with pytest.raises(RuntimeError, match="ZeroDivisionError"):
        autograd.fmod(autograd.tensor([1, 2]), 0)


def test_lerp_addcmul_addcdiv(device):
    torch = pytest.importorskip("torch")
    a, b, c = r(3, 4), r(3, 4), r(4, lo=0.5, hi=2)
    compare(autograd.lerp, torch.lerp, [a, b, c], device)
    compare(lambda x, y: autograd.lerp(x, y, 0.3), lambda x, y: torch.lerp(x, y, 0.3), [a, b],
            device)
    compare(lambda x, y, z: autograd.addcmul(x, y, z, value=0.5),
            lambda x, y, z: torch.addcmul(x, y, z, value=0.5), [a, b, c], device)
    compare(lambda x, y, z: x.addcdiv(y, z, value=2),
            lambda x, y, z: x.addcdiv(y, z, value=2), [a, b, c], device)
    compare(lambda x, y, z: (x * 1).addcmul_(y, z), lambda x, y, z: (x * 1).addcmul_(y, z),
            [a, b, c], device)
    compare(lambda x, y, z: (x * 1).addcdiv_(y, z, value=3),
            lambda x, y, z: (x * 1).addcdiv_(y, z, value=3), [a, b, c], device)


def test_nan_to_num_and_isclose(device):
    torch = pytest.importorskip("torch")
    x = np.array([1.0, np.nan, np.inf, -np.inf, -2.0], np.float32)
    compare(autograd.nan_to_num, torch.nan_to_num, [x], device)
    compare(lambda t: t.nan_to_num(1.0, 5.0, -5.0), lambda t: t.nan_to_num(1.0, 5.0, -5.0),
            [x], device)
    y = np.array([1.0 + 1e-6, np.nan, np.inf, np.inf, -2.1], np.float32)
    for kw in ({}, {"equal_nan": True}, {"rtol": 0.1, "atol": 0.0}):
        got = autograd.isclose(autograd.tensor(x, device=device), autograd.tensor(y, device=device),
                               **kw)
        assert got.tolist() == torch.isclose(torch.tensor(x), torch.tensor(y), **kw).tolist()


# -- triangles, diagonals, contractions -------------------------------------------------------

@pytest.mark.parametrize("k", [-1, 0, 2])
def test_tril_triu_diag_diagonal(device, k):
    torch = pytest.importorskip("torch")
    m = r(2, 4, 5)
    compare(lambda t: autograd.tril(t, k), lambda t: torch.tril(t, k), [m], device)
    compare(lambda t: t.triu(k), lambda t: t.triu(k), [m.transpose(0, 2, 1)], device)
    compare(lambda t: autograd.diag(t, k), lambda t: torch.diag(t, k), [m[0]], device)
    compare(lambda t: autograd.diag(t, k), lambda t: torch.diag(t, k), [r(3)], device)
    compare(lambda t: t.diagonal(k, 2, 0), lambda t: t.diagonal(k, 2, 0), [m], device)
    compare(autograd.trace, torch.trace, [m[1]], device)
    for fn in ("tril_indices", "triu_indices"):
        got = getattr(autograd, fn)(4, 5, k, device=device)
        assert got.device == device
        assert got.tolist() == getattr(torch, fn)(4, 5, k).tolist()
    with pytest.raises(RuntimeError, match="tril: input tensor must have at least 2"):
        autograd.tril(autograd.zeros(3))


EQUATIONS = [("ij,jk->ik", [(3, 4), (4, 5)]), ("ij,jk", [(3, 4), (4, 5)]),
             ("bij,bjk->bik", [(2, 3, 4), (2, 4, 5)]), ("ii->i", [(4, 4)]), ("ii", [(4, 4)]),
             ("i,i->", [(5,), (5,)]), ("i,j->ij", [(3,), (4,)]), ("...ij,...jk->...ik",
                                                                 [(2, 3, 4), (4, 5)]),
             ("ij->ji", [(3, 4)]), ("ijk->", [(2, 3, 4)]), ("bhqd,bhkd->bhqk",
                                                          [(2, 3, 4, 5), (2, 3, 6, 5)]),
             ("iij->ij", [(3, 3, 4)]), ("ij,ij,ij->i", [(3, 4), (3, 4), (3, 4)]),
             ("a...,a->...", [(3, 2, 4), (3,)]), ("ab,cd->", [(2, 3), (4, 5)]),
             ("ijk,ikl,ilm->jm", [(2, 3, 4), (2, 4, 5), (2, 5, 3)]), ("i...i", [(3, 2, 3)]),
             ("ba,ab->b", [(3, 4), (4, 3)]), ("...,...->...", [(2, 1, 3), (4, 3)])]


@pytest.mark.parametrize("eq,shapes", EQUATIONS, ids=[e for e, _ in EQUATIONS])
def test_einsum(device, eq, shapes):
    torch = pytest.importorskip("torch")
    arrays = [r(*s) for s in shapes]
    compare(lambda *t: autograd.einsum(eq, *t), lambda *t: torch.einsum(eq, *t), arrays, device,
            rtol=1e-4, atol=1e-5)
    compare(lambda *t: autograd.einsum(eq, list(t)), lambda *t: torch.einsum(eq, list(t)),
            arrays, device, rtol=1e-4, atol=1e-5)


def test_einsum_gradcheck_and_errors():
    a = autograd.tensor(r(3, 4, dtype=np.float64), requires_grad=True)
    b = autograd.tensor(r(4, 4, dtype=np.float64), requires_grad=True)
    assert autograd.gradcheck(lambda x, y: autograd.einsum("ij,jj->ij", x, y), (a, b))
    with pytest.raises(RuntimeError, match="number of subscripts"):
        autograd.einsum("ijk,jk", a, b)
    with pytest.raises(RuntimeError, match="subscript"):
        autograd.einsum("ij,jk->iq", a, b)


def test_tensordot_baddbmm(device):
    torch = pytest.importorskip("torch")
    a, b = r(2, 3, 4), r(3, 4, 5)
    compare(autograd.tensordot, torch.tensordot, [a, b], device, rtol=1e-4)
    compare(lambda x, y: autograd.tensordot(x, y, ([0, 2], [2, 1])),
            lambda x, y: torch.tensordot(x, y, ([0, 2], [2, 1])), [a, r(5, 4, 2)], device,
            rtol=1e-4)
    compare(lambda x, y: autograd.tensordot(x, y, 0), lambda x, y: torch.tensordot(x, y, 0),
            [r(2), r(3)], device)
    i, b1, b2 = r(3, 5), r(2, 3, 4), r(2, 4, 5)
    compare(lambda x, y, z: autograd.baddbmm(x, y, z, beta=0.5, alpha=2),
            lambda x, y, z: torch.baddbmm(x, y, z, beta=0.5, alpha=2), [i, b1, b2], device,
            rtol=1e-4)
    compare(lambda x, y, z: x.baddbmm(y, z), lambda x, y, z: x.baddbmm(y, z), [i, b1, b2],
            device, rtol=1e-4)


@pytest.mark.parametrize("p", [0.0, 1.0, 2.0, 3.0, 1.5, math.inf])
def test_cdist(device, p):
    torch = pytest.importorskip("torch")
    x1, x2 = r(2, 4, 3), r(2, 5, 3)
    x2[0, 0] = x1[0, 0]                         # a zero distance: zero gradient, as PyTorch
    compare(lambda a, b: autograd.cdist(a, b, p), lambda a, b: torch.cdist(a, b, p), [x1, x2],
            device, rtol=1e-4, atol=1e-5)


def test_cdist_gradcheck():
    x1 = autograd.tensor(r(3, 2, dtype=np.float64), requires_grad=True)
    x2 = autograd.tensor(r(4, 2, dtype=np.float64), requires_grad=True)
    for p in (1.0, 2.0, 3.0):
        assert autograd.gradcheck(lambda a, b: autograd.cdist(a, b, p), (x1, x2))


# -- indexing -----------------------------------------------------------------------------------

def test_scatter_family(device):
    torch = pytest.importorskip("torch")
    x, src = r(3, 5), r(2, 5)
    idx = np.array([[0, 1, 2, 0, 1], [2, 0, 1, 1, 0]])
    perm = np.array([[0, 1, 2, 0, 1], [2, 0, 1, 2, 0]])   # unique per column for scatter
    compare(lambda a, i, s: autograd.scatter(a, 0, i, s),
            lambda a, i, s: torch.scatter(a, 0, i, s), [x, perm, src], device)
    compare(lambda a, i: a.scatter(0, i, 2.5), lambda a, i: a.scatter(0, i, 2.5), [x, perm],
            device)
    compare(lambda a, i, s: autograd.scatter_add(a, 0, i, s),
            lambda a, i, s: torch.scatter_add(a, 0, i, s), [x, idx, src], device)
    compare(lambda a, i, s: (a * 1).scatter_add_(1, i, s),
            lambda a, i, s: (a * 1).scatter_add_(1, i, s), [x, idx[:, :3] % 3, src[:, :3]],
            device)
    compare(lambda a, i, s: (a * 1).scatter_(0, i, s), lambda a, i, s: (a * 1).scatter_(0, i, s),
            [x, perm, src], device)
    j = np.array([2, 0, 2, 1])
    compare(lambda a, i, s: autograd.index_add(a, 0, i, s, alpha=2),
            lambda a, i, s: torch.index_add(a, 0, i, s, alpha=2), [x, j, r(4, 5)], device)
    compare(lambda a, i, s: (a * 1).index_add_(1, i, s),
            lambda a, i, s: (a * 1).index_add_(1, i, s), [x, j, r(3, 4)], device)
    compare(lambda a, i: autograd.take_along_dim(a, i, 1),
            lambda a, i: torch.take_along_dim(a, i, 1), [x, (idx[:1, :4] + 1) % 5], device)
    compare(lambda a, i: autograd.take_along_dim(a, i), lambda a, i: torch.take_along_dim(a, i),
            [x, idx], device)
    compare(lambda a, i: a.take_along_dim(i, 0), lambda a, i: a.take_along_dim(i, 0),
            [r(3, 1, 4), np.array([[[2], [0]]])], device)


def test_scatter_on_a_leaf_in_place_raises():
    x = autograd.zeros(3, requires_grad=True)
    with pytest.raises(RuntimeError):
        x.scatter_(0, autograd.tensor([0]), 1.0)


@pytest.mark.parametrize("bad", [3, -1])
def test_index_ops_check_range_before_writing(device, bad):
    x = autograd.zeros(3, 2, device=device)
    i = autograd.tensor([[0, bad]], device=device)
    for call in (lambda: x.scatter(0, i, 1.0), lambda: x.scatter_add(0, i, x[:1]),
                 lambda: autograd.take_along_dim(x, i, 0), lambda: x.scatter_(0, i, 1.0)):
        with pytest.raises(RuntimeError, match="out of bounds for dimension 0 with size 3"):
            call()
    with pytest.raises(IndexError, match="index_add"):
        x.index_add_(0, autograd.tensor([bad], device=device), autograd.ones(1, 2, device=device))
    assert x.sum().item() == 0
    with pytest.raises(RuntimeError, match="Expected dtype int64"):
        x.scatter(0, autograd.tensor([[0.0]], device=device), 1.0)
    with pytest.raises(RuntimeError, match="bincount only supports"):
        autograd.bincount(autograd.tensor([0, -1], device=device))
    with pytest.raises(RuntimeError, match="Number of indices"):
        x.index_add(0, autograd.tensor([0, 1], device=device), autograd.ones(1, 2, device=device))


def test_roll_repeat_interleave_narrow(device):
    torch = pytest.importorskip("torch")
    x = r(3, 4)
    for shifts, dims in ((1, None), (-2, 1), ((1, 5), (0, 1)), (7, 0)):
        compare(lambda t: autograd.roll(t, shifts, dims), lambda t: torch.roll(t, shifts, dims),
                [x], device)
    compare(lambda t: t.repeat_interleave(2), lambda t: t.repeat_interleave(2), [x], device)
    compare(lambda t, k: autograd.repeat_interleave(t, k, 1),
            lambda t, k: torch.repeat_interleave(t, k, 1), [x, np.array([0, 2, 1, 3])], device)
    got = autograd.repeat_interleave(autograd.tensor([1, 0, 2], device=device))
    assert got.tolist() == [0, 2, 2]
    a, b = autograd.split(autograd.arange(6, device=device), [2, 4])
    assert a.tolist() == [0, 1] and b.tolist() == [2, 3, 4, 5]
    compare(lambda t: autograd.narrow(t, 1, 1, 2), lambda t: torch.narrow(t, 1, 1, 2), [x],
            device)
    compare(lambda t, m: autograd.masked_fill(t, m, -1.0),
            lambda t, m: torch.masked_fill(t, m, -1.0), [x, x > 0], device)


# -- sorting and counting -----------------------------------------------------------------------

def test_median(device):
    torch = pytest.importorskip("torch")
    x = RNG.permutation(24).reshape(4, 6).astype(np.float32)   # distinct: indices are unique
    compare(autograd.median, torch.median, [x], device)
    compare(lambda t: autograd.median(t, 1), lambda t: torch.median(t, 1), [x], device)
    compare(lambda t: t.median(0, keepdim=True), lambda t: t.median(0, keepdim=True), [x],
            device)
    y = x.copy()
    y[1, 2] = np.nan
    compare(lambda t: autograd.median(t, 1), lambda t: torch.median(t, 1), [y], device)
    assert math.isnan(autograd.median(autograd.tensor(y, device=device)).item())


def test_nonzero_unique_bincount_searchsorted(device):
    torch = pytest.importorskip("torch")
    x = np.array([[0, 3, 0], [1, 0, 2]])
    t, tt = autograd.tensor(x, device=device), torch.tensor(x)
    assert autograd.nonzero(t).tolist() == torch.nonzero(tt).tolist()
    assert [v.tolist() for v in t.nonzero(as_tuple=True)] == \
        [v.tolist() for v in tt.nonzero(as_tuple=True)]
    assert autograd.nonzero(autograd.zeros(0, 2, device=device)).shape == (0, 2)
    v = np.array([3, 1, 3, 2, 1, 3])
    got = autograd.unique(autograd.tensor(v, device=device), return_inverse=True,
                          return_counts=True)
    want = torch.unique(torch.tensor(v), return_inverse=True, return_counts=True)
    assert [g.tolist() for g in got] == [w.tolist() for w in want]
    assert autograd.bincount(autograd.tensor(v, device=device), minlength=6).tolist() == \
        torch.bincount(torch.tensor(v), minlength=6).tolist()
    w = r(6)
    compare(lambda a, b: autograd.bincount(a, b), lambda a, b: torch.bincount(a, b),
            [v, w], device, grads=False)
    seq = np.array([1.0, 2.0, 2.0, 5.0], np.float32)
    q = np.array([[0.0, 2.0], [5.0, 6.0]], np.float32)
    for right in (False, True):
        compare(lambda s, x: autograd.searchsorted(s, x, right=right),
                lambda s, x: torch.searchsorted(s, x, right=right), [seq, q], device,
                grads=False)
    seq2 = np.sort(r(2, 5), axis=1)
    compare(lambda s, x: autograd.searchsorted(s, x, side="right"),
            lambda s, x: torch.searchsorted(s, x, side="right"), [seq2, r(2, 3)], device,
            grads=False)


def test_meshgrid(device):
    torch = pytest.importorskip("torch")
    a, b, c = r(3), r(4), r(2)
    for ix in ("ij", "xy"):
        compare(lambda x, y, z: autograd.meshgrid(x, y, z, indexing=ix),
                lambda x, y, z: torch.meshgrid(x, y, z, indexing=ix), [a, b, c], device)


# -- sampling -----------------------------------------------------------------------------------

def test_bernoulli_normal_multinomial(device):
    autograd.manual_seed(0)
    p = autograd.full((4000,), 0.3, device=device)
    s = autograd.bernoulli(p)
    assert s.device == device and s.dtype == autograd.float32
    assert set(s.tolist()) <= {0.0, 1.0} and abs(s.mean().item() - 0.3) < 0.05
    assert p.bernoulli(0.9).mean().item() > 0.8
    m = autograd.zeros(4000, device=device, requires_grad=True)
    n = autograd.normal(m, 2.0)
    assert abs(n.std().item() - 2.0) < 0.15 and n.requires_grad
    n.sum().backward()
    assert m.grad.abs().sum().item() == 0          # PyTorch's zero gradient to mean
    assert autograd.normal(1.0, 0.5, (3, 2)).shape == (3, 2)
    w = autograd.tensor([[0.0, 1.0, 3.0], [1.0, 1.0, 0.0]], device=device)
    d = autograd.multinomial(w, 2000, replacement=True)
    assert d.shape == (2, 2000) and d.dtype == autograd.int64 and d.device == device
    assert 0 not in d[0].tolist() and 2 not in d[1].tolist()
    assert abs((d[0] == 2).float().mean().item() - 0.75) < 0.05
    d = w.multinomial(2)
    assert sorted(d[0].tolist()) == [1, 2] and sorted(d[1].tolist()) == [0, 1]
    for bad, msg in (([1.0, -1.0], "element < 0"), ([0.0, 0.0], "sum of probabilities")):
        with pytest.raises(RuntimeError, match=msg):
            autograd.multinomial(autograd.tensor(bad, device=device), 1)
    with pytest.raises(RuntimeError, match="without replacement"):
        autograd.multinomial(w, 4)
