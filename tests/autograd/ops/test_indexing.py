"""Indexing and setitem: basic keys (views), advanced keys (integer tensors/lists, boolean
masks; repeated indices accumulate in backward), PyTorch's errors, and setitem with tensors
requiring grad on either side."""

import numpy as np
import pytest

import autograd

from _check import check_op

BASIC = [
    0, -1, slice(1, 3), slice(None, None, 2), (0, 1), (slice(None), 2), (Ellipsis, 1),
    (None, 1), (1, None, slice(0, 2)), (Ellipsis, None), (slice(-3, None), slice(1, 100, 3)),
    (slice(2, 1),), (0, Ellipsis, -2), (slice(None), None, slice(1, None, 2), None),
]


@pytest.mark.parametrize("key", BASIC, ids=repr)
def test_basic_index(key):
    check_op(lambda x: x[key], lambda x: x[key], (3, 4, 2))


def test_basic_index_is_a_view_with_gradient_into_place():
    x = autograd.zeros(3, 4, dtype=autograd.float64, requires_grad=True)
    y = x[1:, ::2]
    assert np.shares_memory(np.asarray(y.array), np.asarray(x.array))
    (y * 3).sum().backward()
    expected = np.zeros((3, 4))
    expected[1:, ::2] = 3
    np.testing.assert_array_equal(np.asarray(x.grad.array), expected)


@pytest.mark.parametrize("key", [slice(None, None, -1), (slice(None), slice(3, 0, -1)),
                                 (0, slice(None, None, -2))], ids=repr)
def test_negative_step_raises_like_pytorch(key):
    x = autograd.zeros(3, 4)
    with pytest.raises(ValueError, match="step must be greater than zero"):
        x[key]
    with pytest.raises(ValueError, match="step must be greater than zero"):
        x[key] = 1.0


def test_zero_step_raises():
    with pytest.raises(ValueError):
        autograd.zeros(3)[::0]


def test_index_errors():
    x = autograd.zeros(2, 3)
    with pytest.raises(IndexError):
        x[2]
    with pytest.raises(IndexError):
        x[0, 0, 0]
    with pytest.raises(IndexError):
        x[autograd.tensor([5])]


ADVANCED = {
    "list": ([2, 0, 0],),
    "tensor": (autograd.tensor([1, -1, 1]),),
    "2d_tensor": (autograd.tensor([[0, 2], [1, 1]]),),
    "two_lists": ([0, 2, 2], [1, 0, 1]),
    "list_and_slice": (slice(None), [3, 3, 0]),
    "slice_then_list": (slice(1, None), [0, 0]),
    "int_and_list": (1, [0, 0, 2]),
}


def _np_key(key):
    return tuple(np.asarray(k.array) if isinstance(k, autograd.Tensor) else k for k in key)


@pytest.mark.parametrize("name", sorted(ADVANCED))
def test_advanced_index(name):
    key = ADVANCED[name]
    check_op(lambda x: x[key], lambda x: x[_np_key(key)], (3, 4))


def test_bool_mask():
    rng = np.random.default_rng(0)
    mask = rng.random((3, 4)) < 0.5
    check_op(lambda x: x[autograd.tensor(mask)], lambda x: x[mask], (3, 4))
    rows = np.array([True, False, True])
    check_op(lambda x: x[autograd.tensor(rows)], lambda x: x[rows], (3, 4))
    check_op(lambda x: x[:, autograd.tensor(rows.tolist() + [True])],
             lambda x: x[:, np.append(rows, True)], (3, 4))
    x = autograd.randn(3, 4)
    check_op(lambda t: t[t > 0], lambda t: t[t > 0], (3, 4), seed=2)
    assert x[x > 100].shape == (0,)


def test_repeated_indices_accumulate():
    x = autograd.zeros(4, dtype=autograd.float64, requires_grad=True)
    y = x[[0, 0, 3, 0]]
    (y * autograd.tensor([1.0, 2.0, 3.0, 4.0], dtype=autograd.float64)).sum().backward()
    assert x.grad.tolist() == [7.0, 0.0, 0.0, 3.0]
    x2 = autograd.zeros(3, 2, dtype=autograd.float64, requires_grad=True)
    x2[autograd.tensor([[1, 1], [1, 2]])].sum().backward()
    assert x2.grad.tolist() == [[0, 0], [3, 3], [1, 1]]


def test_index_double_backward():
    x = autograd.tensor([1.0, 2.0, 3.0], dtype=autograd.float64, requires_grad=True)
    y = (x[[0, 2, 2]] ** 3).sum()
    (g,) = autograd.grad(y, x, create_graph=True)
    assert g.tolist() == [3.0, 0.0, 54.0]
    g.sum().backward()
    assert x.grad.tolist() == [6.0, 0.0, 36.0]


def test_advanced_index_against_torch():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(4)
    a = rng.standard_normal((4, 3, 5))
    idx = [3, 0, 3, 1]

    def f(lib, x, i):
        return ((x[i] ** 2).sum() + x[:, [2, 2]].sum() * 3 + x[x > 0.5].exp().sum()
                + x[1, :, i].sin().sum() + x[..., 1:4:2].sum())

    x = autograd.tensor(a, requires_grad=True)
    tx = torch.tensor(a, requires_grad=True)
    out = f(autograd, x, autograd.tensor(idx))
    tout = f(torch, tx, torch.tensor(idx))
    out.backward()
    tout.backward()
    np.testing.assert_allclose(out.item(), tout.item(), rtol=1e-12)
    np.testing.assert_allclose(np.asarray(x.grad.array), tx.grad.numpy(), rtol=1e-10)


# ---------------------------------------------------------------------------------------------
# setitem
# ---------------------------------------------------------------------------------------------

SET_KEYS = [1, (slice(None), 0), (slice(0, 2), slice(1, 3)), ([0, 2],), (Ellipsis, 2)]


@pytest.mark.parametrize("key", SET_KEYS, ids=repr)
def test_setitem_value_requires_grad(key):
    def fn(x, v):
        y = x * 1
        y[key] = v
        return y

    def ref(x, v):
        y = x.copy()
        y[key] = v
        return y

    vshape = np.zeros((3, 4))[key].shape
    check_op(fn, ref, (3, 4), vshape)
    if vshape:
        check_op(fn, ref, (3, 4), vshape[-1:], seed=1)  # the value broadcasts


@pytest.mark.parametrize("key", SET_KEYS, ids=repr)
def test_setitem_number_and_constant(key):
    def fn(x):
        y = x.sin()  # (sin saves its input, not its output, so y may be modified)
        y[key] = 0.5
        return y * 2

    def ref(x):
        y = np.sin(x)
        y[key] = 0.5
        return y * 2

    check_op(fn, ref, (3, 4))

    def fn2(x):
        y = x.clone()
        y[key] = autograd.tensor(7.0, dtype=autograd.float64)
        return y

    check_op(fn2, lambda x: ref_set(x, key, 7.0), (3, 4))


def ref_set(x, key, v):
    y = x.copy()
    y[key] = v
    return y


def test_setitem_with_mask():
    rng = np.random.default_rng(0)
    mask = rng.random((3, 4)) < 0.5

    def fn(x):
        y = x.clone()
        y[autograd.tensor(mask)] = 0.0
        return y.sin()

    check_op(fn, lambda x: np.sin(ref_set(x, mask, 0.0)), (3, 4))


def test_setitem_into_tensor_without_grad():
    # a plain tensor receives a value that requires grad: the result requires grad
    v = autograd.tensor([1.0, 2.0], requires_grad=True)
    buf = autograd.zeros(3, 2)
    buf[1] = v
    assert buf.requires_grad and buf.grad_fn is not None
    (buf * autograd.tensor([[1.0, 1.0], [3.0, 4.0], [1.0, 1.0]])).sum().backward()
    assert v.grad.tolist() == [3.0, 4.0]


def test_setitem_on_leaf_requires_grad_raises():
    x = autograd.zeros(3, requires_grad=True)
    with pytest.raises(RuntimeError, match="leaf"):
        x[0] = 1.0
    with autograd.no_grad():
        x[0] = 1.0
    assert x.tolist() == [1.0, 0.0, 0.0]


def test_setitem_without_grad_writes_and_bumps_version():
    x = autograd.zeros(2, 3)
    v0 = x._version
    x[0, 1:] = autograd.tensor([4.0, 5.0])
    x[1] = 2
    assert x.tolist() == [[0.0, 4.0, 5.0], [2.0, 2.0, 2.0]]
    assert x._version > v0


def test_setitem_against_torch():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(6)
    a = rng.standard_normal((3, 4))
    b = rng.standard_normal((2,))

    def f(lib, x, v):
        y = x * 2
        y[1, 1:3] = v
        y[[0, 2], 0] = v.sum()
        y[:, 3] = y[:, 3] + v[0]
        return (y.sin() * lib.arange(12.0, dtype=x.dtype).reshape(3, 4)).sum()

    x, v = (autograd.tensor(t, requires_grad=True) for t in (a, b))
    tx, tv = (torch.tensor(t, requires_grad=True) for t in (a, b))
    out, tout = f(autograd, x, v), f(torch, tx, tv)
    out.backward()
    tout.backward()
    np.testing.assert_allclose(out.item(), tout.item(), rtol=1e-12)
    np.testing.assert_allclose(np.asarray(x.grad.array), tx.grad.numpy(), rtol=1e-10)
    np.testing.assert_allclose(np.asarray(v.grad.array), tv.grad.numpy(), rtol=1e-10)


def test_setitem_shape_mismatch_raises_runtime_error():
    y = autograd.zeros(3, 4)
    with pytest.raises(RuntimeError):
        y[0] = autograd.ones(3)
    x = autograd.ones(3, requires_grad=True)
    z = autograd.zeros(3, 4) * 1
    with pytest.raises(RuntimeError):
        z[:, 0] = x.repeat(2)


def test_gather_index_select_masked_select():
    idx = np.array([[0, 1], [2, 3], [3, 3]])
    check_op(lambda x: x.gather(1, autograd.tensor(idx)),
             lambda x: np.take_along_axis(x, idx, 1), (3, 4))
    idx0 = np.array([[0, 2, 1, 0]])
    check_op(lambda x: autograd.gather(x, 0, autograd.tensor(idx0)),
             lambda x: np.take_along_axis(x, idx0, 0), (3, 4))
    sel = np.array([0, 3, 3])
    check_op(lambda x: x.index_select(1, autograd.tensor(sel)), lambda x: x[:, sel], (3, 4))
    mask = np.array([True, False, True, True])
    check_op(lambda x: x.masked_select(autograd.tensor(mask)),
             lambda x: x[np.broadcast_to(mask, x.shape)], (3, 4))
    with pytest.raises(RuntimeError):
        autograd.ones(3, 4).gather(1, autograd.tensor([0, 1]))
