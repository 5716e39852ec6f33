"""carray.nn.attention / attention_grad (the memory-efficient kernels on the device, the composed
path on the CPU) against a float64 NumPy reference, with finite differences for the gradient
formulas: causal or not, broadcast and transposed (non-contiguous) leading dims, rows longer than
a work group, empty sequences, head dims over the kernels' limit, and bad arguments."""

import numpy as np
import pytest

import carray as ca
from carray import nn

from conftest import have_gpu

DEVICES = ["cpu", "gpu"]


def _dev(device):
    if device == "gpu" and not have_gpu():
        pytest.skip("no OpenCL device")
    return device


def _probs(q, k, scale, causal):
    s = q @ np.swapaxes(k, -1, -2) * scale
    if causal:
        L, S = s.shape[-2:]
        s = np.where(np.arange(L)[:, None] >= np.arange(S)[None], s, -np.inf)
    mx = s.max(-1, keepdims=True) if s.shape[-1] else np.zeros(s.shape[:-1] + (1,))
    mx = np.where(np.isinf(mx), 0, mx)
    e = np.exp(s - mx)
    total = e.sum(-1, keepdims=True)
    with np.errstate(divide="ignore"):
        lse = (np.log(total) + mx)[..., 0]
    return e / np.where(total == 0, 1, total), lse


def _reference(q, k, v, g, scale, causal):
    """out, lse, dq, dk, dv in float64 at the broadcast leading shape."""
    p, lse = _probs(q, k, scale, causal)
    out = p @ v
    ds = p * (g @ np.swapaxes(v, -1, -2) - (g * out).sum(-1, keepdims=True))
    lead = out.shape[:-2]
    dq = ds @ k * scale
    dk = np.swapaxes(ds, -1, -2) @ np.broadcast_to(q, lead + q.shape[-2:]) * scale
    dv = np.swapaxes(p, -1, -2) @ g
    return out, lse, dq, dk, dv


def _on(a, device, dtype):
    return ca.asarray(np.ascontiguousarray(a).astype(dtype)).to(device)


def _close(got, want, dtype):
    tol = 2e-5 if dtype == "float32" else 1e-10
    got = np.asarray(got.to("cpu"))
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=tol * 10, atol=tol * (1 + np.abs(want).max()
                                                                     if want.size else 1))


CASES = [  # (q lead, k/v lead, L, S, E, Ev)
    ((2, 3), (2, 3), 5, 7, 4, 6),
    ((1, 2), (1, 2), 70, 70, 16, 16),      # rows over one work group (64)
    ((2, 1), (2, 1), 65, 130, 32, 8),
    ((), (), 1, 1, 1, 1),
    ((3,), (1,), 9, 4, 5, 3),              # broadcast leading dims
    ((2, 2, 2), (2, 2, 2), 3, 3, 2, 2),    # three leading dims
]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("case", CASES)
def test_attention_and_grad_match_reference(device, dtype, causal, case):
    _dev(device)
    qlead, klead, L, S, E, Ev = case
    rng = np.random.default_rng(hash(case) % 2**32)
    q = rng.standard_normal(qlead + (L, E))
    k = rng.standard_normal(klead + (S, E))
    v = rng.standard_normal(klead + (S, Ev))
    scale = 0.37
    lead = np.broadcast_shapes(qlead, klead)
    g = rng.standard_normal(lead + (L, Ev))
    out, lse, dq, dk, dv = _reference(q, k, v, g, scale, causal)
    qa, ka, va = (_on(a, device, dtype) for a in (q, k, v))
    o, lse_ = nn.attention(qa, ka, va, scale, causal)
    assert o.device == lse_.device == device and o.dtype == qa.dtype
    _close(o, out, dtype)
    _close(lse_, lse, dtype)
    grads = nn.attention_grad(qa, ka, va, o, lse_, _on(g, device, dtype), scale, causal)
    for got, want in zip(grads, (dq, dk, dv)):
        _close(got, want, dtype)


def test_gradient_formulas_by_finite_differences():
    """The reference's gradients are d<g, out>/d(q, k, v) (so the kernels checked against it
    compute the true gradient)."""
    rng = np.random.default_rng(0)
    q, k, v = (rng.standard_normal((2, 3, 4)) for _ in range(3))
    g = rng.standard_normal((2, 3, 4))
    for causal in (False, True):
        _, _, dq, dk, dv = _reference(q, k, v, g, 0.5, causal)
        for x, want in ((q, dq), (k, dk), (v, dv)):
            num = np.zeros_like(x)
            for idx in np.ndindex(x.shape):
                x[idx] += 1e-6
                hi = np.sum(_reference(q, k, v, g, 0.5, causal)[0] * g)
                x[idx] -= 2e-6
                lo = np.sum(_reference(q, k, v, g, 0.5, causal)[0] * g)
                x[idx] += 1e-6
                num[idx] = (hi - lo) / 2e-6
            np.testing.assert_allclose(want, num, atol=1e-7)


@pytest.mark.parametrize("device", DEVICES)
def test_transposed_views_are_read_in_place(device):
    """(B, H, T, E) views of (B, T, H, E) arrays, as a transformer makes them, and a default
    scale of 1/sqrt(E)."""
    _dev(device)
    rng = np.random.default_rng(1)
    B, T, H, E = 2, 40, 3, 8
    base = [rng.standard_normal((B, T, H, E)).astype(np.float32) for _ in range(3)]
    views = [ca.asarray(a).to(device).transpose((0, 2, 1, 3)) for a in base]
    assert not views[0].flags.c_contiguous
    q, k, v = (np.swapaxes(a, 1, 2).astype(np.float64) for a in base)
    g = rng.standard_normal((B, H, T, E))
    want = _reference(q, k, v, g, E ** -0.5, True)
    o, lse = nn.attention(*views, is_causal=True)
    _close(o, want[0], "float32")
    grads = nn.attention_grad(*views, o, lse, _on(g, device, "float32"), is_causal=True)
    for got, w in zip(grads, want[2:]):
        _close(got, w, "float32")


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("L, S", [(0, 3), (3, 0), (0, 0)])
def test_empty_sequences(device, L, S):
    _dev(device)
    q = ca.ones((2, L, 4), device=device)
    k = ca.ones((2, S, 4), device=device)
    v = ca.ones((2, S, 5), device=device)
    o, lse = nn.attention(q, k, v)
    assert o.shape == (2, L, 5) and lse.shape == (2, L)
    assert np.all(np.asarray(o.to("cpu")) == 0)
    assert np.all(np.asarray(lse.to("cpu")) == -np.inf)
    dq, dk, dv = nn.attention_grad(q, k, v, o, lse, ca.ones((2, L, 5), device=device))
    assert (dq.shape, dk.shape, dv.shape) == ((2, L, 4), (2, S, 4), (2, S, 5))
    for a in (dq, dk, dv):
        assert np.all(np.asarray(a.to("cpu")) == 0)


def test_fused_path_choice():
    """The device takes head dims up to 128 in the fused kernels; larger ones (and the CPU)
    compose, with the same results."""
    assert not nn.fused_attention(ca.ones((2, 3)), ca.ones((2, 3)))
    if not have_gpu():
        return
    assert nn.fused_attention(ca.ones((2, 128), device="gpu"), ca.ones((2, 128), device="gpu"))
    big = ca.ones((2, 129), device="gpu")
    assert not nn.fused_attention(big, big)
    rng = np.random.default_rng(2)
    q, k, v = (rng.standard_normal((3, 130)) for _ in range(3))
    g = rng.standard_normal((3, 130))
    want = _reference(q, k, v, g, 0.1, True)
    qa, ka, va = (_on(a, "gpu", "float32") for a in (q, k, v))
    o, lse = nn.attention(qa, ka, va, 0.1, True)
    _close(o, want[0], "float32")
    for got, w in zip(nn.attention_grad(qa, ka, va, o, lse, _on(g, "gpu", "float32"), 0.1,
                                        True), want[2:]):
        _close(got, w, "float32")


@pytest.mark.parametrize("device", DEVICES)
def test_bad_arguments(device):
    _dev(device)
    q = ca.ones((2, 3, 4), device=device)
    with pytest.raises(TypeError, match="'key' must be a carray.Array"):
        nn.attention(q, [1.0], q)
    with pytest.raises(RuntimeError, match="query and key must have the same last dim"):
        nn.attention(q, ca.ones((2, 3, 5), device=device), q)
    with pytest.raises(RuntimeError, match="same number of rows"):
        nn.attention(q, q, ca.ones((2, 4, 4), device=device))
    with pytest.raises(RuntimeError, match="float32 or float64"):
        nn.attention(q, q, ca.ones((2, 3, 4), dtype="int32", device=device))
    with pytest.raises(RuntimeError, match="has dtype float64 but query has float32"):
        nn.attention(q, q, ca.ones((2, 3, 4), dtype="float64", device=device))
    with pytest.raises(RuntimeError, match="at least 2 dims"):
        nn.attention(ca.ones((4,), device=device), q, q)
    with pytest.raises(RuntimeError, match="do not broadcast"):
        nn.attention(q, ca.ones((3, 3, 4), device=device), ca.ones((3, 3, 4), device=device))
    o, lse = nn.attention(q, q, q)
    with pytest.raises(RuntimeError, match="grad_out must have shape"):
        nn.attention_grad(q, q, q, o, lse, ca.ones((2, 3, 5), device=device))
    with pytest.raises(RuntimeError, match="lse must be"):
        nn.attention_grad(q, q, q, o, o, o)
    if device == "gpu":
        with pytest.raises(ca.DeviceMismatchError):
            nn.attention(q, ca.ones((2, 3, 4)), q)
