"""autograd.autocast against torch.autocast: which ops compute in the lower precision, which in
float32, the dtypes that come out, gradients reaching float32 weights, nesting, the decorator
form and bad arguments."""

import warnings

import numpy as np
import pytest

import autograd
import autograd.nn.functional as F
import carray


def _lower(device):
    return autograd.float16 if device == "gpu" else autograd.bfloat16


def test_default_dtypes_and_state():
    assert autograd.get_autocast_dtype("cpu") == autograd.bfloat16
    assert autograd.get_autocast_dtype("cuda") == autograd.float16
    assert not autograd.is_autocast_enabled("cpu")
    with autograd.autocast("cpu"):
        assert autograd.is_autocast_enabled("cpu")
        assert not autograd.is_autocast_enabled()          # no argument: the GPU, as CUDA
        with autograd.autocast("cpu", enabled=False):
            assert not autograd.is_autocast_enabled("cpu")
        assert autograd.is_autocast_enabled("cpu")
    assert not autograd.is_autocast_enabled("cpu")
    assert autograd.is_autocast_available("cuda") and autograd.is_autocast_available("cpu")
    assert not autograd.is_autocast_available("tpu")
    assert autograd.amp.autocast is autograd.autocast
    assert autograd.cuda.amp.GradScaler is autograd.amp.GradScaler


def test_bad_arguments():
    with pytest.raises(ValueError, match="device_type"):
        autograd.autocast(1)
    with pytest.raises(RuntimeError, match="tpu"):
        autograd.autocast("tpu")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        region = autograd.autocast("cpu", dtype=autograd.float32)
    assert any("Disabling autocast" in str(w.message) for w in caught)
    with region:
        assert not autograd.is_autocast_enabled("cpu")


def test_policies_give_torchs_dtypes_on_cpu():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(0)
    a_np = rng.standard_normal((6, 5)).astype(np.float32)
    w_np = rng.standard_normal((4, 5)).astype(np.float32)
    y_np = np.array([0, 1, 2, 3, 0, 1])
    results = {}
    for lib, t in (("ag", autograd), ("torch", torch)):
        a, w, y = t.tensor(a_np), t.tensor(w_np), t.tensor(y_np)
        f = F if lib == "ag" else torch.nn.functional
        with t.autocast("cpu"):
            h = a @ w.T
            lin = f.linear(a, w)
            out = {"matmul": h, "linear": lin, "relu": f.relu(h), "add": h + a[:, :4],
                   "cross_entropy": f.cross_entropy(h, y), "f64": a.double() @ w.double().T,
                   "layer_norm": f.layer_norm(a, (5,))}
        results[lib] = {k: str(v.dtype).replace("torch.", "") for k, v in out.items()}
    assert results["ag"] == results["torch"]


def test_values_and_gradients_match_torch_on_cpu():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(1)
    x_np = rng.standard_normal((8, 16)).astype(np.float32)
    w1_np = (rng.standard_normal((32, 16)) * 0.2).astype(np.float32)
    w2_np = (rng.standard_normal((5, 32)) * 0.2).astype(np.float32)
    y_np = rng.integers(0, 5, 8)
    grads, losses = {}, {}
    for lib, t in (("ag", autograd), ("torch", torch)):
        f = F if lib == "ag" else torch.nn.functional
        w1 = t.tensor(w1_np, requires_grad=True)
        w2 = t.tensor(w2_np, requires_grad=True)
        with t.autocast("cpu", dtype=t.bfloat16):
            h = f.gelu(f.linear(t.tensor(x_np), w1))
            loss = f.cross_entropy(f.linear(h, w2), t.tensor(y_np))
        loss.backward()
        assert w1.grad.dtype == t.float32 and w2.grad.dtype == t.float32
        losses[lib] = loss.item()
        grads[lib] = (w1.grad.detach().numpy() if lib == "torch" else w1.grad.numpy(),
                      w2.grad.detach().numpy() if lib == "torch" else w2.grad.numpy())
    assert abs(losses["ag"] - losses["torch"]) < 2e-2 * max(1.0, abs(losses["torch"]))
    for g, r in zip(grads["ag"], grads["torch"]):
        np.testing.assert_allclose(g, r, rtol=5e-2, atol=5e-2 * np.abs(r).max())


def test_lower_precision_on_each_device(device):
    low = _lower(device)
    x = autograd.randn(4, 3, device=device)
    w = autograd.randn(2, 3, device=device, requires_grad=True)
    with autograd.autocast(device):
        y = x @ w.T
        p = F.log_softmax(y, dim=1)
    assert y.dtype == low
    # on the GPU log_softmax computes in float32 (CUDA's list); on the CPU in its input's dtype
    assert p.dtype == (autograd.float32 if device == "gpu" else low)
    ref = x.numpy().astype(np.float64) @ w.detach().numpy().astype(np.float64).T
    np.testing.assert_allclose(y.detach().float().numpy(), ref, rtol=2e-2, atol=2e-2)
    p.float().sum().backward()
    assert w.grad.dtype == autograd.float32 and w.grad.device == device
    # outside the region nothing is cast
    assert (x @ w.T).dtype == autograd.float32


def test_float64_and_integer_tensors_are_not_cast(device):
    a = autograd.randn(3, 3, dtype=autograd.float64, device=device)
    with autograd.autocast(device):
        assert (a @ a).dtype == autograd.float64
        i = autograd.arange(4, device=device).reshape(2, 2)
        assert (i @ i).dtype == autograd.int64


def test_weight_cast_once_per_region():
    w = autograd.randn(3, 3, requires_grad=True)
    x = autograd.randn(2, 3)
    with autograd.autocast("cpu"):
        y1 = x @ w
        y2 = x @ w
    # both products used the same cached bfloat16 copy of w: one cast node feeds both
    assert y1.grad_fn.next_functions[1][0] is y2.grad_fn.next_functions[1][0]
    (y1.float().sum() + y2.float().sum()).backward()
    np.testing.assert_allclose(w.grad.numpy(), 2 * np.tile(x.numpy().sum(0)[:, None], (1, 3)),
                               rtol=2e-2, atol=2e-2)
    with autograd.autocast("cpu", cache_enabled=False):
        z1, z2 = x @ w, x @ w
    assert z1.grad_fn.next_functions[1][0] is not z2.grad_fn.next_functions[1][0]


def test_decorator_and_custom_fwd():
    @autograd.autocast("cpu")
    def f(a, b):
        return a @ b

    a = autograd.randn(2, 2)
    assert f(a, a).dtype == autograd.bfloat16
    assert (a @ a).dtype == autograd.float32

    class Square(autograd.Function):
        @staticmethod
        @autograd.amp.custom_fwd(device_type="cpu", cast_inputs=autograd.float32)
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        @autograd.amp.custom_bwd(device_type="cpu")
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return 2 * x * g

    x = autograd.randn(3, requires_grad=True)
    with autograd.autocast("cpu"):
        y = Square.apply(x.bfloat16())
    assert y.dtype == autograd.float32
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), 2 * x.bfloat16().float().detach().numpy(),
                               rtol=1e-6)


def test_carray_half_matmul_is_what_autocast_runs():
    """The lower-precision product equals carray's float16 matmul of the rounded operands
    (float32 accumulation, one rounding), the reference autocast relies on."""
    rng = np.random.default_rng(2)
    a = rng.standard_normal((5, 7)).astype(np.float16)
    b = rng.standard_normal((7, 3)).astype(np.float16)
    got = carray.matmul(carray.asarray(a), carray.asarray(b))
    want = (a.astype(np.float32) @ b.astype(np.float32)).astype(np.float16)
    np.testing.assert_allclose(np.asarray(got).astype(np.float32), want.astype(np.float32),
                               rtol=1e-3, atol=1e-3)
