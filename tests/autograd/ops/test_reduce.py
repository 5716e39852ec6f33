"""Reductions, softmax/log_softmax and matmul: values against NumPy, gradients with gradcheck on
contiguous, transposed and sliced float64 inputs."""

import numpy as np
import pytest

import autograd

from _check import check_op, make_input

SHAPE = (3, 4, 2)
DIMS = [None, 0, 1, -1, (0, 2), (-1, 1), (0, 1, 2)]


def _np_dim(dim):
    return tuple(dim) if isinstance(dim, list) else dim


@pytest.mark.parametrize("keepdim", [False, True])
@pytest.mark.parametrize("dim", DIMS)
def test_sum_mean(dim, keepdim):
    if dim is None:
        check_op(lambda x: x.sum(), np.sum, SHAPE)
        check_op(lambda x: autograd.mean(x), np.mean, SHAPE)
        return
    check_op(lambda x: x.sum(dim, keepdim), lambda x: x.sum(dim, keepdims=keepdim), SHAPE)
    check_op(lambda x: x.mean(dim=dim, keepdim=keepdim),
             lambda x: x.mean(dim, keepdims=keepdim), SHAPE)


@pytest.mark.parametrize("correction", [0, 1, 2])
@pytest.mark.parametrize("dim", [None, 0, (1, 2), -1])
def test_var_std(dim, correction):
    for keepdim in (False, True):
        check_op(lambda x: x.var(dim, keepdim=keepdim, correction=correction),
                 lambda x: x.var(dim, ddof=correction, keepdims=keepdim), (3, 4, 3))
        check_op(lambda x: autograd.std(x, dim, keepdim=keepdim, correction=correction),
                 lambda x: x.std(dim, ddof=correction, keepdims=keepdim), (3, 4, 3))


def test_std_of_constant_has_zero_gradient():
    # PyTorch's std backward is 0 where the deviation is 0 (not nan from sqrt'(0))
    x = autograd.tensor([[3.0, 3.0], [1.0, 2.0]], dtype=autograd.float64, requires_grad=True)
    x.std(1).sum().backward()
    np.testing.assert_allclose(np.asarray(x.grad.array), [[0.0, 0.0], [-0.5 ** 0.5, 0.5 ** 0.5]])


def test_var_unbiased_flag():
    check_op(lambda x: x.var(), lambda x: x.var(ddof=1), (5,))
    check_op(lambda x: x.var(unbiased=False), lambda x: x.var(ddof=0), (5,))
    check_op(lambda x: x.std(1, unbiased=False), lambda x: x.std(1, ddof=0), (2, 5))
    check_op(lambda x: x.var(1, True, True), lambda x: x.var(1, ddof=1, keepdims=True), (2, 5))


@pytest.mark.parametrize("dim", [None, 0, 1, -1])
def test_prod(dim):
    rng = np.random.default_rng(0)
    x = rng.uniform(0.5, 1.5, (3, 4)) * rng.choice([-1, 1], (3, 4))
    if dim is None:
        check_op(lambda t: t.prod(), np.prod, x)
    else:
        for keepdim in (False, True):
            check_op(lambda t: t.prod(dim, keepdim), lambda t: t.prod(dim, keepdims=keepdim), x)


@pytest.mark.parametrize("zeros", [[(0, 1)], [(0, 1), (2, 3)], [(0, 1), (0, 2)]])
def test_prod_with_zeros(zeros):
    rng = np.random.default_rng(1)
    x = rng.uniform(0.5, 1.5, (3, 4))
    for i, j in zeros:
        x[i, j] = 0.0
    check_op(lambda t: t.prod(), np.prod, x)
    check_op(lambda t: t.prod(1), lambda t: t.prod(1), x)
    check_op(lambda t: t.prod(0, keepdim=True), lambda t: t.prod(0, keepdims=True), x)
    # analytic: d prod / dx_i = prod of the others
    t = make_input(x, "contiguous")
    t.prod().backward()
    expected = np.array([[np.prod(np.delete(x.ravel(), k)) for k in range(12)]]).reshape(3, 4)
    np.testing.assert_allclose(np.asarray(t.grad.array), expected, atol=1e-15)


@pytest.mark.parametrize("name", ["amax", "amin"])
def test_amax_amin(name):
    ref = np.max if name == "amax" else np.min
    for dim in (None, 0, (0, 2), -1):
        for keepdim in (False, True):
            if dim is None:
                check_op(lambda x: getattr(x, name)(), ref, SHAPE, seed=3)
            else:
                check_op(lambda x: getattr(autograd, name)(x, dim, keepdim),
                         lambda x: ref(x, axis=dim, keepdims=keepdim), SHAPE, seed=3)


def test_amax_ties_split_evenly():
    x = autograd.tensor([[1.0, 3.0, 3.0], [2.0, 2.0, 2.0]], requires_grad=True)
    x.amax(1).sum().backward()
    np.testing.assert_allclose(np.asarray(x.grad.array),
                               [[0, 0.5, 0.5], [1 / 3, 1 / 3, 1 / 3]])


def test_max_min_whole_tensor_ties():
    x = autograd.tensor([[1.0, 5.0], [5.0, 0.0]], requires_grad=True)
    m = x.max()
    assert m.shape == () and m.item() == 5.0
    m.backward()
    assert x.grad.tolist() == [[0.0, 0.5], [0.5, 0.0]]
    x.grad = None
    y = autograd.tensor([0.0, 0.0, 0.0, 1.0], requires_grad=True)
    y.min().backward()
    np.testing.assert_allclose(y.grad.tolist(), [1 / 3, 1 / 3, 1 / 3, 0.0])
    check_op(lambda t: t.max(), np.max, (3, 4), seed=4)
    check_op(lambda t: autograd.min(t), np.min, (3, 4), seed=4)


def test_max_min_whole_tensor_ties_against_torch():
    torch = pytest.importorskip("torch")
    vals = [[1.0, 5.0, 5.0], [5.0, 0.0, 0.0]]
    for name in ("max", "min"):
        x = autograd.tensor(vals, requires_grad=True)
        getattr(x, name)().backward()
        tx = torch.tensor(vals, requires_grad=True)
        getattr(tx, name)().backward()
        assert x.grad.tolist() == tx.grad.tolist()


@pytest.mark.parametrize("name", ["max", "min"])
@pytest.mark.parametrize("dim", [0, 1, -1])
@pytest.mark.parametrize("keepdim", [False, True])
def test_max_min_dim(name, dim, keepdim):
    np_val = np.max if name == "max" else np.min
    np_arg = np.argmax if name == "max" else np.argmin

    def ref(x):
        return np_val(x, dim, keepdims=keepdim), np_arg(x, dim, keepdims=keepdim)

    check_op(lambda x: tuple(getattr(x, name)(dim, keepdim)), ref, SHAPE, seed=5)
    check_op(lambda x: getattr(autograd, name)(x, dim=dim, keepdim=keepdim).values,
             lambda x: ref(x)[0], SHAPE, seed=6)
    x = autograd.randn(SHAPE, requires_grad=True)
    out = getattr(x, name)(dim, keepdim=keepdim)
    values, indices = out
    assert out.values is values and out.indices is indices
    assert type(out).__name__ in ("MaxMin", "max", "min", "return_types")
    assert indices.dtype == autograd.int64
    assert not indices.requires_grad and values.requires_grad


def test_max_dim_gradient_goes_to_first_index_on_ties():
    x = autograd.tensor([[2.0, 2.0, 1.0]], requires_grad=True)
    v, i = x.max(1)
    v.sum().backward()
    assert i.tolist() == [0]
    assert x.grad.tolist() == [[1.0, 0.0, 0.0]]


def test_max_with_tensor_is_maximum():
    a = autograd.tensor([1.0, 4.0])
    b = autograd.tensor([3.0, 2.0])
    assert autograd.max(a, b).tolist() == [3.0, 4.0]
    assert a.min(b).tolist() == [1.0, 2.0]


@pytest.mark.parametrize("dim", [0, 1, -1, (0, 1)])
def test_logsumexp(dim):
    def ref(x, keepdim):
        m = x.max(axis=dim, keepdims=True)
        out = np.log(np.exp(x - m).sum(axis=dim, keepdims=True)) + m
        return out if keepdim else np.squeeze(out, axis=dim)

    for keepdim in (False, True):
        check_op(lambda x: x.logsumexp(dim, keepdim), lambda x: ref(x, keepdim), (3, 4))
    big = autograd.tensor([1000.0, 1000.0])
    assert abs(autograd.logsumexp(big, 0).item() - (1000 + np.log(2))) < 1e-3


@pytest.mark.parametrize("dim", [0, 1, -1])
def test_softmax_log_softmax(dim):
    def softmax(x):
        e = np.exp(x - x.max(dim, keepdims=True))
        return e / e.sum(dim, keepdims=True)

    check_op(lambda x: x.softmax(dim), softmax, (3, 4))
    check_op(lambda x: autograd.softmax(x, dim=dim), softmax, (2, 3, 2))
    check_op(lambda x: autograd.log_softmax(x, dim), lambda x: np.log(softmax(x)), (3, 4))
    check_op(lambda x: x.log_softmax(dim) * autograd.arange(4.0).double(),
             lambda x: np.log(softmax(x)) * np.arange(4.0), (4, 4))


def test_softmax_is_stable():
    x = autograd.tensor([1000.0, 0.0, -1000.0])
    assert x.softmax(0).tolist() == [1.0, 0.0, 0.0]
    np.testing.assert_allclose(x.log_softmax(0).tolist(), [0.0, -1000.0, -2000.0])


@pytest.mark.parametrize("sa,sb", [
    ((3,), (3,)), ((2, 3), (3,)), ((3,), (3, 4)), ((2, 3), (3, 4)), ((2, 2, 3), (3, 4)),
    ((3,), (2, 3, 4)), ((2, 1, 2, 3), (3, 3, 2)), ((2, 3, 2), (2,)), ((1, 2, 3), (4, 3, 2)),
])
def test_matmul(sa, sb):
    check_op(lambda a, b: a @ b, np.matmul, sa, sb)
    check_op(autograd.matmul, np.matmul, sa, sb, seed=1, layouts=("transposed", "sliced"))


def test_matmul_shape_error():
    with pytest.raises(RuntimeError):
        autograd.ones(2, 3) @ autograd.ones(2, 3)


def test_reductions_of_int_and_bool():
    i = autograd.tensor([[1, 2], [3, 4]], dtype=autograd.int32)
    assert i.sum().dtype == autograd.int64 and i.sum().item() == 10
    assert autograd.tensor([True, True, False]).sum().item() == 2
    assert i.prod().item() == 24
    with pytest.raises(RuntimeError):
        autograd.tensor([1, 2]).mean()
    assert i.max().item() == 4 and i.argmax().item() == 3
    assert i.argmin(dim=1).tolist() == [0, 0]


def test_reduction_dim_errors():
    x = autograd.ones(2, 3)
    with pytest.raises(IndexError):
        x.sum(2)
    with pytest.raises(IndexError):
        x.max(-3)
    with pytest.raises(IndexError):
        x.softmax(5)


def test_reductions_against_torch():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(11)
    a = rng.standard_normal((3, 4, 5))

    def f(lib, x):
        return (x.var(1, keepdim=True).sum() + x.std(dim=(0, 2)).mean()
                + x.logsumexp(2).sum() + x.softmax(0)[0, 1, 2] + x.log_softmax(-1).mean()
                + x.amax(dim=(1, 2)).sum() + x.max(1).values.sum() + x.min(2)[0].mean()
                + x[:2].prod(0).sum())

    x = autograd.tensor(a, requires_grad=True)
    tx = torch.tensor(a, requires_grad=True)
    out, tout = f(autograd, x), f(torch, tx)
    out.backward()
    tout.backward()
    np.testing.assert_allclose(out.item(), tout.item(), rtol=1e-12)
    np.testing.assert_allclose(np.asarray(x.grad.array), tx.grad.numpy(), rtol=1e-9, atol=1e-12)


# -- PyTorch's semantics found by the torch comparison audit ----------------------------------

@pytest.mark.parametrize("name", ["sum", "mean", "prod", "amax", "var", "std", "logsumexp",
                                  "softmax", "log_softmax"])
def test_zero_dim_tensor_accepts_dim_0_and_minus_1(name):
    x = autograd.tensor(0.7, dtype=autograd.float64, requires_grad=True)
    for d in (0, -1):
        out = getattr(x, name)(d)
        assert out.shape == ()
    out.backward()
    assert x.grad.shape == ()
    with pytest.raises(IndexError):
        getattr(x, name)(1)


def test_var_std_positional_unbiased_and_integer_error():
    x = make_input(np.array([[1.0, 2.0, 4.0], [3.0, 5.0, 9.0]]), "sliced")
    v = x.detach().numpy()
    np.testing.assert_allclose(x.var(False).item(), v.var())
    np.testing.assert_allclose(x.std(True).item(), v.std(ddof=1))
    with pytest.raises(RuntimeError, match="floating point"):
        autograd.tensor([1, 2, 3]).var()


def test_var_gradient_without_degrees_of_freedom_is_nan():
    x = autograd.tensor([1.5], dtype=autograd.float64, requires_grad=True)
    x.var().backward()  # n - correction == 0: nan (as PyTorch), not ZeroDivisionError
    assert np.isnan(x.grad.numpy()).all()


def test_argmax_errors_and_max_result_type():
    with pytest.raises(RuntimeError, match="bool"):
        autograd.tensor([True, False]).argmax()
    with pytest.raises(IndexError, match="non-zero size"):
        autograd.zeros(0, 3).argmax(0)
    with pytest.raises(IndexError, match="numel"):
        autograd.zeros(0, 3).argmin()
    assert autograd.tensor(2.0).argmax(0).item() == 0
    x = autograd.tensor([[1.0, 3.0], [4.0, 2.0]])
    assert type(x.max(1)).__name__ == "max" and type(x.min(1)).__name__ == "min"


def test_all_any_dims_checked():
    x = autograd.tensor([[True, False], [True, True]])
    assert x.all((0, 1)).item() is False and x.any(-1).tolist() == [True, True]
    with pytest.raises(IndexError, match="Dimension out of range"):
        x.all(2)
    with pytest.raises(RuntimeError, match="multiple times"):
        x.any((1, 1))
