"""Helpers that run one function on autograd and on PyTorch with the same float64 (or float32)
inputs and compare the forward values and every input gradient."""

import numpy as np

import autograd


def leaf(values, device, noncontiguous=False):
    """A leaf tensor requiring grad with these values; noncontiguous gives a view of every other
    element of a larger array along the last dim (1-d or more)."""
    values = np.asarray(values)
    if noncontiguous and values.ndim >= 1:
        big = np.zeros(values.shape[:-1] + (2 * values.shape[-1],), dtype=values.dtype)
        big[..., ::2] = values
        t = autograd.tensor(big, device=device)[..., ::2]
        return t.detach().requires_grad_(True)
    return autograd.tensor(values, device=device, requires_grad=True)


def compare(ours, theirs, arrays, device, torch, noncontiguous=False, rtol=1e-7, atol=1e-9,
            seed=0):
    """Runs ours(*autograd leaves) and theirs(*torch leaves), backpropagates the same random
    upstream gradient, and checks the outputs (all of a tuple; integer ones exactly) and the
    gradients of every input."""
    xs = [leaf(a, device, noncontiguous) for a in arrays]
    ts = [torch.tensor(np.asarray(a), requires_grad=True) for a in arrays]
    out, ref = ours(*xs), theirs(*ts)
    outs = out if isinstance(out, tuple) else (out,)
    refs = ref if isinstance(ref, tuple) else (ref,)
    assert len(outs) == len(refs)
    for o, r in zip(outs[1:], refs[1:]):
        assert str(o.device) == device
        np.testing.assert_array_equal(o.cpu().numpy(), r.numpy())
    o, r = outs[0], refs[0]
    assert tuple(o.shape) == tuple(r.shape)
    assert str(o.device) == device
    np.testing.assert_allclose(o.detach().cpu().numpy(), r.detach().numpy(), rtol=rtol, atol=atol)
    dtype = np.asarray(arrays[0]).dtype
    g = np.random.default_rng(seed).standard_normal(tuple(r.shape)).astype(dtype)
    o.backward(autograd.tensor(g, device=device))
    r.backward(torch.tensor(g))
    for k, (x, t) in enumerate(zip(xs, ts)):
        np.testing.assert_allclose(x.grad.cpu().numpy(), t.grad.numpy(), rtol=rtol, atol=atol,
                                   err_msg=f"gradient of input {k}")
    return out


def same_error(ours, theirs):
    """ours() and theirs() both raise, the same exception type; returns our exception."""
    try:
        theirs()
    except Exception as e:  # noqa: BLE001
        kind = type(e)
    else:
        raise AssertionError("PyTorch accepted the call")
    try:
        ours()
    except Exception as e:  # noqa: BLE001
        assert isinstance(e, kind), f"{type(e).__name__}: {e} (PyTorch: {kind.__name__})"
        return e
    raise AssertionError(f"autograd accepted the call (PyTorch raises {kind.__name__})")
