"""Elementwise ops: values against NumPy formulas, gradients with gradcheck on contiguous,
transposed and sliced float64 inputs, broadcasting, Python scalars on either side, dtypes."""

import math
import operator

import numpy as np
import pytest

import autograd

from _check import check_op, make_input


def random_shape(seed, max_dims=3, max_side=3):
    rng = np.random.default_rng(seed)
    return tuple(int(n) for n in rng.integers(1, max_side + 1, rng.integers(0, max_dims + 1)))


def broadcast_pair(seed):
    """Two shapes that broadcast together (size-1 dims and missing leading dims)."""
    rng = np.random.default_rng(seed)
    full = random_shape(seed, 3, 3)
    a = tuple(1 if rng.random() < 0.3 else n for n in full)
    b = tuple(1 if rng.random() < 0.3 else n for n in full)
    b = b[int(rng.integers(0, len(b) + 1)):]
    return (a, b) if rng.random() < 0.5 else (b, a)


def _sigmoid(x):
    return 1 / (1 + np.exp(-x))


# name -> (autograd fn, NumPy reference, low, high): inputs drawn from [low, high) when given
UNARY = {
    "neg": (lambda x: -x, np.negative, None, None),
    "exp": (autograd.exp, np.exp, None, None),
    "log": (autograd.log, np.log, 0.2, 3.0),
    "log1p": (autograd.log1p, np.log1p, -0.5, 3.0),
    "expm1": (autograd.expm1, np.expm1, None, None),
    "sqrt": (autograd.sqrt, np.sqrt, 0.2, 3.0),
    "rsqrt": (autograd.rsqrt, lambda x: 1 / np.sqrt(x), 0.2, 3.0),
    "sin": (autograd.sin, np.sin, None, None),
    "cos": (autograd.cos, np.cos, None, None),
    "tanh": (autograd.tanh, np.tanh, None, None),
    "sigmoid": (autograd.sigmoid, _sigmoid, None, None),
    "relu": (autograd.relu, lambda x: np.maximum(x, 0), None, None),
    "abs": (autograd.abs, np.abs, None, None),
    "reciprocal": (autograd.reciprocal, np.reciprocal, 0.3, 2.0),
    "square": (autograd.square, np.square, None, None),
    "log2": (autograd.log2, np.log2, 0.2, 3.0),
    "log10": (autograd.log10, np.log10, 0.2, 3.0),
    "method_exp": (lambda x: x.exp(), np.exp, None, None),
    "method_sigmoid": (lambda x: x.sigmoid(), _sigmoid, None, None),
    "method_rsqrt": (lambda x: x.rsqrt(), lambda x: 1 / np.sqrt(x), 0.2, 3.0),
    "method_square": (lambda x: x.square(), np.square, None, None),
    "abs_builtin": (lambda x: abs(x), np.abs, None, None),
}


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary(name, seed):
    fn, ref, low, high = UNARY[name]
    shape = random_shape(seed + 10 * len(name))
    if name in ("relu", "abs", "abs_builtin"):
        # keep away from the kink at 0, where finite differences are meaningless
        rng = np.random.default_rng(seed)
        x = rng.uniform(0.1, 2, shape) * rng.choice([-1, 1], shape)
        check_op(fn, ref, x)
    else:
        check_op(fn, ref, shape, seed=seed, low=low, high=high)


@pytest.mark.parametrize("name,fn,ref", [
    ("sign", autograd.sign, np.sign), ("floor", autograd.floor, np.floor),
    ("ceil", autograd.ceil, np.ceil),
])
def test_piecewise_constant_have_zero_gradient(name, fn, ref):
    rng = np.random.default_rng(1)
    x = rng.uniform(0.05, 0.45, (2, 3)) + rng.integers(-3, 3, (2, 3))
    check_op(fn, ref, x)
    t = make_input(x, "contiguous")
    fn(t).sum().backward()
    np.testing.assert_array_equal(np.asarray(t.grad.array), np.zeros((2, 3)))


def test_relu_and_abs_gradient_at_zero():
    # PyTorch: relu'(0) = 0, abs'(0) = sign(0) = 0
    x = autograd.tensor([-1.0, 0.0, 2.0], requires_grad=True)
    autograd.relu(x).sum().backward()
    assert x.grad.tolist() == [0.0, 0.0, 1.0]
    x.grad = None
    autograd.abs(x).sum().backward()
    assert x.grad.tolist() == [-1.0, 0.0, 1.0]


BINARY = {
    "add": (lambda a, b: a + b, np.add),
    "sub": (lambda a, b: a - b, np.subtract),
    "mul": (lambda a, b: a * b, np.multiply),
    "div": (lambda a, b: a / b, np.divide),
    "fn_add": (autograd.add, np.add),
    "fn_sub": (autograd.sub, np.subtract),
    "fn_mul": (autograd.mul, np.multiply),
    "fn_div": (autograd.div, np.divide),
    "add_alpha": (lambda a, b: autograd.add(a, b, alpha=2.5), lambda a, b: a + 2.5 * b),
    "sub_alpha": (lambda a, b: a.sub(b, alpha=-0.5), lambda a, b: a + 0.5 * b),
    "maximum": (autograd.maximum, np.maximum),
    "minimum": (autograd.minimum, np.minimum),
}


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("name", sorted(BINARY))
def test_binary_broadcasting(name, seed):
    fn, ref = BINARY[name]
    sa, sb = broadcast_pair(seed)
    rng = np.random.default_rng(seed)
    a = rng.standard_normal(sa)
    b = rng.standard_normal(sb)
    if name in ("div", "fn_div"):
        b = rng.uniform(0.5, 2, sb) * rng.choice([-1, 1], sb)
    check_op(fn, ref, a, b)


def test_binary_gradients_have_input_shapes():
    a = autograd.randn(3, 1, 4, dtype=autograd.float64, requires_grad=True)
    b = autograd.randn(2, 1, dtype=autograd.float64, requires_grad=True)
    for op in (lambda: a + b, lambda: a - b, lambda: a * b, lambda: a / b,
               lambda: autograd.maximum(a, b), lambda: a ** 2 * b):
        a.grad = b.grad = None
        op().sum().backward()
        assert a.grad.shape == (3, 1, 4) and b.grad.shape == (2, 1)
    a.grad = b.grad = None
    (a + b).sum().backward()
    np.testing.assert_allclose(np.asarray(a.grad.array), np.full((3, 1, 4), 2.0))
    np.testing.assert_allclose(np.asarray(b.grad.array), np.full((2, 1), 12.0))


@pytest.mark.parametrize("scalar", [2.5, -3, 0.5])
def test_python_scalar_on_either_side(scalar):
    cases = [
        (lambda x: x + scalar, lambda x: x + scalar),
        (lambda x: scalar + x, lambda x: scalar + x),
        (lambda x: x - scalar, lambda x: x - scalar),
        (lambda x: scalar - x, lambda x: scalar - x),
        (lambda x: x * scalar, lambda x: x * scalar),
        (lambda x: scalar * x, lambda x: scalar * x),
        (lambda x: x / scalar, lambda x: x / scalar),
        (lambda x: scalar / x, lambda x: scalar / x),
        (lambda x: x ** scalar, lambda x: x ** scalar),
    ]
    for fn, ref in cases:
        check_op(fn, ref, (2, 3), low=0.5, high=2.0)
    if scalar > 0:
        check_op(lambda x: scalar ** x, lambda x: scalar ** x, (2, 3), low=-1.0, high=1.0)


def test_scalar_ops_keep_dtype():
    x = autograd.ones(3, requires_grad=True)
    for y in (x + 1, 2 * x, x / 3, 1 - x, x ** 2, 2.0 ** x, -x):
        assert y.dtype == autograd.float32
    i = autograd.tensor([1, 2, 3])
    assert (i + 1).dtype == autograd.int64
    assert (i * 2.5).dtype == autograd.float32
    assert (i / 2).dtype == autograd.float32
    assert autograd.tensor([1, 2], dtype=autograd.int32).add(1).dtype == autograd.int32


@pytest.mark.parametrize("seed", range(3))
def test_pow_tensor_tensor(seed):
    sa, sb = broadcast_pair(seed + 20)
    check_op(lambda a, b: a ** b, np.power, sa, sb, seed=seed, low=0.5, high=2.0)
    check_op(autograd.pow, np.power, sa, sb, seed=seed, low=0.5, high=2.0)


def test_pow_special_exponents():
    check_op(lambda x: x ** 0, lambda x: x ** 0, (3,))
    check_op(lambda x: x ** 1, lambda x: x ** 1, (3,))
    check_op(lambda x: x ** 3, lambda x: x ** 3, (2, 2))
    check_op(lambda x: x ** -2, lambda x: x ** -2.0, (2, 2), low=0.5, high=2.0)
    check_op(lambda x: x ** 0.5, np.sqrt, (2, 2), low=0.5, high=2.0)
    # gradient of x ** 0 is 0 even at x == 0; of x ** 2 at 0 is 0
    x = autograd.tensor([0.0, 1.0], requires_grad=True)
    (x ** 0).sum().backward()
    assert x.grad.tolist() == [0.0, 0.0]
    x.grad = None
    (x ** 2).sum().backward()
    assert x.grad.tolist() == [0.0, 2.0]


def test_pow_exponent_gradient_at_zero_base():
    # d/db 0 ** b = 0 for b >= 0 (PyTorch masks log(0))
    a = autograd.tensor([0.0, 2.0], dtype=autograd.float64)
    b = autograd.tensor([2.0, 3.0], dtype=autograd.float64, requires_grad=True)
    (a ** b).sum().backward()
    np.testing.assert_allclose(b.grad.tolist(), [0.0, 8 * math.log(2)])


def test_maximum_minimum_split_ties_evenly():
    a = autograd.tensor([1.0, 2.0, 3.0], requires_grad=True)
    b = autograd.tensor([1.0, 5.0, 0.0], requires_grad=True)
    autograd.maximum(a, b).sum().backward()
    assert a.grad.tolist() == [0.5, 0.0, 1.0]
    assert b.grad.tolist() == [0.5, 1.0, 0.0]
    a.grad = b.grad = None
    autograd.minimum(a, b).sum().backward()
    assert a.grad.tolist() == [0.5, 1.0, 0.0]
    assert b.grad.tolist() == [0.5, 0.0, 1.0]


COMPARISONS = {
    "eq": (lambda a, b: a == b, np.equal), "ne": (lambda a, b: a != b, np.not_equal),
    "lt": (lambda a, b: a < b, np.less), "le": (lambda a, b: a <= b, np.less_equal),
    "gt": (lambda a, b: a > b, np.greater), "ge": (lambda a, b: a >= b, np.greater_equal),
    "fn_gt": (autograd.gt, np.greater), "fn_le": (autograd.le, np.less_equal),
}


@pytest.mark.parametrize("name", sorted(COMPARISONS))
def test_comparisons_give_bool_without_grad(name):
    fn, ref = COMPARISONS[name]
    rng = np.random.default_rng(0)
    a = rng.integers(0, 3, (3, 4)).astype(np.float64)
    b = rng.integers(0, 3, (4,)).astype(np.float64)
    ta = autograd.tensor(a, requires_grad=True)
    tb = autograd.tensor(b, requires_grad=True)
    out = fn(ta, tb)
    assert out.dtype == autograd.bool
    assert not out.requires_grad and out.grad_fn is None
    np.testing.assert_array_equal(np.asarray(out.array), ref(a, b))
    out2 = fn(ta, 1.0)
    np.testing.assert_array_equal(np.asarray(out2.array), ref(a, 1.0))


def test_where():
    rng = np.random.default_rng(3)
    cond = rng.random((3, 4)) < 0.5
    check_op(lambda x, y: autograd.where(autograd.tensor(cond), x, y),
             lambda x, y: np.where(cond, x, y), (3, 4), (4,))
    check_op(lambda x: autograd.where(autograd.tensor(cond), x, 0.0),
             lambda x: np.where(cond, x, 0.0), (1, 4))
    check_op(lambda y: autograd.where(autograd.tensor(cond[0]), 2.0, y),
             lambda y: np.where(cond[0], 2.0, y), (3, 1))
    x = autograd.randn(3, 4, requires_grad=True)
    y = x.where(x > 0, autograd.zeros(()))
    np.testing.assert_allclose(np.asarray(y.detach().array),
                               np.maximum(np.asarray(x.detach().array), 0))


@pytest.mark.parametrize("lo,hi", [(-0.5, 0.5), (-0.3, None), (None, 0.2), (0.4, -0.4)])
def test_clamp_scalar_bounds(lo, hi):
    rng = np.random.default_rng(0)
    x = rng.uniform(0.05, 1.5, (3, 4)) * rng.choice([-1, 1], (3, 4))
    # keep elements off the bounds (finite differences across a kink are meaningless)
    for v in (lo, hi):
        if v is not None:
            x[np.abs(x - v) < 0.02] += 0.05
    check_op(lambda t: autograd.clamp(t, lo, hi), lambda t: np.minimum(
        np.maximum(t, lo if lo is not None else -np.inf), hi if hi is not None else np.inf), x)
    check_op(lambda t: t.clamp(min=lo, max=hi), lambda t: np.clip(
        t, lo if lo is not None else -np.inf, hi if hi is not None else np.inf)
        if not (lo is not None and hi is not None and lo > hi) else np.full_like(t, hi), x)


def test_clamp_tensor_bounds():
    rng = np.random.default_rng(5)
    x = rng.standard_normal((3, 4))
    lo = rng.standard_normal((4,)) - 0.5
    hi = lo + rng.uniform(0.2, 1.5, (3, 1))
    for arr in (x,):
        arr[np.abs(arr - lo) < 0.02] += 0.05
        arr[np.abs(arr - hi) < 0.02] += 0.05
    check_op(lambda t, a, b: autograd.clamp(t, a, b),
             lambda t, a, b: np.minimum(np.maximum(t, a), b), x, lo, hi)
    check_op(lambda t, a: t.clamp(min=a), lambda t, a: np.maximum(t, a), x, lo)
    check_op(lambda t, b: t.clamp(max=b), lambda t, b: np.minimum(t, b), x, hi)


def test_clamp_requires_a_bound():
    with pytest.raises(RuntimeError):
        autograd.clamp(autograd.ones(2))


def test_clamp_gradient_matches_pytorch_at_bounds():
    torch = pytest.importorskip("torch")
    vals = [-2.0, -1.0, 0.0, 1.0, 2.0]
    x = autograd.tensor(vals, requires_grad=True)
    x.clamp(-1.0, 1.0).sum().backward()
    tx = torch.tensor(vals, requires_grad=True)
    tx.clamp(-1.0, 1.0).sum().backward()
    assert x.grad.tolist() == tx.grad.tolist()


def test_integer_arithmetic_exact():
    a = autograd.tensor([[1, 2, 3], [4, 5, 6]])
    b = autograd.tensor([7, -8, 9])
    np.testing.assert_array_equal(np.asarray((a * b - a + 3).array),
                                  np.array([[1, 2, 3], [4, 5, 6]]) * [7, -8, 9]
                                  - [[1, 2, 3], [4, 5, 6]] + 3)
    assert (a // 2).tolist() == [[0, 1, 1], [2, 2, 3]]
    assert (a % 4).tolist() == [[1, 2, 3], [0, 1, 2]]


def test_float32_values_against_numpy():
    rng = np.random.default_rng(0)
    x = rng.uniform(0.2, 2, (4, 5)).astype(np.float32)
    t = autograd.tensor(x)
    for fn, ref in [(autograd.exp, np.exp), (autograd.log, np.log), (autograd.tanh, np.tanh),
                    (autograd.sqrt, np.sqrt), (autograd.sin, np.sin)]:
        out = fn(t)
        assert out.dtype == autograd.float32
        np.testing.assert_allclose(np.asarray(out.array), ref(x), rtol=1e-5)


def test_against_torch_random_expression():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(7)
    a = rng.standard_normal((3, 4))
    b = rng.uniform(0.5, 2, (4,))

    def f(lib, x, y):
        return (lib.tanh(x) * y - x / y + lib.exp(-x * x) + lib.sigmoid(x) ** 2
                + lib.maximum(x, y) - lib.sqrt(y)).sum()

    x, y = (autograd.tensor(v, requires_grad=True) for v in (a, b))
    tx, ty = (torch.tensor(v, requires_grad=True) for v in (a, b))
    out, tout = f(autograd, x, y), f(torch, tx, ty)
    out.backward()
    tout.backward()
    np.testing.assert_allclose(out.item(), tout.item(), rtol=1e-12)
    np.testing.assert_allclose(np.asarray(x.grad.array), tx.grad.numpy(), rtol=1e-10)
    np.testing.assert_allclose(np.asarray(y.grad.array), ty.grad.numpy(), rtol=1e-10)


# -- PyTorch's semantics found by the torch comparison audit ----------------------------------

def test_bool_subtraction_and_negation_raise():
    b = autograd.tensor([True, False])
    for fn in (lambda: b - b, lambda: b - autograd.tensor([1, 2]), lambda: 1.0 - b,
               lambda: autograd.ones(2) - True, lambda: -b):
        with pytest.raises(RuntimeError, match="bool tensor"):
            fn()


def test_broadcast_mismatch_is_runtime_error():
    with pytest.raises(RuntimeError, match=r"size of tensor a \(2\) must match the size of "
                                           r"tensor b \(3\) at non-singleton dimension 1"):
        autograd.ones(4, 2) + autograd.ones(3)
    with pytest.raises(RuntimeError, match="must match"):
        autograd.ones(2, requires_grad=True) * autograd.ones(3)
    with pytest.raises(RuntimeError, match="must match"):
        autograd.ones(2) == autograd.ones(3)  # noqa: B015  (raises)
    assert (autograd.ones(2) == None) is False  # noqa: E711


def test_floordiv_remainder_promote_and_track_grad():
    a = make_input(np.array([[5.5, -3.0], [7.0, -1.5]]), "transposed")
    i = autograd.tensor([[2, 3], [4, 5]])
    assert (a.float() // i).dtype == autograd.float32 and (a.float() % i).dtype == autograd.float32
    assert (a // 2).requires_grad and (a % 2).requires_grad
    np.testing.assert_array_equal((2.5 % a).detach().numpy(), np.mod(2.5, a.detach().numpy()))
    np.testing.assert_array_equal((7 // i).numpy(), 7 // i.numpy())
    b = make_input(np.array([2.0, -0.75]), "contiguous")
    check_op(lambda x, y: x % y, np.mod, (3, 2), np.array([1.3, -0.7]))
    (a % b).sum().backward()
    np.testing.assert_allclose(b.grad.numpy(), -np.floor(a.detach().numpy() / [2.0, -0.75]).sum(0))
    with pytest.raises(RuntimeError, match="ZeroDivisionError"):
        i // autograd.tensor([1, 0])
    with pytest.raises(RuntimeError, match="ZeroDivisionError"):
        i % 0


def test_integer_pow_negative_exponents():
    base = autograd.tensor([1, -1, 2, 0, -1, 3])
    exp = autograd.tensor([-3, -3, -1, 2, -2, 2])
    assert (base ** exp).tolist() == [1, -1, 0, 0, 1, 9]
    assert (2 ** autograd.tensor([-1, 0, 3])).tolist() == [0, 1, 8]
    with pytest.raises(RuntimeError, match="negative integer powers"):
        base ** -1


def test_pow_gradients_at_zero():
    x = autograd.tensor([0.0, 0.0, 2.0], dtype=autograd.float64, requires_grad=True)
    e = autograd.tensor([0.0, 1.0, -1.0], dtype=autograd.float64, requires_grad=True)
    (x ** e).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [0.0, 1.0, -0.25])  # not nan at 0 ** 0
    e2 = autograd.tensor([0.0, 2.0, -1.0], dtype=autograd.float64, requires_grad=True)
    (0 ** e2).sum().backward()
    np.testing.assert_array_equal(e2.grad.numpy(), [0.0, 0.0, -np.inf])


def test_float_math_of_integers_gives_default_float():
    i = autograd.tensor([1, 2, 3])
    for name in ("exp", "log", "sqrt", "sigmoid", "tanh", "sin", "cos", "expm1", "log1p",
                 "rsqrt", "log2", "log10"):
        out = getattr(i, name)()
        assert out.dtype == autograd.float32, name
        np.testing.assert_allclose(out.numpy(), getattr(autograd.tensor([1.0, 2, 3]), name)()
                                   .numpy(), rtol=1e-6)
    assert autograd.logsumexp(i, 0).dtype == autograd.float32


def test_clamp_min_max_masked_fill_where_checks():
    check_op(lambda x: x.clamp_min(0.1), lambda x: np.maximum(x, 0.1), (3, 4))
    check_op(lambda x: autograd.clamp_max(x, 0.1), lambda x: np.minimum(x, 0.1), (3, 4))
    i = autograd.tensor([1, 2, 3])
    filled = i.masked_fill(autograd.tensor([True, False, True]), 2.5)
    assert filled.dtype == autograd.int64 and filled.tolist() == [2, 2, 2]
    with pytest.raises(RuntimeError, match="boolean"):
        autograd.where(i, 1.0, 0.0)


def test_round_trunc_isinf_xor():
    x = autograd.tensor([0.5, 1.5, 2.5, -1.5, 2.4, -2.6, float("inf")])
    assert x.round().tolist() == [0.0, 2.0, 2.0, -2.0, 2.0, -3.0, float("inf")]
    assert x.trunc().tolist() == [0.0, 1.0, 2.0, -1.0, 2.0, -2.0, float("inf")]
    assert x.isinf().tolist() == [False] * 6 + [True]
    t, f = autograd.tensor([True, True]), autograd.tensor([True, False])
    assert (t ^ f).tolist() == [False, True]
    assert 2.5 in x and 3.5 not in x


# -- bitwise ops (bool and integer tensors, no gradient) --------------------------------------

BITWISE = {"and": ("bitwise_and", operator.and_, operator.iand),
           "or": ("bitwise_or", operator.or_, operator.ior),
           "xor": ("bitwise_xor", operator.xor, operator.ixor)}


def test_bitwise_values_by_hand():
    i = autograd.tensor([12, -1, 0, 5])
    j = autograd.tensor([10, 5, -1, 3], dtype=autograd.int32)
    assert (i & j).tolist() == [8, 5, 0, 1] and (i & j).dtype == autograd.int64
    assert (i | j).tolist() == [14, -1, -1, 7]
    assert (i ^ j).tolist() == [6, -6, -1, 6]
    assert (~i).tolist() == [-13, 0, -1, -6] and (~j).dtype == autograd.int32
    assert (j & 6).dtype == autograd.int32 and (6 & j).tolist() == [2, 4, 6, 2]
    assert (3 ^ i).tolist() == [15, -4, 3, 6] and (1 | j).tolist() == [11, 5, -1, 3]
    assert autograd.bitwise_and(i, 4).tolist() == [4, 4, 0, 4]
    assert autograd.bitwise_or(2, j).tolist() == [10, 7, -1, 3]
    assert i.bitwise_xor(j).tolist() == [6, -6, -1, 6]
    assert autograd.bitwise_not(j).tolist() == [-11, -6, 0, -4] == j.bitwise_not().tolist()
    b = autograd.tensor([True, True, False, False])
    c = autograd.tensor([True, False, True, False])
    assert (b & c).tolist() == [True, False, False, False] and (b & c).dtype == autograd.bool
    assert (b | c).tolist() == [True, True, True, False]
    assert (b ^ c).tolist() == [False, True, True, False]
    assert (~b).tolist() == [False, False, True, True]
    assert (b & 1).dtype == autograd.int64 and (b ^ True).dtype == autograd.bool
    assert (b | j).dtype == autograd.int32 and (b | j).tolist() == [11, 5, -1, 3]
    # 0-d tensors do not promote dimensioned ones of their category (as PyTorch)
    assert (j & autograd.tensor(7)).dtype == autograd.int32
    # broadcasting and views
    m = autograd.tensor([[1, 2], [3, 4]])
    assert (m.t() & autograd.tensor([3, 1])).tolist() == [[1, 1], [2, 0]]
    assert (m[:, ::2] | 8).tolist() == [[9], [11]]


def test_bitwise_inplace_by_hand():
    i = autograd.tensor([12, -1, 0, 5])
    ref = i
    i &= 6
    i |= autograd.tensor([16, 0, 0, 0])
    i ^= 1
    assert i is ref and i.tolist() == [21, 7, 1, 5]
    j = autograd.tensor([1, 2, 3], dtype=autograd.int32)
    j |= autograd.tensor([4, 4, 4])                 # an int64 result written into int32
    assert j.dtype == autograd.int32 and j.tolist() == [5, 6, 7]
    assert j.bitwise_and_(3) is j and j.tolist() == [1, 2, 3]
    assert j.bitwise_not_() is j and j.tolist() == [-2, -3, -4]
    v = autograd.tensor([[1, 2], [3, 4]])
    row = v[1]
    row ^= 1
    assert v.tolist() == [[1, 2], [2, 5]]           # written through the view
    b = autograd.tensor([True, False])
    b ^= True
    assert b.tolist() == [False, True]
    with pytest.raises(RuntimeError, match="result type Long can't be cast to the desired "
                                           "output type Bool"):
        b &= 2
    with pytest.raises(RuntimeError, match="result type Float can't be cast"):
        j |= 1.5
    with pytest.raises(RuntimeError):
        j &= autograd.tensor([[1, 2, 3], [4, 5, 6]])  # result larger than j
    assert j.tolist() == [-2, -3, -4] and b.tolist() == [False, True]


def test_bitwise_of_floats_raise():
    f = autograd.tensor([1.5, 2.0])
    i = autograd.tensor([1, 2])
    for name, op, iop in BITWISE.values():
        for fn in (lambda: op(f, i), lambda: op(i, 1.5), lambda: op(1.5, i), lambda: op(f, f),
                   lambda: getattr(autograd, name)(i, f), lambda: getattr(f, name)(1)):
            with pytest.raises(NotImplementedError, match=f'"{name}_cpu" not implemented for '
                                                          f"'Float'"):
                fn()
        with pytest.raises(NotImplementedError, match="'Double'"):
            op(i, f.double())
        with pytest.raises(NotImplementedError):
            iop(f.clone(), 1)
    with pytest.raises(TypeError, match=r"~ \(operator.invert\) is only implemented on integer "
                                        "and Boolean-type tensors"):
        ~f
    for fn in (lambda: autograd.bitwise_not(f), lambda: f.bitwise_not(), lambda: f.bitwise_not_()):
        with pytest.raises(NotImplementedError, match="\"bitwise_not_cpu\" not implemented"):
            fn()
    assert f.tolist() == [1.5, 2.0]


def test_bitwise_results_never_require_grad():
    x = autograd.tensor([0.5, -1.0, 2.0], requires_grad=True)
    mask = (x > 0) & ~(x > 1) | (x < -0.5) ^ autograd.tensor([True, False, False])
    assert mask.tolist() == [True, True, False]
    assert not mask.requires_grad and mask.grad_fn is None
    i = autograd.tensor([1, 2, 3])
    assert not (i & 1).requires_grad and (~i).grad_fn is None
    with pytest.raises(NotImplementedError):
        x & 1                                         # a float operand, even with a history


def _torch_views(torch, base, kind):
    """(autograd tensor, torch tensor) views of the NumPy array base of one kind."""
    pairs = autograd.tensor(base), torch.tensor(base)
    if kind == "transposed":
        return tuple(t.transpose(0, -1) for t in pairs)
    if kind == "sliced":
        return tuple(t[::2] for t in pairs)
    return pairs


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("name", sorted(BITWISE))
def test_bitwise_against_torch(name, seed, device):
    """Functions, methods, operators (reflected too) and in-place forms against PyTorch: result
    dtype, values, and the exception type where PyTorch raises (float operands, casts)."""
    torch = pytest.importorskip("torch")
    fname, op, iop = BITWISE[name]
    rng = np.random.default_rng(seed)
    dtypes = ("bool", "int32", "int64", "float32")
    kinds = ("contiguous", "transposed", "sliced")

    def operand(shape):
        if rng.random() < 0.25:                       # a Python number
            return [True, 3, -7, 2.5][int(rng.integers(0, 4))], None
        dt = dtypes[int(rng.integers(0, len(dtypes)))]
        if dt == "bool":
            base = rng.random(shape) < 0.5
        else:
            base = rng.integers(-100, 100, shape).astype(dt)
        a, t = _torch_views(torch, base, kinds[int(rng.integers(0, 3))] if base.ndim else "")
        return a.to(device), t

    for _ in range(10):
        s1, s2 = broadcast_pair(int(rng.integers(1 << 30)))
        (a, ta), (b, tb) = operand(s1), operand(s2)
        ta = a if ta is None else ta
        tb = b if tb is None else tb
        if ta is a and tb is b:
            continue
        forms = [lambda lib, x, y: op(x, y), lambda lib, x, y: getattr(lib, fname)(x, y)]
        if isinstance(a, autograd.Tensor):
            forms.append(lambda lib, x, y: getattr(x, fname)(y))
        for form in forms:
            try:
                ref = form(torch, ta, tb)
            except (RuntimeError, TypeError) as e:
                with pytest.raises(type(e)):
                    form(autograd, a, b)
                continue
            out = form(autograd, a, b)
            assert out.dtype.name == str(ref.dtype)[6:], (name, a, b)
            assert out.device == device and not out.requires_grad
            np.testing.assert_array_equal(out.numpy(), ref.numpy())
        if isinstance(a, autograd.Tensor):            # in place, on a copy
            a2, ta2 = a.clone(), ta.clone()
            try:
                iop(ta2, tb)
            except (RuntimeError, TypeError) as e:
                with pytest.raises(type(e)):
                    iop(a2, b)
                np.testing.assert_array_equal(a2.numpy(), a.numpy())
                continue
            r = iop(a2, b)
            assert r is a2 and a2.dtype == a.dtype
            np.testing.assert_array_equal(a2.numpy(), ta2.numpy())


@pytest.mark.parametrize("dtype", ["bool", "int32", "int64", "float32", "float64"])
def test_bitwise_not_against_torch(dtype, device):
    torch = pytest.importorskip("torch")
    base = np.random.default_rng(1).integers(-50, 50, (3, 4)).astype(dtype)
    a, t = autograd.tensor(base).to(device).t(), torch.tensor(base).t()
    for form in (lambda lib, x: ~x, lambda lib, x: x.bitwise_not(),
                 lambda lib, x: lib.bitwise_not(x)):
        try:
            ref = form(torch, t)
        except (RuntimeError, TypeError) as e:
            with pytest.raises(type(e)) as got:
                form(autograd, a)
            assert str(got.value).replace("cuda", "cpu") == str(e)
            continue
        out = form(autograd, a)
        assert out.dtype.name == str(ref.dtype)[6:] and not out.requires_grad
        np.testing.assert_array_equal(out.numpy(), ref.numpy())
