"""In-place ops (add_ sub_ mul_ div_ zero_ fill_ copy_ clamp_, += -= *= /=, setitem): values,
gradients through non-leaf tensors and through views of them (history rebased, CopySlices), the
version counter shared by views, and PyTorch's errors."""

import numpy as np
import pytest

import autograd

from _check import check_op

F64 = autograd.float64
MODIFIED = "modified by an inplace operation"

# name -> (in-place op on a non-leaf y with a second tensor w, NumPy reference)
OPS = {
    "add_": (lambda y, w: y.add_(w), lambda y, w: y + w),
    "add_alpha": (lambda y, w: y.add_(w, alpha=2.0), lambda y, w: y + 2 * w),
    "sub_": (lambda y, w: y.sub_(w), lambda y, w: y - w),
    "mul_": (lambda y, w: y.mul_(w), lambda y, w: y * w),
    "div_": (lambda y, w: y.div_(w + 3.0), lambda y, w: y / (w + 3.0)),
    "iadd": (lambda y, w: _iop(y, w, "+"), lambda y, w: y + w),
    "isub": (lambda y, w: _iop(y, w, "-"), lambda y, w: y - w),
    "imul": (lambda y, w: _iop(y, w, "*"), lambda y, w: y * w),
    "idiv": (lambda y, w: _iop(y, w + 3.0, "/"), lambda y, w: y / (w + 3.0)),
    "scalar_ops": (lambda y, w: y.add_(1.5).mul_(2.0).sub_(0.5).div_(4.0),
                   lambda y, w: ((y + 1.5) * 2 - 0.5) / 4 + 0 * w),
    "zero_": (lambda y, w: y.zero_(), lambda y, w: 0 * y),
    "fill_": (lambda y, w: y.fill_(2.5), lambda y, w: 0 * y + 2.5),
    "fill_tensor": (lambda y, w: y.fill_(w.sum()), lambda y, w: 0 * y + w.sum()),
    "copy_": (lambda y, w: y.copy_(w), lambda y, w: np.broadcast_to(w, y.shape) + 0 * y),
    "clamp_": (lambda y, w: y.clamp_(-0.5, 0.5), lambda y, w: np.clip(y, -0.5, 0.5)),
    "clamp_min": (lambda y, w: y.clamp_(min=0.1), lambda y, w: np.maximum(y, 0.1)),
    "then_math": (lambda y, w: y.mul_(w).exp(), lambda y, w: np.exp(y * w)),
}


def _iop(y, w, op):
    before = y
    if op == "+":
        y += w
    elif op == "-":
        y -= w
    elif op == "*":
        y *= w
    else:
        y /= w
    assert y is before
    return y


def _values(seed):
    rng = np.random.default_rng(seed)
    x = rng.uniform(0.1, 1.0, (3, 4)) * rng.choice([-1, 1], (3, 4))
    x[np.abs(np.abs(x * 1.5) - 0.5) < 0.03] += 0.1  # keep away from the clamp bounds
    w = rng.standard_normal((4,))
    return x, w


@pytest.mark.parametrize("name", sorted(OPS))
def test_inplace_on_non_leaf(name):
    op, ref = OPS[name]
    x, w = _values(0)

    def fn(x, w):
        y = x * 1.5
        r = op(y, w)
        assert r is y or name == "then_math"
        return r * 1.0

    check_op(fn, lambda x, w: ref(x * 1.5, w), x, w)


@pytest.mark.parametrize("name", sorted(OPS))
def test_inplace_on_view_of_non_leaf(name):
    if name == "then_math":
        return  # (the exp is not written back)
    op, ref = OPS[name]
    x, w = _values(1)

    def fn(x, w):
        base = x * 1.5
        view = base[1:, 1:]  # a view of a non-leaf
        op(view, w[1:])
        return base * 1.0

    def reference(x, w):
        base = x * 1.5
        base[1:, 1:] = ref(base[1:, 1:], w[1:])
        return base

    check_op(fn, reference, x, w)


def test_inplace_on_chain_of_views():
    def fn(x, w):
        base = x.exp()
        base = base * 1.0  # exp saved its output: work on a copy
        v = base.t()[1:3].unsqueeze(0)[0]  # transposed, sliced, unsqueezed, indexed
        v.mul_(w[:3].unsqueeze(0).t()[1:3])
        return base.sin()

    def ref(x, w):
        base = np.exp(x)
        base.T[1:3] *= w[:3, None][1:3]
        return np.sin(base)

    check_op(fn, ref, (3, 4), (4,))


def test_view_sees_base_modification_and_reads_right_gradient():
    x = autograd.tensor([1.0, 2.0, 3.0, 4.0], dtype=F64, requires_grad=True)
    base = x * 2
    view = base[:2]
    base.mul_(3)  # modifies the view's memory too
    assert view.tolist() == [6.0, 12.0]
    (view * view).sum().backward()
    # d/dx of (6x)^2 over the first two elements
    assert x.grad.tolist() == [72.0, 144.0, 0.0, 0.0]


def test_inplace_result_gradient_against_torch():
    torch = pytest.importorskip("torch")
    x0, w0 = _values(3)

    def f(lib, x, w):
        y = x * 2
        y[0].mul_(w)
        y[:, 1:3] += w[:2]
        z = y.t()
        z[0].clamp_(-1.0, 1.0)
        y.sub_(w.sum()).div_(3.0)
        y[y > 0.2] = 0.0
        return (y.exp() * lib.arange(12.0, dtype=y.dtype).reshape(3, 4)).sum()

    x, w = (autograd.tensor(v, requires_grad=True) for v in (x0, w0))
    tx, tw = (torch.tensor(v, requires_grad=True) for v in (x0, w0))
    out, tout = f(autograd, x, w), f(torch, tx, tw)
    out.backward()
    tout.backward()
    np.testing.assert_allclose(out.item(), tout.item(), rtol=1e-12)
    np.testing.assert_allclose(np.asarray(x.grad.array), tx.grad.numpy(), rtol=1e-10)
    np.testing.assert_allclose(np.asarray(w.grad.array), tw.grad.numpy(), rtol=1e-10)


# ---------------------------------------------------------------------------------------------
# version counter
# ---------------------------------------------------------------------------------------------

def test_version_counter_bumps_and_is_shared_by_views():
    t = autograd.zeros(2, 3)
    v = t[0]
    d = t.detach()
    assert t._version == v._version == 0
    v.add_(1)
    assert t._version == v._version == d._version == 1
    t[1] = 2.0
    assert v._version == 2
    t.zero_()
    assert d._version == 3
    t += 1
    t *= 2
    assert t._version == 5


def test_modifying_saved_input_raises_at_backward():
    x = autograd.tensor([1.0, 2.0], requires_grad=True)
    h = x * 1
    y = h * h  # saves h
    h.add_(1)
    with pytest.raises(RuntimeError, match=MODIFIED):
        y.sum().backward()


def test_modifying_saved_output_raises_at_backward():
    x = autograd.tensor([1.0, 2.0], requires_grad=True)
    y = x.exp()  # saves its output
    y.mul_(2)
    with pytest.raises(RuntimeError, match=MODIFIED):
        y.sum().backward()
    x2 = autograd.tensor([1.0, 2.0], requires_grad=True)
    s = x2.sigmoid()
    s[0] = 0.0
    with pytest.raises(RuntimeError, match=MODIFIED):
        s.sum().backward()


def test_modifying_saved_tensor_through_a_view_raises():
    x = autograd.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    h = x * 1
    y = h.sin()  # saves h
    h.t()[0].zero_()
    with pytest.raises(RuntimeError, match=MODIFIED):
        y.sum().backward()


def test_modifying_saved_leaf_under_no_grad_raises():
    w = autograd.tensor([1.0, 2.0], requires_grad=True)
    y = (w * w).sum()
    with autograd.no_grad():
        w.add_(1)  # like an optimizer step before backward
    with pytest.raises(RuntimeError, match=MODIFIED):
        y.backward()


def test_error_message_matches_torch_shape():
    x = autograd.tensor([1.0, 2.0], requires_grad=True)
    y = x.exp()
    y.add_(1)
    with pytest.raises(RuntimeError) as e:
        y.sum().backward()
    msg = str(e.value)
    assert "[torch.FloatTensor [2]]" in msg and "is at version 1; expected version 0" in msg


def test_modification_not_saved_is_fine():
    x = autograd.tensor([1.0, 2.0], requires_grad=True)
    h = x + 1  # add saves nothing
    y = h * 2  # mul by a number saves nothing of h
    h.add_(5)
    y.sum().backward()
    assert x.grad.tolist() == [2.0, 2.0]


# ---------------------------------------------------------------------------------------------
# leaves
# ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("op", [
    lambda t: t.add_(1), lambda t: t.mul_(2), lambda t: t.zero_(), lambda t: t.fill_(1.0),
    lambda t: t.copy_(autograd.ones(3)), lambda t: t.clamp_(0, 1), lambda t: t.sub_(1),
    lambda t: t.div_(2), lambda t: t.__iadd__(1), lambda t: t.__setitem__(0, 5.0),
    lambda t: t[1:].mul_(2), lambda t: t.view(3).add_(1),
], ids=["add_", "mul_", "zero_", "fill_", "copy_", "clamp_", "sub_", "div_", "iadd", "setitem",
        "view_mul_", "view_add_"])
def test_inplace_on_leaf_requiring_grad(op):
    t = autograd.tensor([1.0, 2.0, 3.0], requires_grad=True)
    with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
        op(t)
    with autograd.no_grad():
        op(t)  # allowed (an optimizer step)
    assert t.requires_grad and t.is_leaf and t.grad_fn is None


def test_optimizer_style_update_under_no_grad():
    w = autograd.tensor([1.0, 2.0], requires_grad=True)
    for _ in range(3):
        loss = (w * w).sum()
        loss.backward()
        with autograd.no_grad():
            w -= 0.1 * w.grad
            w.grad.zero_()
    np.testing.assert_allclose(w.tolist(), [0.8 ** 3, 2 * 0.8 ** 3], rtol=1e-6)


def test_inplace_with_grad_value_into_plain_tensor():
    w = autograd.tensor([2.0, 3.0], requires_grad=True)
    buf = autograd.ones(2)
    buf.mul_(w)
    assert buf.requires_grad and not buf.is_leaf
    buf.sum().backward()
    assert w.grad.tolist() == [1.0, 1.0]


def test_copy_into_view_of_plain_tensor():
    w = autograd.tensor([2.0, 3.0], requires_grad=True)
    buf = autograd.zeros(2, 2)
    buf[1].copy_(w * 2)
    assert buf.requires_grad
    (buf * autograd.tensor([[1.0, 1.0], [5.0, 7.0]])).sum().backward()
    assert w.grad.tolist() == [10.0, 14.0]


def test_inplace_dtype_rules():
    i = autograd.tensor([1, 2])
    with pytest.raises(RuntimeError):
        i.add_(1.5)  # float result cannot be cast into int64 in place (PyTorch)
    f = autograd.tensor([1.0, 2.0])
    f.add_(autograd.tensor([1, 1]))
    assert f.dtype == autograd.float32 and f.tolist() == [2.0, 3.0]
    with pytest.raises(RuntimeError):
        autograd.zeros(2).add_(autograd.zeros(3))


def test_inplace_without_grad_values():
    t = autograd.tensor([[1.0, -2.0], [3.0, -4.0]])
    t.add_(1).mul_(2).sub_(1).div_(2).clamp_(-2, 3)
    np.testing.assert_allclose(t.tolist(), np.clip((((np.array([[1.0, -2], [3, -4]]) + 1) * 2
                                                      - 1) / 2), -2, 3))
    t.fill_(7)
    assert t.tolist() == [[7.0, 7.0], [7.0, 7.0]]
    t.copy_(autograd.tensor([1.0, 2.0]))
    assert t.tolist() == [[1.0, 2.0], [1.0, 2.0]]
    t.zero_()
    assert t.tolist() == [[0.0, 0.0], [0.0, 0.0]]


def test_view_made_before_base_gets_history():
    # PyTorch regenerates a view's grad_fn when its base is modified in place after the view
    # was taken: the view then carries the base's new history
    w = autograd.tensor([2.0, 3.0], requires_grad=True)
    buf = autograd.ones(2, 2)
    row = buf[1]
    assert not row.requires_grad
    buf.mul_(w)
    (row * row).sum().backward()
    assert w.grad.tolist() == [4.0, 6.0]


def test_sibling_views_against_torch():
    torch = pytest.importorskip("torch")
    x0, w0 = _values(5)

    def f(lib, x, w):
        base = x * 1.0
        a, b = base[0], base[:, 1]
        a.mul_(w)
        b.add_(w[:3].exp())
        c = base.t()[2]  # taken after the changes
        base.div_(2.0)
        return (a * b[0]).sum() + (b ** 2).sum() + c.sin().sum() + base.sum()

    x, w = (autograd.tensor(v, requires_grad=True) for v in (x0, w0))
    tx, tw = (torch.tensor(v, requires_grad=True) for v in (x0, w0))
    out, tout = f(autograd, x, w), f(torch, tx, tw)
    out.backward()
    tout.backward()
    np.testing.assert_allclose(out.item(), tout.item(), rtol=1e-12)
    np.testing.assert_allclose(np.asarray(x.grad.array), tx.grad.numpy(), rtol=1e-10)
    np.testing.assert_allclose(np.asarray(w.grad.array), tw.grad.numpy(), rtol=1e-10)


@pytest.mark.parametrize("make, name", [
    (lambda y: y.split(2), "Split"), (lambda y: y.split([1, 3]), "SplitWithSizes"),
    (lambda y: y.chunk(2), "Split"), (lambda y: y.unbind(), "Unbind"),
    (lambda y: autograd.split(y, 2), "Split"), (lambda y: autograd.unbind(y), "Unbind")])
def test_inplace_on_multi_output_views_raises_when_recorded(make, name):
    """PyTorch refuses to record an in-place op on a view that split/chunk/unbind returned (or
    a view of one); without recording (no_grad, or nothing requires grad) it is allowed."""
    x = autograd.arange(8.0).reshape(4, 2).requires_grad_()
    for y in (x, x * 1):
        for modify in (lambda v: v.add_(1), lambda v: v[0:1].mul_(2),
                       lambda v: v.__setitem__(0, 5.0)):
            with pytest.raises(RuntimeError, match=f"Output 1 of {name} is a view and is being "
                                                    f"modified inplace"):
                modify(make(y)[1])
    with autograd.no_grad():
        y = x * 1
        make(y)[1].add_(1)
    assert y.sum().item() > x.sum().item()
    plain = autograd.arange(8.0).reshape(4, 2)
    make(plain)[1].add_(1)
    assert plain.sum().item() > 28


def test_embedding_row_update_repeated_under_no_grad(device):
    """E[i:i+1] += v, repeated (an Embedding-like row update): each call updates row i of E
    (the device reuses a launch plan from the second call on)."""
    n = np.arange(12, dtype="float32").reshape(4, 3)
    E = autograd.tensor(n, device=device)
    v = autograd.tensor([[1.0, 2.0, 3.0]], device=device)
    with autograd.no_grad():
        for step in range(4):
            for i in (1, 2, 1):
                E[i:i + 1] += v
                n[i:i + 1] += v.numpy()
                np.testing.assert_array_equal(E.cpu().numpy(), n, err_msg=f"step {step}")
