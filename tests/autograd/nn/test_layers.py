"""nn layers and losses: parameters, default initialisation, forward values against NumPy,
train/eval behaviour of Dropout and BatchNorm, reprs; and against PyTorch when installed."""

import math

import numpy as np
import pytest

import autograd
from autograd import nn


def _np(t):
    return t.detach().numpy()


def test_linear_shapes_init_and_forward():
    m = nn.Linear(20, 5)
    assert m.weight.shape == (5, 20) and m.bias.shape == (5,)
    assert isinstance(m.weight, nn.Parameter) and m.weight.requires_grad
    bound = 1 / math.sqrt(20)  # kaiming_uniform_(a=sqrt(5)) gives the same bound as the bias
    assert np.abs(_np(m.weight)).max() <= bound and np.abs(_np(m.bias)).max() <= bound
    assert np.abs(_np(m.weight)).max() > 0.8 * bound
    x = autograd.randn(3, 20)
    np.testing.assert_allclose(_np(m(x)), _np(x) @ _np(m.weight).T + _np(m.bias), rtol=1e-5,
                               atol=1e-6)
    m(x).sum().backward()
    np.testing.assert_allclose(_np(m.bias.grad), [3.0] * 5)
    assert nn.Linear(2, 3, bias=False).bias is None
    assert [n for n, _ in nn.Linear(2, 3, bias=False).named_parameters()] == ["weight"]
    assert nn.Linear(2, 3, dtype=autograd.float64).weight.dtype == autograd.float64
    assert repr(nn.Linear(784, 128)) == "Linear(in_features=784, out_features=128, bias=True)"


def test_linear_init_is_seeded():
    autograd.manual_seed(3)
    a = nn.Linear(4, 4)
    autograd.manual_seed(3)
    b = nn.Linear(4, 4)
    np.testing.assert_array_equal(_np(a.weight), _np(b.weight))


def test_conv2d():
    m = nn.Conv2d(3, 8, 3, stride=2, padding=1)
    assert m.weight.shape == (8, 3, 3, 3) and m.bias.shape == (8,)
    assert m.kernel_size == (3, 3) and m.stride == (2, 2) and m.padding == (1, 1)
    bound = 1 / math.sqrt(27)
    assert np.abs(_np(m.weight)).max() <= bound and np.abs(_np(m.bias)).max() <= bound
    x = autograd.randn(2, 3, 9, 9)
    out = m(x)
    assert out.shape == (2, 8, 5, 5)
    # the centre output pixel, computed by hand
    xp = np.pad(_np(x), ((0, 0), (0, 0), (1, 1), (1, 1)))
    ref = (xp[:, None, :, 4:7, 4:7] * _np(m.weight)[None]).sum((2, 3, 4)) + _np(m.bias)
    np.testing.assert_allclose(_np(out)[:, :, 2, 2], ref, rtol=1e-4, atol=1e-5)
    assert repr(m) == "Conv2d(3, 8, kernel_size=(3, 3), stride=(2, 2), padding=(1, 1))"
    assert repr(nn.Conv2d(1, 32, 3)) == "Conv2d(1, 32, kernel_size=(3, 3), stride=(1, 1))"
    assert repr(nn.Conv2d(1, 2, (3, 5), bias=False)) == \
        "Conv2d(1, 2, kernel_size=(3, 5), stride=(1, 1), bias=False)"
    with pytest.raises(ValueError, match="divisible by groups"):
        nn.Conv2d(3, 4, 3, groups=2)
    with pytest.raises(ValueError, match="strided"):
        nn.Conv2d(3, 4, 3, stride=2, padding="same")
    with pytest.raises(ValueError):
        nn.Conv2d(3, 4, 3, padding="full")
    with pytest.raises(ValueError):
        nn.Conv2d(3, 4, 3, padding_mode="mirror")


def test_pools():
    x = autograd.randn(2, 3, 6, 6)
    mp = nn.MaxPool2d(2)
    ref = _np(x).reshape(2, 3, 3, 2, 3, 2).max((3, 5))
    np.testing.assert_allclose(_np(mp(x)), ref)
    ap = nn.AvgPool2d(2)
    ref = _np(x).reshape(2, 3, 3, 2, 3, 2).mean((3, 5))
    np.testing.assert_allclose(_np(ap(x)), ref, rtol=1e-6, atol=1e-6)
    assert nn.MaxPool2d(3, stride=2, padding=1)(x).shape == (2, 3, 3, 3)
    assert repr(mp) == "MaxPool2d(kernel_size=2, stride=2, padding=0, dilation=1, ceil_mode=False)"
    assert repr(ap) == "AvgPool2d(kernel_size=2, stride=2, padding=0)"


def test_activations_flatten_identity():
    x = autograd.randn(4, 5)
    v = _np(x)
    np.testing.assert_allclose(_np(nn.ReLU()(x)), np.maximum(v, 0))
    np.testing.assert_allclose(_np(nn.Sigmoid()(x)), 1 / (1 + np.exp(-v)), rtol=1e-5)
    np.testing.assert_allclose(_np(nn.Tanh()(x)), np.tanh(v), rtol=1e-5, atol=1e-6)
    e = np.exp(v - v.max(1, keepdims=True))
    sm = e / e.sum(1, keepdims=True)
    np.testing.assert_allclose(_np(nn.Softmax(dim=1)(x)), sm, rtol=1e-5)
    np.testing.assert_allclose(_np(nn.LogSoftmax(dim=1)(x)), np.log(sm), rtol=1e-5, atol=1e-6)
    y = autograd.randn(2, 3, 4, 5)
    assert nn.Flatten()(y).shape == (2, 60)
    assert nn.Flatten(0, 2)(y).shape == (24, 5)
    assert nn.Identity(3, k=1)(y) is y
    assert repr(nn.ReLU()) == "ReLU()" and repr(nn.ReLU(inplace=True)) == "ReLU(inplace=True)"
    assert repr(nn.Softmax(dim=1)) == "Softmax(dim=1)"
    assert repr(nn.Flatten()) == "Flatten(start_dim=1, end_dim=-1)"


def test_dropout_train_and_eval():
    d = nn.Dropout(0.25)
    x = autograd.ones(200, 100)
    out = _np(d(x))
    kept = out != 0
    assert 0.72 < kept.mean() < 0.78
    np.testing.assert_allclose(out[kept], 1 / 0.75, rtol=1e-6)
    d.eval()
    np.testing.assert_array_equal(_np(d(x)), _np(x))
    assert repr(d) == "Dropout(p=0.25, inplace=False)"
    with pytest.raises(ValueError, match="between 0 and 1, but got 1.5"):
        nn.Dropout(1.5)


def test_batchnorm_defaults_and_repr():
    bn = nn.BatchNorm2d(3)
    assert _np(bn.weight).tolist() == [1, 1, 1] and _np(bn.bias).tolist() == [0, 0, 0]
    assert _np(bn.running_mean).tolist() == [0, 0, 0]
    assert _np(bn.running_var).tolist() == [1, 1, 1]
    assert bn.num_batches_tracked.dtype == autograd.int64 and bn.num_batches_tracked.item() == 0
    assert repr(bn) == ("BatchNorm2d(3, eps=1e-05, momentum=0.1, affine=True, bias=True, "
                        "track_running_stats=True)")
    assert nn.BatchNorm1d(3, bias=False).bias is None
    plain = nn.BatchNorm1d(3, affine=False, track_running_stats=False)
    assert list(plain.parameters()) == [] and list(plain.state_dict()) == []
    with pytest.raises(ValueError, match=r"expected 4D input \(got 2D input\)"):
        bn(autograd.randn(2, 3))
    with pytest.raises(ValueError, match="expected 2D or 3D input"):
        nn.BatchNorm1d(3)(autograd.randn(2, 3, 4, 5))


def test_batchnorm_train_then_eval():
    bn = nn.BatchNorm1d(4)
    x = autograd.randn(16, 4) * 3 + 1
    v = _np(x)
    out = _np(bn(x))
    mean, var = v.mean(0), v.var(0)
    np.testing.assert_allclose(out, (v - mean) / np.sqrt(var + 1e-5), rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(_np(bn.running_mean), 0.1 * mean, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(_np(bn.running_var), 0.9 + 0.1 * v.var(0, ddof=1), rtol=1e-5)
    assert bn.num_batches_tracked.item() == 1
    bn.eval()
    rm, rv = _np(bn.running_mean).copy(), _np(bn.running_var).copy()
    out = _np(bn(x))
    np.testing.assert_allclose(out, (v - rm) / np.sqrt(rv + 1e-5), rtol=1e-4, atol=1e-5)
    assert bn.num_batches_tracked.item() == 1  # eval leaves the statistics alone
    np.testing.assert_array_equal(_np(bn.running_mean), rm)


def test_batchnorm_cumulative_average():
    bn = nn.BatchNorm2d(2, momentum=None)
    xs = [autograd.randn(3, 2, 4, 4) for _ in range(3)]
    for x in xs:
        bn(x)
    means = [_np(x).mean((0, 2, 3)) for x in xs]
    np.testing.assert_allclose(_np(bn.running_mean), np.mean(means, 0), rtol=1e-4, atol=1e-6)
    assert bn.num_batches_tracked.item() == 3


def test_losses_against_numpy():
    logits = autograd.randn(6, 5)
    target = autograd.tensor([0, 4, 2, 1, 3, 2])
    z = _np(logits)
    logp = z - np.log(np.exp(z).sum(1, keepdims=True))
    nll = -logp[np.arange(6), _np(target)]
    np.testing.assert_allclose(nn.CrossEntropyLoss()(logits, target).item(), nll.mean(),
                               rtol=1e-5)
    np.testing.assert_allclose(_np(nn.CrossEntropyLoss(reduction="none")(logits, target)), nll,
                               rtol=1e-5)
    np.testing.assert_allclose(nn.NLLLoss(reduction="sum")(autograd.tensor(logp), target).item(),
                               nll.sum(), rtol=1e-5)
    a, b = autograd.randn(7), autograd.randn(7)
    np.testing.assert_allclose(nn.MSELoss()(a, b).item(), ((_np(a) - _np(b)) ** 2).mean(),
                               rtol=1e-5)
    np.testing.assert_allclose(nn.L1Loss(reduction="sum")(a, b).item(),
                               np.abs(_np(a) - _np(b)).sum(), rtol=1e-5)
    p, t = autograd.rand(7) * 0.8 + 0.1, autograd.rand(7)
    bce = -(_np(t) * np.log(_np(p)) + (1 - _np(t)) * np.log(1 - _np(p)))
    np.testing.assert_allclose(nn.BCELoss()(p, t).item(), bce.mean(), rtol=1e-5)
    s = 1 / (1 + np.exp(-_np(a)))
    bcel = -(_np(t) * np.log(s) + (1 - _np(t)) * np.log(1 - s))
    np.testing.assert_allclose(nn.BCEWithLogitsLoss()(a, t).item(), bcel.mean(), rtol=1e-5)
    assert repr(nn.CrossEntropyLoss()) == "CrossEntropyLoss()"
    bad = nn.MSELoss(reduction="avg")       # PyTorch accepts it here and raises on use
    with pytest.raises(ValueError, match="avg is not a valid value for reduction"):
        bad(a, t)
    weighted = nn.CrossEntropyLoss(weight=autograd.ones(5))
    assert "weight" in dict(weighted.named_buffers())


def test_training_step_reduces_loss():
    autograd.manual_seed(1)
    model = nn.Sequential(nn.Linear(4, 16), nn.Tanh(), nn.Linear(16, 3))
    x = autograd.randn(32, 4)
    y = autograd.tensor(np.argmax(_np(x)[:, :3], 1))  # a rule the model can learn
    loss_fn = nn.CrossEntropyLoss()
    first = loss_fn(model(x), y).item()
    for _ in range(30):
        model.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        with autograd.no_grad():
            for p in model.parameters():
                p -= 0.5 * p.grad
    assert loss.item() < 0.7 * first


def _as_torch_prints(ours, theirs):
    """Our repr, less the BatchNorm `bias=True` that PyTorch prints only from 2.13 on, when the
    installed PyTorch is older."""
    if "bias=True, track_running_stats" not in theirs:
        ours = ours.replace("bias=True, track_running_stats", "track_running_stats")
    return ours


def test_against_pytorch():
    torch = pytest.importorskip("torch")
    ours = nn.Sequential(nn.Conv2d(2, 4, 3, padding=1), nn.BatchNorm2d(4), nn.ReLU(),
                         nn.MaxPool2d(2), nn.Flatten(), nn.Linear(4 * 4 * 4, 5))
    theirs = torch.nn.Sequential(torch.nn.Conv2d(2, 4, 3, padding=1), torch.nn.BatchNorm2d(4),
                                 torch.nn.ReLU(), torch.nn.MaxPool2d(2), torch.nn.Flatten(),
                                 torch.nn.Linear(4 * 4 * 4, 5))
    assert list(ours.state_dict()) == list(theirs.state_dict())
    assert _as_torch_prints(repr(ours), repr(theirs)) == repr(theirs)
    theirs.load_state_dict({k: torch.from_numpy(v.numpy().copy())
                            for k, v in ours.state_dict().items()})
    x = np.random.default_rng(0).standard_normal((3, 2, 8, 8)).astype(np.float32)
    for mode in ("train", "eval"):
        getattr(ours, mode)(), getattr(theirs, mode)()
        out = ours(autograd.tensor(x))
        ref = theirs(torch.from_numpy(x))
        np.testing.assert_allclose(_np(out), ref.detach().numpy(), rtol=1e-4, atol=1e-5)
    for (k, a), b in zip(ours.state_dict().items(), theirs.state_dict().values()):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-5, atol=1e-6, err_msg=k)


@pytest.mark.parametrize("kw", [dict(padding=1, padding_mode="reflect"),
                                dict(padding=2, padding_mode="circular"), dict(groups=2),
                                dict(padding="same", dilation=2),
                                dict(padding="same", padding_mode="reflect", dilation=(1, 2)),
                                dict(padding="valid", padding_mode="circular"),
                                dict(stride=2, padding=(1, 0), bias=False)])
def test_conv2d_options_against_pytorch(kw):
    torch = pytest.importorskip("torch")
    ours, theirs = nn.Conv2d(4, 6, 3, **kw), torch.nn.Conv2d(4, 6, 3, **kw)
    assert repr(ours) == repr(theirs)
    theirs.load_state_dict({k: torch.from_numpy(v.numpy().copy())
                            for k, v in ours.state_dict().items()})
    x = np.random.default_rng(0).standard_normal((2, 4, 7, 7)).astype(np.float32)
    np.testing.assert_allclose(_np(ours(autograd.tensor(x))),
                               theirs(torch.from_numpy(x)).detach().numpy(), rtol=1e-4,
                               atol=1e-5)
