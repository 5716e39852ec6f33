"""carray.nn.sgd_step, sgd_momentum_step and adam_step (optimizer updates of many parameters per
launch on the device) against the same formulas composed from NumPy float32/float64 ops, which
round each step as carray's elementwise ops do: equal on cpu and gpu, for more parameters than
one launch takes, empty and 0-d parameters, strided gradients, every flag, and bad arguments."""

import math

import numpy as np
import pytest

import carray as ca
from carray import nn

from conftest import have_gpu

DEVICES = ["cpu", "gpu"]
SHAPES = [(3, 4), (0,), (), (17,), (2, 1, 5)] * 4       # 20 parameters: two launches


def _dev(device):
    if device == "gpu" and not have_gpu():
        pytest.skip("no OpenCL device")
    return device


def _arrays(rng, dtype, shapes=SHAPES):
    return [rng.standard_normal(s).astype(dtype) for s in shapes]


def _on(arrays, device):
    return [ca.array(a).to(device) for a in arrays]


def _back(arrays):
    return [np.asarray(a.to("cpu")) for a in arrays]


def _sgd_momentum_ref(p, g, b, lr, momentum, dampening, wd, nesterov, maximize):
    t = p.dtype.type
    g = -g if maximize else g
    if wd:
        g = g + p * t(wd)
    b[...] = b * t(momentum)
    b[...] = b + (g * t(1 - dampening) if dampening else g)
    g = g + b * t(momentum) if nesterov else b
    p[...] = p - g * t(lr)


def _adam_ref(p, g, m, v, step, lr, b1, b2, eps, wd, decoupled, maximize):
    t = p.dtype.type
    g = -g if maximize else g
    if wd:
        if decoupled:
            p[...] = p * t(1 - lr * wd)
        else:
            g = g + p * t(wd)
    w = 1 - b1
    diff = g - m
    m[...] = m + diff * t(w) if w < 0.5 else g - diff * t(1 - w)
    v[...] = v * t(b2)
    v[...] = v + (g * t(1 - b2)) * g
    denom = np.sqrt(v) / t(math.sqrt(1 - b2 ** step)) + t(eps)
    p[...] = p - (m / denom) * t(lr / (1 - b1 ** step))


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("flags", [(0.0, 0.0, False, False), (0.1, 0.01, False, True),
                                   (0.0, 0.0, True, False), (0.2, 0.0, True, True)])
def test_sgd_momentum_step_matches_the_composed_formula(device, dtype, flags):
    _dev(device)
    dampening, wd, nesterov, maximize = flags
    rng = np.random.default_rng(0)
    p, g, b = (_arrays(rng, dtype) for _ in range(3))
    ps, gs, bs = _on(p, device), _on(g, device), _on(b, device)
    for _ in range(3):
        nn.sgd_momentum_step(ps, gs, bs, 0.05, 0.9, dampening, wd, nesterov, maximize)
        for k in range(len(p)):
            _sgd_momentum_ref(p[k], g[k], b[k], 0.05, 0.9, dampening, wd, nesterov, maximize)
    for got, want in zip(_back(ps) + _back(bs), p + b):
        np.testing.assert_allclose(got, want, rtol=1e-6 if dtype == "float32" else 1e-14)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("flags", [(0.0, False, False, 0.9), (0.01, True, False, 0.9),
                                   (0.01, False, True, 0.9), (0.1, True, True, 0.3)])
def test_adam_step_matches_the_composed_formula(device, dtype, flags):
    _dev(device)
    wd, decoupled, maximize, beta1 = flags
    rng = np.random.default_rng(1)
    p, g = _arrays(rng, dtype), _arrays(rng, dtype)
    m = [np.zeros_like(a) for a in p]
    v = [np.zeros_like(a) for a in p]
    ps, gs, ms, vs = (_on(a, device) for a in (p, g, m, v))
    steps = [1 + k % 3 for k in range(len(p))]        # per-parameter step counts
    for _ in range(3):
        nn.adam_step(ps, gs, ms, vs, steps, 1e-2, beta1, 0.999, 1e-8, wd, decoupled, maximize)
        for k in range(len(p)):
            _adam_ref(p[k], g[k], m[k], v[k], steps[k], 1e-2, beta1, 0.999, 1e-8, wd,
                      decoupled, maximize)
        steps = [s + 1 for s in steps]
    for got, want in zip(_back(ps) + _back(ms) + _back(vs), p + m + v):
        np.testing.assert_allclose(got, want, rtol=2e-6 if dtype == "float32" else 1e-13,
                                   atol=1e-30)


@pytest.mark.parametrize("device", DEVICES)
def test_strided_gradients_and_one_parameter_twice(device):
    _dev(device)
    rng = np.random.default_rng(2)
    p = rng.standard_normal((4, 6)).astype(np.float32)
    g = rng.standard_normal((6, 4)).astype(np.float32)
    pa, ga = ca.array(p).to(device), ca.array(g).to(device).T     # a transposed gradient
    m, v = ca.zeros((4, 6), device=device), ca.zeros((4, 6), device=device)
    nn.adam_step([pa], [ga], [m], [v], [1], 0.1, 0.9, 0.999, 1e-8)
    want, mm, vv = p.copy(), np.zeros_like(p), np.zeros_like(p)
    _adam_ref(want, g.T, mm, vv, 1, 0.1, 0.9, 0.999, 1e-8, 0.0, False, False)
    np.testing.assert_allclose(np.asarray(pa.to("cpu")), want, rtol=1e-6)
    # the same parameter twice is updated twice (not raced within one launch)
    b = ca.zeros((4, 6), device=device)
    nn.sgd_momentum_step([pa, pa], [ga, ga], [b, b], 0.1, 0.5)
    ref, bb = want.copy(), np.zeros_like(want)
    for _ in range(2):
        _sgd_momentum_ref(ref, g.T, bb, 0.1, 0.5, 0.0, 0.0, False, False)
    np.testing.assert_allclose(np.asarray(pa.to("cpu")), ref, rtol=1e-6)


@pytest.mark.parametrize("device", DEVICES)
def test_bad_arguments(device):
    _dev(device)
    p = ca.ones((3,), device=device)
    z = ca.zeros((3,), device=device)
    with pytest.raises(ValueError, match="1 parameters but 0 exp_avgs"):
        nn.adam_step([p], [p], [], [z], [1], 0.1, 0.9, 0.999, 1e-8)
    with pytest.raises(ValueError, match="step counts must be at least 1"):
        nn.adam_step([p], [p], [z], [z.copy()], [0], 0.1, 0.9, 0.999, 1e-8)
    with pytest.raises(ValueError, match=r"exp_avg_sqs\[0\] must be C-contiguous"):
        nn.adam_step([p], [p], [z], [ca.zeros((6,), device=device)[::2]], [1], 0.1, 0.9,
                     0.999, 1e-8)
    with pytest.raises(RuntimeError, match=r"momentum_buffers\[0\] of size \[4\] does not"):
        nn.sgd_momentum_step([p], [p], [ca.zeros((4,), device=device)], 0.1, 0.9)
    with pytest.raises(RuntimeError, match="has dtype float64"):
        nn.sgd_momentum_step([p], [p], [ca.zeros((3,), dtype="float64", device=device)], 0.1,
                             0.9)
    if device == "gpu":
        with pytest.raises(ca.DeviceMismatchError):
            nn.sgd_momentum_step([p], [p], [ca.zeros((3,))], 0.1, 0.9)


# ---------------------------------------------------------------------------------------------
# total_norm and scale_all: gradient clipping's norm and scaling in a few launches

@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("count", [1, 16, 37])     # one launch, exactly one, three
def test_total_norm_is_the_norm_of_everything(device, dtype, count):
    _dev(device)
    rng = np.random.default_rng(count)
    shapes = [(3, 4), (0,), (), (300, 7), (1,), (2, 1, 5)]
    xs = _arrays(rng, dtype, [shapes[k % len(shapes)] for k in range(count)])
    arrays = _on(xs, device)
    if count > 3:       # a transposed view and a strided slice among them
        xs[3] = rng.standard_normal((7, 300)).astype(dtype)
        arrays[3] = ca.array(xs[3]).to(device).T
        xs[3] = xs[3].T
        xs[4] = rng.standard_normal(20).astype(dtype)
        arrays[4] = ca.array(xs[4]).to(device)[::3]
        xs[4] = xs[4][::3]
    got = nn.total_norm(arrays)
    want = math.sqrt(sum(float((x.astype(np.float64) ** 2).sum()) for x in xs))
    assert got.shape == () and got.dtype == ca.dtype(dtype) and got.device == device
    np.testing.assert_allclose(float(got), want, rtol=2e-6 if dtype == "float32" else 1e-13)


@pytest.mark.parametrize("device", DEVICES)
def test_total_norm_of_zeros_and_of_an_infinity(device):
    _dev(device)
    assert float(nn.total_norm([ca.zeros((5,), device=device), ca.zeros((0,), device=device)])) == 0
    x = ca.array(np.array([1.0, np.inf, 2.0], dtype=np.float32)).to(device)
    assert float(nn.total_norm([ca.ones((3,), device=device), x])) == np.inf
    y = ca.array(np.array([np.nan], dtype=np.float32)).to(device)
    assert np.isnan(float(nn.total_norm([x, y])))


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_scale_all_multiplies_in_place(device, dtype):
    _dev(device)
    rng = np.random.default_rng(5)
    xs = _arrays(rng, dtype, SHAPES)
    arrays = _on(xs, device)
    factor = rng.standard_normal(()).astype(dtype)
    nn.scale_all(arrays, ca.array(factor).to(device))
    for got, x in zip(_back(arrays), xs):
        np.testing.assert_array_equal(got, x * factor)      # multiply rounds once, as NumPy
    nn.scale_all(arrays, 0.5)                               # a Python number
    nn.scale_all(arrays, ca.array(np.array([2.0], dtype=np.float64)).to(device))  # cast, (1,)
    for got, x in zip(_back(arrays), xs):
        np.testing.assert_array_equal(got, x * factor * np.array(0.5, dtype) * 2)
    nn.scale_all([], 3.0)                                   # nothing to do


@pytest.mark.parametrize("device", DEVICES)
def test_total_norm_and_scale_all_bad_arguments(device):
    _dev(device)
    p = ca.ones((3,), device=device)
    with pytest.raises(ValueError, match="at least one array"):
        nn.total_norm([])
    with pytest.raises(TypeError, match=r"arrays\[1\].*carray.Array"):
        nn.total_norm([p, [1.0, 2.0]])
    with pytest.raises(RuntimeError, match="must be float32 or float64, got int64"):
        nn.total_norm([ca.ones((3,), dtype="int64", device=device)])
    with pytest.raises(RuntimeError, match="has dtype float64"):
        nn.total_norm([p, ca.ones((3,), dtype="float64", device=device)])
    with pytest.raises(ValueError, match=r"arrays\[0\] must be C-contiguous"):
        nn.scale_all([ca.ones((6,), device=device)[::2]], 2.0)
    with pytest.raises(ValueError, match="factor must have one element"):
        nn.scale_all([p], ca.ones((2,), device=device))
    if device == "gpu":
        with pytest.raises(ca.DeviceMismatchError):
            nn.total_norm([p, ca.ones((3,))])
        with pytest.raises(ca.DeviceMismatchError):
            nn.scale_all([p], ca.ones(()))
