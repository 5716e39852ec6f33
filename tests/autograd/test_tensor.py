"""autograd.Tensor: attributes (data, grad, requires_grad, is_leaf, grad_fn, shape, dtype,
device, ndim) and methods (detach, requires_grad_, to, cpu, numpy, item, tolist, numel, size),
conversions and repr."""

import copy
import pickle

import numpy as np
import pytest

import autograd
import carray


def test_attributes_of_a_leaf():
    x = autograd.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], requires_grad=True)
    assert isinstance(x.array, carray.Array)
    assert x.grad is None and x.requires_grad and x.is_leaf and x.grad_fn is None
    assert x.shape == (2, 3) and x.ndim == 2 and x.dim() == 2
    assert x.dtype == autograd.float32 and x.device == "cpu"
    assert x.size() == (2, 3) and x.size(0) == 2 and x.size(-1) == 3
    assert x.numel() == 6 and len(x) == 2
    assert x.is_floating_point()
    with pytest.raises(IndexError):
        x.size(2)


def test_non_leaf_attributes():
    x = autograd.ones(2, requires_grad=True)
    y = x * 2
    assert not y.is_leaf and y.requires_grad
    assert y.grad_fn is not None and y.grad_fn.name() == "MulBackward0"
    assert y.grad is None
    z = autograd.ones(2) * 2  # nothing requires grad: a leaf without grad_fn
    assert z.is_leaf and not z.requires_grad and z.grad_fn is None


def test_next_functions_link_to_accumulate_grad():
    x = autograd.ones(2, requires_grad=True)
    y = (x * 2).sum()
    fn, nr = y.grad_fn.next_functions[0]  # (non-tensor arguments get (None, 0) edges)
    assert fn.name() == "MulBackward0"
    acc = fn.next_functions[0][0]
    assert acc.name() == "AccumulateGrad" and acc.variable is x
    assert fn.next_functions[1][0] is None


def test_requires_grad_only_floats():
    for dt in (autograd.int32, autograd.int64, autograd.bool):
        t = autograd.zeros(2, dtype=dt)
        with pytest.raises(RuntimeError, match="floating point"):
            t.requires_grad_()
        with pytest.raises(RuntimeError, match="floating point"):
            t.requires_grad = True
        t.requires_grad_(False)  # turning it off is fine
    x = autograd.zeros(2, dtype=autograd.float64)
    assert x.requires_grad_() is x and x.requires_grad
    x.requires_grad = False
    assert not x.requires_grad


def test_requires_grad_of_non_leaf_cannot_be_turned_off():
    y = autograd.ones(2, requires_grad=True) * 2
    with pytest.raises(RuntimeError, match="leaf"):
        y.requires_grad_(False)
    y.requires_grad_(True)  # no-op


def test_integer_results_do_not_require_grad():
    x = autograd.tensor([1.5, 2.5], requires_grad=True)
    assert not x.argmax().requires_grad
    assert not (x > 1).requires_grad
    assert not x.long().requires_grad
    assert x.long().tolist() == [1, 2]


def test_detach():
    x = autograd.tensor([1.0, 2.0], requires_grad=True)
    y = x * 3
    d = y.detach()
    assert not d.requires_grad and d.is_leaf and d.grad_fn is None
    assert np.shares_memory(np.asarray(d.array), np.asarray(y.array))
    d.array[0] = 10.0  # shares memory (and the version counter)
    assert y.tolist()[0] == 10.0
    assert autograd.detach(x).tolist() == [1.0, 2.0]


def test_detach_shares_version_counter():
    x = autograd.tensor([1.0, 2.0], requires_grad=True)
    y = x.exp()
    d = y.detach()
    d.add_(1)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.sum().backward()


def test_item_tolist_numpy():
    x = autograd.tensor([[1.5]])
    assert x.item() == 1.5 and isinstance(x.item(), float)
    assert autograd.tensor(3).item() == 3 and isinstance(autograd.tensor(3).item(), int)
    assert autograd.tensor(True).item() is True
    with pytest.raises(RuntimeError):
        autograd.ones(2).item()
    assert autograd.tensor([[1, 2], [3, 4]]).tolist() == [[1, 2], [3, 4]]
    assert autograd.tensor(2.0).tolist() == 2.0
    a = autograd.tensor([1.0, 2.0])
    n = a.numpy()
    assert isinstance(n, np.ndarray) and n.dtype == np.float32
    n[0] = 7  # shares memory, as torch
    assert a.tolist() == [7.0, 2.0]
    r = autograd.ones(2, requires_grad=True)
    with pytest.raises(RuntimeError, match="detach"):
        r.numpy()
    assert r.detach().numpy().tolist() == [1.0, 1.0]
    assert float(autograd.tensor(2.5)) == 2.5 and int(autograd.tensor(3)) == 3
    assert bool(autograd.tensor([1.0])) is True
    with pytest.raises(RuntimeError):
        bool(autograd.ones(2))


def test_to_and_cpu():
    x = autograd.tensor([1.5, 2.5], requires_grad=True)
    assert x.to("cpu") is x and x.cpu() is x and x.to(autograd.float32) is x
    y = x.to(autograd.float64)
    assert y.dtype == autograd.float64 and y.requires_grad and not y.is_leaf
    y.sum().backward()
    assert x.grad.dtype == autograd.float32 and x.grad.tolist() == [1.0, 1.0]
    z = x.to(dtype=autograd.int64)
    assert z.dtype == autograd.int64 and not z.requires_grad and z.tolist() == [1, 2]
    w = x.to("cpu", autograd.float64)
    assert w.dtype == autograd.float64
    assert x.to(autograd.zeros(1, dtype=autograd.float64)).dtype == autograd.float64
    assert x.double().dtype == autograd.float64 and x.double().float().dtype == autograd.float32


def test_iteration_and_indexing_scalars():
    x = autograd.tensor([[1.0, 2.0], [3.0, 4.0]])
    rows = list(x)
    assert len(rows) == 2 and rows[1].tolist() == [3.0, 4.0]
    with pytest.raises(TypeError):
        len(autograd.tensor(1.0))


def test_repr():
    assert repr(autograd.tensor([1.0, 2.0])) == "tensor([1., 2.])"
    assert "requires_grad=True" in repr(autograd.ones(2, requires_grad=True))
    assert "grad_fn=<MulBackward0>" in repr(autograd.ones(2, requires_grad=True) * 2)
    assert "dtype=autograd.float64" in repr(autograd.ones(2, dtype=autograd.float64))
    assert repr(autograd.tensor([1, 2])) == "tensor([1, 2])"


def test_pickle_and_deepcopy_of_leaves():
    x = autograd.tensor([1.0, 2.0], requires_grad=True)
    y = pickle.loads(pickle.dumps(x))
    assert y.tolist() == [1.0, 2.0] and y.requires_grad and y.is_leaf
    x.grad = autograd.tensor([0.5, 0.5])
    z = copy.deepcopy(x)
    assert z.grad.tolist() == [0.5, 0.5] and z.requires_grad
    assert not np.shares_memory(np.asarray(z.array), np.asarray(x.array))
    with pytest.raises(RuntimeError):
        copy.deepcopy(x * 2)


def test_stride_and_contiguity():
    x = autograd.zeros(2, 3)
    assert x.stride() == (3, 1) and x.is_contiguous()
    assert x.t().stride() == (1, 3) and not x.t().is_contiguous()


def test_grad_attribute_can_be_set_and_cleared():
    x = autograd.ones(2, requires_grad=True)
    (x * 2).sum().backward()
    assert x.grad.tolist() == [2.0, 2.0]
    x.grad = None
    (x * 3).sum().backward()
    assert x.grad.tolist() == [3.0, 3.0]
    assert not x.grad.requires_grad


def test_is_tensor_and_numel_functions():
    x = autograd.zeros(2, 3)
    assert autograd.is_tensor(x) and not autograd.is_tensor([1])
    assert autograd.numel(x) == 6


def test_tensor_constructor():
    t = autograd.Tensor([1.0, 2.0])
    assert t.dtype == autograd.float32 and t.tolist() == [1.0, 2.0]
    a = np.zeros(2)
    u = autograd.Tensor(a)
    a[0] = 1
    assert u.tolist() == [0.0, 0.0]


def _devices():
    out = ["cpu"]
    try:
        carray.zeros(1, device="gpu")
        out.append("gpu")
    except Exception:  # no OpenCL device here
        pass
    return out


@pytest.mark.parametrize("device", _devices())
def test_ops_and_backward_on_each_device(device):
    # the same computation (views, in-place, indexing, reductions, matmul) on every device
    # gives the CPU's values and gradients, and gradients stay on the tensor's device
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((3, 4)), rng.standard_normal(4)

    def run(dev):
        x = autograd.tensor(a, device=dev, requires_grad=True)
        w = autograd.tensor(b, device=dev, requires_grad=True)
        y = (x * w).exp().sum(1) + (x @ w).tanh() + x.max(1).values + x.softmax(0)[1:].sum(0)[:3]
        h = x * 1
        h[0] = w * 2
        h.t()[1].mul_(3.0)
        total = y.sum() + x.var(1).sum() + h.sigmoid().sum() + autograd.cat([x, x.abs()]).sum() \
            + x[[0, 2]].logsumexp(1).sum() + autograd.where(x > 0, x, 0.0).sum()
        total.backward()
        assert x.grad.device == dev and w.grad.device == dev and total.device == dev
        return total.item(), x.grad.to("cpu").tolist(), w.grad.to("cpu").tolist()

    ours, cpu = run(device), run("cpu")
    np.testing.assert_allclose(ours[0], cpu[0], rtol=1e-10)
    np.testing.assert_allclose(ours[1], cpu[1], rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(ours[2], cpu[2], rtol=1e-10, atol=1e-12)
    t = autograd.zeros(2, 3, device=device, requires_grad=True)
    assert t.device == device and autograd.ones_like(t).device == device
    assert autograd.randn(2, device=device).device == device


def test_scalar_conversion_errors_as_torch():
    """float()/int() of several elements: ValueError; bool() of none: RuntimeError 'no values';
    an index from a bool tensor works, as PyTorch."""
    for f in (float, int):
        for t in (autograd.tensor([1.0, 2.0]), autograd.tensor([])):
            with pytest.raises(ValueError, match="only one element tensors"):
                f(t)
    assert int(autograd.tensor([[2.7]])) == 2 and float(autograd.tensor([3])) == 3.0
    with pytest.raises(RuntimeError, match="no values"):
        bool(autograd.tensor([]))
    assert [10, 20][autograd.tensor(True)] == 20


def test_numpy_array_copies_and_asarray_shares():
    """numpy.array(t) is a copy (NumPy's copy=True), numpy.asarray(t) shares a CPU tensor."""
    t = autograd.ones(2)
    np.array(t)[0] = 5
    assert t.tolist() == [1.0, 1.0]
    np.asarray(t)[0] = 5
    assert t.tolist() == [5.0, 1.0]
    assert np.asarray(t, dtype=np.float64).dtype == np.float64


# -- .data (PyTorch's detached view) and .array (the carray.Array) --------------------------------

def test_data_is_a_detached_tensor_sharing_memory():
    p = autograd.tensor([1.0, 2.0, 3.0], requires_grad=True)
    (p * p).sum().backward()
    d = p.data
    assert isinstance(d, autograd.Tensor) and not d.requires_grad and d.grad_fn is None
    assert isinstance(p.array, carray.Array) and d.array is p.array
    version = p._version
    p.data.add_(p.grad, alpha=-0.5)            # the classic hand-written SGD step
    assert p.tolist() == [0.0, 0.0, 0.0]       # 1 - 0.5 * 2 * 1, ...
    assert p._version == version and p.requires_grad and p.is_leaf


def test_data_setter_replaces_the_values():
    t = autograd.zeros(2, 3)
    t.data = autograd.ones(4)
    assert t.shape == (4,) and t.tolist() == [1.0] * 4
    with pytest.raises(TypeError, match="has to be a tensor"):
        t.data = [1.0, 2.0]


def test_data_matches_torch():
    torch = pytest.importorskip("torch")
    for lib in (torch, autograd):
        w = lib.tensor([0.5, -1.0], requires_grad=True)
        (w * lib.tensor([2.0, 3.0])).sum().backward()
        w.data.sub_(0.1 * w.grad)
        if lib is torch:
            expected = w.detach().tolist()
    assert w.tolist() == pytest.approx(expected)
