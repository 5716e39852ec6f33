"""The recurrent layers' Functions (autograd/ops/rnn.py): forward against a NumPy reference of
the gate formulas, float64 gradcheck of every input (with either output alone, so that backward
sees a missing gradient), gradgradcheck of the create_graph path, on every device."""

import numpy as np
import pytest

import autograd
from autograd.ops.rnn import ThnnFusedGruCell, ThnnFusedLstmCell, Unbind


def _sigmoid(x):
    return 1 / (1 + np.exp(-x))


def _lstm_ref(gi, gh, c):
    i, f, g, o = np.split(gi + gh, 4, axis=-1)
    c2 = _sigmoid(f) * c + _sigmoid(i) * np.tanh(g)
    return _sigmoid(o) * np.tanh(c2), c2


def _gru_ref(gi, gh, h):
    ir, iz, i_n = np.split(gi, 3, axis=-1)
    hr, hz, hn = np.split(gh, 3, axis=-1)
    r, z = _sigmoid(ir + hr), _sigmoid(iz + hz)
    n = np.tanh(i_n + r * hn)
    return (1 - z) * n + z * h


def _gradgradcheck(fn, inputs):
    """gradgradcheck with the output gradients made on the inputs' device (gradgradcheck's own
    are made on the CPU)."""
    outs = fn(*inputs)
    outs = outs if isinstance(outs, tuple) else (outs,)
    gs = [autograd.randn(o.shape, dtype=o.dtype, device=o.device) for o in outs]
    return autograd.gradgradcheck(fn, inputs, gs)


def _inputs(device, *shapes, seed=0, dtype=np.float64):
    rng = np.random.default_rng(seed)
    vals = [rng.standard_normal(s).astype(dtype) for s in shapes]
    return vals, [autograd.tensor(v, device=device, requires_grad=True) for v in vals]


@pytest.mark.parametrize("batch", [3, 1])
def test_lstm_gates_forward(device, batch):
    (gi, gh, c), ts = _inputs(device, (batch, 20), (batch, 20), (batch, 5), dtype=np.float32)
    h2, c2 = ThnnFusedLstmCell.apply(*ts)
    rh, rc = _lstm_ref(gi, gh, c)
    np.testing.assert_allclose(h2.cpu().detach().numpy(), rh, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(c2.cpu().detach().numpy(), rc, rtol=1e-5, atol=1e-6)
    assert h2.device == ts[0].device and h2.grad_fn.name() == "ThnnFusedLstmCellBackward0"


@pytest.mark.parametrize("which", ["both", "h", "c"])
def test_lstm_gates_gradcheck(device, which):
    _, ts = _inputs(device, (3, 8), (3, 8), (3, 2))

    def fn(gi, gh, c):
        h2, c2 = ThnnFusedLstmCell.apply(gi, gh, c)
        return {"both": (h2, c2), "h": h2, "c": c2}[which]
    assert autograd.gradcheck(fn, tuple(ts))
    assert _gradgradcheck(fn, tuple(ts))


def test_lstm_gates_some_inputs_without_grad(device):
    _, (gi, gh, c) = _inputs(device, (2, 8), (2, 8), (2, 2))
    c = c.detach()
    h2, _ = ThnnFusedLstmCell.apply(gi, gh.detach(), c)
    h2.sum().backward()
    assert gi.grad is not None and gi.grad.shape == (2, 8)


def test_gru_gates(device):
    (gi, gh, h), ts = _inputs(device, (4, 15), (4, 15), (4, 5), dtype=np.float32)
    out = ThnnFusedGruCell.apply(*ts)
    np.testing.assert_allclose(out.cpu().detach().numpy(), _gru_ref(gi, gh, h), rtol=1e-5,
                               atol=1e-6)
    _, ts = _inputs(device, (3, 6), (3, 6), (3, 2), seed=1)
    assert autograd.gradcheck(ThnnFusedGruCell.apply, tuple(ts))
    assert _gradgradcheck(ThnnFusedGruCell.apply, tuple(ts))


def test_unbind(device):
    (x,), (t,) = _inputs(device, (4, 2, 3))
    parts = Unbind.apply(t, 0)
    assert len(parts) == 4 and all(p.shape == (2, 3) for p in parts)
    np.testing.assert_array_equal(parts[2].cpu().detach().numpy(), x[2])
    # slices without a gradient get zeros
    (parts[1] * 2 + parts[3]).sum().backward()
    np.testing.assert_array_equal(t.grad.cpu().numpy(), [[[0] * 3] * 2, [[2] * 3] * 2,
                                                         [[0] * 3] * 2, [[1] * 3] * 2])
    assert autograd.gradcheck(lambda a: Unbind.apply(a, 0)[1:3], (t.detach().requires_grad_(),))
    assert _gradgradcheck(lambda a: Unbind.apply(a * a, 0)[0], (t.detach().requires_grad_(),))
