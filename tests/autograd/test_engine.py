"""The backward engine: accumulation, dependency counting and order, depth, retain_graph,
create_graph (higher-order gradients), autograd.grad, backward(gradient=), retain_grad, hooks,
accumulation of leaves' .grad across calls."""

import gc
import math
import threading

import numpy as np
import pytest

import autograd

F64 = autograd.float64


def leaf(values, dtype=F64):
    return autograd.tensor(values, dtype=dtype, requires_grad=True)


def grad_of(t):
    return np.asarray(t.grad.array)


# ---------------------------------------------------------------------------------------------
# accumulation and dependencies
# ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("pieces", [lambda x: x.unbind(), lambda x: x.split(1, 1),
                                    lambda x: x.split([2, 1], 1)])
def test_backward_from_several_outputs_of_one_node(pieces):
    # the roots all lead to one node: its edges count once, so the leaf still gets its gradient
    x = leaf([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    outs = pieces(x)
    autograd.backward(list(outs), [autograd.full(o.shape, k + 1.0, dtype=F64)
                                   for k, o in enumerate(outs)])
    expect = np.zeros((2, 3))
    for k, o in enumerate(pieces(autograd.tensor(np.arange(6.0).reshape(2, 3)))):
        idx = np.asarray(o.array).astype(int)
        np.put(expect, idx, k + 1.0)
    np.testing.assert_array_equal(grad_of(x), expect)
    assert autograd.grad(list(pieces(x)), [x], [autograd.ones(o.shape, dtype=F64)
                                                for o in pieces(x)])[0].tolist() == [[1.0] * 3] * 2


def test_tensor_used_twice_accumulates():
    x = leaf([1.0, 2.0, 3.0])
    (x * x).sum().backward()
    assert x.grad.tolist() == [2.0, 4.0, 6.0]
    x.grad = None
    (x + x + x).sum().backward()
    assert x.grad.tolist() == [3.0, 3.0, 3.0]


def test_diamond_graph_runs_each_node_once_with_summed_gradient():
    x = leaf([0.5, -1.0])
    y = x * 2
    calls = []
    y.register_hook(lambda g: calls.append(g.tolist()))
    out = (y.exp() + y.sin() + y * y).sum()
    out.backward()
    assert len(calls) == 1  # all three consumers delivered before y's node ran
    yv = np.array([1.0, -2.0])
    expected = np.exp(yv) + np.cos(yv) + 2 * yv
    np.testing.assert_allclose(calls[0], expected)
    np.testing.assert_allclose(grad_of(x), 2 * expected)


def test_ready_nodes_run_newest_first():
    # two independent branches from one input: the branch created later runs first,
    # as in PyTorch (the ready queue is ordered by creation sequence)
    x = leaf([1.0])
    order = []
    a = x * 2
    b = x * 3
    a.register_hook(lambda g: order.append("a"))
    b.register_hook(lambda g: order.append("b"))
    (a + b).sum().backward()
    assert order == ["b", "a"]


def test_ready_order_matches_torch():
    torch = pytest.importorskip("torch")

    def run(lib, x):
        order = []
        ts = [x * (i + 1) for i in range(4)]
        for i, t in enumerate(ts):
            t.register_hook(lambda g, i=i: order.append(i))
        total = ts[2] + ts[0]
        total = total + ts[3] * ts[1]
        total.sum().backward()
        return order

    assert run(autograd, leaf([1.0])) == run(torch, torch.ones(1, requires_grad=True))


def test_deep_chain_100k():
    x = autograd.tensor(1.0, requires_grad=True)
    y = x
    for _ in range(100_000):
        y = y * 1.0
    y.backward()
    assert x.grad.item() == 1.0
    del y
    gc.collect()


def test_deep_chain_with_create_graph():
    x = leaf(1.0)
    y = x
    for _ in range(2_000):
        y = y * 1.0
    (g,) = autograd.grad(y, x, create_graph=True)
    assert g.item() == 1.0


def test_graph_of_many_branches():
    x = leaf([1.0, 2.0])
    parts = [x * float(i) for i in range(200)]
    autograd.stack(parts).sum().backward()
    assert x.grad.tolist() == [float(sum(range(200)))] * 2


# ---------------------------------------------------------------------------------------------
# retain_graph
# ---------------------------------------------------------------------------------------------

def test_second_backward_raises_without_retain_graph():
    x = leaf([1.0, 2.0])
    y = (x.exp() * x).sum()
    y.backward()
    with pytest.raises(RuntimeError, match="retain_graph=True"):
        y.backward()


def test_retain_graph_allows_second_backward_and_grads_accumulate():
    x = leaf([1.0, 2.0])
    y = (x * x).sum()
    y.backward(retain_graph=True)
    y.backward()
    assert x.grad.tolist() == [4.0, 8.0]


def test_graph_without_saved_tensors_can_run_twice():
    # PyTorch: only saved tensors are freed; a graph saving nothing backpropagates again
    x = leaf([1.0, 2.0])
    y = (x + 1).sum()
    y.backward()
    y.backward()
    assert x.grad.tolist() == [2.0, 2.0]


def test_leaf_grad_accumulates_across_calls():
    x = leaf([1.0, 2.0])
    for k in range(1, 4):
        (x * 3).sum().backward()
        assert x.grad.tolist() == [3.0 * k] * 2


def test_shared_subgraph_freed_after_first_backward():
    x = leaf([1.0])
    h = x.exp()
    (h * 2).sum().backward()
    with pytest.raises(RuntimeError, match="retain_graph"):
        (h * 3).sum().backward()


# ---------------------------------------------------------------------------------------------
# roots: scalar / non-scalar, gradient=
# ---------------------------------------------------------------------------------------------

def test_non_scalar_backward_needs_gradient():
    x = leaf([1.0, 2.0])
    y = x * 2
    with pytest.raises(RuntimeError, match="grad can be implicitly created only for scalar "
                                           "outputs"):
        y.backward()


def test_backward_with_gradient_argument():
    x = leaf([[1.0, 2.0], [3.0, 4.0]])
    y = x * x
    y.backward(gradient=autograd.tensor([[1.0, 0.0], [2.0, -1.0]], dtype=F64))
    assert x.grad.tolist() == [[2.0, 0.0], [12.0, -8.0]]
    with pytest.raises(RuntimeError, match="Mismatch in shape"):
        (x * 2).backward(autograd.ones(3, dtype=F64))


def test_backward_of_one_element_non_scalar():
    x = leaf([3.0])
    (x * x).backward()
    assert x.grad.tolist() == [6.0]


def test_backward_on_tensor_without_grad_raises():
    with pytest.raises(RuntimeError, match="does not require grad"):
        autograd.ones(1).backward()


def test_autograd_backward_function_with_several_roots():
    x = leaf([1.0, 2.0])
    a = (x * 2).sum()
    b = x * x
    autograd.backward([a, b], [None, autograd.ones(2, dtype=F64)])
    assert x.grad.tolist() == [4.0, 6.0]


def test_backward_inputs_argument():
    x = leaf([1.0])
    w = leaf([2.0])
    (x * w).sum().backward(inputs=[w])
    assert w.grad.tolist() == [1.0] and x.grad is None


# ---------------------------------------------------------------------------------------------
# autograd.grad
# ---------------------------------------------------------------------------------------------

def test_grad_returns_tuple_and_leaves_grad_alone():
    x = leaf([1.0, 2.0])
    w = leaf([3.0, 4.0])
    y = (x * w).sum()
    gx, gw = autograd.grad(y, [x, w])
    assert gx.tolist() == [3.0, 4.0] and gw.tolist() == [1.0, 2.0]
    assert x.grad is None and w.grad is None
    assert not gx.requires_grad


def test_grad_with_respect_to_non_leaf():
    x = leaf([1.0, 2.0])
    h = x * 3
    y = (h * h).sum()
    (gh,) = autograd.grad(y, h)
    assert gh.tolist() == [6.0, 12.0]


def test_grad_allow_unused():
    x = leaf([1.0])
    z = leaf([5.0])
    y = (x * 2).sum()
    with pytest.raises(RuntimeError, match="allow_unused=True"):
        autograd.grad(y, [x, z], retain_graph=True)
    gx, gz = autograd.grad(y, [x, z], allow_unused=True)
    assert gx.tolist() == [2.0] and gz is None


def test_grad_materialize_grads():
    x = leaf([1.0])
    z = leaf([5.0, 6.0])
    _, gz = autograd.grad((x * 2).sum(), [x, z], materialize_grads=True)
    assert gz.tolist() == [0.0, 0.0]


def test_grad_grad_outputs():
    x = leaf([1.0, 2.0, 3.0])
    y = x * x
    (g,) = autograd.grad(y, x, grad_outputs=autograd.tensor([1.0, 0.5, -1.0], dtype=F64))
    assert g.tolist() == [2.0, 2.0, -6.0]
    with pytest.raises(RuntimeError, match="scalar outputs"):
        autograd.grad(x * x, x)


def test_grad_of_several_outputs():
    x = leaf([1.0, 2.0])
    a = (x * x).sum()
    b = (x * 3).sum()
    (g,) = autograd.grad([a, b], [x])
    assert g.tolist() == [5.0, 7.0]


def test_grad_input_not_requiring_grad_raises():
    x = leaf([1.0])
    with pytest.raises(RuntimeError):
        autograd.grad((x * 2).sum(), autograd.ones(1))


# ---------------------------------------------------------------------------------------------
# create_graph: higher-order gradients against analytic ones
# ---------------------------------------------------------------------------------------------

SECOND = [
    ("x**3", lambda x: x ** 3, lambda x: 3 * x ** 2, lambda x: 6 * x),
    ("sin", autograd.sin, np.cos, lambda x: -np.sin(x)),
    ("tanh", autograd.tanh, lambda x: 1 - np.tanh(x) ** 2,
     lambda x: -2 * np.tanh(x) * (1 - np.tanh(x) ** 2)),
    ("exp", autograd.exp, np.exp, np.exp),
    ("log", autograd.log, lambda x: 1 / x, lambda x: -1 / x ** 2),
    ("sigmoid", autograd.sigmoid, lambda x: _sig(x) * (1 - _sig(x)),
     lambda x: _sig(x) * (1 - _sig(x)) * (1 - 2 * _sig(x))),
    ("sqrt", autograd.sqrt, lambda x: 0.5 / np.sqrt(x), lambda x: -0.25 * x ** -1.5),
    ("1/x", lambda x: 1 / x, lambda x: -1 / x ** 2, lambda x: 2 / x ** 3),
    ("x*exp(x)", lambda x: x * x.exp(), lambda x: (1 + x) * np.exp(x),
     lambda x: (2 + x) * np.exp(x)),
    ("cos", autograd.cos, lambda x: -np.sin(x), lambda x: -np.cos(x)),
]


def _sig(x):
    return 1 / (1 + np.exp(-x))


@pytest.mark.parametrize("name,f,d1,d2", SECOND, ids=[s[0] for s in SECOND])
def test_second_derivative(name, f, d1, d2):
    v = np.array([0.3, 1.2, 2.0])
    x = leaf(v)
    y = f(x).sum()
    (g,) = autograd.grad(y, x, create_graph=True)
    assert g.requires_grad
    np.testing.assert_allclose(np.asarray(g.array), d1(v), rtol=1e-12)
    g.sum().backward()
    np.testing.assert_allclose(grad_of(x), d2(v), rtol=1e-10)


def test_third_derivative_of_x4():
    x = leaf([2.0])
    y = (x ** 4).sum()
    (g1,) = autograd.grad(y, x, create_graph=True)
    (g2,) = autograd.grad(g1.sum(), x, create_graph=True)
    (g3,) = autograd.grad(g2.sum(), x)
    assert (g1.item(), g2.item(), g3.item()) == (32.0, 48.0, 48.0)


def test_backward_create_graph_makes_differentiable_grad():
    x = leaf([1.5])
    (x ** 3).sum().backward(create_graph=True)
    g = x.grad
    assert g.requires_grad and g.item() == 3 * 1.5 ** 2
    x.grad = None
    g.sum().backward()
    assert x.grad.item() == 6 * 1.5


def test_mixed_second_derivatives():
    x = leaf([1.0, 2.0])
    w = leaf([3.0, -1.0])
    y = (x * x * w).sum()
    gx, = autograd.grad(y, x, create_graph=True)  # 2 x w
    gxw, = autograd.grad(gx.sum(), w)             # 2 x
    assert gxw.tolist() == [2.0, 4.0]


@pytest.mark.parametrize("fn", [
    lambda x: (x.softmax(-1) * x).sum(), lambda x: x.logsumexp(0).sum(),
    lambda x: (x @ x.t()).tanh().sum(), lambda x: x.var(1).sum(),
    lambda x: (x.max(1).values ** 2).sum(), lambda x: x.prod(), lambda x: x[[0, 0, 1]].sin().sum(),
    lambda x: autograd.cat([x, x * x]).exp().sum(), lambda x: (x / (1 + x * x)).sum(),
], ids=["softmax", "logsumexp", "matmul", "var", "max_dim", "prod", "index", "cat", "div"])
def test_gradgradcheck_ops(fn):
    x = autograd.randn(2, 3, dtype=F64, requires_grad=True)
    assert autograd.gradgradcheck(fn, (x,))


def test_second_derivative_against_torch():
    torch = pytest.importorskip("torch")
    v = np.random.default_rng(3).standard_normal((3, 4))

    def f(lib, x):
        return (lib.tanh(x) * x.exp() + x.sin() ** 2).sum() + (x.softmax(1) ** 2).sum()

    x = autograd.tensor(v, requires_grad=True)
    (g,) = autograd.grad(f(autograd, x), x, create_graph=True)
    (g * g).sum().backward()
    tx = torch.tensor(v, requires_grad=True)
    (tg,) = torch.autograd.grad(f(torch, tx), tx, create_graph=True)
    (tg * tg).sum().backward()
    np.testing.assert_allclose(np.asarray(g.detach().array), tg.detach().numpy(), rtol=1e-10)
    np.testing.assert_allclose(grad_of(x), tx.grad.numpy(), rtol=1e-9)


# ---------------------------------------------------------------------------------------------
# retain_grad and hooks
# ---------------------------------------------------------------------------------------------

def test_retain_grad():
    x = leaf([1.0, 2.0])
    h = x * 3
    h.retain_grad()
    assert h.retains_grad
    y = (h * h).sum()
    y.backward()
    assert h.grad.tolist() == [6.0, 12.0]
    assert x.grad.tolist() == [18.0, 36.0]
    h2 = x * 2
    (h2 * 1).sum().backward()
    assert h2.grad is None  # not retained
    x.retain_grad()  # no-op on leaves
    with pytest.raises(RuntimeError):
        autograd.ones(1).retain_grad()


def test_retain_grad_accumulates_over_retained_backward():
    x = leaf([1.0])
    h = x * 3
    h.retain_grad()
    y = (h * h).sum()
    y.backward(retain_graph=True)
    y.backward()
    assert h.grad.tolist() == [12.0]


def test_leaf_hook_replaces_gradient():
    x = leaf([1.0, 2.0])
    seen = []

    def hook(g):
        seen.append(g.tolist())
        return g * 10

    handle = x.register_hook(hook)
    (x * 2).sum().backward()
    assert seen == [[2.0, 2.0]] and x.grad.tolist() == [20.0, 20.0]
    handle.remove()
    x.grad = None
    (x * 2).sum().backward()
    assert x.grad.tolist() == [2.0, 2.0] and len(seen) == 1


def test_non_leaf_hook_replaces_gradient_downstream():
    x = leaf([1.0, 2.0])
    h = x * 2
    seen = []
    h.register_hook(lambda g: seen.append(g.tolist()))   # observes, returns None
    h.register_hook(lambda g: g * 0.5)                   # replaces
    (h * h).sum().backward()
    assert seen == [[4.0, 8.0]]
    assert x.grad.tolist() == [4.0, 8.0]  # 2 * (2h * 0.5)


def test_hook_handle_remove_on_non_leaf():
    x = leaf([1.0])
    h = x * 2
    handle = h.register_hook(lambda g: g * 100)
    handle.remove()
    h.sum().backward()
    assert x.grad.tolist() == [2.0]


def test_hook_on_tensor_without_grad_raises():
    with pytest.raises(RuntimeError):
        autograd.ones(2).register_hook(lambda g: g)


def test_hooks_and_retain_grad_order_like_torch():
    torch = pytest.importorskip("torch")

    def run(lib):
        x = lib.tensor([1.0, 2.0], dtype=lib.float64, requires_grad=True)
        h = x * 2
        h.retain_grad()
        h.register_hook(lambda g: g * 3)
        x.register_hook(lambda g: g + 1)
        (h * h).sum().backward()
        return h.grad.tolist(), x.grad.tolist()

    assert run(autograd) == run(torch)


def test_gradients_dtypes_follow_inputs():
    x = autograd.ones(2, requires_grad=True)
    y = x.double() * autograd.ones(2, dtype=F64)
    y.sum().backward()
    assert x.grad.dtype == autograd.float32


def test_backward_in_thread():
    result = {}

    def work():
        x = leaf([2.0])
        (x * x).sum().backward()
        result["grad"] = x.grad.tolist()

    t = threading.Thread(target=work)
    t.start()
    t.join()
    assert result["grad"] == [4.0]


def test_tiny_mlp_against_numpy():
    rng = np.random.default_rng(0)
    xv, w1v, w2v = rng.standard_normal((5, 3)), rng.standard_normal((3, 4)), \
        rng.standard_normal((4, 2))
    x = autograd.tensor(xv)
    w1, w2 = leaf(w1v), leaf(w2v)
    h = (x @ w1).relu()
    loss = ((h @ w2) ** 2).mean()
    loss.backward()
    hv = np.maximum(xv @ w1v, 0)
    outv = hv @ w2v
    dout = 2 * outv / outv.size
    np.testing.assert_allclose(grad_of(w2), hv.T @ dout, rtol=1e-12)
    dh = (dout @ w2v.T) * (xv @ w1v > 0)
    np.testing.assert_allclose(grad_of(w1), xv.T @ dh, rtol=1e-12)
    assert math.isclose(loss.item(), (outv ** 2).mean(), rel_tol=1e-12)


def test_leaf_hook_applies_to_autograd_grad():
    # as PyTorch: a leaf's hooks run before autograd.grad captures its gradient
    x = leaf([1.0, 2.0])
    x.register_hook(lambda g: g * 2)
    (g,) = autograd.grad((x * x).sum(), x)
    assert g.tolist() == [4.0, 8.0] and x.grad is None


# ---------------------------------------------------------------------------------------------
# random op chains against PyTorch (optional)
# ---------------------------------------------------------------------------------------------

def _chain_step(lib, x, name, k):
    """One op of a random chain, written so the same code runs with autograd and torch."""
    nd = x.ndim
    if name in ("exp", "sin", "tanh", "sigmoid", "relu", "abs", "neg", "square", "expm1"):
        return getattr(x, name)()
    if name in ("log", "sqrt", "rsqrt", "reciprocal", "log1p"):
        return getattr(x.abs() + 0.5, name)()
    if name in ("sum", "mean", "amax", "logsumexp", "prod", "var", "std", "max", "min",
                "softmax", "log_softmax") and nd:
        d, keep = k % nd, k % 2 == 0
        if name in ("max", "min"):
            return getattr(x, name)(d, keep)[0]
        if name in ("softmax", "log_softmax"):
            return getattr(x, name)(d)
        if name in ("var", "std") and x.shape[d] < 2:
            return x
        return getattr(x, name)(d, keepdim=keep)
    if name == "t" and nd == 2:
        return x.t()
    if name == "unsqueeze":
        return x.unsqueeze(k % (nd + 1))
    if name == "flip" and nd:
        return x.flip(k % nd)
    if name == "permute" and nd:
        return x.permute(*reversed(range(nd)))
    if name == "slice" and nd and x.shape[0] > 1:
        return x[1:]
    if name == "gather" and nd:
        return x[[0, x.shape[0] - 1, 0]]
    if name == "repeat" and nd:
        return x.repeat(*([2] + [1] * (nd - 1)))
    if name == "cat" and nd:
        return lib.cat([x, x * 2], k % nd)
    if name == "stack":
        return lib.stack([x, x.sin()], k % (nd + 1))
    if name == "clamp":
        return x.clamp(-0.5, 0.7)
    if name == "where":
        return lib.where(x > 0, x, x * 0.1)
    if name == "matmul" and nd:
        return x @ x.mT if nd >= 2 else x @ x
    if name == "pow":
        return (x.abs() + 0.3) ** 1.7
    if name == "inplace":
        y = x * 1.0
        y.mul_(2.0).add_(x)
        return y
    if name == "setitem" and nd and x.shape[0]:
        y = x * 1.0
        y[0] = x[0].sin()
        return y
    if name == "inplace_view" and nd and x.shape[-1] > 1:
        y = x * 1.0
        y[..., 1:].mul_(x[..., :1].exp())
        return y
    if name in ("add", "mul", "sub", "div", "maximum"):
        o = x.flip(-1) if nd else x
        return {"add": x + o, "mul": x * o, "sub": o - x, "div": x / (o.abs() + 1),
                "maximum": lib.maximum(x, o * 0.9)}[name]
    return x


_CHAIN_OPS = ["exp", "sin", "tanh", "sigmoid", "relu", "abs", "neg", "square", "expm1", "log",
              "sqrt", "rsqrt", "reciprocal", "log1p", "sum", "mean", "amax", "logsumexp", "prod",
              "var", "std", "max", "min", "softmax", "log_softmax", "t", "unsqueeze", "flip",
              "permute", "slice", "gather", "repeat", "cat", "stack", "clamp", "where", "matmul",
              "pow", "inplace", "setitem", "inplace_view", "add", "mul", "sub", "div", "maximum"]


@pytest.mark.parametrize("block", range(4))
def test_random_op_chains_against_torch(block):
    torch = pytest.importorskip("torch")
    for seed in range(block * 100, block * 100 + 100):
        rng = np.random.default_rng(seed)
        shape = tuple(int(n) for n in rng.integers(1, 4, rng.integers(0, 4)))
        values = rng.standard_normal(shape)
        chain = [(str(rng.choice(_CHAIN_OPS)), int(rng.integers(0, 4)))
                 for _ in range(rng.integers(1, 6))]
        results = []
        for lib in (autograd, torch):
            x = lib.tensor(values, requires_grad=True)
            y = x
            for name, k in chain:
                y = _chain_step(lib, y, name, k)
            out = (y * y).sum()
            out.backward()
            results.append((out.item(), np.array(x.grad.tolist())))
        (ours, our_grad), (theirs, their_grad) = results
        np.testing.assert_allclose(ours, theirs, rtol=1e-9, err_msg=str((seed, shape, chain)))
        np.testing.assert_allclose(our_grad, their_grad, rtol=1e-7, atol=1e-9,
                                   err_msg=str((seed, shape, chain)))
