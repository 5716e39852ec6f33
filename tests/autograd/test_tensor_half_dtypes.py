"""float16 and bfloat16 tensors: the dtype names, Tensor.half()/bfloat16(), and elementwise
ops and matmul forward and backward against PyTorch (gradients in the tensor's dtype)."""

import numpy as np
import pytest

import autograd
import carray

torch = pytest.importorskip("torch")

PAIRS = [(autograd.float16, "float16"), (autograd.bfloat16, "bfloat16")]


def test_names():
    assert autograd.half is autograd.float16 == carray.float16
    assert autograd.bfloat16 == carray.bfloat16
    t = autograd.tensor([1.5, 2.0])
    assert t.half().dtype == autograd.float16 and t.bfloat16().dtype == autograd.bfloat16
    assert t.half().is_floating_point() and t.bfloat16().is_floating_point()
    assert isinstance(t.half().array, carray.Array) and t.half().array.dtype == carray.float16
    assert autograd.zeros(2, dtype=autograd.bfloat16).dtype == autograd.bfloat16


@pytest.mark.parametrize("dt, name", PAIRS)
def test_forward_backward_match_torch(dt, name, device):
    rng = np.random.default_rng(0)
    xv = rng.standard_normal((3, 4)).astype(np.float32)
    wv = rng.standard_normal((4, 2)).astype(np.float32)
    tdt = getattr(torch, name)
    x = autograd.tensor(xv, device=device).to(dt).requires_grad_()
    w = autograd.tensor(wv, device=device).to(dt).requires_grad_()
    tx = torch.tensor(xv).to(tdt).requires_grad_()
    tw = torch.tensor(wv).to(tdt).requires_grad_()
    y = ((x @ w).relu() * 2 + x.sum(1, keepdim=True) / 3).tanh().sum()
    ty = ((tx @ tw).relu() * 2 + tx.sum(1, keepdim=True) / 3).tanh().sum()
    y.backward()
    ty.backward()
    assert y.dtype == dt and x.grad.dtype == dt and w.grad.dtype == dt
    tol = 1e-2 if name == "float16" else 5e-2
    np.testing.assert_allclose(float(y), float(ty.detach()), rtol=tol)
    for a, b in ((x.grad, tx.grad), (w.grad, tw.grad)):
        np.testing.assert_allclose(a.float().cpu().numpy(), b.float().numpy(), rtol=tol,
                                   atol=tol)


def test_requires_grad_and_promotion():
    h = autograd.ones(2, dtype=autograd.float16, requires_grad=True)
    b = autograd.ones(2, dtype=autograd.bfloat16, requires_grad=True)
    assert (h + b).dtype == autograd.float32     # as torch: float16 + bfloat16 is float32
    assert (h * 2.5).dtype == autograd.float16
    assert (h + autograd.ones(2)).dtype == autograd.float32


def test_safetensors_f16_bf16(tmp_path):
    sd = {"a": autograd.tensor([1.5, -2.0, 0.1]).half(),
          "b": autograd.tensor([[1.5, 3.25]]).bfloat16()}
    path = str(tmp_path / "half.safetensors")
    autograd.save(sd, path)
    back = autograd.load(path)
    for k in sd:
        assert back[k].dtype == sd[k].dtype and back[k].tolist() == sd[k].tolist()
    st = pytest.importorskip("safetensors.torch")
    ref = st.load_file(path)
    assert ref["a"].dtype == torch.float16 and ref["b"].dtype == torch.bfloat16
    assert ref["a"].tolist() == sd["a"].tolist() and ref["b"].tolist() == sd["b"].tolist()
    st.save_file(ref, str(tmp_path / "ref.safetensors"))
    assert (tmp_path / "ref.safetensors").read_bytes() == (tmp_path / "half.safetensors") \
        .read_bytes()


def test_module_half_and_bfloat16():
    lin = autograd.nn.Linear(3, 2)
    x = autograd.ones(4, 3)
    for method, dt in (("half", autograd.float16), ("bfloat16", autograd.bfloat16)):
        m = getattr(lin, method)()
        assert m is lin and lin.weight.dtype == dt and lin.bias.dtype == dt
        y = lin(x.to(dt))
        assert y.dtype == dt
        y.sum().backward()
        assert lin.weight.grad.dtype == dt
        lin.zero_grad()
