"""Grouped, 1-d and transposed convolutions and unfold/fold (autograd/ops/conv.py): forward and
every gradient against PyTorch on random shapes, strides, dilations, groups and output_padding,
on each device; float64 gradcheck of Im2Col and Col2Im and of the composed ops; PyTorch's error
types for bad arguments."""

import numpy as np
import pytest

import autograd
from autograd.nn import functional as F
from autograd.ops.conv import Col2Im, Im2Col

from _torch_compare import compare, same_error

RNG = np.random.default_rng(12)


def _r(*shape):
    return RNG.standard_normal(shape)


def _t(*shape):
    return autograd.tensor(_r(*shape), requires_grad=True)


CONV2D_GROUPS = [
    dict(groups=2),
    dict(groups=3, stride=2, padding=1, dilation=(2, 1)),
    dict(groups=6, padding=(1, 2)),  # depthwise
    dict(groups=3, padding="same", dilation=2),
    dict(groups=2, padding="valid", stride=(1, 3)),
]


@pytest.mark.parametrize("kw", CONV2D_GROUPS)
def test_conv2d_groups_against_torch(kw, device):
    torch = pytest.importorskip("torch")
    g = kw["groups"]
    x, w, b = _r(2, 6, 7, 8), _r(2 * g, 6 // g, 3, 2), _r(2 * g)
    compare(lambda x, w, b: F.conv2d(x, w, b, **kw),
            lambda x, w, b: torch.nn.functional.conv2d(x, w, b, **kw), (x, w, b), device,
            torch, noncontiguous=True)
    compare(lambda x, w: F.conv2d(x, w, **kw), lambda x, w: torch.nn.functional.conv2d(x, w, **kw),
            (x[0], w), device, torch)  # unbatched, no bias


@pytest.mark.parametrize("kw", [dict(), dict(stride=2, padding=1), dict(dilation=2, groups=2),
                                dict(padding="same", dilation=3), dict(groups=4, stride=3)])
def test_conv1d_against_torch(kw, device):
    torch = pytest.importorskip("torch")
    g = kw.get("groups", 1)
    x, w, b = _r(3, 4, 11), _r(4, 4 // g, 3), _r(4)
    compare(lambda x, w, b: F.conv1d(x, w, b, **kw),
            lambda x, w, b: torch.nn.functional.conv1d(x, w, b, **kw), (x, w, b), device, torch,
            noncontiguous=True)
    compare(lambda x, w: F.conv1d(x, w, **kw), lambda x, w: torch.nn.functional.conv1d(x, w, **kw),
            (x[0], w), device, torch)


TRANSPOSED = [
    dict(),
    dict(stride=2, padding=1, output_padding=1),
    dict(groups=2, stride=(2, 3), padding=(1, 2), output_padding=(1, 2), dilation=(1, 2)),
    dict(dilation=3, output_padding=2, padding=1),  # output_padding >= stride (< dilation)
    dict(groups=3, dilation=(3, 2), output_padding=(2, 1), padding=(0, 2)),
]


@pytest.mark.parametrize("kw", TRANSPOSED)
def test_conv_transpose2d_against_torch(kw, device):
    torch = pytest.importorskip("torch")
    g = kw.get("groups", 1)
    x, w, b = _r(2, 6, 5, 4), _r(6, 2, 3, 2), _r(2 * g)
    compare(lambda x, w, b: F.conv_transpose2d(x, w, b, **kw),
            lambda x, w, b: torch.nn.functional.conv_transpose2d(x, w, b, **kw), (x, w, b),
            device, torch, noncontiguous=True)
    compare(lambda x, w: F.conv_transpose2d(x, w, **kw),
            lambda x, w: torch.nn.functional.conv_transpose2d(x, w, **kw), (x[1], w), device,
            torch)


@pytest.mark.parametrize("kw", [dict(), dict(stride=3, padding=2, output_padding=2, groups=2),
                                dict(dilation=2, output_padding=1)])
def test_conv_transpose1d_against_torch(kw, device):
    torch = pytest.importorskip("torch")
    g = kw.get("groups", 1)
    x, w, b = _r(2, 4, 6), _r(4, 3, 4), _r(3 * g)
    compare(lambda x, w, b: F.conv_transpose1d(x, w, b, **kw),
            lambda x, w, b: torch.nn.functional.conv_transpose1d(x, w, b, **kw), (x, w, b),
            device, torch, noncontiguous=True)


@pytest.mark.parametrize("kw", [dict(kernel_size=2), dict(kernel_size=(2, 3), dilation=2,
                                                         padding=1, stride=(1, 2)),
                                dict(kernel_size=3, stride=2, padding=(0, 1))])
def test_unfold_fold_against_torch(kw, device):
    torch = pytest.importorskip("torch")
    x = _r(2, 3, 7, 8)
    cols = compare(lambda x: F.unfold(x, **kw), lambda x: torch.nn.functional.unfold(x, **kw),
                   (x,), device, torch, noncontiguous=True)
    c = cols.detach().cpu().numpy()
    compare(lambda c: F.fold(c, (7, 8), **kw), lambda c: torch.nn.functional.fold(c, (7, 8), **kw),
            (c,), device, torch, noncontiguous=True)
    compare(lambda x: F.unfold(x, **kw), lambda x: torch.nn.functional.unfold(x, **kw), (x[0],),
            device, torch)  # unbatched
    compare(lambda c: F.fold(c, (7, 8), **kw), lambda c: torch.nn.functional.fold(c, (7, 8), **kw),
            (c[0],), device, torch)


def test_empty_batch(device):
    torch = pytest.importorskip("torch")
    x, w = np.zeros((0, 4, 5, 5)), _r(4, 2, 3, 3)
    compare(lambda x, w: F.conv2d(x, w, groups=2), lambda x, w: torch.nn.functional.conv2d(
        x, w, groups=2), (x, w), device, torch)
    compare(lambda x, w: F.conv_transpose2d(x, w, stride=2),
            lambda x, w: torch.nn.functional.conv_transpose2d(x, w, stride=2), (x, w), device,
            torch)
    compare(lambda x: F.unfold(x, 2), lambda x: torch.nn.functional.unfold(x, 2), (x,), device,
            torch)


def test_gradcheck_im2col_col2im():
    args = ((2, 3), (2, 1), (1, 0), (1, 2))
    assert autograd.gradcheck(lambda x: Im2Col.apply(x, *args), (_t(2, 2, 5, 6),))
    assert autograd.gradcheck(lambda c: Col2Im.apply(c, (5, 6), *args), (_t(2, 12, 10),))
    assert autograd.gradgradcheck(lambda x: Im2Col.apply(x, *args), (_t(1, 2, 5, 6),))
    assert autograd.gradgradcheck(lambda c: Col2Im.apply(c, (5, 6), *args), (_t(1, 12, 10),))


def test_gradcheck_composed():
    """CI without torch: the grouped and transposed convolutions' gradients, of first and second
    order, against central differences."""
    x, w, b = _t(1, 4, 5, 5), _t(4, 2, 2, 3), _t(4)
    assert autograd.gradcheck(lambda x, w, b: F.conv2d(x, w, b, stride=2, padding=1, groups=2),
                              (x, w, b))
    assert autograd.gradgradcheck(lambda x, w: F.conv2d(x, w, dilation=2, groups=2), (x, w))
    wt = _t(4, 1, 2, 3)
    assert autograd.gradcheck(lambda x, w, b: F.conv_transpose2d(
        x, w, b, stride=2, padding=1, output_padding=1, groups=2, dilation=(1, 2)),
        (x, wt, _t(2)))
    assert autograd.gradcheck(
        lambda x, w: F.conv_transpose2d(x, w, padding=1, dilation=2, output_padding=1),
        (x, _t(4, 3, 2, 2)))
    assert autograd.gradcheck(lambda x, w: F.conv1d(x, w, stride=2, groups=2),
                              (_t(2, 4, 7), _t(4, 2, 3)))
    assert autograd.gradcheck(lambda x, w: F.conv_transpose1d(x, w, stride=2, output_padding=1),
                              (_t(2, 4, 5), _t(4, 3, 3)))


def test_fold_is_unfolds_adjoint():
    """<unfold(x), c> == <x, fold(c)> (the identity Im2Col/Col2Im's gradients rest on)."""
    kw = dict(kernel_size=(3, 2), dilation=(1, 2), padding=(2, 1), stride=(2, 1))
    x = autograd.tensor(_r(2, 3, 6, 7))
    u = F.unfold(x, **kw)
    c = autograd.tensor(_r(*u.shape))
    lhs = (u * c).sum().item()
    rhs = (x * F.fold(c, (6, 7), **kw)).sum().item()
    assert abs(lhs - rhs) < 1e-9 * max(1.0, abs(lhs))


def test_errors_as_torch():
    torch = pytest.importorskip("torch")
    tf = torch.nn.functional

    def both(fn, tfn, *args, **kw):
        """Tuples in args are the shapes of random tensors; the rest are passed as they are."""
        ours = [autograd.randn(*a) if isinstance(a, tuple) else a for a in args]
        theirs = [torch.tensor(o.numpy()) if isinstance(a, tuple) else a
                  for a, o in zip(args, ours)]
        return same_error(lambda: fn(*ours, **kw), lambda: tfn(*theirs, **kw))

    both(F.conv1d, tf.conv1d, (1, 4, 5, 5), (4, 2, 3))
    both(F.conv1d, tf.conv1d, (1, 4, 5), (4, 2, 3))
    both(F.conv1d, tf.conv1d, (1, 4, 5), (4, 2, 3), groups=0)
    both(F.conv2d, tf.conv2d, (1, 4, 5, 5), (4, 2, 3, 3), groups=3)
    both(F.conv2d, tf.conv2d, (1, 4, 5, 5), (4, 2, 3, 3), groups=2, stride=2, padding="same")
    both(F.conv2d, tf.conv2d, (1, 4, 2, 2), (4, 2, 3, 3), groups=2)
    both(F.conv2d, tf.conv2d, (1, 4, 5, 5), (4, 2, 3, 3), groups=2.0)
    e = both(F.conv_transpose2d, tf.conv_transpose2d, (1, 4, 5, 5), (4, 2, 3, 3), stride=2,
             output_padding=2)
    assert "output padding" in str(e)
    e = both(F.conv_transpose2d, tf.conv_transpose2d, (1, 3, 5, 5), (4, 2, 3, 3))
    assert "channels" in str(e)
    both(F.conv_transpose2d, tf.conv_transpose2d, (1, 4, 5, 5), (4, 2, 3, 3), groups=3)
    both(F.conv_transpose2d, tf.conv_transpose2d, (4, 5), (4, 2, 3, 3))
    both(F.conv_transpose2d, tf.conv_transpose2d, (1, 4, 1, 1), (4, 2, 1, 1), padding=1)
    both(F.conv_transpose1d, tf.conv_transpose1d, (1, 4, 5), (4, 2, 3), stride=0)
    both(F.conv_transpose2d, tf.conv_transpose2d, (1, 4, 5, 5), (4, 2, 3, 3), None, 1.5)
    e = both(F.unfold, tf.unfold, (2, 3, 4), 2, padding=-1)
    assert "padding" in str(e)
    both(F.unfold, tf.unfold, (1, 2, 3, 4), 5)
    both(F.unfold, tf.unfold, (1, 2, 3, 4), 2, stride=0)
    e = both(F.fold, tf.fold, (1, 12, 5), [4, 4], 2)
    assert "sliding blocks" in str(e)
    both(F.fold, tf.fold, (1, 13, 9), [4, 4], 2)
    both(F.fold, tf.fold, (2, 3, 12, 9), [4, 4], 2)
