"""autograd.onnx.export: the exported file passes onnx.checker and, run in onnxruntime, gives
autograd's outputs (also at another batch size with a dynamic batch axis); unsupported ops and
bad arguments raise."""

import io

import numpy as np
import pytest

import autograd
import autograd.function
from autograd import nn

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


def _check(model, sess, x):
    ref = model(x).detach().cpu().numpy()
    (got,) = sess.run(None, {"x": x.cpu().numpy()})
    assert got.shape == ref.shape
    np.testing.assert_allclose(got, ref, rtol=1e-4, atol=1e-5)


def _params_are_initializers(model, proto):
    names = {t.name for t in proto.graph.initializer}
    keys = set(model.state_dict())
    # every parameter the graph reads is an initializer under its state_dict name
    assert {n for n, _ in model.named_parameters()} <= names
    assert names & keys


def test_mlp(device):
    autograd.manual_seed(0)
    model = nn.Sequential(nn.Linear(5, 8), nn.ReLU(), nn.Linear(8, 8), nn.GELU(), nn.Dropout(0.3),
                          nn.Linear(8, 8), nn.Tanh(), nn.Linear(8, 3), nn.LogSoftmax(-1))
    model.to(device)
    x = autograd.randn(4, 5, device=device)
    proto, sess = _export(model, x)
    assert model.training  # export runs in eval mode and restores the mode
    model.eval()
    _check(model, sess, x)
    _params_are_initializers(model, proto)
    assert [i.name for i in proto.graph.input] == ["x"]
    assert [o.name for o in proto.graph.output] == ["y"]
    ops = {n.op_type for n in proto.graph.node}
    assert {"Gemm", "Relu", "Erf", "Tanh", "LogSoftmax"} <= ops
    assert proto.opset_import[0].version == 17


def test_cnn_dynamic_batch(device):
    autograd.manual_seed(1)
    model = nn.Sequential(nn.Conv2d(3, 6, 3, padding=1), nn.BatchNorm2d(6), nn.ReLU(),
                          nn.MaxPool2d(2), nn.Conv2d(6, 4, 3, stride=2, padding="valid"),
                          nn.LeakyReLU(0.1), nn.AdaptiveAvgPool2d(1), nn.Flatten(),
                          nn.Linear(4, 2))
    model.to(device)
    for _ in range(2):  # running stats that are not the initial ones
        model(autograd.randn(4, 3, 12, 12, device=device))
    model.eval()
    x = autograd.randn(2, 3, 12, 12, device=device)
    proto, sess = _export(model, x, dynamic_axes=DYN)
    _check(model, sess, x)
    _check(model, sess, autograd.randn(5, 3, 12, 12, device=device))
    assert proto.graph.input[0].type.tensor_type.shape.dim[0].dim_param == "batch"
    assert proto.graph.output[0].type.tensor_type.shape.dim[0].dim_param == "batch"
    ops = {n.op_type for n in proto.graph.node}
    assert {"Conv", "MaxPool", "GlobalAveragePool", "LeakyRelu", "Gemm"} <= ops


class _Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(11, 16)
        self.layer = nn.TransformerEncoderLayer(16, 2, 32, dropout=0.1, batch_first=True)
        self.norm = nn.LayerNorm(16)
        self.head = nn.Linear(16, 11)

    def forward(self, tokens):
        return self.head(self.norm(self.layer(self.emb(tokens)))).softmax(-1)


def test_transformer_encoder_dynamic_batch(device):
    autograd.manual_seed(2)
    model = _Encoder().to(device)
    model.eval()
    x = autograd.randint(0, 11, (3, 6), device=device)
    proto, sess = _export(model, x, dynamic_axes=DYN)
    _check(model, sess, x)
    _check(model, sess, autograd.randint(0, 11, (5, 6), device=device))
    ops = {n.op_type for n in proto.graph.node}
    assert {"Gather", "LayerNormalization", "MatMul", "Softmax"} <= ops
    _params_are_initializers(model, proto)


class _Attention(nn.Module):
    def __init__(self):
        super().__init__()
        self.qkv = nn.Linear(8, 24)

    def forward(self, x):
        q, k, v = self.qkv(x).reshape(x.shape[0], x.shape[1], 3, 2, 4).permute(2, 0, 3, 1, 4)
        out = nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)
        out = out.transpose(1, 2).reshape(x.shape[0], x.shape[1], 8)[:, 1:, :].mean(-1)
        return out.clamp(-0.2, 0.3)


def test_causal_attention(device):
    autograd.manual_seed(3)
    model = _Attention().to(device)
    x = autograd.randn(2, 5, 8, device=device)
    proto, sess = _export(model, x)
    _check(model, sess, x)
    assert any(t.name.startswith("causal_mask") for t in proto.graph.initializer)


class _Cumsum(nn.Module):
    def forward(self, x):
        return x.cumsum(0)


def test_unsupported_operator_is_named():
    with pytest.raises(autograd.onnx.UnsupportedOperatorError, match="'Cumsum'"):
        _export(_Cumsum(), autograd.randn(3))
    assert issubclass(autograd.onnx.UnsupportedOperatorError, RuntimeError)
    assert autograd.function._tracer is None  # the hook is removed after a failed export


def test_layer_norm_needs_opset_17():
    with pytest.raises(autograd.onnx.UnsupportedOperatorError, match="opset version 16"):
        _export(nn.LayerNorm(4), autograd.randn(2, 4), opset_version=16)


def test_opset_18_reduce_mean_axes_input():
    model = _Attention()
    x = autograd.randn(2, 5, 8)
    proto, sess = _export(model, x, opset_version=18)
    _check(model, sess, x)
    assert proto.opset_import[0].version == 18


def test_bad_arguments():
    model = nn.Linear(3, 2)
    x = autograd.randn(2, 3)
    with pytest.raises(ValueError, match="input_names"):
        _export(model, x, input_names=["a", "b"])
    with pytest.raises(ValueError, match="dynamic_axes"):
        _export(model, x, dynamic_axes={"z": {0: "batch"}})
    with pytest.raises(ValueError, match="args must be Tensors"):
        autograd.onnx.export(model, (3,), io.BytesIO())


def test_default_names_and_list_dynamic_axes():
    model = nn.Linear(3, 2)
    buf = io.BytesIO()
    autograd.onnx.export(model, autograd.randn(2, 3), buf, dynamic_axes={"input": [0]})
    proto = onnx.load_from_string(buf.getvalue())
    assert proto.graph.input[0].name == "input"  # forward's parameter name, as torch.onnx
    assert proto.graph.output[0].name == "output_0"
    assert proto.graph.input[0].type.tensor_type.shape.dim[0].dim_param == "input_dynamic_axes_1"
    sess = ort.InferenceSession(buf.getvalue(), providers=["CPUExecutionProvider"])
    x = autograd.randn(6, 3)
    np.testing.assert_allclose(sess.run(None, {"input": x.numpy()})[0],
                               model(x).detach().numpy(), rtol=1e-4, atol=1e-6)
