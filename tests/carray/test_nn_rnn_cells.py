"""carray.nn.lstm_cell / gru_cell and their gradients against NumPy formulas (float64
references) on cpu and gpu, with finite differences for the gradients' formulas, absent
upstream gradients, non-contiguous inputs and bad shapes."""

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


def _sig(x):
    return 1 / (1 + np.exp(-x))


def _lstm_ref(gi, gh, c):
    n = c.shape[-1]
    a = gi + gh
    i, f, g, o = _sig(a[:, :n]), _sig(a[:, n:2 * n]), np.tanh(a[:, 2 * n:3 * n]), \
        _sig(a[:, 3 * n:])
    c2 = f * c + i * g
    return o * np.tanh(c2), c2


def _gru_ref(gi, gh, h):
    n = h.shape[-1]
    r, z = _sig(gi[:, :n] + gh[:, :n]), _sig(gi[:, n:2 * n] + gh[:, n:2 * n])
    nt = np.tanh(gi[:, 2 * n:] + r * gh[:, 2 * n:])
    return nt + z * (h - nt)


def _numeric_grad(f, x, up, eps=1e-6):
    """d(sum(f(x) * up))/dx by central differences (float64)."""
    g = np.zeros_like(x)
    for idx in np.ndindex(x.shape):
        x[idx] += eps
        hi = np.sum(f(x) * up)
        x[idx] -= 2 * eps
        lo = np.sum(f(x) * up)
        x[idx] += eps
        g[idx] = (hi - lo) / (2 * eps)
    return g


def _on(a, device, dtype):
    return ca.asarray(a.astype(dtype)).to(device)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("B,H", [(3, 5), (1, 1), (0, 4), (7, 33)])
def test_lstm_cell_and_grad(device, dtype, B, H):
    _dev(device)
    if dtype == "float64" and device == "gpu" and not ca.opencl.fp64:
        pytest.skip("no fp64")
    rng = np.random.default_rng(B * 100 + H)
    gi, gh = rng.standard_normal((B, 4 * H)), rng.standard_normal((B, 4 * H))
    c, dh, dc = (rng.standard_normal((B, H)) for _ in range(3))
    h2, c2, act, tc = nn.lstm_cell(_on(gi, device, dtype), _on(gh, device, dtype),
                                   _on(c, device, dtype))
    rh, rc = _lstm_ref(gi, gh, c)
    tol = dict(rtol=2e-5, atol=2e-6) if dtype == "float32" else dict(rtol=1e-12, atol=1e-13)
    np.testing.assert_allclose(np.asarray(h2.to("cpu")), rh, **tol)
    np.testing.assert_allclose(np.asarray(c2.to("cpu")), rc, **tol)
    for up_h, up_c in ((dh, dc), (dh, None), (None, dc)):
        dg, dcp = nn.lstm_cell_grad(act, tc, _on(c, device, dtype),
                                    None if up_h is None else _on(up_h, device, dtype),
                                    None if up_c is None else _on(up_c, device, dtype))
        zh = np.zeros((B, H)) if up_h is None else up_h
        zc = np.zeros((B, H)) if up_c is None else up_c

        ref_g = _numeric_grad(lambda a: _lstm_ref(a, np.zeros_like(a), c)[0], gi + gh, zh) + \
            _numeric_grad(lambda a: _lstm_ref(a, np.zeros_like(a), c)[1], gi + gh, zc)
        ref_c = _numeric_grad(lambda x: _lstm_ref(gi, gh, x)[0], c.copy(), zh) + \
            _numeric_grad(lambda x: _lstm_ref(gi, gh, x)[1], c.copy(), zc)
        gtol = dict(rtol=1e-4, atol=1e-5) if dtype == "float32" else dict(rtol=1e-6, atol=1e-8)
        np.testing.assert_allclose(np.asarray(dg.to("cpu")), ref_g, **gtol)
        np.testing.assert_allclose(np.asarray(dcp.to("cpu")), ref_c, **gtol)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("B,H", [(3, 5), (1, 1), (0, 2), (6, 17)])
def test_gru_cell_and_grad(device, dtype, B, H):
    _dev(device)
    if dtype == "float64" and device == "gpu" and not ca.opencl.fp64:
        pytest.skip("no fp64")
    rng = np.random.default_rng(B * 7 + H)
    gi, gh = rng.standard_normal((B, 3 * H)), rng.standard_normal((B, 3 * H))
    h, dh = rng.standard_normal((B, H)), rng.standard_normal((B, H))
    h2, rz, nt = nn.gru_cell(_on(gi, device, dtype), _on(gh, device, dtype),
                             _on(h, device, dtype))
    tol = dict(rtol=2e-5, atol=2e-6) if dtype == "float32" else dict(rtol=1e-12, atol=1e-13)
    np.testing.assert_allclose(np.asarray(h2.to("cpu")), _gru_ref(gi, gh, h), **tol)
    dgi, dgh, dhp = nn.gru_cell_grad(rz, nt, _on(gh, device, dtype), _on(h, device, dtype),
                                     _on(dh, device, dtype))
    gtol = dict(rtol=1e-4, atol=1e-5) if dtype == "float32" else dict(rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(np.asarray(dgi.to("cpu")),
                               _numeric_grad(lambda x: _gru_ref(x, gh, h), gi.copy(), dh), **gtol)
    np.testing.assert_allclose(np.asarray(dgh.to("cpu")),
                               _numeric_grad(lambda x: _gru_ref(gi, x, h), gh.copy(), dh), **gtol)
    np.testing.assert_allclose(np.asarray(dhp.to("cpu")),
                               _numeric_grad(lambda x: _gru_ref(gi, gh, x), h.copy(), dh), **gtol)


@pytest.mark.parametrize("device", DEVICES)
def test_non_contiguous_inputs_and_errors(device):
    _dev(device)
    rng = np.random.default_rng(3)
    big = rng.standard_normal((4, 16)).astype("float32")
    gi = ca.asarray(big).to(device)[::2]            # (2, 16) every other row
    gh = ca.asarray(big.T.copy()).to(device).T[1::2]  # transposed storage
    c = ca.asarray(rng.standard_normal((2, 8)).astype("float32")).to(device)[:, ::2]
    h2, c2, _, _ = nn.lstm_cell(gi, gh, c)
    rh, rc = _lstm_ref(big[::2].astype(np.float64), big[1::2].astype(np.float64),
                       np.asarray(c.to("cpu")).astype(np.float64))
    np.testing.assert_allclose(np.asarray(h2.to("cpu")), rh, rtol=2e-5, atol=2e-6)
    with pytest.raises(RuntimeError, match=r"lstm_cell\(\): gi must have shape \[2, 16\]"):
        nn.lstm_cell(gi[:, :12], gh, c)
    with pytest.raises(RuntimeError, match=r"gru_cell\(\): gh must have shape \[2, 12\]"):
        nn.gru_cell(gi[:, :12], gh, c)
    with pytest.raises(RuntimeError, match=r"lstm_cell\(\): c must be float32 or float64"):
        nn.lstm_cell(gi, gh, c.astype(ca.int32))
    with pytest.raises(RuntimeError, match="gh has dtype int32 but the other arguments"):
        nn.lstm_cell(gi, gh.astype(ca.int32), c)
    with pytest.raises(ValueError, match="cannot both be None"):
        nn.lstm_cell_grad(gi, c, c, None, None)
    with pytest.raises(TypeError, match="must be a carray.Array"):
        nn.gru_cell([1.0], gh, c)


def _layer_ref(gi, w, h0, c0, reverse):
    """out, h_n, c_n of an LSTM layer by the cell reference, step by step (float64)."""
    n = gi.shape[0]
    out = np.zeros((n,) + h0.shape)
    h, c = h0, c0
    for t in (range(n - 1, -1, -1) if reverse else range(n)):
        h, c = _lstm_ref(gi[t], h @ w.T, c)
        out[t] = h
    return out, h, c


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize("ups", ["all", "out only", "state only", "c only"])
def test_lstm_layer_and_grad(device, reverse, ups):
    """carray.nn.lstm_layer against the step-by-step reference, and lstm_layer_grad against
    central differences of <dout, out> + <dh_n, h_n> + <dc_n, c_n> (float64)."""
    _dev(device)
    rng = np.random.default_rng(3)
    T, B, H = 3, 2, 3
    gi, w = rng.standard_normal((T, B, 4 * H)), rng.standard_normal((4 * H, H)) * 0.5
    h0, c0 = rng.standard_normal((B, H)), rng.standard_normal((B, H))
    dout, dh, dc = rng.standard_normal((T, B, H)), rng.standard_normal((B, H)), \
        rng.standard_normal((B, H))
    dout = None if ups in ("state only", "c only") else dout
    dh = None if ups in ("out only", "c only") else dh
    dc = None if ups == "out only" else dc
    args = [_on(a, device, "float64") for a in (gi, w, h0, c0)]
    out, h_n, c_n, act, tc, cs = nn.lstm_layer(*args, reverse=reverse)
    want = _layer_ref(gi, w, h0, c0, reverse)
    for got, ref in zip((out, h_n, c_n), want):
        np.testing.assert_allclose(np.asarray(got.to("cpu")), ref, rtol=1e-12, atol=1e-12)
    ups_on = [None if u is None else _on(u, device, "float64") for u in (dout, dh, dc)]
    grads = nn.lstm_layer_grad(args[1], args[2], args[3], out, act, tc, cs, *ups_on,
                               reverse=reverse)

    def loss_of(k):
        def f(x):
            xs = [gi, w, h0, c0]
            xs[k] = x
            o, hn, cn = _layer_ref(*xs, reverse)
            return sum(np.sum(a * u) for a, u in ((o, dout), (hn, dh), (cn, dc))
                       if u is not None)
        return f

    for k, (x, got) in enumerate(zip((gi, w, h0, c0), grads)):
        num = _numeric_grad(lambda x_: np.asarray(loss_of(k)(x_)), x.copy(), np.ones(()))
        np.testing.assert_allclose(np.asarray(got.to("cpu")), num, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("device", DEVICES)
def test_lstm_layer_float32_strided_and_errors(device):
    _dev(device)
    rng = np.random.default_rng(4)
    T, B, H = 5, 3, 4
    gi = rng.standard_normal((B, T, 4 * H)).astype(np.float32)   # (T, B, 4H) as a view
    w = (rng.standard_normal((4 * H, H)) * 0.5).astype(np.float32)
    h0, c0 = (rng.standard_normal((B, H)).astype(np.float32) for _ in range(2))
    gia = ca.asarray(gi).to(device).transpose((1, 0, 2))
    out, h_n, c_n, *_ = nn.lstm_layer(gia, _on(w, device, "float32"), _on(h0, device, "float32"),
                                      _on(c0, device, "float32"))
    want = _layer_ref(gi.transpose(1, 0, 2).astype(np.float64), w, h0, c0, False)
    np.testing.assert_allclose(np.asarray(out.to("cpu")), want[0], rtol=1e-5, atol=1e-6)
    c = _on(c0, device, "float32")
    with pytest.raises(RuntimeError, match=r"w_hh must have shape \[16, 4\]"):
        nn.lstm_layer(gia, c, c, c)
    with pytest.raises(RuntimeError, match=r"gi must have shape \[T, 3, 16\]"):
        nn.lstm_layer(gia[..., :8], _on(w, device, "float32"), c, c)
    with pytest.raises(RuntimeError, match="has dtype float64"):
        nn.lstm_layer(gia, _on(w, device, "float64"), c, c)
