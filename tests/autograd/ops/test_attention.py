"""scaled_dot_product_attention: forward and gradients against PyTorch (masks bool and float,
broadcasting, causal, fully masked rows, views, GQA, empty), float64 gradcheck and
gradgradcheck of its Function, dropout statistics, and PyTorch's errors."""

import numpy as np
import pytest

import autograd
from autograd.nn import functional as F

from _torch_ref import assert_close, pair, to_np

rng = np.random.default_rng(0)


def _randn(*shape, dtype=np.float32):
    return rng.standard_normal(shape).astype(dtype)


def _compare(device, q, k, v, mask=None, mask_grad=False, **kw):
    """Run sdpa in both libraries on the NumPy inputs; compare output and every gradient."""
    torch = pytest.importorskip("torch")
    tf = torch.nn.functional
    (aq, tq), (ak, tk), (av, tv) = (pair(x, device) for x in (q, k, v))
    am = tm = None
    if mask is not None:
        am, tm = pair(mask, device, requires_grad=mask_grad)
    out = F.scaled_dot_product_attention(aq, ak, av, attn_mask=am, **kw)
    ref = tf.scaled_dot_product_attention(tq, tk, tv, attn_mask=tm, **kw)
    assert_close(out, ref, what="output")
    assert out.device == aq.device
    g = _randn(*ref.shape)
    out.backward(autograd.from_numpy(g).to(device))
    ref.backward(torch.from_numpy(g))
    for name, a, t in (("q", aq, tq), ("k", ak, tk), ("v", av, tv)) + \
            ((("mask", am, tm),) if mask_grad else ()):
        assert_close(a.grad, t.grad, what=f"grad of {name}")
    return out


def test_plain_4d(device):
    _compare(device, _randn(2, 3, 5, 8), _randn(2, 3, 7, 8), _randn(2, 3, 7, 6))


def test_3d_and_2d_inputs_and_scale(device):
    _compare(device, _randn(3, 5, 4), _randn(3, 6, 4), _randn(3, 6, 4), scale=0.3)
    _compare(device, _randn(5, 4), _randn(6, 4), _randn(6, 2))


def test_bool_mask_broadcast_over_batch_and_heads(device):
    mask = rng.random((5, 7)) > 0.4
    mask[:, 0] = True
    _compare(device, _randn(2, 3, 5, 8), _randn(2, 3, 7, 8), _randn(2, 3, 7, 8), mask=mask)
    mask = rng.random((2, 1, 1, 7)) > 0.3  # a key-padding style mask
    mask[..., 0] = True
    _compare(device, _randn(2, 3, 5, 8), _randn(2, 3, 7, 8), _randn(2, 3, 7, 8), mask=mask)


def test_float_mask_gets_a_gradient(device):
    mask = _randn(2, 1, 5, 7)
    mask[0, 0, 1, 3] = -np.inf
    _compare(device, _randn(2, 3, 5, 8), _randn(2, 3, 7, 8), _randn(2, 3, 7, 8), mask=mask,
             mask_grad=True)


def test_causal_square_and_rectangular(device):
    _compare(device, _randn(2, 2, 6, 4), _randn(2, 2, 6, 4), _randn(2, 2, 6, 4), is_causal=True)
    _compare(device, _randn(2, 2, 3, 4), _randn(2, 2, 6, 4), _randn(2, 2, 6, 4), is_causal=True)
    _compare(device, _randn(2, 2, 6, 4), _randn(2, 2, 3, 4), _randn(2, 2, 3, 4), is_causal=True)


def test_causal_with_a_mask_applies_both(device):
    mask = rng.random((6, 6)) > 0.3
    _compare(device, _randn(1, 2, 6, 4), _randn(1, 2, 6, 4), _randn(1, 2, 6, 4), mask=mask,
             is_causal=True)
    fmask = _randn(6, 6)
    _compare(device, _randn(1, 2, 6, 4), _randn(1, 2, 6, 4), _randn(1, 2, 6, 4), mask=fmask,
             is_causal=True)


def test_causal_with_a_mask_that_requires_grad_raises():
    mask = autograd.randn(3, 3, requires_grad=True)
    q = autograd.randn(1, 3, 2)
    with pytest.raises(RuntimeError, match="Explicit attn_mask should not be set when "
                                           "is_causal=True"):
        F.scaled_dot_product_attention(q, q, q, attn_mask=mask, is_causal=True)


def test_fully_masked_rows_give_zero_like_torch(device):
    mask = np.ones((4, 5), dtype=bool)
    mask[1] = False
    out = _compare(device, _randn(2, 4, 3), _randn(2, 5, 3), _randn(2, 5, 3), mask=mask)
    assert np.all(to_np(out)[:, 1] == 0)
    fmask = np.zeros((4, 5), dtype=np.float32)
    fmask[2] = -np.inf
    out = _compare(device, _randn(2, 4, 3), _randn(2, 5, 3), _randn(2, 5, 3), mask=fmask)
    assert np.all(to_np(out)[:, 2] == 0)


def test_broadcast_batch_dims_reduce_the_gradients(device):
    # one key/value set shared by every batch entry and head
    _compare(device, _randn(2, 3, 5, 4), _randn(1, 1, 6, 4), _randn(1, 6, 4))


def test_non_contiguous_views(device):
    torch = pytest.importorskip("torch")
    q, k, v = _randn(2, 5, 3, 4), _randn(2, 6, 3, 4), _randn(2, 6, 3, 4)  # (N, L, H, E)
    (aq, tq), (ak, tk), (av, tv) = (pair(x, device) for x in (q, k, v))
    out = F.scaled_dot_product_attention(aq.transpose(1, 2), ak.transpose(1, 2),
                                         av.transpose(1, 2)[..., ::2])
    ref = torch.nn.functional.scaled_dot_product_attention(tq.transpose(1, 2), tk.transpose(1, 2),
                                                           tv.transpose(1, 2)[..., ::2])
    assert_close(out, ref)
    out.sum().backward()
    ref.sum().backward()
    for a, t in ((aq, tq), (ak, tk), (av, tv)):
        assert_close(a.grad, t.grad)


def test_grouped_query_attention(device):
    _compare(device, _randn(2, 6, 5, 4), _randn(2, 2, 7, 4), _randn(2, 2, 7, 4), enable_gqa=True)


def test_empty_inputs(device):
    torch = pytest.importorskip("torch")
    for shapes in (((0, 3, 4), (0, 5, 4), (0, 5, 4)), ((2, 0, 4), (2, 5, 4), (2, 5, 4)),
                   ((2, 3, 4), (2, 0, 4), (2, 0, 4))):
        (aq, tq), (ak, tk), (av, tv) = (pair(_randn(*s), device) for s in shapes)
        out = F.scaled_dot_product_attention(aq, ak, av)
        ref = torch.nn.functional.scaled_dot_product_attention(tq, tk, tv)
        assert_close(out, ref)
        out.sum().backward()
        assert aq.grad.shape == aq.shape and ak.grad.shape == ak.shape


def test_gradcheck_float64_float_mask_and_causal(device):
    q, k, v = (autograd.from_numpy(_randn(2, 3, n, 3, dtype=np.float64)).to(device)
               .requires_grad_() for n in (4, 5, 5))
    mask = autograd.from_numpy(_randn(3, 4, 5, dtype=np.float64)).to(device).requires_grad_()
    assert autograd.gradcheck(lambda q, k, v, m: F.scaled_dot_product_attention(
        q, k, v, attn_mask=m), (q, k, v, mask))
    assert autograd.gradcheck(lambda q, k, v: F.scaled_dot_product_attention(
        q, k, v, is_causal=True, scale=0.7), (q, k, v))
    fmask = mask.detach()
    assert autograd.gradcheck(lambda q, k, v: F.scaled_dot_product_attention(
        q, k, v, attn_mask=fmask, is_causal=True), (q, k, v))
    bmask = autograd.from_numpy(rng.random((4, 5)) > 0.5).to(device)
    assert autograd.gradcheck(lambda q, k, v: F.scaled_dot_product_attention(
        q, k, v, attn_mask=bmask, is_causal=True), (q, k, v))


def test_gradgradcheck_float64(device):
    q, k, v = (autograd.from_numpy(_randn(1, 2, n, 3, dtype=np.float64)).to(device)
               .requires_grad_() for n in (3, 4, 4))
    mask = autograd.from_numpy(_randn(3, 4, dtype=np.float64)).to(device)

    def grad_out():  # on the device (gradgradcheck's default ones are made on the cpu)
        return [autograd.from_numpy(_randn(1, 2, 3, 3, dtype=np.float64)).to(device)]

    assert autograd.gradgradcheck(lambda q, k, v: F.scaled_dot_product_attention(
        q, k, v, attn_mask=mask), (q, k, v), grad_out())
    assert autograd.gradgradcheck(lambda q, k, v: F.scaled_dot_product_attention(
        q, k, v, is_causal=True), (q, k, v), grad_out())


def test_dropout_statistics_and_consistent_backward(device):
    # q = k = 0: every probability is 1/S; v = I: the output is the dropped-out matrix itself
    n_q, s, p = 64, 50, 0.4
    q = autograd.zeros(8, n_q, 4, device=device)
    k = autograd.zeros(8, s, 4, device=device)
    v = autograd.eye(s, device=device).expand(8, s, s).contiguous().requires_grad_()
    out = F.scaled_dot_product_attention(q, k, v, dropout_p=p)
    a = to_np(out)
    kept = a != 0
    np.testing.assert_allclose(a[kept], 1.0 / s / (1 - p), rtol=1e-5)
    assert abs(kept.mean() - (1 - p)) < 0.02
    out.sum().backward()  # dv = P^T 1: column sums of the same dropped-out matrix
    np.testing.assert_allclose(to_np(v.grad), np.repeat(a.sum(1)[:, :, None], s, 2), rtol=1e-5)


def test_errors():
    q = autograd.randn(2, 3, 4)
    with pytest.raises(RuntimeError, match="at least 2 dimensional"):
        F.scaled_dot_product_attention(autograd.randn(4), autograd.randn(4), autograd.randn(4))
    with pytest.raises(RuntimeError, match="same dtype.*query.dtype: double"):
        F.scaled_dot_product_attention(q.double(), q, q)
    with pytest.raises(RuntimeError, match="attn_mask dtype to be bool or float"):
        F.scaled_dot_product_attention(q, q, q, attn_mask=autograd.ones(3, 3).long())
    with pytest.raises(RuntimeError, match="size of tensor a \\(3\\) must match the size of "
                                           "tensor b \\(4\\) at non-singleton dimension 1"):
        F.scaled_dot_product_attention(q, q, q, attn_mask=autograd.ones(4, 3).bool())
    with pytest.raises(RuntimeError, match="dropout probability has to be between 0 and 1"):
        F.scaled_dot_product_attention(q, q, q, dropout_p=1.5)
    with pytest.raises(RuntimeError, match="query.size\\(-1\\)=4 and key.size\\(-1\\)=3"):
        F.scaled_dot_product_attention(q, q[..., :3], q)
    with pytest.raises(RuntimeError, match="multiple of the number of key/value heads"):
        F.scaled_dot_product_attention(autograd.randn(1, 3, 2, 4), autograd.randn(1, 2, 2, 4),
                                       autograd.randn(1, 2, 2, 4), enable_gqa=True)


def test_gpu_without_mask_runs_the_memory_efficient_kernels(device):
    """On the device, no mask and no dropout: one fused kernel forward, two backward, and no
    L x S matmul; the gradients still match PyTorch's (checked by the tests above)."""
    if device != "gpu":
        pytest.skip("the fused kernels are the OpenCL device's")
    q, k, v = (autograd.from_numpy(_randn(2, 2, 9, 4)).to(device).requires_grad_()
               for _ in range(3))
    with autograd.profiler.profile() as prof:
        F.scaled_dot_product_attention(q, k, v, is_causal=True).sum().backward()
    names = {r.key for r in prof.key_averages()}
    assert {"attn_fwd", "attn_dq", "attn_dkv"} <= names, names
    assert not any("gemm" in n or "matmul" in n for n in names), names
