"""nn.init: gains, fans, and the statistics of every initialiser over large tensors."""

import math

import numpy as np
import pytest

import autograd
from autograd import nn
from autograd.nn import init


def _np(t):
    return t.detach().numpy()


def test_calculate_gain():
    assert init.calculate_gain("linear") == 1 and init.calculate_gain("conv2d") == 1
    assert init.calculate_gain("sigmoid") == 1
    assert init.calculate_gain("tanh") == pytest.approx(5 / 3)
    assert init.calculate_gain("relu") == pytest.approx(math.sqrt(2))
    assert init.calculate_gain("leaky_relu") == pytest.approx(math.sqrt(2 / (1 + 0.01 ** 2)))
    assert init.calculate_gain("leaky_relu", math.sqrt(5)) == pytest.approx(math.sqrt(1 / 3))
    assert init.calculate_gain("selu") == 0.75
    with pytest.raises(ValueError, match="Unsupported nonlinearity"):
        init.calculate_gain("swish")
    with pytest.raises(ValueError, match="not a valid number"):
        init.calculate_gain("leaky_relu", "x")


def test_fans():
    assert init._calculate_fan_in_and_fan_out(autograd.empty(5, 3)) == (3, 5)
    assert init._calculate_fan_in_and_fan_out(autograd.empty(8, 4, 3, 2)) == (24, 48)
    with pytest.raises(ValueError, match="fewer than 2 dimensions"):
        init._calculate_fan_in_and_fan_out(autograd.empty(5))
    with pytest.raises(ValueError, match="Mode fan_avg not supported"):
        init.kaiming_uniform_(autograd.empty(3, 3), mode="fan_avg")


def _check_uniform(t, lo, hi):
    v = _np(t).ravel()
    assert v.min() >= lo and v.max() <= hi
    width = hi - lo
    assert v.min() < lo + 0.01 * width and v.max() > hi - 0.01 * width
    assert abs(v.mean() - (lo + hi) / 2) < 0.02 * width
    assert abs(v.std() - width / math.sqrt(12)) < 0.02 * width


def _check_normal(t, mean, std):
    v = _np(t).ravel()
    assert abs(v.mean() - mean) < 0.02 * std + 1e-6
    assert abs(v.std() - std) < 0.02 * std


def test_uniform_normal_constant():
    t = autograd.empty(200, 100)
    assert init.uniform_(t, -2.0, 3.0) is t
    _check_uniform(t, -2.0, 3.0)
    init.normal_(t, 1.5, 0.5)
    _check_normal(t, 1.5, 0.5)
    init.constant_(t, 0.25)
    assert (_np(t) == 0.25).all()
    init.zeros_(t)
    assert (_np(t) == 0).all()
    init.ones_(t)
    assert (_np(t) == 1).all()
    e = init.eye_(autograd.empty(3, 4))
    np.testing.assert_array_equal(_np(e), np.eye(3, 4))


def test_xavier():
    t = autograd.empty(300, 200)
    a = math.sqrt(6 / 500)
    _check_uniform(init.xavier_uniform_(t), -a, a)
    _check_uniform(init.xavier_uniform_(t, gain=2.0), -2 * a, 2 * a)
    _check_normal(init.xavier_normal_(t), 0.0, math.sqrt(2 / 500))


def test_kaiming():
    t = autograd.empty(300, 200)
    b = math.sqrt(3) * math.sqrt(2) / math.sqrt(200)
    _check_uniform(init.kaiming_uniform_(t, nonlinearity="relu"), -b, b)
    b_out = math.sqrt(3) * math.sqrt(2) / math.sqrt(300)
    _check_uniform(init.kaiming_uniform_(t, mode="fan_out", nonlinearity="relu"), -b_out, b_out)
    _check_normal(init.kaiming_normal_(t, nonlinearity="relu"), 0.0, math.sqrt(2 / 200))
    # PyTorch's default for Linear and Conv2d: a=sqrt(5) gives the bound 1/sqrt(fan_in)
    _check_uniform(init.kaiming_uniform_(t, a=math.sqrt(5)), -1 / math.sqrt(200),
                   1 / math.sqrt(200))
    with pytest.warns(UserWarning, match="zero-element"):
        init.kaiming_uniform_(autograd.empty(0, 3))


def test_init_on_parameters_and_generator():
    p = nn.Parameter(autograd.empty(100, 100))
    init.normal_(p)  # no "leaf requires grad in-place" error: init runs under no_grad
    assert p.requires_grad and p.grad_fn is None
    version = p._version
    init.zeros_(p)
    assert p._version > version
    g1 = autograd.Generator().manual_seed(7)
    g2 = autograd.Generator().manual_seed(7)
    a = init.uniform_(autograd.empty(5), generator=g1)
    b = init.uniform_(autograd.empty(5), generator=g2)
    np.testing.assert_array_equal(_np(a), _np(b))


def test_default_layer_init_statistics():
    lin = nn.Linear(400, 300)
    bound = 1 / math.sqrt(400)
    _check_uniform(lin.weight, -bound, bound)
    conv = nn.Conv2d(16, 300, 5)
    bound = 1 / math.sqrt(16 * 25)
    _check_uniform(conv.weight, -bound, bound)
    v = _np(conv.bias)
    assert v.min() >= -bound and v.max() <= bound
