"""nn.MultiheadAttention against PyTorch on identical weights: state_dict keys, outputs,
attention weights, input and parameter gradients, with and without masks, batch_first both
ways, causal, kdim/vdim, bias_kv, zero_attn, unbatched; initialisation and errors."""

import numpy as np
import pytest

import autograd
from autograd import nn

from _torch_ref import assert_close, assert_grads_close, load_from_torch, pair

rng = np.random.default_rng(1)


def _randn(*shape):
    return rng.standard_normal(shape).astype(np.float32)


def _make(device, *args, **kwargs):
    torch = pytest.importorskip("torch")
    torch.manual_seed(0)
    theirs = torch.nn.MultiheadAttention(*args, **kwargs)
    ours = nn.MultiheadAttention(*args, **kwargs)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    return load_from_torch(ours, theirs, device), theirs


def _run(device, ours, theirs, q, k=None, v=None, masks=None, **kw):
    """Self-attention when k is None; masks: {name: numpy array}; compares everything."""
    torch = pytest.importorskip("torch")
    aq, tq = pair(q, device)
    if k is None:
        ak = av = aq
        tk = tv = tq
    else:
        (ak, tk), (av, tv) = pair(k, device), pair(v, device)
    am, tm = {}, {}
    for name, m in (masks or {}).items():
        am[name], tm[name] = pair(m, device, requires_grad=False)
    out, w = ours(aq, ak, av, **am, **kw)
    ref, rw = theirs(tq, tk, tv, **tm, **kw)
    assert_close(out, ref, what="output")
    assert_close(w, rw, what="attention weights")
    g = _randn(*ref.shape)
    loss = (out * autograd.from_numpy(g).to(device)).sum()
    tloss = (ref * torch.from_numpy(g)).sum()
    if w is not None and not np.isnan(rw.detach().numpy()).any():
        gw = _randn(*rw.shape)
        loss = loss + (w * autograd.from_numpy(gw).to(device)).sum()
        tloss = tloss + (rw * torch.from_numpy(gw)).sum()
    loss.backward()
    tloss.backward()
    for name, a, t in (("query", aq, tq), ("key", ak, tk), ("value", av, tv)):
        assert_close(a.grad, t.grad, what=f"grad of {name}")
    assert_grads_close(ours, theirs)


@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("need_weights", [True, False])
def test_self_attention(device, batch_first, need_weights):
    ours, theirs = _make(device, 8, 2, batch_first=batch_first)
    _run(device, ours, theirs, _randn(5, 3, 8), need_weights=need_weights)


def test_cross_attention_per_head_weights(device):
    ours, theirs = _make(device, 8, 4)
    _run(device, ours, theirs, _randn(5, 2, 8), _randn(7, 2, 8), _randn(7, 2, 8),
         average_attn_weights=False)


@pytest.mark.parametrize("need_weights", [True, False])
def test_masks_bool_and_float(device, need_weights):
    ours, theirs = _make(device, 8, 2, batch_first=True)
    kpm = np.zeros((3, 6), dtype=bool)
    kpm[0, 4:] = True
    kpm[2, 1] = True
    attn = rng.random((5, 6)) > 0.7
    attn[:, 0] = False
    _run(device, ours, theirs, _randn(3, 5, 8), _randn(3, 6, 8), _randn(3, 6, 8),
         masks={"key_padding_mask": kpm, "attn_mask": attn}, need_weights=need_weights)
    fmask = _randn(3 * 2, 5, 6)
    _run(device, ours, theirs, _randn(3, 5, 8), _randn(3, 6, 8), _randn(3, 6, 8),
         masks={"attn_mask": fmask}, need_weights=need_weights)


@pytest.mark.parametrize("need_weights", [True, False])
def test_causal_mask_with_hint(device, need_weights):
    ours, theirs = _make(device, 8, 2)
    causal = np.triu(np.full((5, 5), -np.inf, dtype=np.float32), 1)
    _run(device, ours, theirs, _randn(5, 2, 8), masks={"attn_mask": causal}, is_causal=True,
         need_weights=need_weights)


def test_fully_masked_row_is_nan_with_weights_and_zero_without(device):
    ours, theirs = _make(device, 4, 2)
    kpm = np.zeros((2, 3), dtype=bool)
    kpm[1] = True
    for need_weights in (True, False):
        aq, tq = pair(_randn(3, 2, 4), device)
        am, tm = pair(kpm, device)
        out, _ = ours(aq, aq, aq, key_padding_mask=am, need_weights=need_weights)
        ref, _ = theirs(tq, tq, tq, key_padding_mask=tm, need_weights=need_weights)
        assert_close(out, ref)


def test_kdim_vdim_bias_kv_zero_attn(device):
    ours, theirs = _make(device, 8, 2, kdim=5, vdim=3, add_bias_kv=True, add_zero_attn=True)
    assert ours.in_proj_weight is None and ours.q_proj_weight.shape == (8, 8)
    kpm = np.zeros((2, 6), dtype=bool)
    kpm[1, -2:] = True
    _run(device, ours, theirs, _randn(4, 2, 8), _randn(6, 2, 5), _randn(6, 2, 3),
         masks={"key_padding_mask": kpm})


def test_no_bias_and_unbatched(device):
    ours, theirs = _make(device, 6, 3, bias=False)
    assert ours.in_proj_bias is None and ours.out_proj.bias is None
    _run(device, ours, theirs, _randn(4, 6))
    _run(device, ours, theirs, _randn(4, 6), need_weights=False)


def test_dropout_in_training_keeps_shapes():
    m = nn.MultiheadAttention(8, 2, dropout=0.5)
    x = autograd.randn(5, 3, 8)
    out, w = m(x, x, x)
    assert out.shape == (5, 3, 8) and w.shape == (3, 5, 5)
    out.sum().backward()
    assert m.in_proj_weight.grad.shape == (24, 8)
    m.eval()
    a, _ = m(x, x, x)
    b, _ = m(x, x, x)
    np.testing.assert_array_equal(a.detach().numpy(), b.detach().numpy())


def test_initialisation():
    m = nn.MultiheadAttention(16, 4)
    assert m.head_dim == 4 and not m.batch_first
    bound = np.sqrt(6 / (16 + 48))  # xavier_uniform_ of (48, 16)
    w = m.in_proj_weight.detach().numpy()
    assert np.abs(w).max() <= bound and np.abs(w).max() > 0.8 * bound
    assert not m.in_proj_bias.detach().numpy().any()
    assert not m.out_proj.bias.detach().numpy().any()
    assert type(m.out_proj).__name__ == "NonDynamicallyQuantizableLinear"


def test_errors():
    with pytest.raises(AssertionError, match="embed_dim must be divisible by num_heads"):
        nn.MultiheadAttention(10, 3)
    m = nn.MultiheadAttention(4, 2)
    x = autograd.randn(3, 2, 4)
    with pytest.raises(RuntimeError, match="Need attn_mask if specifying the is_causal hint"):
        m(x, x, x, is_causal=True)
    with pytest.raises(RuntimeError, match="The shape of the 2D attn_mask is"):
        m(x, x, x, attn_mask=autograd.zeros(3, 4))
    with pytest.raises(AssertionError, match="only bool and floating types of attn_mask"):
        m(x, x, x, attn_mask=autograd.zeros(3, 3).long())
    with pytest.raises(AssertionError, match="was expecting embedding dimension of 4, but got 5"):
        y = autograd.randn(3, 2, 5)
        m(y, y, y)
    with pytest.raises(AssertionError, match="expected `key` and `value` to be 3-D"):
        m(x, x[0], x[0])
