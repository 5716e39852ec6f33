"""The engine's shortcuts for small graphs give what the general path gives: roots that depend on
each other or repeat, gradients summed in a buffer (carray's add when not recording, the Tensor
op when recording), Mul's backward (carray's multiply unless recording), a leaf that keeps the
engine's first gradient without a copy, and the errors of loss.backward()."""

import numpy as np
import pytest

import autograd
from autograd.tensor import Tensor

F64 = autograd.float64


def leaf(values, dtype=F64):
    return autograd.tensor(values, dtype=dtype, requires_grad=True)


def test_root_that_another_root_depends_on_waits_for_its_gradient():
    # z depends on y: y's node runs once, with both gradients summed
    x = leaf([1.0, 2.0])
    y = x * 3
    z = y * y
    autograd.backward([z, y], [autograd.ones(2, dtype=F64), autograd.ones(2, dtype=F64)])
    xv = np.array([1.0, 2.0])
    np.testing.assert_allclose(x.grad.tolist(), (2 * 3 * xv + 1) * 3)


def test_same_root_twice_adds_both_gradients():
    x = leaf([1.0, -2.0])
    s = (x * x).sum()
    autograd.backward([s, s])
    assert x.grad.tolist() == [4.0, -8.0]


def test_w6_graph_against_hand_derivative_over_iterations():
    # ((x*y + x).relu() * y).sum(): x and y each get two gradients summed in a buffer, and .grad
    # accumulates over the iterations in place
    xv = np.array([0.5, -1.0, 2.0, -0.25, 1.5])
    yv = np.array([1.5, 2.0, -0.5, 3.0, -1.0])
    x, y = leaf(xv), leaf(yv)
    for _ in range(3):
        ((x * y + x).relu() * y).sum().backward()
    u = xv * yv + xv
    on = u > 0
    np.testing.assert_allclose(x.grad.tolist(), 3 * np.where(on, yv * (yv + 1), 0.0))
    np.testing.assert_allclose(y.grad.tolist(), 3 * np.where(on, u + yv * xv, 0.0))


def test_w6_graph_against_torch():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(0)
    xv, yv = rng.standard_normal(16).astype(np.float32), rng.standard_normal(16).astype(np.float32)
    x, y = autograd.tensor(xv, requires_grad=True), autograd.tensor(yv, requires_grad=True)
    tx, ty = torch.tensor(xv, requires_grad=True), torch.tensor(yv, requires_grad=True)
    for _ in range(2):
        ((x * y + x).relu() * y).sum().backward()
        ((tx * ty + tx).relu() * ty).sum().backward()
    assert x.grad.dtype == autograd.float32
    np.testing.assert_allclose(x.grad.tolist(), tx.grad.tolist(), rtol=1e-6)
    np.testing.assert_allclose(y.grad.tolist(), ty.grad.tolist(), rtol=1e-6)


def test_first_gradient_is_kept_without_a_copy(monkeypatch):
    # nothing but the engine holds the summed gradients: the leaves keep them as their .grad
    copies = []
    real = Tensor._clone_data

    def counting(self):
        copies.append(1)
        return real(self)
    monkeypatch.setattr(Tensor, "_clone_data", counting)
    x, y = leaf([1.0, -2.0, 3.0]), leaf([0.5, 0.5, -1.0])
    ((x * y + x).relu() * y).sum().backward()
    (x * 2).sum().backward()
    assert copies == []
    # a gradient that does not own its memory (sum's broadcast view of the 0-d 1) is copied
    x.grad = None
    x.sum().backward()
    assert len(copies) == 1 and x.grad.tolist() == [1.0, 1.0, 1.0]
    assert x.grad.is_contiguous()


def test_create_graph_records_mul_and_summed_gradients():
    # with create_graph the buffer sum and Mul's products are recorded: second derivatives
    x = leaf([1.0, 2.0])
    (g,) = autograd.grad((x * x * x + x * x).sum(), [x], create_graph=True)
    assert g.grad_fn is not None
    np.testing.assert_allclose(g.tolist(), [3 * 1.0 + 2 * 1.0, 3 * 4.0 + 2 * 2.0])
    (h,) = autograd.grad(g.sum(), [x])
    np.testing.assert_allclose(h.tolist(), [6 * 1.0 + 2, 6 * 2.0 + 2])


def test_mul_backward_with_a_number_and_mixed_dtypes():
    x = leaf([1.0, 2.0])
    w = leaf([3.0, 4.0], dtype=autograd.float32)
    ((x * 2.5) * w).sum().backward()
    assert x.grad.dtype == F64 and w.grad.dtype == autograd.float32
    assert x.grad.tolist() == [7.5, 10.0] and w.grad.tolist() == [2.5, 5.0]


def test_loss_backward_errors():
    with pytest.raises(RuntimeError, match="element 0 of tensors does not require grad"):
        autograd.ones(()).backward()
    with pytest.raises(RuntimeError, match="grad can be implicitly created only for scalar"):
        (leaf([1.0, 2.0]) * 2).backward()
    s = (leaf([1.0]) * leaf([2.0])).sum()
    s.backward()
    with pytest.raises(RuntimeError, match="Trying to backward through the graph a second time"):
        s.backward()
