"""Exact GELU on the device in one kernel each way with no read back to the host (issue 14
item 3), and in float32 as PyTorch's over a wide range of inputs (the erf polynomial)."""

import numpy as np
import pytest

import autograd
import autograd.nn.functional as F
from autograd.profiler import profile

from _torch_compare import compare


def test_gelu_forward_and_backward_are_one_kernel_each(device):
    if device != "gpu":
        pytest.skip("kernels are recorded on the gpu only")
    x = autograd.randn(64, 100, device=device, requires_grad=True)
    g = autograd.randn(64, 100, device=device)
    F.gelu(x).backward(g)                       # (compile the kernels)
    x.grad = None
    with profile() as prof:
        F.gelu(x).backward(g)
    events = {e.name: e for e in prof.events()}
    assert [k.name for k in events["Gelu"].kernels] == ["gelu"]
    assert [k.name for k in events["GeluBackward0"].kernels] == ["gelu_grad"]
    assert not [r for r in prof.key_averages() if "ReadBuffer" in r.key]


def test_gelu_float32_wide_range_matches_torch(device):
    torch = pytest.importorskip("torch")
    x = np.concatenate([np.linspace(-12, 12, 2001), np.random.default_rng(3).standard_normal(999)])
    compare(F.gelu, torch.nn.functional.gelu, [x.astype(np.float32).reshape(60, 50)], device,
            torch, rtol=2e-6, atol=2e-6)
