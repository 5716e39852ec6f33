"""nn.Module, Parameter, Sequential and ModuleList: registration, iteration order and names,
state_dict round trips and loading errors, train/eval, to(), zero_grad, hooks, repr."""

import copy
import pickle
from collections import OrderedDict

import numpy as np
import pytest

import autograd
from autograd import nn


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 4)
        self.bn = nn.BatchNorm1d(4)

    def forward(self, x):
        return self.bn(self.fc(x))


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(2, 3)
        self.block = Block()
        self.head = nn.Sequential(nn.ReLU(), nn.Linear(4, 2))
        self.scale = nn.Parameter(autograd.ones(1))
        self.register_buffer("steps", autograd.tensor(0))
        self.register_buffer("scratch", autograd.zeros(2), persistent=False)

    def forward(self, x):
        return self.head(self.block(self.fc1(x).sum(1, keepdim=True).expand(-1, 3))) * self.scale


NET_PARAMS = ["scale", "fc1.weight", "fc1.bias", "block.fc.weight", "block.fc.bias",
              "block.bn.weight", "block.bn.bias", "head.1.weight", "head.1.bias"]


def test_parameter_shares_memory_and_requires_grad():
    t = autograd.zeros(3)
    p = nn.Parameter(t)
    assert isinstance(p, autograd.Tensor) and p.requires_grad and p.is_leaf
    with autograd.no_grad():
        p.add_(1)
    assert t.tolist() == [1, 1, 1]
    assert not nn.Parameter(t, requires_grad=False).requires_grad
    assert nn.Parameter().shape == (0,)
    assert repr(nn.Parameter(autograd.tensor([1.0, 2.0]))) == \
        "Parameter containing:\ntensor([1., 2.], requires_grad=True)"
    with pytest.raises(RuntimeError):
        nn.Parameter(autograd.tensor([1, 2]))
    assert type(p * 2) is autograd.Tensor and type(p.detach()) is autograd.Tensor


def test_registration_by_attribute():
    m = Net()
    assert list(m._parameters) == ["fc1", "scale"][1:]
    assert list(m._modules) == ["fc1", "block", "head"]
    assert list(m._buffers) == ["steps", "scratch"]
    assert m.fc1 is m._modules["fc1"] and m.steps is m._buffers["steps"]
    m.extra = autograd.ones(1)  # a plain tensor attribute is not registered
    assert "extra" not in m._buffers and "extra" not in m._parameters
    m.steps = autograd.tensor(5)  # assigning to a buffer name replaces the buffer
    assert m._buffers["steps"].item() == 5
    with pytest.raises(TypeError, match="cannot assign"):
        m.scale = autograd.ones(1)
    m.scale = None
    assert m._parameters["scale"] is None and m.scale is None
    with pytest.raises(TypeError):
        m.fc1 = 3
    del m.fc1
    assert "fc1" not in m._modules
    with pytest.raises(AttributeError, match="has no attribute 'fc1'"):
        m.fc1


def test_registration_errors():
    m = nn.Module()
    with pytest.raises(KeyError, match="already exists"):
        m.register_buffer("training", autograd.zeros(1))
    with pytest.raises(KeyError, match='contain "."'):
        m.register_parameter("a.b", nn.Parameter(autograd.zeros(1)))
    with pytest.raises(KeyError, match="empty string"):
        m.register_buffer("", autograd.zeros(1))
    with pytest.raises(TypeError, match="Parameter or None required"):
        m.register_parameter("w", autograd.zeros(1))
    with pytest.raises(TypeError):
        m.register_buffer("b", [1, 2])
    with pytest.raises(TypeError):
        m.add_module("c", 3)
    w = autograd.ones(2, requires_grad=True)
    with pytest.raises(ValueError, match="non-leaf"):
        m.register_parameter("w", _non_leaf_param(w))

    class Early(nn.Module):
        def __init__(self):
            self.w = nn.Parameter(autograd.zeros(1))

    with pytest.raises(AttributeError, match="before Module.__init__"):
        Early()
    with pytest.raises(NotImplementedError, match='missing the required "forward"'):
        nn.Module()(1)


def _non_leaf_param(w):
    p = nn.Parameter(autograd.zeros(2))
    p.grad_fn = (w * 2).grad_fn
    return p


def test_named_parameters_order_and_dedup():
    m = Net()
    assert [n for n, _ in m.named_parameters()] == NET_PARAMS
    assert len(list(m.parameters())) == len(NET_PARAMS)
    assert [n for n, _ in m.named_parameters(recurse=False)] == ["scale"]
    assert [n for n, _ in m.named_parameters(prefix="net")][1] == "net.fc1.weight"
    m.tied = m.fc1  # the same module twice: its parameters are listed once
    assert [n for n, _ in m.named_parameters()] == NET_PARAMS
    assert len(list(m.named_parameters(remove_duplicate=False))) == len(NET_PARAMS) + 2
    assert list(m.state_dict())[-2:] == ["tied.weight", "tied.bias"]  # state_dict keeps both
    shared = nn.Sequential(nn.Linear(2, 2), nn.Linear(2, 2))
    shared[1].weight = shared[0].weight  # a tied parameter is listed once, under its first name
    assert [n for n, _ in shared.named_parameters()] == ["0.weight", "0.bias", "1.bias"]
    assert [n for n, _ in m.named_buffers()] == ["steps", "scratch", "block.bn.running_mean",
                                                  "block.bn.running_var",
                                                  "block.bn.num_batches_tracked"]


def test_modules_and_children():
    m = Net()
    names = [n for n, _ in m.named_modules()]
    assert names == ["", "fc1", "block", "block.fc", "block.bn", "head", "head.0", "head.1"]
    assert [n for n, _ in m.named_children()] == ["fc1", "block", "head"]
    assert list(m.children())[1] is m.block
    assert len(list(m.modules())) == 8
    assert m.get_submodule("block.bn") is m.block.bn
    assert m.get_parameter("head.1.bias") is m.head[1].bias
    with pytest.raises(AttributeError):
        m.get_submodule("block.nope")


def test_state_dict_keys_and_sharing():
    m = Net()
    sd = m.state_dict()
    assert isinstance(sd, OrderedDict)
    assert list(sd) == ["scale", "steps", "fc1.weight", "fc1.bias", "block.fc.weight",
                        "block.fc.bias", "block.bn.weight", "block.bn.bias",
                        "block.bn.running_mean", "block.bn.running_var",
                        "block.bn.num_batches_tracked", "head.1.weight", "head.1.bias"]
    w = sd["fc1.weight"]
    assert type(w) is autograd.Tensor and not w.requires_grad
    with autograd.no_grad():
        m.fc1.weight.fill_(3.0)
    assert w.tolist() == [[3.0, 3.0]] * 3  # shares memory
    assert sd["block.bn.num_batches_tracked"].dtype == autograd.int64
    assert m.state_dict(keep_vars=True)["scale"] is m.scale
    assert list(m.state_dict(prefix="p."))[2] == "p.fc1.weight"


def test_state_dict_round_trip():
    a, b = Net(), Net()
    x = autograd.randn(5, 2)
    a.train()
    a(x)  # moves the running statistics and num_batches_tracked
    res = b.load_state_dict(a.state_dict())
    assert res.missing_keys == [] and res.unexpected_keys == []
    assert repr(res) == "<All keys matched successfully>"
    for (ka, va), (kb, vb) in zip(a.state_dict().items(), b.state_dict().items()):
        assert ka == kb
        np.testing.assert_array_equal(va.numpy(), vb.numpy())
        assert va.data_ptr() != vb.data_ptr()
    assert b.block.bn.num_batches_tracked.item() == 1
    a.eval(), b.eval()
    np.testing.assert_allclose(a(x).detach().numpy(), b(x).detach().numpy(), rtol=1e-6)
    weight = b.fc1.weight
    b.load_state_dict(a.state_dict())
    assert b.fc1.weight is weight  # copied into the existing parameter


def test_load_state_dict_strict_errors():
    m = Net()
    sd = m.state_dict()
    del sd["fc1.bias"], sd["block.bn.running_var"]
    sd["fc1.extra"] = autograd.zeros(1)
    sd["nope.weight"] = autograd.zeros(1)
    with pytest.raises(RuntimeError) as e:
        m.load_state_dict(sd)
    assert str(e.value) == (
        "Error(s) in loading state_dict for Net:\n"
        '\tMissing key(s) in state_dict: "fc1.bias", "block.bn.running_var". \n'
        '\tUnexpected key(s) in state_dict: "nope.weight", "fc1.extra". ')
    res = m.load_state_dict(sd, strict=False)
    assert res.missing_keys == ["fc1.bias", "block.bn.running_var"]
    assert res.unexpected_keys == ["nope.weight", "fc1.extra"]


def test_load_state_dict_without_num_batches_tracked():
    """Checkpoints older than num_batches_tracked load strictly; the count keeps its value (as
    PyTorch's BatchNorm); other buffers are still required."""
    m = nn.Sequential(nn.Linear(2, 2), nn.BatchNorm1d(2))
    m(autograd.randn(4, 2))
    sd = {k: v for k, v in m.state_dict().items() if k != "1.num_batches_tracked"}
    assert m.load_state_dict(sd).missing_keys == []
    assert m[1].num_batches_tracked.item() == 1
    del sd["1.running_var"]
    assert m.load_state_dict(sd, strict=False).missing_keys == ["1.running_var"]


def test_load_state_dict_shape_and_type_errors():
    m = Net()
    sd = m.state_dict()
    sd["fc1.weight"] = autograd.zeros(2, 2)
    with pytest.raises(RuntimeError, match="size mismatch for fc1.weight: copying a param "
                                           r"with shape \[2, 2\] from checkpoint, the shape "
                                           r"in current model is \[3, 2\]"):
        m.load_state_dict(sd, strict=False)
    sd = m.state_dict()
    sd["scale"] = [1.0]
    with pytest.raises(RuntimeError, match='parameter named "scale"'):
        m.load_state_dict(sd)
    with pytest.raises(TypeError):
        m.load_state_dict([1, 2])


def test_load_state_dict_casts_dtype_and_assign():
    m = nn.Linear(2, 2)
    sd = {"weight": autograd.ones(2, 2, dtype=autograd.float64), "bias": autograd.zeros(2)}
    m.load_state_dict(sd)
    assert m.weight.dtype == autograd.float32 and m.weight.tolist() == [[1, 1], [1, 1]]
    new = {"weight": autograd.full((2, 2), 2.0), "bias": autograd.zeros(2)}
    m.load_state_dict(new, assign=True)
    assert isinstance(m.weight, nn.Parameter) and m.weight.requires_grad
    assert m.weight.data_ptr() == new["weight"].data_ptr()


def test_train_eval():
    m = Net()
    assert all(mod.training for mod in m.modules())
    assert m.eval() is m
    assert not any(mod.training for mod in m.modules())
    m.block.train()
    assert m.block.bn.training and not m.training
    with pytest.raises(ValueError, match="boolean"):
        m.train("yes")


def test_to_double_float_keeps_parameters():
    m = Net()
    w = m.fc1.weight
    m(autograd.randn(4, 2)).sum().backward()
    assert m.double() is m
    assert m.fc1.weight is w and w.dtype == autograd.float64
    assert w.grad.dtype == autograd.float64
    assert m.block.bn.running_mean.dtype == autograd.float64
    assert m.block.bn.num_batches_tracked.dtype == autograd.int64  # integers keep their dtype
    out = m(autograd.randn(4, 2, dtype=autograd.float64))
    assert out.dtype == autograd.float64
    m.to(autograd.float32)
    assert w.dtype == autograd.float32
    assert m.to("cpu") is m and m.cpu() is m and m.float() is m
    assert m.to(autograd.zeros(1, dtype=autograd.float64)).fc1.weight.dtype == autograd.float64
    with pytest.raises(TypeError):
        m.to(autograd.int64)


def test_zero_grad_and_requires_grad():
    m = Net()
    m(autograd.randn(4, 2)).sum().backward()
    assert all(p.grad is not None for p in m.parameters())
    m.zero_grad(set_to_none=False)
    assert all(p.grad is not None and not p.grad.any() for p in m.parameters())
    m.zero_grad()
    assert all(p.grad is None for p in m.parameters())
    assert m.requires_grad_(False) is m
    assert not any(p.requires_grad for p in m.parameters())


def test_apply_and_hooks():
    m = Net()
    seen = []
    assert m.apply(lambda mod: seen.append(type(mod).__name__)) is m
    assert seen == ["Linear", "Linear", "BatchNorm1d", "Block", "ReLU", "Linear", "Sequential",
                    "Net"]
    lin = nn.Linear(2, 2)
    calls = []
    h1 = lin.register_forward_pre_hook(lambda mod, args: (args[0] * 0,))
    h2 = lin.register_forward_hook(lambda mod, args, out: calls.append(out) or out + 1)
    out = lin(autograd.ones(1, 2))
    np.testing.assert_allclose(out.detach().numpy(), lin.bias.detach().numpy()[None] + 1)
    assert len(calls) == 1
    h1.remove(), h2.remove()
    out = lin(autograd.ones(1, 2))
    assert len(calls) == 1


def test_copy_and_pickle():
    m = Net()
    for clone in (copy.deepcopy(m), pickle.loads(pickle.dumps(m))):
        assert isinstance(clone.fc1.weight, nn.Parameter)
        assert clone.fc1.weight is not m.fc1.weight
        assert clone.fc1.weight.requires_grad
        np.testing.assert_array_equal(clone.fc1.weight.detach().numpy(),
                                      m.fc1.weight.detach().numpy())
        assert [n for n, _ in clone.named_parameters()] == NET_PARAMS


def test_repr():
    m = nn.Sequential(nn.Linear(784, 128), nn.ReLU(), nn.Linear(128, 10, bias=False))
    assert repr(m) == ("Sequential(\n"
                       "  (0): Linear(in_features=784, out_features=128, bias=True)\n"
                       "  (1): ReLU()\n"
                       "  (2): Linear(in_features=128, out_features=10, bias=False)\n"
                       ")")
    assert repr(Block()) == (
        "Block(\n"
        "  (fc): Linear(in_features=3, out_features=4, bias=True)\n"
        "  (bn): BatchNorm1d(4, eps=1e-05, momentum=0.1, affine=True, bias=True, "
        "track_running_stats=True)\n"
        ")")
    nested = nn.Sequential(nn.Sequential(nn.ReLU()))
    assert repr(nested) == "Sequential(\n  (0): Sequential(\n    (0): ReLU()\n  )\n)"
    assert repr(nn.Module()) == "Module()"
    ml = nn.ModuleList([nn.ReLU(), nn.ReLU(), nn.Tanh()])
    assert repr(ml) == "ModuleList(\n  (0-1): 2 x ReLU()\n  (2): Tanh()\n)"
    assert repr(nn.ModuleList()) == "ModuleList()"


def test_sequential():
    a, b, c = nn.Linear(2, 3), nn.ReLU(), nn.Linear(3, 1)
    s = nn.Sequential(a, b, c)
    assert len(s) == 3 and list(s) == [a, b, c]
    assert s[0] is a and s[-1] is c
    assert isinstance(s[1:], nn.Sequential) and list(s[1:]) == [b, c]
    with pytest.raises(IndexError):
        s[3]
    x = autograd.randn(4, 2)
    np.testing.assert_allclose(s(x).detach().numpy(), c(b(a(x))).detach().numpy())
    named = nn.Sequential(OrderedDict([("first", a), ("act", b)]))
    assert [n for n, _ in named.named_children()] == ["first", "act"]
    assert named.first is a
    s.append(nn.Tanh())
    assert len(s) == 4 and [n for n, _ in s.named_children()] == ["0", "1", "2", "3"]
    del s[1]
    assert [n for n, _ in s.named_children()] == ["0", "1", "2"] and s[1] is c
    s[0] = nn.Identity()
    assert isinstance(s[0], nn.Identity)
    s.insert(0, a)
    assert s[0] is a and len(s) == 4


def test_sequential_add_and_multiply():
    a, b = nn.Linear(2, 2), nn.ReLU()
    s = nn.Sequential(a) + nn.Sequential(b)
    assert list(s) == [a, b] and [n for n, _ in s.named_children()] == ["0", "1"]
    assert list(2 * nn.Sequential(a, b)) == [a, b, a, b] == list(nn.Sequential(a, b) * 2)
    s += nn.Sequential(nn.Tanh())
    assert len(s) == 3 and isinstance(s[2], nn.Tanh)
    with pytest.raises(ValueError, match="only objects of Sequential"):
        s + b
    with pytest.raises(ValueError, match="Non-positive"):
        s * 0
    with pytest.raises(TypeError):
        s * 1.5


def test_module_list():
    layers = nn.ModuleList([nn.Linear(2, 2) for _ in range(3)])
    assert len(layers) == 3 and len(list(layers.parameters())) == 6
    layers.append(nn.ReLU())
    layers.extend([nn.Tanh()])
    assert isinstance(layers[-1], nn.Tanh) and len(layers) == 5
    assert [n for n, _ in layers.named_parameters()][:2] == ["0.weight", "0.bias"]
    layers += [nn.Sigmoid()]
    assert len(layers) == 6
    layers.insert(1, nn.Identity())
    assert isinstance(layers[1], nn.Identity) and isinstance(layers[2], nn.Linear)
    del layers[0]
    assert isinstance(layers[0], nn.Identity)
    assert len(layers[1:3]) == 2

    class Holder(nn.Module):
        def __init__(self):
            super().__init__()
            self.layers = nn.ModuleList([nn.Linear(2, 2), nn.Linear(2, 2)])

    assert list(Holder().state_dict()) == ["layers.0.weight", "layers.0.bias",
                                           "layers.1.weight", "layers.1.bias"]
