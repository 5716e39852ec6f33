"""Tensor.register_post_accumulate_grad_hook and engine.queue_callback (what DDP builds on)."""

import numpy as np
import pytest

import autograd
from autograd import engine


def test_post_accumulate_grad_hook_as_torch(device):
    torch = pytest.importorskip("torch")
    w0 = np.random.default_rng(0).standard_normal((3, 2)).astype("float32")
    logs = []
    for lib, kw in ((autograd, {"device": device}), (torch, {})):
        w = lib.tensor(w0, requires_grad=True, **kw)
        seen = []
        h = w.register_post_accumulate_grad_hook(lambda p: seen.append(p.grad.sum().item()))
        (w * w).sum().backward()
        (w * 3).sum().backward()
        h.remove()
        w.sum().backward()
        logs.append(seen)
    np.testing.assert_allclose(logs[0], logs[1], rtol=1e-5)


def test_post_accumulate_grad_hook_errors():
    x = autograd.ones(2, requires_grad=True)
    with pytest.raises(RuntimeError, match="non-leaf"):
        (x * 2).register_post_accumulate_grad_hook(print)
    with pytest.raises(RuntimeError, match="doesn't require gradient"):
        autograd.ones(2).register_post_accumulate_grad_hook(print)


def test_queue_callback_runs_after_all_nodes():
    x = autograd.ones(3, requires_grad=True)
    order = []

    def hook(p):
        order.append("accumulated")
        engine.queue_callback(lambda: order.append(("callback", p.grad.sum().item())))

    x.register_post_accumulate_grad_hook(hook)
    (x * 2).sum().backward()
    assert order == ["accumulated", ("callback", 6.0)]
    with pytest.raises(RuntimeError, match="Final callbacks can only be installed during "
                       "backward pass."):
        engine.queue_callback(print)
