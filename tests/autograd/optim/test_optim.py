"""optim: SGD (every option combination), Adam and AdamW against the update rules written out
with NumPy, param groups, zero_grad, state_dict round trips, errors; and against PyTorch's
optimizers when PyTorch is installed."""

import itertools

import numpy as np
import pytest

import autograd
from autograd import nn, optim

SHAPES = [(3, 4), (5,)]
STEPS = 4


def _grads(seed, dtype=np.float64):
    """STEPS lists of gradients, one per parameter shape."""
    rng = np.random.default_rng(seed)
    return [[rng.standard_normal(s).astype(dtype) for s in SHAPES] for _ in range(STEPS)]


def _params(seed, dtype=np.float64):
    rng = np.random.default_rng(seed + 100)
    return [rng.standard_normal(s).astype(dtype) for s in SHAPES]


def _run(make_opt, init, grads):
    """Our optimizer over parameters starting at init, fed the given gradients; the
    parameter values after each step."""
    params = [nn.Parameter(autograd.tensor(v)) for v in init]
    opt = make_opt(params)
    history = []
    for step in grads:
        for p, g in zip(params, step):
            p.grad = autograd.tensor(g)
        opt.step()
        history.append([p.detach().numpy().copy() for p in params])
    return history


# -- NumPy references (PyTorch's documented algorithms) --------------------------------------------

def _sgd_ref(init, grads, lr, momentum=0, dampening=0, weight_decay=0, nesterov=False,
             maximize=False):
    params = [v.copy() for v in init]
    bufs = [None] * len(params)
    history = []
    for step in grads:
        for i, g in enumerate(step):
            g = -g if maximize else g
            g = g + weight_decay * params[i]
            if momentum != 0:
                if bufs[i] is None:
                    bufs[i] = g.copy()
                else:
                    bufs[i] = momentum * bufs[i] + (1 - dampening) * g
                g = g + momentum * bufs[i] if nesterov else bufs[i]
            params[i] = params[i] - lr * g
        history.append([p.copy() for p in params])
    return history


def _adam_ref(init, grads, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
              amsgrad=False, maximize=False, decoupled=False):
    b1, b2 = betas
    params = [v.copy() for v in init]
    m = [np.zeros_like(v) for v in init]
    v = [np.zeros_like(x) for x in init]
    vmax = [np.zeros_like(x) for x in init]
    history = []
    for t, step in enumerate(grads, 1):
        for i, g in enumerate(step):
            g = -g if maximize else g
            if decoupled:
                params[i] = params[i] * (1 - lr * weight_decay)
            else:
                g = g + weight_decay * params[i]
            m[i] = b1 * m[i] + (1 - b1) * g
            v[i] = b2 * v[i] + (1 - b2) * g * g
            vmax[i] = np.maximum(vmax[i], v[i])
            second = vmax[i] if amsgrad else v[i]
            m_hat = m[i] / (1 - b1 ** t)
            denom = np.sqrt(second) / np.sqrt(1 - b2 ** t) + eps
            params[i] = params[i] - lr * m_hat / denom
        history.append([p.copy() for p in params])
    return history


def _assert_history(ours, ref, rtol=1e-10, atol=1e-12):
    for step, (a, b) in enumerate(zip(ours, ref)):
        for x, y in zip(a, b):
            np.testing.assert_allclose(x, y, rtol=rtol, atol=atol, err_msg=f"step {step}")


# -- SGD ------------------------------------------------------------------------------------------

SGD_CASES = list(itertools.product([0.0, 0.9], [0.0, 0.3], [0.0, 0.1], [False, True],
                                   [False, True]))


@pytest.mark.parametrize("momentum,dampening,weight_decay,nesterov,maximize", SGD_CASES)
def test_sgd_matches_numpy(momentum, dampening, weight_decay, nesterov, maximize):
    kw = dict(lr=0.1, momentum=momentum, dampening=dampening, weight_decay=weight_decay,
              nesterov=nesterov, maximize=maximize)
    if nesterov and (momentum <= 0 or dampening != 0):
        with pytest.raises(ValueError, match="Nesterov momentum requires a momentum and zero "
                                             "dampening"):
            optim.SGD([nn.Parameter(autograd.zeros(1))], **kw)
        return
    init, grads = _params(1), _grads(1)
    ours = _run(lambda ps: optim.SGD(ps, **kw), init, grads)
    _assert_history(ours, _sgd_ref(init, grads, **kw))


def test_sgd_float32_and_real_backward():
    model = nn.Linear(3, 2)
    w0 = model.weight.detach().numpy().copy()
    x = autograd.randn(4, 3)
    opt = optim.SGD(model.parameters(), lr=0.5, momentum=0.9)
    model(x).sum().backward()
    g = model.weight.grad.numpy().copy()
    opt.step()
    assert model.weight.dtype == autograd.float32
    np.testing.assert_allclose(model.weight.detach().numpy(), w0 - 0.5 * g, rtol=1e-6)
    assert model.weight.grad_fn is None and model.weight.requires_grad
    buf = opt.state[model.weight]["momentum_buffer"]
    np.testing.assert_array_equal(buf.numpy(), g)
    assert "momentum_buffer" not in optim.SGD(model.parameters(), lr=0.1).state[model.weight]


def test_sgd_skips_params_without_grad_and_bumps_version():
    a, b = nn.Parameter(autograd.ones(2)), nn.Parameter(autograd.ones(2))
    a.grad = autograd.ones(2)
    version = a._version
    optim.SGD([a, b], lr=0.5).step()
    assert a.tolist() == [0.5, 0.5] and b.tolist() == [1.0, 1.0]
    assert a._version > version


# -- Adam and AdamW -----------------------------------------------------------------------------

ADAM_CASES = [dict(), dict(lr=0.01, betas=(0.8, 0.99), eps=1e-6),
              dict(lr=0.01, weight_decay=0.1), dict(lr=0.01, amsgrad=True),
              dict(lr=0.01, maximize=True), dict(lr=0.01, betas=(0.3, 0.9)),
              dict(lr=0.01, weight_decay=0.1, amsgrad=True, maximize=True)]


@pytest.mark.parametrize("kw", ADAM_CASES)
def test_adam_matches_numpy(kw):
    init, grads = _params(2), _grads(2)
    ours = _run(lambda ps: optim.Adam(ps, **kw), init, grads)
    _assert_history(ours, _adam_ref(init, grads, **kw), rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("kw", [dict(), dict(lr=0.01, weight_decay=0.3),
                                dict(lr=0.01, weight_decay=0.1, amsgrad=True, maximize=True)])
def test_adamw_matches_numpy(kw):
    init, grads = _params(3), _grads(3)
    ours = _run(lambda ps: optim.AdamW(ps, **kw), init, grads)
    ref_kw = dict(kw, weight_decay=kw.get("weight_decay", 1e-2), decoupled=True)
    _assert_history(ours, _adam_ref(init, grads, **ref_kw), rtol=1e-9, atol=1e-12)


def test_adam_state():
    p = nn.Parameter(autograd.ones(3))
    opt = optim.Adam([p], amsgrad=True)
    p.grad = autograd.ones(3)
    opt.step()
    opt.step()
    state = opt.state[p]
    assert state["step"] == 2
    assert set(state) == {"step", "exp_avg", "exp_avg_sq", "max_exp_avg_sq"}
    assert state["exp_avg"].dtype == autograd.float32


# -- errors ----------------------------------------------------------------------------------

def test_invalid_hyperparameters():
    ps = [nn.Parameter(autograd.zeros(1))]
    cases = [(lambda: optim.SGD(ps, lr=-1), "Invalid learning rate: -1"),
             (lambda: optim.SGD(ps, momentum=-0.5), "Invalid momentum value: -0.5"),
             (lambda: optim.SGD(ps, weight_decay=-1), "Invalid weight_decay value: -1"),
             (lambda: optim.Adam(ps, lr=-0.1), "Invalid learning rate: -0.1"),
             (lambda: optim.Adam(ps, eps=-1.0), "Invalid epsilon value: -1.0"),
             (lambda: optim.Adam(ps, betas=(1.0, 0.9)), "Invalid beta parameter at index 0"),
             (lambda: optim.Adam(ps, betas=(0.9, -0.1)), "Invalid beta parameter at index 1"),
             (lambda: optim.AdamW(ps, weight_decay=-1), "Invalid weight_decay value: -1")]
    for make, message in cases:
        with pytest.raises(ValueError, match=message):
            make()


def test_invalid_params():
    p = nn.Parameter(autograd.zeros(1))
    with pytest.raises(ValueError, match="empty parameter list"):
        optim.SGD([], lr=0.1)
    with pytest.raises(TypeError, match="iterable of Tensors"):
        optim.SGD(p, lr=0.1)
    with pytest.raises(TypeError, match="can only optimize Tensors"):
        optim.SGD([1.0], lr=0.1)
    with pytest.raises(TypeError, match="ordered collections"):
        optim.SGD([{"params": {p}}], lr=0.1)
    with pytest.raises(ValueError, match="non-leaf"):
        optim.SGD([p * 2], lr=0.1)
    opt = optim.SGD([p], lr=0.1)
    with pytest.raises(ValueError, match="more than one parameter group"):
        opt.add_param_group({"params": [p]})


# -- param groups, zero_grad, state_dict ---------------------------------------------------------

def test_param_groups():
    a, b = nn.Parameter(autograd.ones(2)), nn.Parameter(autograd.ones(2))
    opt = optim.SGD([{"params": [a]}, {"params": b, "lr": 0.5}], lr=0.1, momentum=0.9)
    assert [g["lr"] for g in opt.param_groups] == [0.1, 0.5]
    assert opt.param_groups[1]["momentum"] == 0.9 and opt.param_groups[1]["params"] == [b]
    a.grad, b.grad = autograd.ones(2), autograd.ones(2)
    opt.step()
    assert a.tolist() == pytest.approx([0.9, 0.9]) and b.tolist() == [0.5, 0.5]
    c = nn.Parameter(autograd.ones(1))
    opt.add_param_group({"params": [c], "lr": 2.0})
    assert opt.param_groups[2]["momentum"] == 0.9 and opt.param_groups[2]["lr"] == 2.0
    opt.param_groups[0]["lr"] = 0.0  # a scheduler changes lr in place
    opt.step()
    assert a.tolist() == pytest.approx([0.9, 0.9])
    assert repr(opt).startswith("SGD (\nParameter Group 0\n    dampening: 0\n")


def test_named_parameters():
    """(name, tensor) pairs as PyTorch 2.6+ takes them: the names go to 'param_names'."""
    m = nn.Linear(2, 1)
    opt = optim.Adam(m.named_parameters(), lr=0.1)
    assert opt.param_groups[0]["params"] == [m.weight, m.bias]
    assert opt.state_dict()["param_groups"][0]["param_names"] == ["weight", "bias"]
    other = nn.Linear(2, 1)
    with pytest.raises(ValueError, match="with/without names"):
        opt.add_param_group({"params": other.parameters()})
    with pytest.raises(ValueError, match="param names are missing"):
        optim.SGD([("w", other.weight), other.bias])
    plain = optim.Adam(m.parameters())
    plain.load_state_dict(opt.state_dict())
    assert plain.param_groups[0]["param_names"] == ["weight", "bias"]
    opt.load_state_dict(optim.Adam(m.parameters()).state_dict())
    assert opt.param_groups[0]["param_names"] == ["weight", "bias"]


def test_zero_grad():
    model = nn.Linear(3, 2)
    opt = optim.Adam(model.parameters())
    model(autograd.randn(2, 3)).sum().backward()
    opt.zero_grad(set_to_none=False)
    assert all(p.grad is not None and not p.grad.any() for p in model.parameters())
    opt.zero_grad()
    assert all(p.grad is None for p in model.parameters())
    opt.step()  # no gradients: nothing changes, no state is made
    assert len(opt.state) == 0


def test_state_dict_format():
    model = nn.Sequential(nn.Linear(3, 2), nn.Linear(2, 1))
    opt = optim.Adam([{"params": model[0].parameters()},
                      {"params": model[1].parameters(), "lr": 0.1}])
    model(autograd.randn(4, 3)).sum().backward()
    opt.step()
    sd = opt.state_dict()
    assert set(sd) == {"state", "param_groups"}
    assert [g["params"] for g in sd["param_groups"]] == [[0, 1], [2, 3]]
    assert sd["param_groups"][1]["lr"] == 0.1 and sd["param_groups"][0]["betas"] == (0.9, 0.999)
    assert sorted(sd["state"]) == [0, 1, 2, 3]
    step = sd["state"][0]["step"]
    assert isinstance(step, autograd.Tensor) and step.shape == () and step.item() == 1.0
    assert step.dtype == autograd.float32
    assert sd["state"][0]["exp_avg"] is opt.state[model[0].weight]["exp_avg"]


@pytest.mark.parametrize("make", [lambda ps: optim.SGD(ps, lr=0.1, momentum=0.9),
                                  lambda ps: optim.Adam(ps, lr=0.01, amsgrad=True),
                                  lambda ps: optim.AdamW(ps, lr=0.01)])
def test_state_dict_round_trip(make):
    init, grads = _params(4), _grads(4)
    first = [nn.Parameter(autograd.tensor(v)) for v in init]
    opt = make(first)
    for step in grads[:2]:
        for p, g in zip(first, step):
            p.grad = autograd.tensor(g)
        opt.step()
    sd = opt.state_dict()
    second = [nn.Parameter(autograd.tensor(p.detach().numpy())) for p in first]
    opt2 = make(second)
    opt2.param_groups[0]["lr"] = 123.0  # restored from the state dict
    opt2.load_state_dict(sd)
    assert opt2.param_groups[0]["lr"] == opt.param_groups[0]["lr"]
    assert opt2.param_groups[0]["params"] == second
    for k, v in opt.state[first[0]].items():
        w = opt2.state[second[0]][k]
        if isinstance(v, autograd.Tensor):
            np.testing.assert_array_equal(v.numpy(), w.numpy())
            assert v.data_ptr() != w.data_ptr()  # a copy, not shared
        else:
            assert v == w
    for step in grads[2:]:
        for p, q, g in zip(first, second, step):
            p.grad, q.grad = autograd.tensor(g), autograd.tensor(g)
        opt.step()
        opt2.step()
    for p, q in zip(first, second):
        np.testing.assert_array_equal(p.detach().numpy(), q.detach().numpy())


def test_load_state_dict_errors():
    a, b = nn.Parameter(autograd.ones(2)), nn.Parameter(autograd.ones(2))
    sd = optim.SGD([a, b], lr=0.1).state_dict()
    with pytest.raises(ValueError, match="doesn't match the size"):
        optim.SGD([a], lr=0.1).load_state_dict(sd)
    with pytest.raises(ValueError, match="different number of parameter groups"):
        optim.SGD([{"params": [a]}, {"params": [b]}], lr=0.1).load_state_dict(sd)


def test_closure():
    p = nn.Parameter(autograd.tensor([2.0]))
    opt = optim.SGD([p], lr=0.25)

    def closure():
        opt.zero_grad()
        loss = (p * p).sum()
        loss.backward()
        return loss

    with autograd.no_grad():
        loss = opt.step(closure)
    assert loss.item() == 4.0 and p.item() == 1.0


def test_optimizer_trains_a_model():
    autograd.manual_seed(0)
    x = autograd.randn(64, 5)
    y = (x[:, :1] * 2 - x[:, 1:2]).detach()
    for make in (lambda ps: optim.SGD(ps, lr=0.05, momentum=0.9),
                 lambda ps: optim.Adam(ps, lr=0.05)):
        model = nn.Sequential(nn.Linear(5, 8), nn.Tanh(), nn.Linear(8, 1))
        opt = make(model.parameters())
        loss_fn = nn.MSELoss()
        first = loss_fn(model(x), y).item()
        for _ in range(40):
            opt.zero_grad()
            loss = loss_fn(model(x), y)
            loss.backward()
            opt.step()
        assert loss.item() < 0.2 * first


# -- against PyTorch --------------------------------------------------------------------------

def _torch_run(torch, make, init, grads):
    params = [torch.nn.Parameter(torch.from_numpy(v.copy())) for v in init]
    opt = make(params)
    history = []
    for step in grads:
        for p, g in zip(params, step):
            p.grad = torch.from_numpy(g.copy())
        opt.step()
        history.append([p.detach().numpy().copy() for p in params])
    return history, opt


@pytest.mark.parametrize("name,kw", [
    ("SGD", dict(lr=0.1, momentum=0.9, dampening=0.1, weight_decay=0.01)),
    ("SGD", dict(lr=0.1, momentum=0.9, nesterov=True, maximize=True)),
    ("Adam", dict(lr=0.01, weight_decay=0.1, amsgrad=True)),
    ("AdamW", dict(lr=0.01, betas=(0.3, 0.9), maximize=True))])
def test_against_pytorch(name, kw):
    torch = pytest.importorskip("torch")
    for dtype, rtol in ((np.float64, 1e-12), (np.float32, 1e-5)):
        init, grads = _params(5, dtype), _grads(5, dtype)
        ours = _run(lambda ps: getattr(optim, name)(ps, **kw), init, grads)
        theirs, topt = _torch_run(torch, lambda ps: getattr(torch.optim, name)(ps, **kw), init,
                                  grads)
        _assert_history(ours, theirs, rtol=rtol, atol=rtol * 1e-2)
    params = [nn.Parameter(autograd.tensor(v)) for v in init]
    opt = getattr(optim, name)(params, **kw)
    for p, g in zip(params, grads[0]):
        p.grad = autograd.tensor(g)
    opt.step()
    ours_sd, theirs_sd = opt.state_dict(), topt.state_dict()
    assert ours_sd["param_groups"][0].keys() == theirs_sd["param_groups"][0].keys()
    assert ours_sd["state"][0].keys() == theirs_sd["state"][0].keys()


@pytest.mark.parametrize("name,kw", [
    ("SGD", dict(lr=0.1, momentum=0.9, dampening=0.1, weight_decay=0.01)),
    ("SGD", dict(lr=0.1, momentum=0.9, nesterov=True, maximize=True)),
    ("Adam", dict(lr=0.01, weight_decay=0.1)),
    ("AdamW", dict(lr=0.01, betas=(0.3, 0.9), maximize=True)),
    ("AdamW", dict(lr=0.01))])
def test_fused_updates_on_every_device_match_pytorch(device, name, kw):
    """SGD with momentum and Adam/AdamW update all of a group's parameters through
    carray.nn's fused steps (one launch per 16 parameters on the gpu): the trajectory over
    several steps of 18 parameters (two launches) matches PyTorch's on every device."""
    torch = pytest.importorskip("torch")
    for dtype, rtol in ((np.float64, 1e-12), (np.float32, 1e-5)):
        rng = np.random.default_rng(3)
        shapes = [(3, 4), (5,), (), (2, 0), (7, 1, 2), (9,)] * 3
        init = [rng.standard_normal(s).astype(dtype) for s in shapes]
        grads = [[rng.standard_normal(s).astype(dtype) for s in shapes] for _ in range(STEPS)]
        params = [nn.Parameter(autograd.tensor(v).to(device)) for v in init]
        opt = getattr(optim, name)(params, **kw)
        ours = []
        for step in grads:
            for p, g in zip(params, step):
                p.grad = autograd.tensor(g).to(device)
            opt.step()
            ours.append([p.detach().cpu().numpy().copy() for p in params])
        theirs, _ = _torch_run(torch, lambda ps: getattr(torch.optim, name)(ps, **kw), init,
                               grads)
        _assert_history(ours, theirs, rtol=rtol, atol=rtol * 1e-2)
