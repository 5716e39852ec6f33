"""autograd.nn.modules mirrors torch.nn.modules' layout (h12 item 7): every public class of a
torch.nn.modules submodule that autograd.nn has is importable from the same path, and the
private bases programs subclass (_Loss, _WeightedLoss, _BatchNorm, _ConvTransposeNd) are ours."""

import importlib

import pytest

import autograd
import autograd.nn as nn
from autograd.nn.modules.loss import _Loss, _WeightedLoss

SUBMODULES = ["activation", "batchnorm", "container", "conv", "dropout", "flatten", "fold",
              "instancenorm", "linear", "loss", "module", "normalization", "padding",
              "pixelshuffle", "pooling", "rnn", "sparse", "transformer", "upsampling"]


@pytest.mark.parametrize("name", SUBMODULES)
def test_same_paths_as_torch(name):
    pytest.importorskip("torch")
    theirs = importlib.import_module("torch.nn.modules." + name)
    ours = importlib.import_module("autograd.nn.modules." + name)
    shared = [k for k in getattr(theirs, "__all__", []) if hasattr(nn, k)]
    assert shared
    for k in shared:
        assert getattr(ours, k) is getattr(nn, k), f"autograd.nn.modules.{name}.{k}"


def test_private_bases():
    from autograd.nn.modules.batchnorm import _BatchNorm
    from autograd.nn.modules.conv import _ConvTransposeNd
    assert autograd.nn.modules.linear.Linear is nn.Linear
    assert isinstance(nn.MSELoss(), _Loss) and isinstance(nn.CrossEntropyLoss(), _WeightedLoss)
    assert isinstance(nn.BatchNorm2d(3), _BatchNorm)
    assert isinstance(nn.ConvTranspose2d(2, 3, 3), _ConvTransposeNd)


def test_subclassing_loss():
    class Twice(_Loss):
        def forward(self, a, b):
            return ((a - b) * 2).sum() if self.reduction == "sum" else ((a - b) * 2).mean()

    loss = Twice(reduction="sum")(autograd.ones(3), autograd.zeros(3))
    assert loss.item() == 6.0
