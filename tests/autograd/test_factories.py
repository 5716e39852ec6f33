"""Factories: tensor, zeros, ones, full, arange, rand, randn, *_like, manual_seed, with dtype=,
device= and requires_grad= (PyTorch's defaults: float32 for floats, int64 for ints)."""

import numpy as np
import pytest

import autograd

F32, F64, I32, I64, BOOL = (autograd.float32, autograd.float64, autograd.int32, autograd.int64,
                            autograd.bool)


def test_dtype_objects():
    assert str(F32.name) == "float32" and str(F64.name) == "float64"
    assert I32.name == "int32" and I64.name == "int64" and BOOL.name == "bool"
    assert autograd.float is F32 and autograd.double is F64 and autograd.long is I64


@pytest.mark.parametrize("data,dtype", [
    (3.5, F32), ([1.0, 2.0], F32), ([1, 2], I64), (7, I64), (True, BOOL), ([[True], [False]], BOOL),
    ([1, 2.5], F32), (np.array([1.0, 2.0]), F64), (np.array([1, 2], dtype=np.int32), I32),
    (np.float32(2.0), F32), ([np.float64(1.0), 2.5], F64), ([np.ones(2), np.zeros(2)], F64),
    ([np.float32(1.0), 2.5], F32),
])
def test_tensor_default_dtypes(data, dtype):
    t = autograd.tensor(data)
    assert t.dtype == dtype
    np.testing.assert_array_equal(np.asarray(t.array), np.asarray(data))
    assert t.device == "cpu" and not t.requires_grad and t.is_leaf


def test_tensor_copies():
    a = np.zeros(3)
    t = autograd.tensor(a)
    a[0] = 5
    assert t.tolist() == [0.0, 0.0, 0.0]
    u = autograd.tensor(t)
    t.array[1] = 3
    assert u.tolist() == [0.0, 0.0, 0.0]
    n = autograd.from_numpy(a)  # from_numpy shares
    a[2] = 4
    assert n.tolist() == [5.0, 0.0, 4.0]


@pytest.mark.parametrize("dtype", [F32, F64, I32, I64, BOOL])
def test_tensor_dtype_argument(dtype):
    t = autograd.tensor([[0, 1, 2]], dtype=dtype, device="cpu")
    assert t.dtype == dtype and t.shape == (1, 3)
    assert t.tolist() == [[dtype.name != "bool" and v or bool(v) for v in (0, 1, 2)]] or \
        dtype == BOOL and t.tolist() == [[False, True, True]]


@pytest.mark.parametrize("factory", ["zeros", "ones"])
def test_zeros_ones(factory):
    ref = getattr(np, factory)
    fn = getattr(autograd, factory)
    for args in [(2, 3), ((2, 3),), ([4],), ()]:
        t = fn(*args)
        shape = args[0] if args and isinstance(args[0], (tuple, list)) else args
        assert t.dtype == F32 and t.shape == tuple(shape)
        np.testing.assert_array_equal(np.asarray(t.array), ref(shape))
    for dtype in (F64, I32, I64, BOOL):
        t = fn(2, dtype=dtype)
        assert t.dtype == dtype
    t = fn(2, 2, dtype=F64, requires_grad=True, device="cpu")
    assert t.requires_grad and t.is_leaf and t.grad is None
    with pytest.raises(RuntimeError):
        fn(2, dtype=I64, requires_grad=True)
    with pytest.raises(RuntimeError):
        fn(-1)


def test_full():
    assert autograd.full((2, 2), 1.5).dtype == F32
    assert autograd.full((2,), 3).dtype == I64
    assert autograd.full((2,), True).dtype == BOOL
    t = autograd.full((2, 3), 2.0, dtype=F64, requires_grad=True)
    assert t.tolist() == [[2.0] * 3] * 2 and t.requires_grad
    with pytest.raises(RuntimeError):
        autograd.full((2,), 3, requires_grad=True)


def test_arange():
    assert autograd.arange(5).tolist() == [0, 1, 2, 3, 4]
    assert autograd.arange(5).dtype == I64
    assert autograd.arange(1, 4).tolist() == [1, 2, 3]
    t = autograd.arange(0, 1, 0.25)
    assert t.dtype == F32 and t.tolist() == [0.0, 0.25, 0.5, 0.75]
    assert autograd.arange(5.0).dtype == F32
    assert autograd.arange(3, dtype=F64).tolist() == [0.0, 1.0, 2.0]
    assert autograd.arange(10, 0, -3).tolist() == [10, 7, 4, 1]
    t = autograd.arange(3.0, requires_grad=True)
    assert t.requires_grad
    with pytest.raises(RuntimeError):
        autograd.arange(0, 3, 0)
    with pytest.raises(RuntimeError):
        autograd.arange(3, requires_grad=True)


def test_arange_matches_torch():
    torch = pytest.importorskip("torch")
    for args in [(0, 1, 0.1), (-2.5, 3, 0.7), (7,), (1, 10, 3), (0.0, 1.0, 1 / 3)]:
        ours = autograd.arange(*args)
        theirs = torch.arange(*args)
        assert ours.shape == tuple(theirs.shape), args
        np.testing.assert_allclose(ours.tolist(), theirs.tolist(), rtol=1e-6)


def test_rand_randn_seeded():
    autograd.manual_seed(123)
    a = autograd.rand(3, 4)
    b = autograd.randn(50)
    autograd.manual_seed(123)
    assert autograd.rand(3, 4).tolist() == a.tolist()
    assert autograd.randn(50).tolist() == b.tolist()
    assert a.dtype == F32 and b.dtype == F32
    va = np.asarray(a.array)
    assert ((va >= 0) & (va < 1)).all()
    c = autograd.rand((2, 2), dtype=F64, requires_grad=True)
    assert c.dtype == F64 and c.requires_grad and c.is_leaf
    d = autograd.randn(2, 3, dtype=F64)
    assert d.shape == (2, 3)
    with pytest.raises(RuntimeError):
        autograd.rand(2, dtype=I64)
    with pytest.raises(RuntimeError):
        autograd.randn(2, dtype=I64)


def test_randn_statistics():
    autograd.manual_seed(0)
    x = np.asarray(autograd.randn(20000, dtype=F64).array)
    assert abs(x.mean()) < 0.03 and abs(x.std() - 1) < 0.03
    u = np.asarray(autograd.rand(20000, dtype=F64).array)
    assert abs(u.mean() - 0.5) < 0.02


def test_generator_argument():
    g = autograd.Generator().manual_seed(5)
    a = autograd.randn(4, generator=g)
    g.manual_seed(5)
    assert autograd.randn(4, generator=g).tolist() == a.tolist()


@pytest.mark.parametrize("name", ["zeros_like", "ones_like", "rand_like", "randn_like",
                                  "empty_like"])
def test_like_factories(name):
    fn = getattr(autograd, name)
    src = autograd.ones(2, 3, dtype=F64, requires_grad=True)
    t = fn(src)
    assert t.shape == (2, 3) and t.dtype == F64 and not t.requires_grad and t.device == "cpu"
    t = fn(src, dtype=F32, requires_grad=True)
    assert t.dtype == F32 and t.requires_grad and t.is_leaf
    if name == "zeros_like":
        assert t.tolist() == [[0.0] * 3] * 2
        assert fn(autograd.tensor([1, 2])).dtype == I64
    if name == "ones_like":
        assert t.tolist() == [[1.0] * 3] * 2


def test_full_like():
    t = autograd.full_like(autograd.zeros(2, dtype=F64), 3.0)
    assert t.dtype == F64 and t.tolist() == [3.0, 3.0]


def test_eye_linspace_empty():
    assert autograd.eye(2).tolist() == [[1.0, 0.0], [0.0, 1.0]]
    np.testing.assert_allclose(autograd.linspace(0, 1, 5).tolist(), [0, 0.25, 0.5, 0.75, 1.0])
    assert autograd.empty(2, 3).shape == (2, 3)


def test_requires_grad_only_for_floats():
    for dtype in (I32, I64, BOOL):
        with pytest.raises(RuntimeError, match="floating point"):
            autograd.tensor([1, 0], dtype=dtype, requires_grad=True)
    for dtype in (F32, F64):
        assert autograd.tensor([1, 0], dtype=dtype, requires_grad=True).requires_grad


def test_device_argument():
    t = autograd.zeros(2, device="cpu")
    assert t.device == "cpu"
    t = autograd.tensor([1.0], device="cpu")
    assert t.to("cpu") is t and t.cpu() is t


def test_factory_errors_and_dtypes_as_torch():
    assert autograd.randint(0, 5, (3,), dtype=autograd.float32).dtype == autograd.float32
    with pytest.raises(RuntimeError):
        autograd.randperm(-1)
    with pytest.raises(RuntimeError, match="non-negative"):
        autograd.linspace(0, 1, -1)
    with pytest.raises(RuntimeError):
        autograd.eye(-1)
    assert autograd.arange(1, 2.5, dtype=autograd.int64).tolist() == [1]  # bounds truncated
    with pytest.raises(ValueError, match="nonzero"):
        autograd.arange(0, 1, 0.5, dtype=autograd.int64)


def _raises_like(ours, theirs):
    """ours() raises an exception of the type torch's theirs() raises (skipped without torch)."""
    try:
        theirs()
    except Exception as e:
        with pytest.raises(type(e)):
            ours()
    else:
        ours()


@pytest.mark.parametrize("call", [
    lambda m: m.rand(2, dtype=m.int64), lambda m: m.randn(2, dtype=m.bool),
    lambda m: m.rand_like(m.ones(2, dtype=m.int32)), lambda m: m.randperm(5.0),
    lambda m: m.randint(0, 10, 3), lambda m: m.randint(2.5, (3,)),
    lambda m: m.randint(0, 2**40, (3,), dtype=m.int32),
    lambda m: m.randint(0, 3, (2,), dtype=m.bool),
    lambda m: m.randint_like(m.ones(2), 5, 5), lambda m: m.Generator().manual_seed(1.5),
    lambda m: m.Generator().manual_seed(True), lambda m: m.Generator().manual_seed(2**64),
    lambda m: m.manual_seed("a"),
])
def test_random_errors_as_torch(call):
    torch = pytest.importorskip("torch")
    _raises_like(lambda: call(autograd), lambda: call(torch))


def test_random_argument_forms():
    """size= as a keyword, randint's keywords, randint_like, and generator= in the *_like ones."""
    assert autograd.rand(size=(2, 3)).shape == (2, 3) and autograd.randn(size=[4]).shape == (4,)
    assert autograd.randint(high=10, size=(3,)).shape == (3,)
    assert autograd.randint(low=5, high=6, size=(2,)).tolist() == [5, 5]
    g = autograd.Generator().manual_seed(7)
    a = autograd.rand_like(autograd.ones(3), generator=g)
    assert autograd.rand_like(autograd.ones(3), generator=g.manual_seed(7)).tolist() == a.tolist()
    assert autograd.randn_like(autograd.ones(3), generator=g).shape == (3,)
    src = autograd.ones(2, 3, dtype=I32)
    for t in (autograd.randint_like(src, 10), autograd.randint_like(src, high=10),
              autograd.randint_like(src, 3, 10)):
        assert t.shape == (2, 3) and t.dtype == I32
        assert all(0 <= v < 10 for v in t.flatten().tolist())
    t = autograd.randint_like(autograd.ones(4), 5, 7, requires_grad=True)
    assert t.dtype == F32 and t.requires_grad and set(t.tolist()) <= {5.0, 6.0}


def test_generator_seeds_and_state_as_torch():
    """Negative seeds wrap modulo 2**64; get_state/set_state (and the global get/set_rng_state)
    replay the stream."""
    assert autograd.Generator().manual_seed(-1).initial_seed() == 2**64 - 1
    assert autograd.manual_seed(3.9).initial_seed() == 3        # int() first, as torch
    g = autograd.Generator().manual_seed(11)
    autograd.rand(5, generator=g)
    state = g.get_state()
    a = autograd.rand(6, generator=g)
    assert autograd.rand(6, generator=g.set_state(state)).tolist() == a.tolist()
    with pytest.raises(TypeError):
        g.set_state(autograd.zeros(3))
    autograd.manual_seed(0)
    s = autograd.get_rng_state()
    b = autograd.randn(4)
    autograd.set_rng_state(s)
    assert autograd.randn(4).tolist() == b.tolist()
    assert autograd.default_generator.initial_seed() == 0


def test_from_numpy_takes_only_ndarrays():
    for bad in ([1, 2], np.float64(2.0), np.array(["a"])):
        with pytest.raises(TypeError):
            autograd.from_numpy(bad)
