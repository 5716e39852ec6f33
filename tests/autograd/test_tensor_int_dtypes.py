"""The narrow and unsigned integer dtypes in autograd, against PyTorch: dtype names, the cast
methods byte/char/short, arithmetic that wraps, no gradients, and safetensors files that PyTorch's
safetensors reads (and the reverse)."""

import numpy as np
import pytest

import autograd

torch = pytest.importorskip("torch")

NAMES = ("int8", "int16", "uint8", "uint16", "uint32", "uint64")


def test_dtype_names_as_torch():
    for name in NAMES:
        assert hasattr(torch, name)
        assert getattr(autograd, name) == name
    assert autograd.short == autograd.int16 and torch.short == torch.int16


@pytest.mark.parametrize("method, dtype", [("byte", "uint8"), ("char", "int8"),
                                           ("short", "int16")])
def test_cast_methods(method, dtype, device):
    values = [1, -2, 300, 70000]
    t = getattr(autograd.tensor(values, device=device), method)()
    r = getattr(torch.tensor(values), method)()
    assert t.dtype == dtype and str(r.dtype) == f"torch.{dtype}"
    assert t.device.type == device
    assert t.tolist() == r.tolist()


@pytest.mark.parametrize("name", NAMES)
def test_arithmetic_wraps_and_no_grad(name, device):
    x = autograd.tensor([0, 1, 100], dtype=getattr(autograd, name), device=device)
    r = torch.tensor([0, 1, 100], dtype=getattr(torch, name))
    n = np.array([0, 1, 100], name)
    with np.errstate(over="ignore"):
        assert (x * x + x).tolist() == (n * n + n).tolist()
    if name in ("uint8", "int8", "int16"):          # (torch has no uint16/32/64 arithmetic)
        assert (x * x + x).tolist() == (r * r + r).tolist()
    assert x.sum().dtype == "int64" and r.sum().dtype == torch.int64     # torch's sum
    with pytest.raises(RuntimeError, match="floating point"):
        x.requires_grad_()


def test_from_numpy_and_numpy(device):
    for name in NAMES:
        n = np.array([1, 2, 3], name)
        t = autograd.from_numpy(n)
        assert t.dtype == name and t.numpy().dtype == n.dtype
        assert np.shares_memory(t.numpy(), n)


def test_safetensors_round_trip_with_torch(tmp_path):
    st = pytest.importorskip("safetensors.torch")
    state = {name: autograd.tensor([0, 1, 7, 100], dtype=getattr(autograd, name))
             for name in NAMES}
    path = str(tmp_path / "ints.safetensors")
    autograd.save(state, path)
    loaded = st.load_file(path)
    for name in NAMES:
        assert loaded[name].dtype == getattr(torch, name)
        assert loaded[name].tolist() == [0, 1, 7, 100]
    back = str(tmp_path / "back.safetensors")
    st.save_file(loaded, back)
    again = autograd.load(back)
    for name in NAMES:
        assert again[name].dtype == name and again[name].tolist() == [0, 1, 7, 100]
