"""autograd.amp.GradScaler against torch.amp.GradScaler: the scale trajectory (back-off on an
overflowed step, growth after growth_interval clean ones), skipped steps, the parameters after
several steps, the state_dict, and the errors of a misused scaler."""

import numpy as np
import pytest

import autograd
import carray


def _run(lib, steps, poison, device="cpu"):
    """SGD steps of a linear model with GradScaler (init_scale 8, growth_interval 2); the steps
    in `poison` get an inf in one gradient. Returns (scales, weights, state_dict)."""
    t = lib
    rng = np.random.default_rng(0)
    w0 = rng.standard_normal((3, 4)).astype(np.float32)
    x = t.tensor(rng.standard_normal((5, 4)).astype(np.float32))
    w = t.tensor(w0, requires_grad=True)
    if lib is autograd:
        x, w = x.to(device), w.detach().to(device).requires_grad_()
    opt = t.optim.SGD([w], lr=0.1)
    scaler = t.amp.GradScaler(device if lib is autograd else "cpu", init_scale=8.0,
                              growth_interval=2)
    scales = []
    for i in range(steps):
        opt.zero_grad()
        loss = (x @ w.T).square().mean()
        scaler.scale(loss).backward()
        if i in poison:
            w.grad[0, 0] = float("inf")
        scaler.step(opt)
        scaler.update()
        scales.append(scaler.get_scale())
    weights = w.detach().cpu().numpy() if lib is not autograd else w.detach().numpy()
    return scales, weights, scaler.state_dict()


@pytest.mark.parametrize("poison", [(), (1,), (0, 3, 4)])
def test_trajectory_matches_torch(poison, device):
    torch = pytest.importorskip("torch")
    ours = _run(autograd, 6, poison, device)
    ref = _run(torch, 6, poison)
    assert ours[0] == ref[0]
    np.testing.assert_allclose(ours[1], ref[1], rtol=1e-5, atol=1e-6)
    assert ours[2] == ref[2]


def test_hand_derived_trajectory():
    # growth_interval 2, init 8: clean, inf, clean, clean, clean -> 8, 4, 4, 8, 8
    scales, _, state = _run(autograd, 5, (1,))
    assert scales == [8.0, 4.0, 4.0, 8.0, 8.0]
    assert state == {"scale": 8.0, "growth_factor": 2.0, "backoff_factor": 0.5,
                     "growth_interval": 2, "_growth_tracker": 1}


def test_skipped_step_leaves_parameters():
    w = autograd.ones(2, requires_grad=True)
    opt = autograd.optim.SGD([w], lr=1.0)
    scaler = autograd.amp.GradScaler("cpu", init_scale=4.0)
    scaler.scale((w * float("nan")).sum()).backward()
    assert scaler.step(opt) is None
    scaler.update()
    np.testing.assert_array_equal(w.detach().numpy(), [1.0, 1.0])
    assert scaler.get_scale() == 2.0


def test_unscale_divides_gradients():
    w = autograd.ones(3, requires_grad=True)
    opt = autograd.optim.SGD([w], lr=1.0)
    scaler = autograd.amp.GradScaler("cpu", init_scale=1024.0)
    scaler.scale((w * autograd.tensor([1.0, 2.0, 3.0])).sum()).backward()
    np.testing.assert_array_equal(w.grad.numpy(), [1024.0, 2048.0, 3072.0])
    scaler.unscale_(opt)
    np.testing.assert_array_equal(w.grad.numpy(), [1.0, 2.0, 3.0])
    with pytest.raises(RuntimeError, match="already been called"):
        scaler.unscale_(opt)
    scaler.step(opt)
    with pytest.raises(RuntimeError, match="step\\(\\) has already been called"):
        scaler.step(opt)
    scaler.update()
    np.testing.assert_array_equal(w.detach().numpy(), [0.0, -1.0, -2.0])


def test_misuse_errors():
    w = autograd.ones(2, requires_grad=True)
    opt = autograd.optim.SGD([w], lr=1.0)
    scaler = autograd.amp.GradScaler("cpu")
    with pytest.raises(AssertionError, match="_scale is None"):
        scaler.step(opt)
    scaler.scale(w.sum()).backward()
    with pytest.raises(RuntimeError, match="Closure"):
        scaler.step(opt, closure=lambda: None)
    with pytest.raises(AssertionError, match="No inf checks"):
        scaler.update()
    with pytest.raises(ValueError, match="growth factor"):
        autograd.amp.GradScaler("cpu", growth_factor=0.5)
    with pytest.raises(ValueError, match="outputs must be"):
        scaler.scale("loss")
    with pytest.raises(RuntimeError, match="state dict is empty"):
        scaler.load_state_dict({})


def test_half_gradients_refused():
    w = autograd.ones(2, dtype=autograd.float16, requires_grad=True)
    opt = autograd.optim.SGD([w], lr=1.0)
    scaler = autograd.amp.GradScaler("cpu")
    scaler.scale(w.sum()).backward()
    with pytest.raises(ValueError, match="FP16 gradients"):
        scaler.unscale_(opt)


def test_disabled_is_a_pass_through_and_state_round_trips():
    w = autograd.ones(2, requires_grad=True)
    opt = autograd.optim.SGD([w], lr=1.0)
    off = autograd.amp.GradScaler("cpu", enabled=False)
    loss = w.sum()
    assert off.scale(loss) is loss
    loss.backward()
    off.step(opt)
    off.update()
    np.testing.assert_array_equal(w.detach().numpy(), [0.0, 0.0])
    assert off.state_dict() == {} and off.get_scale() == 1.0
    a = autograd.amp.GradScaler("cpu", init_scale=32.0, growth_interval=7)
    b = autograd.amp.GradScaler("cpu")
    b.load_state_dict(a.state_dict())
    assert b.state_dict() == a.state_dict()


def test_scale_keeps_nested_structure(device):
    a, b = autograd.ones(2, device=device), autograd.ones(1, device=device)
    scaler = autograd.amp.GradScaler(device, init_scale=4.0)
    if not scaler.is_enabled():
        pytest.skip("no GPU")
    out = scaler.scale([a, (b,)])
    assert isinstance(out, list) and isinstance(out[1], tuple)
    np.testing.assert_array_equal(out[0].numpy(), [4.0, 4.0])
    assert out[1][0].device == device
    assert carray.asarray(out[1][0].array).dtype == carray.float32
