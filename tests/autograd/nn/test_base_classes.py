"""The layers' private base classes are those of torch.nn.modules (programs isinstance-check
_ConvNd, _BatchNorm, _NormBase, _MaxPoolNd, ... and subclass optim.lr_scheduler._LRScheduler):
each of PyTorch's bases of a layer is one of ours, in the same torch.nn.modules file."""

import pytest

import autograd
from autograd import nn
from autograd.nn import modules
from autograd.optim import lr_scheduler

torch = pytest.importorskip("torch")

LAYERS = [
    lambda m: m.Conv1d(2, 2, 3), lambda m: m.Conv2d(2, 2, 3),
    lambda m: m.ConvTranspose1d(2, 2, 3), lambda m: m.ConvTranspose2d(2, 2, 3),
    lambda m: m.BatchNorm1d(2), lambda m: m.BatchNorm2d(2),
    lambda m: m.InstanceNorm1d(2), lambda m: m.InstanceNorm2d(2),
    lambda m: m.MaxPool1d(2), lambda m: m.MaxPool2d(2), lambda m: m.AvgPool1d(2),
    lambda m: m.AvgPool2d(2), lambda m: m.AdaptiveAvgPool1d(2), lambda m: m.AdaptiveAvgPool2d(2),
    lambda m: m.AdaptiveMaxPool1d(2), lambda m: m.AdaptiveMaxPool2d(2),
    lambda m: m.ZeroPad2d(1), lambda m: m.ConstantPad1d(1, 2.0), lambda m: m.ReflectionPad1d(1),
    lambda m: m.ReflectionPad2d(1), lambda m: m.ReplicationPad1d(1),
    lambda m: m.ReplicationPad2d(1),
]


def _bases(obj):
    """(file, class name) of each class above obj's own, Module and object excluded."""
    return [(c.__module__.rsplit(".", 1)[-1], c.__name__) for c in type(obj).__mro__[1:]
            if c.__name__ not in ("Module", "object")]


@pytest.mark.parametrize("make", LAYERS)
def test_bases_are_torchs(make):
    ours, theirs = make(nn), make(torch.nn)
    ours_names = [n for _, n in _bases(ours)]
    # PyTorch's bases, in PyTorch's order (ours may add a shared private helper above them)
    assert [n for n in ours_names if n in {m for _, m in _bases(theirs)}] == \
        [n for _, n in _bases(theirs)]
    for _, name in _bases(theirs):  # each base is importable from torch.nn.modules' file
        file = next(f for f, n in _bases(theirs) if n == name)
        assert isinstance(ours, getattr(getattr(modules, file), name))


def test_isinstance_checks_of_programs():
    assert isinstance(nn.Conv2d(1, 1, 3), nn.modules.conv._ConvNd)
    assert not isinstance(nn.Conv2d(1, 1, 3), nn.modules.conv._ConvTransposeNd)
    assert isinstance(nn.ConvTranspose2d(1, 1, 3), nn.modules.conv._ConvNd)
    assert isinstance(nn.BatchNorm2d(3), nn.modules.batchnorm._BatchNorm)
    assert not isinstance(nn.InstanceNorm2d(3), nn.modules.batchnorm._BatchNorm)  # as PyTorch
    assert isinstance(nn.InstanceNorm2d(3), nn.modules.batchnorm._NormBase)
    assert isinstance(nn.MaxPool2d(2), nn.modules.pooling._MaxPoolNd)
    assert isinstance(nn.AvgPool1d(2), nn.modules.pooling._AvgPoolNd)


def test_conv2d_unchanged_by_its_base():
    autograd.manual_seed(0)
    conv = nn.Conv2d(4, 6, (3, 2), stride=2, padding=(1, 0), dilation=(2, 1), groups=2,
                     bias=False, padding_mode="reflect")
    ref = torch.nn.Conv2d(4, 6, (3, 2), stride=2, padding=(1, 0), dilation=(2, 1), groups=2,
                          bias=False, padding_mode="reflect")
    assert repr(conv) == repr(ref)
    assert conv.transposed is False and conv.output_padding == (0, 0)
    assert list(conv.state_dict()) == list(ref.state_dict())
    with pytest.raises(ValueError, match="in_channels must be divisible by groups"):
        nn.Conv2d(3, 6, 3, groups=2)


def _halving_lrs(lib, optim_params):
    class Halve(lib.optim.lr_scheduler._LRScheduler):
        def get_lr(self):
            return [g["lr"] * 0.5 for g in self.optimizer.param_groups]

    opt = lib.optim.SGD(optim_params, lr=1.0)
    sched = Halve(opt)
    lrs = [opt.param_groups[0]["lr"]]
    for _ in range(2):
        opt.step()
        sched.step()
        lrs.append(opt.param_groups[0]["lr"])
    return lrs, sched, opt


def test_lr_scheduler_base_name():
    ours, sched, opt = _halving_lrs(autograd, [nn.Parameter(autograd.zeros(1))])
    theirs, _, _ = _halving_lrs(torch, [torch.nn.Parameter(torch.zeros(1))])
    assert ours == theirs
    assert isinstance(sched, lr_scheduler.LRScheduler)
    assert not isinstance(lr_scheduler.StepLR(opt, 1), lr_scheduler._LRScheduler)  # as PyTorch
