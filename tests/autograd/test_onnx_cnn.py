"""autograd.onnx.export of convolutional-network ops: grouped and depthwise Conv,
ConvTranspose1d/2d, BatchNormalization (eval, and training mode as torch.onnx), Pad (constant,
reflect, replicate, circular) and flip; each file run in onnxruntime against autograd's forward
on random inputs; then a ResNet-like model and a DCGAN generator end to end."""

import io

import numpy as np
import pytest

import autograd
from autograd import nn
from autograd.nn import functional as F

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")

DYN = {"x": {0: "batch"}, "y": {0: "batch"}}


def _export(model, x, **kw):
    buf = io.BytesIO()
    kw.setdefault("input_names", ["x"])
    kw.setdefault("output_names", ["y"])
    autograd.onnx.export(model, (x,), buf, **kw)
    proto = onnx.load_from_string(buf.getvalue())
    onnx.checker.check_model(proto)
    return proto, ort.InferenceSession(buf.getvalue(), providers=["CPUExecutionProvider"])


def _run(sess, x):
    return sess.run(None, {"x": x.cpu().numpy()})[0]


def _check(model, sess, x):
    ref = model(x).detach().cpu().numpy()
    got = _run(sess, x)
    assert got.shape == ref.shape
    np.testing.assert_allclose(got, ref, rtol=1e-4, atol=1e-5)


def _ops(proto):
    return [n.op_type for n in proto.graph.node]


def _node(proto, op_type):
    (node,) = [n for n in proto.graph.node if n.op_type == op_type]
    return {a.name: onnx.helper.get_attribute_value(a) for a in node.attribute}


class _Lambda(nn.Module):
    def __init__(self, fn, *modules):
        super().__init__()
        self.layers = nn.ModuleList(modules)
        self.fn = fn

    def forward(self, x):
        return self.fn(self, x)


@pytest.mark.parametrize("conv, shape", [
    (lambda: nn.Conv2d(4, 6, 3, stride=2, padding=1, groups=2), (2, 4, 7, 7)),
    (lambda: nn.Conv2d(4, 4, 3, padding="same", dilation=2, groups=4), (2, 4, 7, 6)),  # depthwise
    (lambda: nn.Conv2d(6, 12, (3, 1), padding=(0, 2), groups=3, bias=False), (2, 6, 5, 4)),
    (lambda: nn.Conv2d(4, 6, 3, groups=2), (4, 7, 7)),  # unbatched
    (lambda: nn.Conv1d(4, 6, 3, padding=1, groups=2), (2, 4, 9)),
    (lambda: nn.Conv1d(3, 3, 5, stride=2, groups=3, padding_mode="reflect", padding=2),
     (2, 3, 11)),
])
def test_grouped_conv(device, conv, shape):
    autograd.manual_seed(0)
    model = conv().to(device)
    x = autograd.randn(*shape, device=device)
    proto, sess = _export(model, x)
    _check(model, sess, x)
    attrs = _node(proto, "Conv")
    assert attrs["group"] == model.groups
    assert "Im2Col" not in "".join(_ops(proto))


@pytest.mark.parametrize("conv, shape", [
    (lambda: nn.ConvTranspose2d(4, 6, 3, stride=2, padding=1, output_padding=1, groups=2),
     (2, 4, 5, 5)),
    (lambda: nn.ConvTranspose2d(4, 3, (3, 2), stride=(2, 3), padding=(1, 0),
                                output_padding=(1, 2), dilation=(1, 2)), (2, 4, 4, 5)),
    (lambda: nn.ConvTranspose2d(3, 3, 4, stride=2, padding=1, groups=3, bias=False),
     (3, 5, 4)),  # depthwise, unbatched
    (lambda: nn.ConvTranspose1d(4, 6, 4, stride=3, padding=2, output_padding=1, groups=2,
                                dilation=2), (2, 4, 6)),
    (lambda: nn.ConvTranspose1d(4, 2, 3), (4, 6)),  # unbatched
])
def test_conv_transpose(device, conv, shape):
    autograd.manual_seed(1)
    model = conv().to(device)
    x = autograd.randn(*shape, device=device)
    proto, sess = _export(model, x)
    _check(model, sess, x)
    attrs = _node(proto, "ConvTranspose")
    assert attrs["group"] == model.groups
    assert attrs["strides"] == list(model.stride)
    assert attrs["output_padding"] == list(model.output_padding)
    assert attrs["dilations"] == list(model.dilation)


def test_conv_transpose_dynamic_batch():
    autograd.manual_seed(2)
    model = nn.ConvTranspose2d(3, 2, 3, stride=2)
    proto, sess = _export(model, autograd.randn(2, 3, 4, 4), dynamic_axes=DYN)
    _check(model, sess, autograd.randn(5, 3, 4, 4))


def _trained(bn, shape, device):
    bn.train()
    for _ in range(3):  # running statistics away from (0, 1)
        bn(autograd.randn(*shape, device=device) * 3 + 1)
    return bn


@pytest.mark.parametrize("make, shape", [
    (lambda: nn.BatchNorm2d(5), (3, 5, 4, 4)),
    (lambda: nn.BatchNorm2d(5, affine=False, eps=1e-3), (3, 5, 4, 4)),
    (lambda: nn.BatchNorm1d(5), (3, 5, 4)),
    (lambda: nn.BatchNorm1d(5, momentum=None), (4, 5)),
])
def test_batch_norm_eval(device, make, shape):
    autograd.manual_seed(3)
    bn = _trained(make().to(device), shape, device)
    with autograd.no_grad():
        if bn.affine:
            bn.weight.uniform_(0.5, 2)
            bn.bias.uniform_(-1, 1)
    bn.eval()
    x = autograd.randn(*shape, device=device)
    proto, sess = _export(bn, x)
    _check(bn, sess, x)
    assert "BatchNormalization" in _ops(proto)
    assert _node(proto, "BatchNormalization")["epsilon"] == pytest.approx(bn.eps)
    names = {t.name for t in proto.graph.initializer}
    assert {"running_mean", "running_var"} <= names
    assert bn.training is False


def test_batch_norm_training_mode(device):
    """As torch.onnx with training=TRAINING: BatchNormalization(training_mode=1, momentum =
    1 - momentum) normalising by batch statistics; the model's running statistics are updated
    once (one traced forward, also with dynamic axes) and exported as initializers."""
    autograd.manual_seed(4)
    model = nn.Sequential(nn.Conv2d(3, 4, 3), nn.BatchNorm2d(4, momentum=0.2), nn.ReLU())
    model.to(device).eval()
    x = autograd.randn(2, 3, 6, 6, device=device)
    ref = autograd.nn.Sequential(*model).train()  # the same modules, in training mode
    before = model[1].running_mean.cpu().numpy().copy()
    proto, sess = _export(model, x, training=autograd.onnx.TrainingMode.TRAINING,
                          dynamic_axes=DYN)
    assert not model.training and not model[1].training  # the mode is restored
    assert int(model[1].num_batches_tracked) == 1
    after = model[1].running_mean.cpu().numpy()
    assert not np.allclose(before, after)
    init = {t.name: onnx.numpy_helper.to_array(t) for t in proto.graph.initializer}
    np.testing.assert_allclose(init["1.running_mean"], after, rtol=1e-6)
    attrs = _node(proto, "BatchNormalization")
    assert attrs["training_mode"] == 1
    assert attrs["momentum"] == pytest.approx(0.8)
    ref.train()
    with autograd.no_grad():
        expect = ref(x).cpu().numpy()
    np.testing.assert_allclose(_run(sess, x), expect, rtol=1e-4, atol=1e-5)


def test_training_mode_needs_opset_14():
    with pytest.raises(autograd.onnx.UnsupportedOperatorError, match="opset version 13"):
        _export(nn.BatchNorm1d(3), autograd.randn(4, 3), opset_version=13,
                training=autograd.onnx.TrainingMode.TRAINING)


def test_training_mode_dropout_is_named():
    model = nn.Sequential(nn.Linear(3, 3), nn.Dropout(0.2))
    with pytest.raises(autograd.onnx.UnsupportedOperatorError,
                       match=r"Dropout module '1' in training mode"):
        _export(model.train(), autograd.randn(2, 3), training=autograd.onnx.TrainingMode.PRESERVE)
    assert model.training
    _, sess = _export(model, autograd.randn(2, 3))  # EVAL, the default: dropout is identity
    model.eval()
    _check(model, sess, autograd.randn(2, 3))
    with pytest.raises(ValueError, match="TrainingMode"):
        _export(model, autograd.randn(2, 3), training="train")


@pytest.mark.parametrize("make, shape, mode", [
    (lambda: nn.ZeroPad2d((1, 2, 0, 3)), (2, 3, 4, 5), "constant"),
    (lambda: nn.ZeroPad2d((1, -1, 2, -2)), (2, 3, 4, 5), "constant"),  # negative pads crop
    (lambda: nn.ConstantPad1d(2, 3.5), (2, 3, 4), "constant"),
    (lambda: nn.ReflectionPad2d((1, 2, 0, 3)), (2, 3, 4, 5), "reflect"),
    (lambda: nn.ReflectionPad1d(2), (3, 5), "reflect"),
    (lambda: nn.ReplicationPad2d(2), (2, 3, 4, 5), "edge"),
    (lambda: nn.ReplicationPad1d((0, 3)), (2, 3, 4), "edge"),
])
def test_pad_modules(device, make, shape, mode):
    autograd.manual_seed(5)
    model = make()
    x = autograd.randn(*shape, device=device)
    proto, sess = _export(model, x)
    _check(model, sess, x)
    assert _node(proto, "Pad")["mode"] == mode.encode()


@pytest.mark.parametrize("pad, mode", [
    ((1, 2), "constant"), ((1, 1, 2, 0), "reflect"), ((2, 0, 1, 1), "replicate"),
    ((1, 2, 2, 0), "circular"), ((0, 3, 0, 0), "circular"),
])
def test_functional_pad(device, pad, mode):
    autograd.manual_seed(6)
    value = -1.5 if mode == "constant" else None
    model = _Lambda(lambda self, x: F.pad(x * 2, pad, mode=mode, value=value))
    x = autograd.randn(2, 3, 4, 5, device=device)
    proto, sess = _export(model, x, dynamic_axes=DYN)
    _check(model, sess, x)
    _check(model, sess, autograd.randn(3, 3, 4, 5, device=device))
    assert ("Concat" if mode == "circular" else "Pad") in _ops(proto)
    assert "Gather" not in _ops(proto)


@pytest.mark.parametrize("dims", [(0,), (1, -1), (-1,), (0, 1, 2)])
def test_flip(device, dims):
    autograd.manual_seed(7)
    model = _Lambda(lambda self, x: autograd.flip(x + 1, dims) * x.flip(dims[:1]))
    x = autograd.randn(2, 3, 4, device=device)
    proto, sess = _export(model, x)
    _check(model, sess, x)
    assert "Slice" in _ops(proto)


class _Cumsum(nn.Module):
    def forward(self, x):
        return x.cumsum(1)


def test_unsupported_module_is_named():
    model = nn.Sequential(nn.Conv2d(2, 2, 1), nn.Sequential(nn.ReLU(), _Cumsum()))
    with pytest.raises(autograd.onnx.UnsupportedOperatorError,
                       match=r"'Cumsum' in module '1\.1' \(_Cumsum\) to ONNX opset version 17"):
        _export(model, autograd.randn(1, 2, 3, 3))
    fold = nn.Fold((4, 4), 2)
    with pytest.raises(autograd.onnx.UnsupportedOperatorError, match=r"module 'Fold' \(Fold\)"):
        _export(fold, autograd.randn(1, 8, 9))
    for m in model.modules():  # the hooks naming the modules are removed
        assert not m._forward_hooks and not m._forward_pre_hooks


# -- end to end -------------------------------------------------------------------------------


class _Block(nn.Module):
    def __init__(self, c_in, c_out, stride):
        super().__init__()
        self.conv1 = nn.Conv2d(c_in, c_out, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(c_out)
        self.conv2 = nn.Conv2d(c_out, c_out, 3, 1, 1, groups=2, bias=False)
        self.bn2 = nn.BatchNorm2d(c_out)
        self.shortcut = nn.Sequential()
        if stride != 1 or c_in != c_out:
            self.shortcut = nn.Sequential(nn.Conv2d(c_in, c_out, 1, stride, bias=False),
                                          nn.BatchNorm2d(c_out))

    def forward(self, x):
        out = F.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        return F.relu(out + self.shortcut(x))


class _ResNet(nn.Module):
    def __init__(self, classes=5):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 8, 3, 1, 1, bias=False), nn.BatchNorm2d(8),
                                  nn.ReLU(inplace=True), nn.MaxPool2d(2))
        self.layer1 = _Block(8, 8, 1)
        self.layer2 = _Block(8, 16, 2)
        self.pool = nn.AdaptiveAvgPool2d((1, 1))
        self.fc = nn.Linear(16, classes)

    def forward(self, x):
        x = self.layer2(self.layer1(self.stem(x)))
        return self.fc(autograd.flatten(self.pool(x), 1))


def test_resnet_end_to_end(device):
    autograd.manual_seed(8)
    model = _ResNet().to(device)
    for _ in range(2):
        model(autograd.randn(4, 3, 16, 16, device=device))
    model.eval()
    x = autograd.randn(2, 3, 16, 16, device=device)
    proto, sess = _export(model, x, dynamic_axes=DYN)
    _check(model, sess, x)
    _check(model, sess, autograd.randn(3, 3, 16, 16, device=device))
    ops = set(_ops(proto))
    assert {"Conv", "BatchNormalization", "Relu", "Add", "MaxPool", "GlobalAveragePool",
            "Gemm"} <= ops
    assert {n for n, _ in model.named_parameters()} <= {t.name for t in proto.graph.initializer}


class _Generator(nn.Module):
    """DCGAN's generator, small: z (N, nz, 1, 1) -> image (N, 3, 16, 16)."""

    def __init__(self, nz=8, ngf=4):
        super().__init__()
        self.main = nn.Sequential(
            nn.ConvTranspose2d(nz, ngf * 4, 4, 1, 0, bias=False), nn.BatchNorm2d(ngf * 4),
            nn.ReLU(True),
            nn.ConvTranspose2d(ngf * 4, ngf * 2, 4, 2, 1, bias=False), nn.BatchNorm2d(ngf * 2),
            nn.ReLU(True),
            nn.ConvTranspose2d(ngf * 2, ngf, 4, 2, 1, bias=False), nn.BatchNorm2d(ngf),
            nn.ReLU(True),
            nn.ConvTranspose2d(ngf, 3, 3, 1, 1, bias=False), nn.Tanh())

    def forward(self, z):
        return self.main(z)


def test_dcgan_generator_end_to_end(device):
    autograd.manual_seed(9)
    model = _Generator().to(device)
    for _ in range(2):
        model(autograd.randn(4, 8, 1, 1, device=device))
    model.eval()
    z = autograd.randn(2, 8, 1, 1, device=device)
    proto, sess = _export(model, z, dynamic_axes=DYN)
    _check(model, sess, z)
    _check(model, sess, autograd.randn(5, 8, 1, 1, device=device))
    assert _ops(proto).count("ConvTranspose") == 4
    assert _ops(proto).count("BatchNormalization") == 3
    assert "Tanh" in _ops(proto)


def test_inplace_ops_are_exported():
    """In-place ops run with grad mode off while tracing; they are still recorded."""
    autograd.manual_seed(10)
    model = _Lambda(lambda self, x: self.layers[0](x).relu_().mul_(2).add_(x), nn.Linear(4, 4))
    x = autograd.randn(3, 4)
    proto, sess = _export(model, x)
    _check(model, sess, x)
    assert {"Relu", "Mul", "Add"} <= set(_ops(proto))
    view = _Lambda(lambda self, x: (x * 1)[:, :2].relu_())
    with pytest.raises(RuntimeError, match="in-place operation on a view cannot be exported"):
        _export(view, x)
