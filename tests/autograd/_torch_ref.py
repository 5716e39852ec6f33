"""Helpers for tests that compare autograd with PyTorch on identical weights and inputs."""

import numpy as np

import autograd


def load_from_torch(ours, theirs, device="cpu"):
    """Copy the torch module's state_dict into ours (through NumPy), then move ours to device.
    The key sets must match (load_state_dict is strict)."""
    sd = {k: autograd.from_numpy(v.detach().numpy().copy())
          for k, v in theirs.state_dict().items()}
    ours.load_state_dict(sd)
    return ours.to(device)


def pair(values, device="cpu", requires_grad=True):
    """(ours, torch's) leaf tensors holding the NumPy array `values` (float32 unless given)."""
    import torch
    values = np.asarray(values)
    ours = autograd.from_numpy(values.copy()).to(device)
    theirs = torch.from_numpy(values.copy())
    if requires_grad and values.dtype.kind == "f":
        ours.requires_grad_(True)
        theirs.requires_grad_(True)
    return ours, theirs


def to_np(t):
    """A tensor of either library as a NumPy array (None stays None)."""
    if t is None:
        return None
    if hasattr(t, "array"):
        return t.detach().cpu().numpy()
    return t.detach().numpy()


def assert_close(ours, theirs, rtol=1e-4, atol=1e-5, what=""):
    """Values of ours equal theirs (NaN where theirs is NaN), shapes included."""
    a, b = to_np(ours), to_np(theirs)
    assert (a is None) == (b is None), what
    if a is None:
        return
    assert a.shape == b.shape, f"{what}: shape {a.shape} != {b.shape}"
    np.testing.assert_allclose(a, b, rtol=rtol, atol=atol, equal_nan=True, err_msg=what)


def assert_grads_close(ours_module, theirs_module, rtol=1e-4, atol=1e-5):
    """Every parameter's gradient of ours equals torch's (by name)."""
    theirs = dict(theirs_module.named_parameters())
    for name, p in ours_module.named_parameters():
        assert_close(p.grad, theirs[name].grad, rtol, atol, what=f"grad of {name}")
