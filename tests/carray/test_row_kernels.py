"""Row-wise kernels that spread over many work groups (issue 14 item 3): fused softmax cross
entropy and its gradient, softmax / log_softmax and layer norm forward and backward, and
reductions over the last axis, the first axis and middle axes, against NumPy float64 references
on both devices. The shapes cover one row, rows of 1, rows longer than a work group (256), rows
of non-power-of-two widths, several short rows per work group, a last partial group, 0 rows,
and non-contiguous inputs."""

import numpy as np
import pytest

import carray as ca
from carray import nn

from conftest import on, to_numpy

TOL = {"float32": dict(rtol=3e-5, atol=3e-6), "float64": dict(rtol=1e-12, atol=1e-13)}

# (rows, width): a single row, width 1, short rows sharing groups with a partial last group,
# widths around and past the work-group size, non-powers of two, no rows
SHAPES = [(1, 7), (5, 1), (37, 3), (300, 5), (9, 255), (4, 256), (3, 257), (6, 1000),
          (2, 3001), (0, 5), (130, 33)]


def _logits(rows, width, dtype, seed):
    rng = np.random.default_rng(seed)
    return (rng.standard_normal((rows, width)) * 3).astype(dtype)


def _ce_reference(x, t, ignore, reduction):
    x = x.astype(np.float64)
    m = x.max(axis=1, keepdims=True) if x.size else x
    p = np.exp(x - m)
    p = p / p.sum(axis=1, keepdims=True) if x.size else p
    keep = t != ignore
    rows = np.arange(x.shape[0])
    loss = np.where(keep, -np.log(p[rows, np.where(keep, t, 0)]) if x.size else 0.0, 0.0)
    if reduction == "none":
        return loss, p, None
    total = loss.sum()
    n = keep.sum()
    if reduction == "mean":
        total = total / n if n else np.nan
    return np.array(total), p, np.array(float(n))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_cross_entropy_rows(device, dtype, reduction):
    """Loss, probabilities, count and the gradient for every shape, some rows ignored."""
    rng = np.random.default_rng(1)
    for k, (M, C) in enumerate(SHAPES):
        x = _logits(M, C, dtype, k)
        t = rng.integers(0, C, size=M).astype(np.int64)
        t[::4] = -100                                  # ignored rows
        loss, probs, count = nn.softmax_cross_entropy(on(x, device), on(t, device),
                                                      reduction=reduction)
        rl, rp, rc = _ce_reference(x, t, -100, reduction)
        np.testing.assert_allclose(to_numpy(loss), rl, **TOL[dtype], err_msg=str((M, C)))
        np.testing.assert_allclose(to_numpy(probs), rp, **TOL[dtype])
        if rc is None:
            assert count is None
        else:
            assert to_numpy(count) == rc
        g = rng.standard_normal(M if reduction == "none" else ()).astype(dtype)
        gx = nn.softmax_cross_entropy_grad(probs, on(t, device), on(np.asarray(g), device),
                                           count if reduction == "mean" else None)
        onehot = np.zeros((M, C))
        keep = t != -100
        onehot[np.arange(M)[keep], t[keep]] = 1
        scale = np.broadcast_to(g, (M,)).astype(np.float64) * keep
        if reduction == "mean":
            scale = scale / max(rc, 1)
        np.testing.assert_allclose(to_numpy(gx), (rp - onehot) * scale[:, None], **TOL[dtype])


def test_cross_entropy_non_contiguous_and_bad_target(device):
    """A transposed view of logits; a target out of range raises IndexError (on the device at
    the next read) and the next call works."""
    x = _logits(300, 40, "float32", 3).T.copy()          # (40, 300) then its transpose
    xv = on(x, device).T
    t = np.random.default_rng(2).integers(0, 40, size=300)
    loss, _, _ = nn.softmax_cross_entropy(xv, on(t, device), reduction="sum")
    np.testing.assert_allclose(to_numpy(loss), _ce_reference(x.T, t, -100, "sum")[0], rtol=3e-5)
    t[17] = 40
    with pytest.raises(IndexError):
        loss, _, _ = nn.softmax_cross_entropy(xv, on(t, device), reduction="mean")
        to_numpy(loss)
    t[17] = 0
    loss, _, _ = nn.softmax_cross_entropy(xv, on(t, device), reduction="mean")
    np.testing.assert_allclose(to_numpy(loss), _ce_reference(x.T, t, -100, "mean")[0],
                               rtol=3e-5)


def test_cross_entropy_all_ignored_and_large_logits(device):
    """mean over no counted rows is NaN (count 0); logits of -1e38 keep the loss log(C)."""
    x = np.full((3, 3), -1e38, np.float32)
    t = np.array([0, 1, 2])
    loss, _, count = nn.softmax_cross_entropy(on(x, device), on(t, device), reduction="none")
    np.testing.assert_allclose(to_numpy(loss), np.log(3), rtol=1e-6)
    loss, _, count = nn.softmax_cross_entropy(on(x, device), on(t, device), ignore_index=1,
                                              reduction="mean")
    np.testing.assert_allclose(to_numpy(loss), np.log(3), rtol=1e-6)
    t = np.array([1, 1, 1])
    loss, _, count = nn.softmax_cross_entropy(on(x, device), on(t, device), ignore_index=1,
                                              reduction="mean")
    assert np.isnan(to_numpy(loss)) and to_numpy(count) == 0


def _ref_softmax(x, axis, log):
    x = x.astype(np.float64)
    if x.size == 0:
        return x
    s = x - x.max(axis=axis, keepdims=True)
    ls = np.log(np.exp(s).sum(axis=axis, keepdims=True))
    return s - ls if log else np.exp(s - ls)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("log", [False, True])
def test_softmax_rows_and_columns(device, dtype, log):
    """softmax / log_softmax and their gradients over the last axis (lanes per row) and over a
    leading axis with many rows `inner` apart (one work item per row), incl. a strided view."""
    fwd = nn.log_softmax if log else nn.softmax
    bwd = nn.log_softmax_grad if log else nn.softmax_grad
    cases = [(s, -1) for s in SHAPES] + [((7, 300), 0), ((5, 3, 700), 1), ((3, 1100), 0)]
    for k, (shape, axis) in enumerate(cases):
        x = _logits(*shape[:2], dtype, k) if len(shape) == 2 else \
            np.random.default_rng(k).standard_normal(shape).astype(dtype)
        y = fwd(on(x, device), axis=axis)
        ry = _ref_softmax(x, axis, log)
        np.testing.assert_allclose(to_numpy(y), ry, **TOL[dtype], err_msg=str(shape))
        g = np.random.default_rng(k + 50).standard_normal(shape).astype(dtype)
        gx = bwd(y, on(g, device), axis=axis)
        if log:
            rg = g - np.exp(ry) * g.sum(axis=axis, keepdims=True)
        else:
            rg = ry * (g - (g * ry).sum(axis=axis, keepdims=True))
        np.testing.assert_allclose(to_numpy(gx), rg, **TOL[dtype], err_msg=str(shape))
    x = np.random.default_rng(9).standard_normal((40, 600)).astype(dtype)
    y = fwd(on(x, device)[::2, ::3], axis=-1)
    np.testing.assert_allclose(to_numpy(y), _ref_softmax(x[::2, ::3], -1, log), **TOL[dtype])


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_layer_norm_rows(device, dtype):
    """layer_norm and its three gradients for every shape (width 1 and 0 rows included)."""
    for k, (M, C) in enumerate(SHAPES):
        x = _logits(M, C, dtype, k) + 1.5
        rng = np.random.default_rng(k)
        w = rng.standard_normal(C).astype(dtype)
        b = rng.standard_normal(C).astype(dtype)
        y, mean, rstd = nn.layer_norm(on(x, device), 1, on(w, device), on(b, device), 1e-5)
        x64 = x.astype(np.float64)
        mu = x64.mean(axis=1, keepdims=True) if M else np.zeros((0, 1))
        rs = 1 / np.sqrt(((x64 - mu) ** 2).mean(axis=1, keepdims=True) + 1e-5) if M else mu
        xhat = (x64 - mu) * rs
        np.testing.assert_allclose(to_numpy(y), xhat * w + b, **TOL[dtype], err_msg=str((M, C)))
        g = rng.standard_normal((M, C)).astype(dtype)
        gx, gw, gb = nn.layer_norm_grad(on(g, device), on(x, device), mean, rstd, on(w, device))
        gh = g * w
        rgx = rs * (gh - gh.mean(axis=1, keepdims=True)
                    - xhat * (gh * xhat).mean(axis=1, keepdims=True)) if M else gh
        tol = dict(TOL[dtype], atol=TOL[dtype]["atol"] * 10)
        np.testing.assert_allclose(to_numpy(gx), rgx, **tol, err_msg=str((M, C)))
        np.testing.assert_allclose(to_numpy(gw), (g * xhat).sum(axis=0), **tol)
        np.testing.assert_allclose(to_numpy(gb), g.sum(axis=0, dtype=np.float64), **tol)


REDUCE_CASES = [((64, 1000), 1), ((64, 1000), 0), ((300, 5), 1), ((300, 5), 0), ((3, 9000), 1),
                ((9000, 3), 0), ((20, 30, 40), 1), ((20, 30, 40), (0, 2)), ((0, 7), 1),
                ((7, 0), 1), ((1, 1), 0), ((129, 257), 0), ((2, 70000), 0), ((6000, 300), 0),
                ((100000, 2), 0)]


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64"])
@pytest.mark.parametrize("op", ["sum", "max", "min"])
def test_reductions_any_axis(device, dtype, op):
    """Rows (lanes per output), columns (items per output and chunk, two passes) and other
    layouts, on contiguous arrays and a transposed view."""
    for k, (shape, axis) in enumerate(REDUCE_CASES):
        if op != "sum" and 0 in [shape[a] for a in np.atleast_1d(axis)]:
            continue                                   # max of nothing raises (tested elsewhere)
        rng = np.random.default_rng(k)
        x = (rng.standard_normal(shape) * 100).astype(dtype)
        for a, n in ((on(x, device), x), (on(x.T.copy(), device).T, x)):
            got = to_numpy(getattr(ca, op)(a, axis=axis))
            ref = getattr(np, op)(n.astype(np.float64) if dtype != "int64" else n, axis=axis)
            if dtype == "int64":
                np.testing.assert_array_equal(got, ref, err_msg=str((shape, axis)))
            else:
                rtol = 1e-5 if dtype == "float32" else 1e-12
                np.testing.assert_allclose(got, ref, rtol=rtol, atol=rtol * 100 *
                                           np.sqrt(x.size + 1), err_msg=str((shape, axis)))


def test_reduction_nan_propagates(device):
    """NaN anywhere in a row or a column gives NaN in sum and max (columns split into chunks)."""
    x = np.ones((5000, 6), np.float32)
    x[4321, 2] = np.nan
    for axis in (0, 1):
        for op in ("sum", "max"):
            got = to_numpy(getattr(ca, op)(on(x, device), axis=axis))
            np.testing.assert_array_equal(np.isnan(got), np.isnan(getattr(np, op)(x, axis=axis)))
