"""Conv1d, ConvTranspose1d/2d, 1-d and adaptive pooling, Upsample, PixelShuffle, Fold/Unfold and
the padding layers against PyTorch's modules: state_dict keys and shapes, default init bounds,
reprs, forward and every input and parameter gradient on each device; constructor errors."""

import math

import numpy as np
import pytest

import autograd
from autograd import nn

RNG = np.random.default_rng(3)


def _run_pair(ours, theirs, x, device, torch, forward_kw=None, rtol=1e-5, atol=1e-6):
    """Loads ours' parameters into theirs, runs both on x, backpropagates the same upstream
    gradient, compares the outputs and every gradient."""
    forward_kw = forward_kw or {}
    assert list(ours.state_dict()) == list(theirs.state_dict())
    theirs.load_state_dict({k: torch.from_numpy(v.numpy().copy())
                            for k, v in ours.state_dict().items()})
    ours.to(device)
    xa = autograd.tensor(x, device=device, requires_grad=True)
    xt = torch.tensor(x, requires_grad=True)
    out, ref = ours(xa, **forward_kw), theirs(xt, **forward_kw)
    if isinstance(ref, tuple):
        np.testing.assert_array_equal(out[1].cpu().numpy(), ref[1].numpy())
        out, ref = out[0], ref[0]
    assert tuple(out.shape) == tuple(ref.shape) and str(out.device) == device
    np.testing.assert_allclose(out.detach().cpu().numpy(), ref.detach().numpy(), rtol=rtol,
                               atol=atol)
    g = RNG.standard_normal(tuple(ref.shape)).astype(x.dtype)
    out.backward(autograd.tensor(g, device=device))
    ref.backward(torch.tensor(g))
    np.testing.assert_allclose(xa.grad.cpu().numpy(), xt.grad.numpy(), rtol=rtol, atol=atol)
    params = dict(theirs.named_parameters())
    for name, p in ours.named_parameters():
        np.testing.assert_allclose(p.grad.cpu().numpy(), params[name].grad.numpy(), rtol=rtol,
                                   atol=atol, err_msg=name)


CONV1D = [dict(), dict(stride=2, padding=1, bias=False), dict(groups=2, dilation=2),
          dict(padding="same", padding_mode="reflect"), dict(padding=2, padding_mode="circular")]


@pytest.mark.parametrize("kw", CONV1D)
def test_conv1d(kw, device):
    torch = pytest.importorskip("torch")
    ours, theirs = nn.Conv1d(4, 6, 3, **kw), torch.nn.Conv1d(4, 6, 3, **kw)
    assert repr(ours) == repr(theirs)
    assert ours.weight.shape == (6, 4 // kw.get("groups", 1), 3)
    bound = 1 / math.sqrt(4 // kw.get("groups", 1) * 3)
    assert np.abs(ours.weight.detach().numpy()).max() <= bound
    _run_pair(ours, theirs, RNG.standard_normal((2, 4, 9)).astype(np.float32), device, torch)


TRANSPOSED = [dict(), dict(stride=2, padding=1, output_padding=1),
              dict(groups=2, stride=(2, 1), dilation=(1, 2), bias=False),
              dict(stride=3, padding=(1, 0), dilation=2)]


@pytest.mark.parametrize("kw", TRANSPOSED)
def test_conv_transpose2d(kw, device):
    torch = pytest.importorskip("torch")
    ours, theirs = nn.ConvTranspose2d(4, 6, 3, **kw), torch.nn.ConvTranspose2d(4, 6, 3, **kw)
    assert repr(ours) == repr(theirs)
    assert ours.weight.shape == theirs.weight.shape
    x = RNG.standard_normal((2, 4, 5, 4)).astype(np.float32)
    _run_pair(ours, theirs, x, device, torch)


def test_conv_transpose_output_size(device):
    torch = pytest.importorskip("torch")
    ours, theirs = nn.ConvTranspose2d(2, 3, 3, stride=3, padding=1), \
        torch.nn.ConvTranspose2d(2, 3, 3, stride=3, padding=1)
    x = RNG.standard_normal((1, 2, 4, 3)).astype(np.float32)
    _run_pair(ours, theirs, x, device, torch, dict(output_size=(11, 8)))
    _run_pair(ours, theirs, x[0], device, torch, dict(output_size=(3, 12, 9)))
    with pytest.raises(ValueError, match="valid sizes range"):
        ours(autograd.tensor(x, device=device), output_size=(13, 8))
    with pytest.raises(ValueError, match="output_size must have"):
        ours(autograd.tensor(x, device=device), output_size=(11,))
    o1, t1 = nn.ConvTranspose1d(2, 4, 3, stride=2, groups=2), \
        torch.nn.ConvTranspose1d(2, 4, 3, stride=2, groups=2)
    assert repr(o1) == repr(t1)
    _run_pair(o1, t1, RNG.standard_normal((3, 2, 5)).astype(np.float32), device, torch,
              dict(output_size=[12]))


def test_conv_constructor_errors():
    torch = pytest.importorskip("torch")
    for cls, kw in ((nn.ConvTranspose2d, dict(padding_mode="reflect")),
                    (nn.Conv1d, dict(groups=3)), (nn.Conv1d, dict(padding="foo")),
                    (nn.Conv1d, dict(padding="same", stride=2)),
                    (nn.ConvTranspose1d, dict(groups=0))):
        with pytest.raises(ValueError):
            getattr(torch.nn, cls.__name__)(4, 6, 3, **kw)
        with pytest.raises(ValueError):
            cls(4, 6, 3, **kw)


LAYERS = [
    ("MaxPool1d", (3,), dict(stride=2, padding=1, return_indices=True), (2, 3, 10)),
    ("AvgPool1d", (3,), dict(stride=2, count_include_pad=False), (2, 3, 10)),
    ("AdaptiveAvgPool1d", (4,), {}, (2, 3, 10)),
    ("AdaptiveMaxPool1d", (4,), dict(return_indices=True), (2, 3, 10)),
    ("AdaptiveAvgPool2d", ((3, None),), {}, (2, 3, 7, 6)),
    ("AdaptiveAvgPool2d", (1,), {}, (2, 3, 7, 6)),
    ("AdaptiveMaxPool2d", ((4, 5),), dict(return_indices=True), (2, 3, 7, 6)),
    ("Upsample", (), dict(scale_factor=2), (2, 3, 4, 5)),
    ("Upsample", (), dict(size=(7, 9), mode="bilinear", align_corners=True), (2, 3, 4, 5)),
    ("Upsample", (), dict(scale_factor=1.5, mode="linear"), (2, 3, 5)),
    ("UpsamplingNearest2d", (), dict(size=6), (2, 3, 4, 5)),
    ("UpsamplingBilinear2d", (), dict(scale_factor=2), (2, 3, 4, 5)),
    ("PixelShuffle", (2,), {}, (2, 8, 3, 4)),
    ("PixelUnshuffle", (2,), {}, (2, 2, 4, 6)),
    ("Unfold", ((2, 3),), dict(dilation=2, padding=1, stride=2), (2, 3, 7, 8)),
    ("Fold", ((5, 6), 2), dict(stride=1), (2, 12, 20)),
    ("ZeroPad2d", ((1, 2, 0, 3),), {}, (2, 3, 4, 5)),
    ("ZeroPad1d", (2,), {}, (2, 3, 4)),
    ("ConstantPad2d", (1, 3.5), {}, (2, 3, 4, 5)),
    ("ConstantPad1d", ((1, 2), -1.0), {}, (2, 3, 4)),
    ("ReflectionPad2d", (2,), {}, (2, 3, 4, 5)),
    ("ReflectionPad1d", ((3, 1),), {}, (2, 3, 5)),
    ("ReplicationPad2d", ((1, 0, 2, 3),), {}, (2, 3, 4, 5)),
    ("ReplicationPad1d", (2,), {}, (2, 3, 4)),
]


@pytest.mark.parametrize("name,args,kw,shape", LAYERS)
def test_layer_against_torch(name, args, kw, shape, device):
    torch = pytest.importorskip("torch")
    ours, theirs = getattr(nn, name)(*args, **kw), getattr(torch.nn, name)(*args, **kw)
    assert repr(ours) == repr(theirs)
    x = RNG.standard_normal(shape)
    _run_pair(ours, theirs, x, device, torch, rtol=1e-7, atol=1e-9)
    if name.endswith("Pad2d") or name.endswith("Pad1d"):
        _run_pair(ours, theirs, x[0], device, torch, rtol=1e-7, atol=1e-9)  # unbatched


def test_layers_in_a_model():
    """A small encoder-decoder built from the new layers trains a step (gradients reach every
    parameter)."""
    model = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1, groups=1), nn.Conv2d(8, 8, 3, groups=8),
                          nn.AdaptiveAvgPool2d((4, 4)), nn.ConvTranspose2d(8, 4, 2, stride=2),
                          nn.Upsample(scale_factor=2, mode="bilinear"), nn.PixelUnshuffle(2),
                          nn.ReflectionPad2d(1), nn.Conv2d(16, 2, 3))
    out = model(autograd.randn(2, 3, 10, 10))
    assert out.shape == (2, 2, 8, 8)
    out.square().mean().backward()
    assert all(p.grad is not None and np.abs(p.grad.numpy()).sum() > 0
               for p in model.parameters())
