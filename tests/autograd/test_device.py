"""autograd unchanged on every device: each check runs on the `device` fixture ("cpu", and "gpu"
when carray finds an OpenCL device) and compares values and gradients with the same code on the
CPU; results and gradients must stay on the tensor's device.

Kept fast on PoCL (which compiles each kernel specialisation slowly): float32 throughout and a
few shapes reused everywhere, so the device builds few distinct kernels.
"""

import io

import numpy as np
import pytest

import autograd
from autograd import nn
from autograd.nn import functional as F
from autograd.utils.data import DataLoader, TensorDataset

TOL = dict(rtol=1e-5, atol=1e-5)   # float32: device kernels may sum in another order


def values(shape, seed=0, low=None, high=None):
    """Fixed float32 NumPy values: standard normal, or uniform in [low, high)."""
    rng = np.random.default_rng(seed)
    v = rng.standard_normal(shape) if low is None else rng.uniform(low, high, shape)
    return v.astype(np.float32)


def upstream(shape):
    """A fixed, non-uniform upstream gradient of `shape` (float32)."""
    n = int(np.prod(shape, dtype=np.int64))
    return np.cos(np.arange(n, dtype=np.float64) + 0.5).reshape(shape).astype(np.float32)


def host(t):
    return None if t is None else np.array(t.detach().to("cpu").array)  # a copy


def run(fn, inputs, device):
    """fn on leaf tensors made from `inputs` (NumPy arrays; float ones require grad) on device,
    then backward from a fixed upstream gradient. Checks that outputs and gradients are on
    device; returns (outputs, gradients) as NumPy arrays."""
    xs = [autograd.tensor(a, device=device, requires_grad=a.dtype.kind == "f") for a in inputs]
    out = fn(*xs)
    outs = out if isinstance(out, (tuple, list)) else (out,)
    for o in outs:
        assert o.device == device, o.device
    diff = [o for o in outs if o.requires_grad]
    if diff:
        autograd.backward(diff, [autograd.tensor(upstream(o.shape), device=device) for o in diff])
    grads = []
    for x in xs:
        if x.requires_grad:
            assert x.grad is not None and x.grad.device == device
        grads.append(host(x.grad))
    return [host(o) for o in outs], grads


def check(fn, *inputs, device, tol=TOL):
    """fn's outputs and input gradients on device equal those on the CPU."""
    got, want = run(fn, inputs, device), run(fn, inputs, "cpu")
    for g, w in zip(got[0] + got[1], want[0] + want[1]):
        if w is None:
            assert g is None
            continue
        assert g.shape == w.shape and g.dtype == w.dtype, (g.shape, w.shape, g.dtype, w.dtype)
        np.testing.assert_allclose(g, w, **tol)


A, B, V = values((3, 4), 1), values((3, 4), 2), values((4,), 3)
P = values((3, 4), 4, 0.5, 2.0)          # positive, for log / sqrt / pow
M = values((4, 5), 5)
X3 = values((2, 3, 4), 6)


# ---------------------------------------------------------------------------------------------
# factories
# ---------------------------------------------------------------------------------------------

def test_factories_on_device(device):
    made = [autograd.zeros(3, 4, device=device), autograd.ones(3, 4, device=device),
            autograd.full((3, 4), 2.5, device=device), autograd.arange(12, device=device),
            autograd.linspace(0, 1, 5, device=device), autograd.eye(3, device=device),
            autograd.empty(3, 4, device=device), autograd.tensor(A, device=device)]
    for t in made:
        assert t.device == device
    x = autograd.tensor(A, device=device)
    for f in (autograd.zeros_like, autograd.ones_like, autograd.empty_like, autograd.rand_like,
              autograd.randn_like, lambda t: autograd.full_like(t, 7.0), lambda t: t.new_zeros(2),
              lambda t: t.new_ones((2, 2)), lambda t: t.new_full((2,), 1.5)):
        assert f(x).device == device
    assert autograd.zeros_like(x, device="cpu").device == "cpu"
    assert autograd.ones(2, device=device, requires_grad=True).requires_grad


def test_random_factories_give_the_cpu_numbers(device):
    # counter-based generator: one seed, the same numbers on every device
    def draw(dev):
        g = autograd.Generator().manual_seed(7)
        out = [autograd.rand(3, 4, generator=g, device=dev), autograd.randn(3, 4, generator=g,
                                                                             device=dev),
               autograd.randint(0, 10, (3, 4), generator=g, device=dev),
               autograd.randperm(6, generator=g, device=dev)]
        assert all(t.device == dev for t in out)
        return [host(t) for t in out]
    for g, c in zip(draw(device), draw("cpu")):
        np.testing.assert_allclose(g, c, **TOL)


# ---------------------------------------------------------------------------------------------
# ops: forward values and gradients against the CPU
# ---------------------------------------------------------------------------------------------

OPS = {
    # arithmetic (broadcasting against a row, and Python scalars)
    "add": (lambda x, y: x + y, A, V),
    "sub": (lambda x, y: x - y * 2.0, A, B),
    "mul": (lambda x, y: x * y, A, V),
    "div": (lambda x, y: x / y, A, P),
    "rsub": (lambda x: 1.0 - x, A),
    "pow": (lambda x, y: x ** y, P, A),
    "pow_scalar": (lambda x: x ** 3 + 2.0 ** x, A),
    "maximum": (lambda x, y: autograd.maximum(x, y), A, B),
    "where": (lambda x, y: autograd.where(x > y, x, y * 3.0), A, B),
    "clamp": (lambda x: x.clamp(-0.5, 0.5), A),
    # unary
    "exp_log": (lambda x: x.exp() + x.log(), P),
    "sqrt_rsqrt": (lambda x: x.sqrt() + x.rsqrt(), P),
    "tanh_sigmoid": (lambda x: x.tanh() * x.sigmoid(), A),
    "relu_abs_neg": (lambda x: x.relu() + x.abs() - (-x).sin(), A),
    "softmax": (lambda x: x.softmax(1), A),
    "log_softmax": (lambda x: x.log_softmax(0), A),
    # reductions
    "sum": (lambda x: (x.sum(), x.sum(1), x.sum(0, keepdim=True)), A),
    "mean_var_std": (lambda x: (x.mean(1), x.var(0), x.std()), A),
    "prod": (lambda x: x.prod(1), P),
    "max_dim": (lambda x: x.max(1), A),
    "max_min_all": (lambda x: x.max() - x.min(), A),
    "amax_logsumexp": (lambda x: x.amax(1) + x.logsumexp(1), A),
    "norm": (lambda x: x.norm(), A),
    # matmul
    "matmul": (lambda x, w: x @ w, A, M),
    "matvec": (lambda x, v: x @ v, A, V),
    "batched": (lambda x, w: x @ w, X3, M),
    # shape
    "reshape_view": (lambda x: x.reshape(4, 3) * x.view(2, 6).reshape(4, 3), A),
    "permute_t": (lambda x: x.permute(2, 0, 1).transpose(0, 1) * 2.0, X3),
    "expand": (lambda v: v.unsqueeze(0).expand(3, 4) * 2.0, V),
    "squeeze_flatten": (lambda x: x.unsqueeze(1).squeeze(1).flatten(), X3),
    "cat_stack": (lambda x, y: (autograd.cat([x, y], 1), autograd.stack([x, y])), A, B),
    "split_chunk": (lambda x: tuple(x.split(2, 1)) + tuple(x.chunk(3, 0)), A),
    "flip_t": (lambda x: x.flip(0).t(), A),
    "contiguous": (lambda x: x.t().contiguous() * 1.0, A),
    # indexing
    "basic_index": (lambda x: (x[1], x[:, 1:3], x[..., None][0, ::2]), A),
    "int_list": (lambda x: x[[0, 2, 0]], A),
    "mask": (lambda x: x[x > 0], A),
    "masked_fill": (lambda x: x.masked_fill(x < 0, 0.5), A),
}


@pytest.mark.parametrize("name", OPS)
def test_op_values_and_gradients(name, device):
    fn, *inputs = OPS[name]
    check(fn, *inputs, device=device)


def test_tensor_index_keys_on_device(device):
    # index keys that are tensors on the device (int64 and bool)
    def fn(x):
        idx = autograd.tensor([2, 0, 2], device=x.device)
        mask = autograd.tensor([True, False, True, True], device=x.device)
        assert idx.device == mask.device == x.device
        return x[idx], x[:, mask], x[idx, idx.flip(0)]
    check(fn, A, device=device)


def test_setitem_records_on_device(device):
    def fn(x, v):
        h = x * 1.0
        h[0] = v * 2.0
        h[1:, 1] = 0.5
        h[autograd.tensor([2], device=x.device)] = 1.0
        return h
    check(fn, A, V, device=device)


def test_copies_between_devices_are_differentiable(device):
    x = autograd.tensor(A, requires_grad=True)                     # on the CPU
    y = x.to(device) * 2.0
    assert y.device == device
    z = autograd.tensor(A, device=device, requires_grad=True)
    w = z.cpu() ** 2
    assert w.device == "cpu"
    (y.sum() + w.to(device).sum()).backward()
    assert x.grad.device == "cpu" and z.grad.device == device
    np.testing.assert_allclose(host(x.grad), np.full_like(A, 2.0), **TOL)
    np.testing.assert_allclose(host(z.grad), 2 * A, **TOL)
    if device != "cpu":                          # nothing moves implicitly
        with pytest.raises((RuntimeError, ValueError), match="device"):
            x + z


# ---------------------------------------------------------------------------------------------
# the engine on device tensors
# ---------------------------------------------------------------------------------------------

def test_engine_accumulation_retain_graph_and_hooks(device):
    x = autograd.tensor(A, device=device, requires_grad=True)
    seen = []
    y = x * x
    y.register_hook(lambda g: seen.append(g.device) or g * 2.0)
    y.retain_grad()
    z = (y + x).sum()
    z.backward(retain_graph=True)
    assert seen == [device] and y.grad.device == device and x.grad.device == device
    first = host(x.grad)
    np.testing.assert_allclose(first, 4 * A + 1, **TOL)
    z.backward()                                  # accumulates
    np.testing.assert_allclose(host(x.grad), 2 * first, **TOL)
    with pytest.raises(RuntimeError, match="retain_graph"):
        z.backward()
    x.grad = None
    w = autograd.tensor(A, device=device, requires_grad=True)
    (w.exp().sum() + w.sum()).backward()            # two paths into one leaf
    np.testing.assert_allclose(host(w.grad), np.exp(A) + 1, **TOL)


def test_grad_with_create_graph(device):
    x = autograd.tensor(A, device=device, requires_grad=True)
    (g,) = autograd.grad((x ** 3).sum(), x, create_graph=True)
    assert g.device == device and g.requires_grad
    (gg,) = autograd.grad(g.sum(), x)
    assert gg.device == device
    np.testing.assert_allclose(host(gg), 6 * A, **TOL)


def test_backward_gradient_argument(device):
    x = autograd.tensor(A, device=device, requires_grad=True)
    (x * 2.0).backward(x.new_tensor(upstream(A.shape)))
    np.testing.assert_allclose(host(x.grad), 2 * upstream(A.shape), **TOL)
    if device != "cpu":
        with pytest.raises(RuntimeError, match="device"):
            (x * 2.0).backward(autograd.tensor(upstream(A.shape)))


def test_inplace_ops_and_version_counters(device):
    def fn(x):
        h = x * 1.0
        v0 = h._version
        h.add_(1.0).mul_(x).clamp_(-1.0, 2.0)
        assert h._version == v0 + 3
        h[0].zero_()
        return h.sigmoid()
    check(fn, A, device=device)
    x = autograd.tensor(A, device=device, requires_grad=True)
    y = x.exp()
    y.add_(1.0)                   # exp saved its result: backward must refuse
    with pytest.raises(RuntimeError, match="inplace"):
        y.sum().backward()
    with pytest.raises(RuntimeError, match="leaf"):
        x.add_(1.0)
    with autograd.no_grad():
        x.sub_(1.0)
    assert x.device == device and x.is_leaf


# ---------------------------------------------------------------------------------------------
# nn.functional
# ---------------------------------------------------------------------------------------------

IMG = values((2, 3, 6, 6), 7)
KER = values((4, 3, 3, 3), 8) * 0.3
BIAS4 = values((4,), 9)
TARGET = np.array([1, 0, 3], dtype=np.int64)
WEIGHT = values((4,), 12, 0.5, 2.0)

FUNCTIONAL = {
    "linear": (lambda x, w, b: F.linear(x, w, b), A, values((5, 4), 10), values((5,), 11)),
    "conv2d": (lambda x, w, b: F.conv2d(x, w, b, padding=1), IMG, KER, BIAS4),
    "conv2d_stride": (lambda x, w: F.conv2d(x, w, stride=2), IMG, KER),
    "max_pool2d": (lambda x: F.max_pool2d(x, 2), IMG),
    "avg_pool2d": (lambda x: F.avg_pool2d(x, 3, stride=2, padding=1), IMG),
    "cross_entropy": (lambda x, t: F.cross_entropy(x, t), A, TARGET),
    "cross_entropy_options": (lambda x, t: F.cross_entropy(x, t, weight=x.new_tensor(WEIGHT),
                                                           ignore_index=0, label_smoothing=0.1),
                              A, TARGET),
    "nll_loss_none": (lambda x, t: F.nll_loss(x.log_softmax(1), t, reduction="none"), A, TARGET),
    "mse_loss": (lambda x, y: F.mse_loss(x, y), A, B),
    "one_hot": (lambda t, x: (F.one_hot(t, 4) * x).sum(1), TARGET, A),
    "batch_norm_train": (lambda x, w, b: F.batch_norm(x, None, None, w, b, training=True),
                         IMG, values((3,), 13), values((3,), 14)),
    "pad_modes": (lambda x: F.pad(x, (1, 2), mode="reflect") + F.pad(x, (2, 1), mode="replicate")
                  + F.pad(x, (1, 2), mode="circular") + F.pad(x, (0, 3), value=0.5), A),
    "embedding": (lambda t, w: F.embedding(t, w, padding_idx=0, scale_grad_by_freq=True),
                  TARGET, M),
}


@pytest.mark.parametrize("name", FUNCTIONAL)
def test_functional(name, device):
    fn, *inputs = FUNCTIONAL[name]
    check(fn, *inputs, device=device, tol=dict(rtol=1e-4, atol=1e-4))


def test_double_backward_through_layers(device):
    # backward under create_graph builds the layers' gradients from differentiable ops
    def fn(x, w):
        y = F.max_pool2d(F.conv2d(x, w, padding=1).relu(), 2)
        loss = F.cross_entropy(y.flatten(1)[:, :4], autograd.tensor(TARGET[:2], device=x.device))
        (gw,) = autograd.grad(loss, w, create_graph=True)
        return (gw * gw).sum()
    check(fn, IMG, KER, device=device, tol=dict(rtol=1e-4, atol=1e-4))


def test_batch_norm_running_stats_on_device(device):
    def go(dev):
        bn = nn.BatchNorm2d(3).to(dev)
        x = autograd.tensor(IMG, device=dev, requires_grad=True)
        bn(x).pow(2).sum().backward()
        bn.eval()
        y = bn(x)
        for t in (bn.running_mean, bn.running_var, bn.num_batches_tracked, bn.weight.grad,
                  x.grad, y):
            assert t.device == dev
        return [host(t) for t in (bn.running_mean, bn.running_var, y, x.grad, bn.weight.grad)]
    for g, c in zip(go(device), go("cpu")):
        np.testing.assert_allclose(g, c, rtol=1e-4, atol=1e-4)


def test_dropout_mask_statistics(device):
    x = autograd.ones(64, 64, device=device, requires_grad=True)
    autograd.manual_seed(3)
    y = F.dropout(x, 0.25)
    y.sum().backward()
    assert y.device == device and x.grad.device == device
    out = host(y)
    kept = out != 0
    assert 0.70 < kept.mean() < 0.80
    np.testing.assert_allclose(out[kept], 1 / 0.75, rtol=1e-6)
    np.testing.assert_array_equal(host(x.grad), out)
    autograd.manual_seed(3)       # the same seed draws the same mask on every device
    np.testing.assert_array_equal(host(F.dropout(autograd.ones(64, 64), 0.25)), out)
    assert F.dropout(x, 0.25, training=False) is x


# ---------------------------------------------------------------------------------------------
# modules, state_dict, save/load
# ---------------------------------------------------------------------------------------------

def _cnn():
    autograd.manual_seed(0)
    return nn.Sequential(nn.Conv2d(3, 4, 3, padding=1), nn.BatchNorm2d(4), nn.ReLU(),
                         nn.MaxPool2d(2), nn.Flatten(), nn.Linear(4 * 3 * 3, 5))


def test_module_to_keeps_parameters_and_moves_grads(device):
    model = _cnn()
    params = list(model.parameters())
    model(autograd.tensor(IMG)).sum().backward()
    assert model.to(device) is model
    assert [id(p) for p in model.parameters()] == [id(p) for p in params]
    for p in params:
        assert isinstance(p, nn.Parameter) and p.is_leaf and p.requires_grad
        assert p.device == device and p.grad.device == device
    for b in model.buffers():
        assert b.device == device
    assert model[1].num_batches_tracked.dtype == autograd.int64
    model.zero_grad()
    out = model(autograd.tensor(IMG, device=device))
    out.sum().backward()
    assert all(p.grad.device == device for p in params)
    ref = _cnn()
    ref(autograd.tensor(IMG))
    np.testing.assert_allclose(host(out), host(ref(autograd.tensor(IMG))), rtol=1e-4, atol=1e-4)
    assert model.cpu() is model and all(p.device == "cpu" for p in params)


def test_state_dict_round_trip_and_save_load(device):
    model = _cnn().to(device)
    model(autograd.tensor(IMG, device=device))      # moves the running stats
    state = model.state_dict()
    assert all(t.device == device for t in state.values())
    fresh = nn.Sequential(nn.Conv2d(3, 4, 3, padding=1), nn.BatchNorm2d(4), nn.ReLU(),
                          nn.MaxPool2d(2), nn.Flatten(), nn.Linear(4 * 3 * 3, 5)).to(device)
    fresh.load_state_dict(state)
    buf = io.BytesIO()
    autograd.save(state, buf)
    buf.seek(0)
    loaded = autograd.load(buf, device=device)
    assert all(t.device == device for t in loaded.values())
    third = _cnn().to(device)
    third.load_state_dict(loaded)
    model.eval(), fresh.eval(), third.eval()
    x = autograd.tensor(IMG, device=device)
    want = host(model(x))
    np.testing.assert_array_equal(host(fresh(x)), want)
    np.testing.assert_array_equal(host(third(x)), want)
    assert all(p.device == device for p in third.parameters())


# ---------------------------------------------------------------------------------------------
# optimizers
# ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("make", [
    lambda ps: autograd.optim.SGD(ps, lr=0.1, momentum=0.9, weight_decay=1e-2, nesterov=True),
    lambda ps: autograd.optim.Adam(ps, lr=0.05, weight_decay=1e-2, amsgrad=True),
    lambda ps: autograd.optim.AdamW(ps, lr=0.05),
], ids=["sgd", "adam", "adamw"])
def test_optimizer_steps_give_the_cpu_numbers(make, device):
    def go(dev):
        w = autograd.tensor(M, device=dev, requires_grad=True)
        b = autograd.tensor(values((5,), 15), device=dev, requires_grad=True)
        opt = make([w, b])
        x = autograd.tensor(A, device=dev)
        for _ in range(3):
            opt.zero_grad()
            ((x @ w + b).tanh() ** 2).mean().backward()
            opt.step()
        for st in opt.state.values():
            for v in st.values():
                if isinstance(v, autograd.Tensor):
                    assert v.device == dev
        # the optimizer's state_dict loads into a fresh optimizer on the device
        again = make([w, b])
        again.load_state_dict(opt.state_dict())
        for st in again.state.values():
            for k, v in st.items():
                if isinstance(v, autograd.Tensor) and k != "step":
                    assert v.device == dev
        assert w.device == dev and w.grad.device == dev
        return host(w), host(b)
    for g, c in zip(go(device), go("cpu")):
        np.testing.assert_allclose(g, c, rtol=1e-5, atol=1e-5)


# ---------------------------------------------------------------------------------------------
# a short training run
# ---------------------------------------------------------------------------------------------

def _train_digits_mlp(device):
    """Test accuracy of an MLP trained on device for two epochs over 640 digits images."""
    from autograd.datasets import load_digits
    autograd.manual_seed(0)
    train_x, train_y = load_digits("train")
    test_x, test_y = load_digits("test")
    train_x = train_x[:640].reshape(-1, 64).to(device)
    train_y = train_y[:640].to(device)
    test_x, test_y = test_x.reshape(-1, 64).to(device), test_y.to(device)
    model = nn.Sequential(nn.Linear(64, 64), nn.ReLU(), nn.Linear(64, 10)).to(device)
    opt = autograd.optim.Adam(model.parameters(), lr=0.01)
    loader = DataLoader(TensorDataset(train_x, train_y), batch_size=32, shuffle=True,
                        generator=autograd.Generator().manual_seed(0))
    for _ in range(2):
        for x, y in loader:
            assert x.device == device and y.device == device
            loss = F.cross_entropy(model(x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
    assert all(p.grad.device == device for p in model.parameters())
    with autograd.no_grad():
        return (model(test_x).argmax(1) == test_y).float().mean().item()


def test_short_training_run_on_device(device):
    # > 85% on the test split (87.2% today), within a percent of the same run on the CPU
    acc = _train_digits_mlp(device)
    assert acc > 0.85, acc
    assert abs(acc - _train_digits_mlp("cpu")) <= 0.01
