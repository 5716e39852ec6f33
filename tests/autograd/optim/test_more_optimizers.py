"""RMSprop, Adagrad, Adamax, NAdam and RAdam: trajectories against the update rules written
out with NumPy (no PyTorch needed) and against PyTorch's single-tensor implementations on
cpu and gpu; state_dict formats and round trips; errors."""

import numpy as np
import pytest

import autograd
from autograd import nn, optim

SHAPES = [(3, 4), (5,)]
STEPS = 8  # enough for RAdam to leave its un-rectified warm-up (rho_t > 5 from step 6)


def _data(seed, dtype=np.float64):
    rng = np.random.default_rng(seed)
    init = [rng.standard_normal(s).astype(dtype) for s in SHAPES]
    grads = [[rng.standard_normal(s).astype(dtype) for s in SHAPES] for _ in range(STEPS)]
    return init, grads


def _run(make, init, grads, device="cpu"):
    """Our optimizer fed the given gradients; the parameters after each step, and it."""
    params = [nn.Parameter(autograd.tensor(v, device=device)) for v in init]
    opt = make(params)
    history = []
    for step in grads:
        for p, g in zip(params, step):
            p.grad = autograd.tensor(g, device=device)
        opt.step()
        history.append([p.detach().cpu().numpy().copy() for p in params])
    return history, opt


# -- NumPy references (PyTorch's documented algorithms), one parameter at a time ----------------

def _rmsprop(p, g, s, t, lr=1e-2, alpha=0.99, eps=1e-8, weight_decay=0, momentum=0,
             centered=False, maximize=False):
    g = (-g if maximize else g) + weight_decay * p
    s["v"] = alpha * s.get("v", 0) + (1 - alpha) * g * g
    if centered:
        s["gbar"] = alpha * s.get("gbar", 0) + (1 - alpha) * g
        avg = np.sqrt(s["v"] - s["gbar"] ** 2) + eps
    else:
        avg = np.sqrt(s["v"]) + eps
    if momentum > 0:
        s["buf"] = momentum * s.get("buf", 0) + g / avg
        return p - lr * s["buf"]
    return p - lr * g / avg


def _adagrad(p, g, s, t, lr=1e-2, lr_decay=0, weight_decay=0, initial_accumulator_value=0,
             eps=1e-10, maximize=False):
    g = (-g if maximize else g) + weight_decay * p
    s["sum"] = s.get("sum", initial_accumulator_value) + g * g
    return p - lr / (1 + (t - 1) * lr_decay) * g / (np.sqrt(s["sum"]) + eps)


def _adamax(p, g, s, t, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
            maximize=False):
    g = (-g if maximize else g) + weight_decay * p
    s["m"] = betas[0] * s.get("m", 0) + (1 - betas[0]) * g
    s["u"] = np.maximum(betas[1] * s.get("u", 0), np.abs(g) + eps)
    return p - lr / (1 - betas[0] ** t) * s["m"] / s["u"]


def _adam_moments(p, g, s, lr, betas, weight_decay, decoupled, maximize):
    g = -g if maximize else g
    if decoupled:
        p = p * (1 - lr * weight_decay)
    else:
        g = g + weight_decay * p
    s["m"] = betas[0] * s.get("m", 0) + (1 - betas[0]) * g
    s["v"] = betas[1] * s.get("v", 0) + (1 - betas[1]) * g * g
    return p, g


def _nadam(p, g, s, t, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
           momentum_decay=4e-3, decoupled_weight_decay=False, maximize=False):
    p, g = _adam_moments(p, g, s, lr, betas, weight_decay, decoupled_weight_decay, maximize)
    mu = betas[0] * (1 - 0.5 * 0.96 ** (t * momentum_decay))
    mu_next = betas[0] * (1 - 0.5 * 0.96 ** ((t + 1) * momentum_decay))
    s["prod"] = s.get("prod", 1.0) * mu
    denom = np.sqrt(s["v"] / (1 - betas[1] ** t)) + eps
    return (p - lr * (1 - mu) / (1 - s["prod"]) * g / denom
            - lr * mu_next / (1 - s["prod"] * mu_next) * s["m"] / denom)


def _radam(p, g, s, t, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
           decoupled_weight_decay=False, maximize=False):
    p, g = _adam_moments(p, g, s, lr, betas, weight_decay, decoupled_weight_decay, maximize)
    b1, b2 = betas
    m_hat = s["m"] / (1 - b1 ** t)
    rho_inf = 2 / (1 - b2) - 1
    rho = rho_inf - 2 * t * b2 ** t / (1 - b2 ** t)
    if rho <= 5:
        return p - lr * m_hat
    rect = np.sqrt((rho - 4) * (rho - 2) * rho_inf / ((rho_inf - 4) * (rho_inf - 2) * rho))
    return p - lr * m_hat * np.sqrt(1 - b2 ** t) / (np.sqrt(s["v"]) + eps) * rect


def _reference(rule, init, grads, kw):
    params = [v.copy() for v in init]
    states = [{} for _ in init]
    history = []
    for t, step in enumerate(grads, 1):
        params = [rule(p, g, s, t, **kw) for p, g, s in zip(params, step, states)]
        history.append([p.copy() for p in params])
    return history


CASES = [
    ("RMSprop", _rmsprop, dict()),
    ("RMSprop", _rmsprop, dict(lr=0.01, alpha=0.9, eps=1e-6, weight_decay=0.1)),
    ("RMSprop", _rmsprop, dict(lr=0.01, momentum=0.9, centered=True, maximize=True)),
    ("RMSprop", _rmsprop, dict(lr=0.01, momentum=0.5, weight_decay=0.05)),
    ("Adagrad", _adagrad, dict()),
    ("Adagrad", _adagrad, dict(lr=0.1, lr_decay=0.05, weight_decay=0.1,
                               initial_accumulator_value=0.5, eps=1e-6, maximize=True)),
    ("Adamax", _adamax, dict()),
    ("Adamax", _adamax, dict(lr=0.01, betas=(0.8, 0.99), weight_decay=0.1, maximize=True)),
    ("NAdam", _nadam, dict(lr=0.01)),
    ("NAdam", _nadam, dict(lr=0.01, weight_decay=0.1, momentum_decay=0.01)),
    ("NAdam", _nadam, dict(lr=0.01, weight_decay=0.1, decoupled_weight_decay=True,
                           maximize=True)),
    ("RAdam", _radam, dict(lr=0.01)),
    ("RAdam", _radam, dict(lr=0.01, betas=(0.8, 0.9), weight_decay=0.1)),
    ("RAdam", _radam, dict(lr=0.01, weight_decay=0.1, decoupled_weight_decay=True,
                           maximize=True)),
]
IDS = [f"{name}-{i}" for i, (name, _, _) in enumerate(CASES)]


@pytest.mark.parametrize("name,rule,kw", CASES, ids=IDS)
def test_matches_numpy(name, rule, kw):
    init, grads = _data(1)
    ours, _ = _run(lambda ps: getattr(optim, name)(ps, **kw), init, grads)
    ref = _reference(rule, init, grads, kw)
    # NAdam's product of momenta is kept in float32 (PyTorch's rounding), hence rtol 1e-7
    rtol = 1e-7 if name == "NAdam" else 1e-10
    for step, (a, b) in enumerate(zip(ours, ref)):
        for x, y in zip(a, b):
            np.testing.assert_allclose(x, y, rtol=rtol, atol=1e-12, err_msg=f"step {step}")


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


@pytest.mark.parametrize("name,rule,kw", CASES, ids=IDS)
def test_against_pytorch(name, rule, kw, device):
    torch = pytest.importorskip("torch")
    for dtype, rtol in ((np.float64, 1e-12), (np.float32, 2e-5)):
        init, grads = _data(2, dtype)
        ours, opt = _run(lambda ps: getattr(optim, name)(ps, **kw), init, grads, device)
        theirs, topt = _torch_run(
            torch, lambda ps: getattr(torch.optim, name)(ps, foreach=False, **kw), init, grads)
        for step, (a, b) in enumerate(zip(ours, theirs)):
            for x, y in zip(a, b):
                assert x.dtype == dtype
                np.testing.assert_allclose(x, y, rtol=rtol, atol=rtol * 1e-2,
                                           err_msg=f"{dtype.__name__} step {step}")
        ours_sd, theirs_sd = opt.state_dict(), topt.state_dict()
        assert ours_sd["param_groups"] == [
            {k: v for k, v in g.items() if k != "foreach"} | {"foreach": None}
            for g in theirs_sd["param_groups"]]
        for i in range(len(SHAPES)):
            assert list(ours_sd["state"][i]) == list(theirs_sd["state"][i])
            for key, value in theirs_sd["state"][i].items():
                np.testing.assert_allclose(ours_sd["state"][i][key].cpu().numpy(),
                                           value.numpy(), rtol=rtol, atol=rtol * 1e-2)
                if key != "step" and key != "mu_product":
                    assert ours_sd["state"][i][key].device == device


@pytest.mark.parametrize("name,rule,kw", CASES, ids=IDS)
def test_state_dict_round_trip(name, rule, kw, device):
    init, grads = _data(3)
    make = lambda ps: getattr(optim, name)(ps, **kw)  # noqa: E731
    first = [nn.Parameter(autograd.tensor(v, device=device)) for v in init]
    opt = make(first)
    for step in grads[:3]:
        for p, g in zip(first, step):
            p.grad = autograd.tensor(g, device=device)
        opt.step()
    second = [nn.Parameter(autograd.tensor(p.detach().cpu().numpy(), device=device))
              for p in first]
    opt2 = make(second)
    opt2.param_groups[0]["lr"] = 123.0
    opt2.load_state_dict(opt.state_dict())
    assert opt2.param_groups[0]["lr"] == opt.param_groups[0]["lr"]
    for step in grads[3:]:
        for p, q, g in zip(first, second, step):
            p.grad = autograd.tensor(g, device=device)
            q.grad = autograd.tensor(g, device=device)
        opt.step()
        opt2.step()
    # equal, except that NAdam's float32 mu_product loads as the parameters' float64 (PyTorch too)
    for p, q in zip(first, second):
        np.testing.assert_allclose(p.detach().cpu().numpy(), q.detach().cpu().numpy(),
                                   rtol=1e-9 if name == "NAdam" else 0, atol=0)


def test_load_pytorch_state_dict():
    """A state_dict saved by PyTorch's optimizer (tensors converted) continues identically."""
    torch = pytest.importorskip("torch")
    init, grads = _data(4)
    theirs, topt = _torch_run(torch, lambda ps: torch.optim.NAdam(ps, lr=0.01, foreach=False),
                              init, grads[:4])
    sd = topt.state_dict()
    converted = {"param_groups": sd["param_groups"],
                 "state": {i: {k: autograd.tensor(v.numpy()) for k, v in s.items()}
                           for i, s in sd["state"].items()}}
    params = [nn.Parameter(autograd.tensor(v)) for v in theirs[-1]]
    opt = optim.NAdam(params, lr=0.5)
    opt.load_state_dict(converted)
    assert opt.state[params[0]]["step"] == 4
    # PyTorch, loading its own state_dict the same way (mu_product becomes float64 there too)
    tparams = [torch.nn.Parameter(torch.from_numpy(v.copy())) for v in theirs[-1]]
    topt2 = torch.optim.NAdam(tparams, lr=0.5, foreach=False)
    topt2.load_state_dict(sd)
    for step in grads[4:]:
        for p, q, g in zip(params, tparams, step):
            p.grad = autograd.tensor(g)
            q.grad = torch.from_numpy(g.copy())
        opt.step()
        topt2.step()
    for p, q in zip(params, tparams):
        np.testing.assert_allclose(p.detach().numpy(), q.detach().numpy(), rtol=1e-12)


def test_adagrad_state_made_at_construction_and_for_new_groups():
    a, b = nn.Parameter(autograd.ones(2)), nn.Parameter(autograd.ones(3))
    opt = optim.Adagrad([a], initial_accumulator_value=0.25)
    assert opt.state[a]["step"] == 0 and opt.state[a]["sum"].tolist() == [0.25, 0.25]
    opt.add_param_group({"params": [b], "lr": 0.5})
    assert b not in opt.state  # made lazily, as PyTorch's
    b.grad = autograd.ones(3)
    opt.step()
    assert opt.state[b]["step"] == 1 and opt.state[a]["step"] == 0
    assert opt.state[b]["sum"].tolist() == [1.25] * 3


def test_per_group_options_and_zero_grad():
    a, b = nn.Parameter(autograd.ones(2)), nn.Parameter(autograd.ones(2))
    opt = optim.RMSprop([{"params": [a]}, {"params": [b], "momentum": 0.9, "centered": True}],
                        lr=0.1)
    a.grad, b.grad = autograd.ones(2), autograd.ones(2)
    opt.step()
    assert set(opt.state[a]) == {"step", "square_avg"}
    assert set(opt.state[b]) == {"step", "square_avg", "momentum_buffer", "grad_avg"}
    opt.zero_grad()
    assert a.grad is None and b.grad is None
    a.grad = autograd.ones(2)
    opt.zero_grad(set_to_none=False)
    assert a.grad.tolist() == [0.0, 0.0]


def test_invalid_hyperparameters():
    ps = [nn.Parameter(autograd.zeros(1))]
    cases = [(lambda: optim.RMSprop(ps, alpha=-1), "Invalid alpha value: -1"),
             (lambda: optim.RMSprop(ps, momentum=-1), "Invalid momentum value: -1"),
             (lambda: optim.RMSprop(ps, lr=-1), "Invalid learning rate: -1"),
             (lambda: optim.Adagrad(ps, lr_decay=-1), "Invalid lr_decay value: -1"),
             (lambda: optim.Adagrad(ps, initial_accumulator_value=-1),
              "Invalid initial_accumulator_value value: -1"),
             (lambda: optim.Adagrad(ps, eps=-1), "Invalid epsilon value: -1"),
             (lambda: optim.Adamax(ps, betas=(1.0, 0.9)), "Invalid beta parameter at index 0"),
             (lambda: optim.NAdam(ps, momentum_decay=-1), "Invalid momentum_decay value: -1"),
             (lambda: optim.NAdam(ps, weight_decay=-1), "Invalid weight_decay value: -1"),
             (lambda: optim.RAdam(ps, betas=(0.9, 1.0)), "Invalid beta parameter at index 1")]
    for make, message in cases:
        with pytest.raises(ValueError, match=message):
            make()


@pytest.mark.parametrize("name", ["RMSprop", "Adagrad", "Adamax", "NAdam", "RAdam"])
def test_trains_a_model(name):
    x = autograd.randn(64, 5)
    y = (x[:, :1] * 2 - x[:, 1:2]).detach()
    model = nn.Sequential(nn.Linear(5, 8), nn.Tanh(), nn.Linear(8, 1))
    opt = getattr(optim, name)(model.parameters(), lr=0.05)
    loss_fn = nn.MSELoss()
    first = loss_fn(model(x), y).item()
    for _ in range(80):  # RAdam's first steps are small (un-rectified warm-up)
        opt.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        opt.step()
    assert loss.item() < 0.3 * first
    assert all(p.grad_fn is None and p.requires_grad for p in model.parameters())
