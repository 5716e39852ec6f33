"""Transformer layers against PyTorch on identical weights: TransformerEncoderLayer (relu,
gelu, a callable; post- and pre-norm; batch_first both ways), TransformerEncoder with masks and
causal detection, TransformerDecoderLayer/Decoder, Transformer; outputs and every gradient;
a torch state_dict through safetensors both ways; LayerNorm; dropout shapes; errors."""

import numpy as np
import pytest

import autograd
from autograd import nn
from autograd.nn import functional as F

from _torch_ref import assert_close, assert_grads_close, load_from_torch, pair

rng = np.random.default_rng(2)


def _randn(*shape):
    return rng.standard_normal(shape).astype(np.float32)


def _both(factory_ours, factory_theirs, device):
    torch = pytest.importorskip("torch")
    torch.manual_seed(0)
    theirs = factory_theirs(torch.nn)
    ours = factory_ours(nn)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    return load_from_torch(ours, theirs, device), theirs


def _check(device, ours, theirs, inputs, masks=None, **kw):
    """inputs: NumPy arrays (differentiable); masks: {name: NumPy array}. Compares the output
    and the gradients of every input and parameter for a random linear loss."""
    torch = pytest.importorskip("torch")
    ps = [pair(x, device) for x in inputs]
    am, tm = {}, {}
    for name, m in (masks or {}).items():
        am[name], tm[name] = pair(m, device, requires_grad=False)
    out = ours(*[p[0] for p in ps], **am, **kw)
    ref = theirs(*[p[1] for p in ps], **tm, **kw)
    assert_close(out, ref, rtol=2e-4, atol=2e-5, what="output")
    g = _randn(*ref.shape)
    (out * autograd.from_numpy(g).to(device)).sum().backward()
    (ref * torch.from_numpy(g)).sum().backward()
    for i, (a, t) in enumerate(ps):
        assert_close(a.grad, t.grad, rtol=2e-4, atol=2e-5, what=f"grad of input {i}")
    assert_grads_close(ours, theirs, rtol=2e-4, atol=2e-5)


@pytest.mark.parametrize("norm_first", [False, True])
@pytest.mark.parametrize("batch_first", [False, True])
def test_encoder_layer(device, norm_first, batch_first):
    kw = {"dim_feedforward": 16, "dropout": 0.0, "norm_first": norm_first,
          "batch_first": batch_first}
    ours, theirs = _both(lambda m: m.TransformerEncoderLayer(8, 2, **kw),
                         lambda m: m.TransformerEncoderLayer(8, 2, **kw), device)
    _check(device, ours, theirs, [_randn(5, 3, 8)])


def test_encoder_layer_gelu_callable_and_no_bias(device):
    torch = pytest.importorskip("torch")
    ours, theirs = _both(lambda m: m.TransformerEncoderLayer(8, 4, 12, 0.0, "gelu", bias=False),
                         lambda m: m.TransformerEncoderLayer(8, 4, 12, 0.0, "gelu", bias=False),
                         device)
    _check(device, ours, theirs, [_randn(4, 2, 8)])
    ours, theirs = _both(lambda m: m.TransformerEncoderLayer(8, 2, 12, 0.0, F.silu),
                         lambda m: m.TransformerEncoderLayer(8, 2, 12, 0.0,
                                                             torch.nn.functional.silu), device)
    _check(device, ours, theirs, [_randn(4, 8)])  # unbatched


def test_encoder_with_masks_and_norm(device):
    kw = {"dim_feedforward": 16, "dropout": 0.0, "batch_first": True}
    ours, theirs = _both(
        lambda m: m.TransformerEncoder(m.TransformerEncoderLayer(8, 2, **kw), 2, m.LayerNorm(8),
                                       enable_nested_tensor=False),
        lambda m: m.TransformerEncoder(m.TransformerEncoderLayer(8, 2, **kw), 2, m.LayerNorm(8),
                                       enable_nested_tensor=False), device)
    kpm = np.zeros((3, 6), dtype=bool)
    kpm[0, 4:] = True
    causal = nn.Transformer.generate_square_subsequent_mask(6).numpy()
    with pytest.warns(UserWarning, match="mismatched src_key_padding_mask and mask"):
        _check(device, ours, theirs, [_randn(3, 6, 8)],
               masks={"mask": causal, "src_key_padding_mask": kpm})
    _check(device, ours, theirs, [_randn(3, 6, 8)], masks={"mask": causal})  # detected causal
    _check(device, ours, theirs, [_randn(3, 6, 8)], masks={"mask": causal}, is_causal=True)
    _check(device, ours, theirs, [_randn(3, 6, 8)], masks={"src_key_padding_mask": kpm})


@pytest.mark.parametrize("norm_first", [False, True])
def test_decoder(device, norm_first):
    kw = {"dim_feedforward": 16, "dropout": 0.0, "norm_first": norm_first}
    ours, theirs = _both(
        lambda m: m.TransformerDecoder(m.TransformerDecoderLayer(8, 2, **kw), 2, m.LayerNorm(8)),
        lambda m: m.TransformerDecoder(m.TransformerDecoderLayer(8, 2, **kw), 2, m.LayerNorm(8)),
        device)
    causal = nn.Transformer.generate_square_subsequent_mask(5).numpy()
    mkpm = np.zeros((2, 7), dtype=bool)
    mkpm[1, 5:] = True
    _check(device, ours, theirs, [_randn(5, 2, 8), _randn(7, 2, 8)],
           masks={"tgt_mask": causal, "memory_key_padding_mask": mkpm})


@pytest.mark.parametrize("batch_first", [False, True])
def test_transformer(device, batch_first):
    kw = {"d_model": 8, "nhead": 2, "num_encoder_layers": 2, "num_decoder_layers": 1,
          "dim_feedforward": 16, "dropout": 0.0, "batch_first": batch_first}
    ours, theirs = _both(lambda m: m.Transformer(**kw), lambda m: m.Transformer(**kw), device)
    src, tgt = (_randn(2, 6, 8), _randn(2, 4, 8)) if batch_first else \
        (_randn(6, 2, 8), _randn(4, 2, 8))
    causal = nn.Transformer.generate_square_subsequent_mask(4).numpy()
    _check(device, ours, theirs, [src, tgt], masks={"tgt_mask": causal})


def test_generate_square_subsequent_mask():
    torch = pytest.importorskip("torch")
    m = nn.Transformer.generate_square_subsequent_mask(4, dtype=autograd.float64)
    assert m.dtype == autograd.float64
    np.testing.assert_array_equal(
        m.numpy(), torch.nn.Transformer.generate_square_subsequent_mask(4).numpy())


def test_safetensors_both_ways(tmp_path, device):
    torch = pytest.importorskip("torch")
    st = pytest.importorskip("safetensors.torch")
    torch.manual_seed(0)
    theirs = torch.nn.TransformerEncoder(
        torch.nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0), 2, enable_nested_tensor=False)
    st.save_file(theirs.state_dict(), str(tmp_path / "torch.safetensors"))
    ours = nn.TransformerEncoder(nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0), 2)
    ours.load_state_dict(autograd.load(str(tmp_path / "torch.safetensors")))
    ours.to(device)
    x, tx = pair(_randn(5, 2, 8), device, requires_grad=False)
    assert_close(ours(x), theirs(tx))
    # and back: ours, changed, saved by autograd and loaded by torch
    with autograd.no_grad():
        ours.layers[1].linear1.weight.mul_(2.0)
    autograd.save(ours.state_dict(), str(tmp_path / "ours.safetensors"))
    theirs.load_state_dict(st.load_file(str(tmp_path / "ours.safetensors")))
    assert_close(ours(x), theirs(tx))


def test_layer_norm(device):
    torch = pytest.importorskip("torch")
    for args, kw in (((8,), {}), (((3, 8),), {"eps": 1e-3}), ((8,), {"bias": False}),
                     ((8,), {"elementwise_affine": False})):
        torch.manual_seed(0)
        theirs = torch.nn.LayerNorm(*args, **kw)
        with torch.no_grad():
            for p in theirs.parameters():
                p.normal_()
        ours = load_from_torch(nn.LayerNorm(*args, **kw), theirs, device)
        assert list(ours.state_dict()) == list(theirs.state_dict())
        _check(device, ours, theirs, [_randn(2, 3, 8)])
    with pytest.raises(RuntimeError, match="expected input with shape"):
        nn.LayerNorm(8)(autograd.randn(2, 7))


def test_dropout_shapes_and_clones_are_independent():
    layer = nn.TransformerEncoderLayer(8, 2, 16, dropout=0.3)
    enc = nn.TransformerEncoder(layer, 3)
    assert len(enc.layers) == 3 and enc.layers[0] is not enc.layers[1]
    assert enc.layers[0].linear1.weight is not enc.layers[1].linear1.weight
    x = autograd.randn(5, 2, 8, requires_grad=True)
    out = enc(x)
    assert out.shape == (5, 2, 8)
    out.sum().backward()
    assert x.grad.shape == x.shape
    assert all(p.grad is not None for p in enc.parameters())
    enc.eval()
    np.testing.assert_array_equal(enc(x).detach().numpy(), enc(x).detach().numpy())


def test_errors():
    with pytest.raises(RuntimeError, match="activation should be relu/gelu, not tanh"):
        nn.TransformerEncoderLayer(8, 2, activation="tanh")
    t = nn.Transformer(8, 2, 1, 1, 16)
    with pytest.raises(RuntimeError, match="the batch number of src and tgt must be equal"):
        t(autograd.randn(3, 2, 8), autograd.randn(3, 4, 8))
    with pytest.raises(RuntimeError, match="the feature number of src and tgt must be equal to "
                                           "d_model"):
        t(autograd.randn(3, 2, 6), autograd.randn(3, 2, 6))
