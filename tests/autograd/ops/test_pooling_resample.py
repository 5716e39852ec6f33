"""1-d and adaptive pooling (autograd/ops/pooling.py) and resampling (autograd/ops/resample.py):
forward, indices and input gradients against PyTorch on each device, float64 gradcheck, PyTorch's
error types."""

import numpy as np
import pytest

import autograd
from autograd.nn import functional as F
from autograd.ops.pooling import AdaptiveMaxPool2D

from _torch_compare import compare, same_error

RNG = np.random.default_rng(5)


def _r(*shape):
    return RNG.standard_normal(shape)


@pytest.mark.parametrize("size", [(3, 4), (7, 5), 1, (None, 3), (8, 13), (2, 10)])
def test_adaptive_pool2d_against_torch(size, device):
    torch = pytest.importorskip("torch")
    tf = torch.nn.functional
    x = _r(2, 3, 7, 10)
    compare(lambda x: F.adaptive_avg_pool2d(x, size), lambda x: tf.adaptive_avg_pool2d(x, size),
            (x,), device, torch, noncontiguous=True)
    compare(lambda x: F.adaptive_max_pool2d(x, size, True),
            lambda x: tf.adaptive_max_pool2d(x, size, True), (x,), device, torch,
            noncontiguous=True)
    compare(lambda x: F.adaptive_max_pool2d(x, size), lambda x: tf.adaptive_max_pool2d(x, size),
            (x[0],), device, torch)  # unbatched


def test_pool1d_against_torch(device):
    torch = pytest.importorskip("torch")
    tf = torch.nn.functional
    x = _r(2, 3, 11)
    compare(lambda x: F.adaptive_avg_pool1d(x, 4), lambda x: tf.adaptive_avg_pool1d(x, 4), (x,),
            device, torch, noncontiguous=True)
    compare(lambda x: F.adaptive_max_pool1d(x, 4, True),
            lambda x: tf.adaptive_max_pool1d(x, 4, True), (x,), device, torch)
    for kw in (dict(kernel_size=3), dict(kernel_size=3, stride=2, padding=1, dilation=2,
                                         ceil_mode=True, return_indices=True)):
        compare(lambda x: F.max_pool1d(x, **kw), lambda x: tf.max_pool1d(x, **kw), (x,), device,
                torch, noncontiguous=True)
        compare(lambda x: F.max_pool1d(x, **kw), lambda x: tf.max_pool1d(x, **kw), (x[0],),
                device, torch)
    for kw in (dict(kernel_size=2), dict(kernel_size=3, stride=2, padding=1, ceil_mode=True,
                                         count_include_pad=False)):
        compare(lambda x: F.avg_pool1d(x, **kw), lambda x: tf.avg_pool1d(x, **kw), (x,), device,
                torch, noncontiguous=True)


def test_adaptive_max_ties_pick_the_first():
    torch = pytest.importorskip("torch")
    x = np.zeros((1, 1, 5, 7))
    x[0, 0, 1:3, 2:5] = 1.0
    ours = F.adaptive_max_pool2d(autograd.tensor(x), (3, 2), True)[1]
    theirs = torch.nn.functional.adaptive_max_pool2d(torch.tensor(x), (3, 2), True)[1]
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


INTERP = [(dict(scale_factor=2), m) for m in ("nearest", "nearest-exact", "bilinear")] + [
    (dict(size=(5, 17)), "bilinear"), (dict(size=(5, 17)), "nearest"),
    (dict(scale_factor=(1.5, 0.7)), "nearest"), (dict(scale_factor=(1.5, 0.7)), "bilinear"),
    (dict(size=(14, 3)), "nearest-exact"), (dict(scale_factor=1.7, recompute_scale_factor=True),
                                            "bilinear")]


@pytest.mark.parametrize("kw,mode", INTERP)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_interpolate_2d_against_torch(kw, mode, dtype, device):
    torch = pytest.importorskip("torch")
    x = _r(2, 3, 7, 10).astype(dtype)
    tol = dict(rtol=1e-5, atol=1e-6) if dtype == np.float32 else {}
    for ac in ([None] if "nearest" in mode else [False, True]):
        compare(lambda x: F.interpolate(x, mode=mode, align_corners=ac, **kw),
                lambda x: torch.nn.functional.interpolate(x, mode=mode, align_corners=ac, **kw),
                (x,), device, torch, noncontiguous=True, **tol)


@pytest.mark.parametrize("mode", ["nearest", "linear", "nearest-exact"])
def test_interpolate_1d_against_torch(mode, device):
    torch = pytest.importorskip("torch")
    x = _r(2, 3, 11)
    for kw in (dict(scale_factor=2.3), dict(size=4), dict(size=[25])):
        compare(lambda x: F.interpolate(x, mode=mode, **kw),
                lambda x: torch.nn.functional.interpolate(x, mode=mode, **kw), (x,), device,
                torch)


def test_pixel_shuffle_against_torch(device):
    torch = pytest.importorskip("torch")
    tf = torch.nn.functional
    x = _r(2, 3, 8, 6, 4)
    compare(lambda x: F.pixel_shuffle(x, 2), lambda x: tf.pixel_shuffle(x, 2), (x,), device,
            torch, noncontiguous=True)
    compare(lambda x: F.pixel_unshuffle(x, 2), lambda x: tf.pixel_unshuffle(x, 2), (x,), device,
            torch, noncontiguous=True)
    y = autograd.tensor(_r(1, 18, 2, 3))
    np.testing.assert_array_equal(F.pixel_unshuffle(F.pixel_shuffle(y, 3), 3).numpy(), y.numpy())


def _t(*shape):
    return autograd.tensor(_r(*shape), requires_grad=True)


def test_gradcheck():
    """CI without torch: every new op's gradient against central differences."""
    x = _t(2, 2, 5, 7)
    assert autograd.gradcheck(lambda x: AdaptiveMaxPool2D.apply(x, (3, 4), False), (x,))
    assert autograd.gradgradcheck(lambda x: F.adaptive_max_pool2d(x, (2, 3)), (x,))
    assert autograd.gradcheck(lambda x: F.adaptive_avg_pool2d(x, (3, 4)), (x,))
    assert autograd.gradcheck(lambda x: F.adaptive_avg_pool2d(x, 1), (x,))
    x1 = _t(2, 3, 9)
    assert autograd.gradcheck(lambda x: F.max_pool1d(x, 3, 2, 1), (x1,))
    assert autograd.gradcheck(lambda x: F.avg_pool1d(x, 3, 2, 1), (x1,))
    assert autograd.gradcheck(lambda x: F.adaptive_max_pool1d(x, 4), (x1,))
    for mode in ("nearest", "nearest-exact", "bilinear"):
        assert autograd.gradcheck(lambda x: F.interpolate(x, size=(7, 4), mode=mode), (x,))
    assert autograd.gradcheck(lambda x: F.interpolate(x, scale_factor=1.5, mode="bilinear",
                                                      align_corners=True), (x,))
    assert autograd.gradcheck(lambda x: F.interpolate(x, size=13, mode="linear"), (x1,))
    assert autograd.gradcheck(lambda x: F.pixel_shuffle(x, 2), (_t(1, 8, 2, 3),))


def test_bilinear_by_hand():
    """align_corners=True doubles a 2 x 2 image to 3 x 3 by plain averaging."""
    x = autograd.tensor([[[[0.0, 2.0], [4.0, 6.0]]]])
    out = F.interpolate(x, size=(3, 3), mode="bilinear", align_corners=True)
    np.testing.assert_allclose(out.numpy()[0, 0], [[0, 1, 2], [2, 3, 4], [4, 5, 6]])


def test_errors_as_torch():
    torch = pytest.importorskip("torch")
    tf = torch.nn.functional
    x3, x4 = autograd.randn(1, 4, 5), autograd.randn(1, 4, 5, 6)
    t3, t4 = torch.tensor(x3.numpy()), torch.tensor(x4.numpy())
    cases = [
        (lambda x: F.interpolate(x, scale_factor=2, mode="bilinear"),
         lambda x: tf.interpolate(x, scale_factor=2, mode="bilinear"), 3),
        (lambda x: F.interpolate(x, size=3, mode="linear"),
         lambda x: tf.interpolate(x, size=3, mode="linear"), 4),
        (lambda x: F.interpolate(x, size=3, scale_factor=2),
         lambda x: tf.interpolate(x, size=3, scale_factor=2), 3),
        (lambda x: F.interpolate(x), lambda x: tf.interpolate(x), 3),
        (lambda x: F.interpolate(x, size=3, mode="foo"),
         lambda x: tf.interpolate(x, size=3, mode="foo"), 3),
        (lambda x: F.interpolate(x, size=3, align_corners=True),
         lambda x: tf.interpolate(x, size=3, align_corners=True), 3),
        (lambda x: F.interpolate(x, size=(3, 4)), lambda x: tf.interpolate(x, size=(3, 4)), 3),
        (lambda x: F.interpolate(x, size=2.5), lambda x: tf.interpolate(x, size=2.5), 3),
        (lambda x: F.adaptive_avg_pool2d(x[0, 0], 2), lambda x: tf.adaptive_avg_pool2d(x[0, 0], 2),
         4),
        (lambda x: F.adaptive_max_pool2d(x[:, :, :0], 2),
         lambda x: tf.adaptive_max_pool2d(x[:, :, :0], 2), 4),
        (lambda x: F.adaptive_avg_pool1d(x, (2, 2)), lambda x: tf.adaptive_avg_pool1d(x, (2, 2)),
         3),
        (lambda x: F.pixel_shuffle(x, 3), lambda x: tf.pixel_shuffle(x, 3), 4),
        (lambda x: F.pixel_unshuffle(x, 2), lambda x: tf.pixel_unshuffle(x, 2), 3),
        (lambda x: F.pixel_unshuffle(x, 4), lambda x: tf.pixel_unshuffle(x, 4), 4),
        (lambda x: F.max_pool1d(x, 6), lambda x: tf.max_pool1d(x, 6), 3),
        (lambda x: F.avg_pool1d(x, 6), lambda x: tf.avg_pool1d(x, 6), 3),
        (lambda x: F.max_pool1d(x, 2), lambda x: tf.max_pool1d(x, 2), 4),
    ]
    for ours, theirs, nd in cases:
        x, t = (x3, t3) if nd == 3 else (x4, t4)
        same_error(lambda: ours(x), lambda: theirs(t))  # noqa: B023
