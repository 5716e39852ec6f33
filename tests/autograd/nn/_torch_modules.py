"""Checks an autograd.nn module or functional op against PyTorch's on identical weights and
inputs: forward values, the gradient of every float input and parameter, state_dict keys.

    compare_module(nn.LayerNorm(5), torch.nn.LayerNorm(5), [x], device)
    compare_fn(F.gelu, TF.gelu, [x], device, approximate="tanh")

Inputs are NumPy arrays (float ones are differentiated; non-contiguous ones stay non-contiguous
on the cpu). The torch module's state is copied into the autograd one before running.
"""

import numpy as np

import autograd


def to_autograd(a, device, requires_grad=None):
    """A tensor holding NumPy array a on device (a view of a on the cpu: strides kept)."""
    t = autograd.from_numpy(a) if device == "cpu" else autograd.from_numpy(
        np.array(a, order="C")).to(device)
    if requires_grad is None:
        requires_grad = a.dtype.kind == "f"
    return t.requires_grad_(True) if requires_grad else t


def _np(t):
    return t.detach().cpu().numpy()


def load_torch_state(mine, theirs, device):
    """Copy theirs' state_dict into mine (same keys required), then move mine to device."""
    state = {k: autograd.from_numpy(v.detach().numpy().copy()) for k, v in
             theirs.state_dict().items()}
    assert list(mine.state_dict()) == list(state), (list(mine.state_dict()), list(state))
    mine.load_state_dict(state)
    mine.to(device)


def _check(out, ref, ins, tins, params, tparams, rtol, atol, seed):
    import torch
    rng = np.random.default_rng(seed)
    outs = out if isinstance(out, (tuple, list)) else (out,)
    refs = ref if isinstance(ref, (tuple, list)) else (ref,)
    for o, r in zip(outs, refs):
        assert tuple(o.shape) == tuple(r.shape), (o.shape, r.shape)
        np.testing.assert_allclose(_np(o), r.detach().numpy(), rtol=rtol, atol=atol)
    o, r = outs[0], refs[0]
    if not r.requires_grad:
        return
    g = rng.standard_normal(tuple(r.shape)).astype(r.detach().numpy().dtype)
    diff = [t for t in ins if t.requires_grad] + list(params)
    tdiff = [t for t in tins if t.requires_grad] + list(tparams)
    mine = autograd.grad(o, diff, autograd.from_numpy(g).to(o.device), allow_unused=True)
    theirs = torch.autograd.grad(r, tdiff, torch.from_numpy(g), allow_unused=True)
    for k, (a, b) in enumerate(zip(mine, theirs)):
        if b is None:
            assert a is None or not np.any(_np(a)), f"gradient {k}: torch has none"
            continue
        assert a is not None, f"gradient {k}: missing"
        np.testing.assert_allclose(_np(a), b.numpy(), rtol=rtol, atol=atol,
                                   err_msg=f"gradient {k}")


def compare_module(mine, theirs, inputs, device, rtol=1e-5, atol=1e-5, seed=0, load=True,
                   **kwargs):
    """Run mine and theirs (a torch module) on inputs (NumPy arrays); compare as above."""
    import torch
    if load:
        load_torch_state(mine, theirs, device)
    ins = [to_autograd(a, device) for a in inputs]
    tins = [torch.from_numpy(np.array(a)).requires_grad_(a.dtype.kind == "f") for a in inputs]
    out = mine(*ins, **kwargs)
    ref = theirs(*tins, **kwargs)
    params = [p for p in mine.parameters() if p.requires_grad]
    tparams = [p for p in theirs.parameters() if p.requires_grad]
    _check(out, ref, ins, tins, params, tparams, rtol, atol, seed)
    return mine, theirs


def compare_fn(fn, tfn, inputs, device, rtol=1e-5, atol=1e-5, seed=0, **kwargs):
    """Run fn (autograd) and tfn (torch) on inputs (NumPy arrays, or None passed through)."""
    import torch
    ins = [None if a is None else to_autograd(a, device) for a in inputs]
    tins = [None if a is None else torch.from_numpy(np.array(a)).requires_grad_(
        a.dtype.kind == "f") for a in inputs]
    out = fn(*ins, **kwargs)
    ref = tfn(*tins, **kwargs)
    _check(out, ref, [t for t in ins if t is not None], [t for t in tins if t is not None],
           (), (), rtol, atol, seed)
    return out, ref
