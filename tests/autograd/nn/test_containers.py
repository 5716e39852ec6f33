"""ModuleDict, ParameterList, ParameterDict (state_dict keys and reprs as PyTorch's), Unflatten,
Dropout1d and Dropout2d."""

import numpy as np
import pytest

import autograd
from autograd import nn
from autograd.nn import functional as F


def test_module_dict():
    torch = pytest.importorskip("torch")
    d = nn.ModuleDict({"lin": nn.Linear(2, 3), "act": nn.ReLU()})
    td = torch.nn.ModuleDict({"lin": torch.nn.Linear(2, 3), "act": torch.nn.ReLU()})
    assert list(d.state_dict()) == list(td.state_dict()) == ["lin.weight", "lin.bias"]
    assert repr(d) == repr(td)
    d["extra"] = nn.Linear(3, 1)
    d.update([("act", nn.Tanh())])
    assert list(d) == ["lin", "act", "extra"] and isinstance(d["act"], nn.Tanh)
    assert "extra" in d and len(d) == 3
    assert isinstance(d.pop("extra"), nn.Linear) and len(list(d.parameters())) == 2
    with pytest.raises(KeyError):
        d["missing"]
    with pytest.raises(TypeError, match="is not a Module subclass"):
        nn.ModuleDict({"a": 1})


def test_parameter_list():
    torch = pytest.importorskip("torch")
    pl = nn.ParameterList([nn.Parameter(autograd.ones(2)), autograd.zeros(3)])
    tpl = torch.nn.ParameterList([torch.nn.Parameter(torch.ones(2)), torch.zeros(3)])
    assert list(pl.state_dict()) == list(tpl.state_dict()) == ["0", "1"]
    assert all(isinstance(p, nn.Parameter) for p in pl) and len(pl) == 2
    pl.append(nn.Parameter(autograd.ones(1)))
    assert list(pl.state_dict()) == ["0", "1", "2"] and len(list(pl.parameters())) == 3
    assert pl[-1].shape == (1,) and len(pl[1:]) == 2
    m = nn.Module()
    m.ps = pl
    assert list(m.state_dict()) == ["ps.0", "ps.1", "ps.2"]
    assert repr(nn.ParameterList([nn.Parameter(autograd.ones(2))])) == \
        "ParameterList(  (0): Parameter containing: [autograd.float32 of size 2])"
    with pytest.raises(IndexError):
        pl[3]


def test_parameter_dict():
    torch = pytest.importorskip("torch")
    pd = nn.ParameterDict({"b": nn.Parameter(autograd.ones(2)), "a": autograd.zeros(1, 2)})
    tpd = torch.nn.ParameterDict({"b": torch.nn.Parameter(torch.ones(2)),
                                  "a": torch.zeros(1, 2)})
    assert list(pd.state_dict()) == list(tpd.state_dict()) == ["a", "b"]  # a dict: sorted
    assert isinstance(pd["a"], nn.Parameter) and list(pd.keys()) == ["a", "b"]
    assert list(nn.ParameterDict([("b", autograd.ones(1)), ("a", autograd.ones(1))])) == \
        ["b", "a"]
    del pd["b"]
    assert list(pd) == ["a"] and len(list(pd.parameters())) == 1
    pd.update({"c": nn.Parameter(autograd.ones(3))})
    assert [k for k, _ in pd.items()] == ["a", "c"] and pd.get("zz") is None
    assert repr(nn.ParameterDict({"a": nn.Parameter(autograd.ones(2))})) == \
        "ParameterDict(  (a): Parameter containing: [autograd.FloatTensor of size 2])"
    with pytest.raises(KeyError):
        pd["b"]


def test_unflatten(device):
    x = autograd.randn(2, 12, 3, device=device)
    assert nn.Unflatten(1, (3, 4))(x).shape == (2, 3, 4, 3)
    assert nn.Unflatten(-2, (2, -1))(x).shape == (2, 2, 6, 3)
    assert repr(nn.Unflatten(1, (2, 2))) == "Unflatten(dim=1, unflattened_size=(2, 2))"
    with pytest.raises(RuntimeError, match=r"unflatten: Provided sizes \[5, 2\] don't multiply"):
        nn.Unflatten(1, (5, 2))(x)
    with pytest.raises(TypeError, match="tuple of ints"):
        nn.Unflatten(1, 5)


@pytest.mark.parametrize("cls,shape", [("Dropout1d", (4, 6, 50)), ("Dropout1d", (6, 50)),
                                       ("Dropout2d", (4, 6, 5, 10))])
def test_channel_dropout(device, cls, shape):
    m = getattr(nn, cls)(p=0.4)
    assert repr(m) == f"{cls}(p=0.4, inplace=False)"
    x = autograd.ones(*shape, device=device, requires_grad=True)
    out = m(x)
    y = out.detach().cpu().numpy()
    flat = y.reshape(-1, y.shape[-2] * y.shape[-1]) if cls == "Dropout2d" else \
        y.reshape(-1, y.shape[-1])
    # every channel is all zero or all 1 / (1 - p)
    assert np.all((flat == 0).all(1) | np.isclose(flat, 1 / 0.6).all(1))
    assert (flat == 0).all(1).any() and not (flat == 0).all()
    out.sum().backward()
    np.testing.assert_allclose(x.grad.cpu().numpy(), y)
    m.eval()
    np.testing.assert_array_equal(m(x).detach().cpu().numpy(), x.detach().cpu().numpy())


def test_channel_dropout_errors():
    with pytest.raises(RuntimeError, match="dropout1d: Expected 2D or 3D input"):
        F.dropout1d(autograd.randn(2, 3, 4, 5))
    with pytest.raises(ValueError, match="dropout probability has to be between 0 and 1"):
        nn.Dropout2d(1.5)
    with pytest.warns(UserWarning, match="Received a 5-D input to dropout2d"):
        F.dropout2d(autograd.randn(2, 3, 4, 5, 6))
    with pytest.warns(UserWarning, match="Received a 3D input to dropout2d"):
        F.dropout2d(autograd.randn(2, 3, 4))
