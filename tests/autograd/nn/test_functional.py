"""autograd.nn.functional against NumPy references written here (and against PyTorch when it is
installed): values, float64 gradcheck on contiguous, transposed and sliced inputs, gradients of
gradients (gradgradcheck), every reduction mode, class weights, ignore_index, label smoothing,
huge logits, dropout statistics, batch-norm running statistics, and PyTorch's error types."""

import math

import numpy as np
import pytest

import autograd
from autograd.nn import functional as F

from _check import check_op, make_input

RNG = np.random.default_rng(1234)


def tensor(values, requires_grad=False):
    """A leaf tensor holding a copy of a NumPy array (float64 stays float64)."""
    t = autograd.from_numpy(np.array(values, copy=True))
    return t.requires_grad_(True) if requires_grad else t


# ---------------------------------------------------------------------------------------------
# NumPy references
# ---------------------------------------------------------------------------------------------

def _pair(v):
    return tuple(v) if isinstance(v, (tuple, list)) else (v, v)


def np_conv2d(x, w, b=None, stride=1, padding=0, dilation=1, groups=1):
    """Direct cross-correlation: a sum over the kernel's taps of strided slices of the padded
    input ('same' puts the odd extra padding after, as PyTorch)."""
    (sh, sw), (dh, dw) = _pair(stride), _pair(dilation)
    o, cg, kh, kw = w.shape
    if padding == "valid":
        padding = 0
    if padding == "same":
        th, tw = dh * (kh - 1), dw * (kw - 1)
        pads = ((th // 2, th - th // 2), (tw // 2, tw - tw // 2))
    else:
        ph, pw = _pair(padding)
        pads = ((ph, ph), (pw, pw))
    xp = np.pad(x, ((0, 0), (0, 0)) + pads)
    n, _, hp, wp = xp.shape
    ho, wo = (hp - dh * (kh - 1) - 1) // sh + 1, (wp - dw * (kw - 1) - 1) // sw + 1
    og = o // groups
    out = np.zeros((n, o, ho, wo))
    for g in range(groups):
        for u in range(kh):
            for v in range(kw):
                patch = xp[:, g * cg:(g + 1) * cg, u * dh:u * dh + sh * (ho - 1) + 1:sh,
                           v * dw:v * dw + sw * (wo - 1) + 1:sw]
                out[:, g * og:(g + 1) * og] += np.einsum("nchw,oc->nohw", patch,
                                                         w[g * og:(g + 1) * og, :, u, v])
    if b is not None:
        out += b[None, :, None, None]
    return out


def _pool_out(n, k, s, p, d, ceil):
    o = (n + 2 * p - d * (k - 1) - 1 + (s - 1 if ceil else 0)) // s + 1
    if ceil and (o - 1) * s >= n + p:
        o -= 1
    return o


def _windows(xp, k, s, d, out):
    """The (kh * kw) strided views of xp, one per window tap, each (N, C, Ho, Wo)."""
    views = []
    for u in range(k[0]):
        for v in range(k[1]):
            views.append(xp[:, :, u * d[0]:u * d[0] + s[0] * (out[0] - 1) + 1:s[0],
                            v * d[1]:v * d[1] + s[1] * (out[1] - 1) + 1:s[1]])
    return np.stack(views)


def _pool_pad(x, k, s, p, d, ceil, fill):
    """x padded by p (and by what ceil_mode's last windows need beyond it) with fill."""
    out = [_pool_out(x.shape[2 + i], k[i], s[i], p[i], d[i], ceil) for i in range(2)]
    extra = [max(0, (out[i] - 1) * s[i] + d[i] * (k[i] - 1) + 1 - x.shape[2 + i] - 2 * p[i])
             for i in range(2)]
    widths = ((0, 0), (0, 0), (p[0], p[0] + extra[0]), (p[1], p[1] + extra[1]))
    return np.pad(x, widths, constant_values=fill), out, widths


def np_max_pool2d(x, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False):
    k, p, d = _pair(kernel_size), _pair(padding), _pair(dilation)
    s = _pair(stride) if stride is not None else k
    xp, out, _ = _pool_pad(x, k, s, p, d, ceil_mode, -np.inf)
    return _windows(xp, k, s, d, out).max(0)


def np_avg_pool2d(x, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
                  divisor_override=None):
    k, p = _pair(kernel_size), _pair(padding)
    s = _pair(stride) if stride is not None else k
    xp, out, widths = _pool_pad(x, k, s, p, (1, 1), ceil_mode, 0.0)
    total = _windows(xp, k, s, (1, 1), out).sum(0)
    if divisor_override:
        return total / divisor_override
    inside = np.zeros(xp.shape[2:])          # the input (count_include_pad=False) ...
    inside[widths[2][0]:widths[2][0] + x.shape[2], widths[3][0]:widths[3][0] + x.shape[3]] = 1
    padded = np.zeros(xp.shape[2:])          # ... or the input and its padding
    padded[:x.shape[2] + 2 * p[0], :x.shape[3] + 2 * p[1]] = 1
    mask = inside if not count_include_pad else padded
    count = _windows(np.broadcast_to(mask, xp.shape), k, s, (1, 1), out).sum(0)
    return total / count


def np_log_softmax(x, axis):
    m = x.max(axis, keepdims=True)
    return x - m - np.log(np.exp(x - m).sum(axis, keepdims=True))


def np_cross_entropy(x, t, weight=None, ignore_index=-100, reduction="mean",
                     label_smoothing=0.0, log_probs=False):
    """PyTorch's cross entropy (or nll_loss with log_probs) written out on (M, C) rows."""
    t = np.asarray(t)
    target_shape = t.shape
    if x.ndim == 1:
        x, t = x[None], t[None]
    n_classes = x.shape[1]
    rows = np.moveaxis(x, 1, -1).reshape(-1, n_classes)
    logp = rows if log_probs else np_log_softmax(rows, 1)
    w = np.ones(n_classes) if weight is None else weight
    tt = t.reshape(-1)
    valid = tt != ignore_index
    safe = np.where(valid, tt, 0)
    nll = -w[safe] * logp[np.arange(len(safe)), safe] * valid
    smooth = -(logp * w).sum(1) * valid
    loss = (1 - label_smoothing) * nll + label_smoothing / n_classes * smooth
    if reduction == "none":
        return loss.reshape(target_shape)
    if reduction == "sum":
        return loss.sum()
    return loss.sum() / (w[safe] * valid).sum()


# ---------------------------------------------------------------------------------------------
# linear
# ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("xshape", [(3, 4), (2, 3, 4), (4,)])
def test_linear(xshape):
    check_op(F.linear, lambda x, w, b: x @ w.T + b, xshape, (2, 4), (2,))
    check_op(lambda x, w: F.linear(x, w), lambda x, w: x @ w.T, xshape, (3, 4))


def test_linear_double_backward_and_errors():
    x, w, b = (tensor(RNG.standard_normal(s), True) for s in ((3, 4), (2, 4), (2,)))
    assert autograd.gradgradcheck(F.linear, (x, w, b))
    with pytest.raises(RuntimeError, match="cannot be multiplied"):
        F.linear(x, tensor(RNG.standard_normal((2, 5))))
    with pytest.raises(RuntimeError, match="same dtype"):
        F.linear(x, autograd.randn(2, 4))
    with pytest.raises(RuntimeError, match="at least 1D"):
        F.linear(tensor(np.float64(1.0)), w)
    with pytest.raises(RuntimeError):
        F.linear(x, w, tensor(RNG.standard_normal(3)))


def test_linear_float32_matches_numpy():
    x, w, b = (RNG.standard_normal(s).astype(np.float32) for s in ((64, 30), (10, 30), (10,)))
    out = F.linear(tensor(x), tensor(w), tensor(b))
    assert out.dtype == autograd.float32
    np.testing.assert_allclose(out.numpy(), x @ w.T + b, rtol=1e-4, atol=1e-5)


# ---------------------------------------------------------------------------------------------
# convolution and pooling
# ---------------------------------------------------------------------------------------------

CONV_CASES = [
    dict(),
    dict(stride=2, padding=1),
    dict(stride=(2, 1), padding=(0, 1), dilation=(1, 2)),
    dict(padding="same"),
    dict(padding="same", dilation=2),
    dict(padding="valid"),
]


@pytest.mark.parametrize("kw", CONV_CASES)
def test_conv2d(kw):
    ref = lambda x, w, b: np_conv2d(x, w, b, **kw)  # noqa: E731
    check_op(lambda x, w, b: F.conv2d(x, w, b, **kw), ref, (2, 2, 5, 4), (3, 2, 2, 3), (3,),
             layouts=("contiguous", "sliced"))


def test_conv2d_unbatched_groups_no_bias():
    check_op(lambda x, w: F.conv2d(x, w, padding=1),
             lambda x, w: np_conv2d(x[None], w, padding=1)[0], (2, 4, 3), (3, 2, 2, 2),
             layouts=("transposed",))
    check_op(lambda x, w, b: F.conv2d(x, w, b, groups=2),
             lambda x, w, b: np_conv2d(x, w, b, groups=2), (1, 4, 4, 4), (6, 2, 2, 2), (6,),
             layouts=("contiguous",))


def test_conv2d_double_backward():
    x = tensor(RNG.standard_normal((1, 2, 4, 4)), True)
    w = tensor(RNG.standard_normal((2, 2, 2, 2)), True)
    b = tensor(RNG.standard_normal(2), True)
    assert autograd.gradgradcheck(lambda x, w, b: F.conv2d(x, w, b, stride=2, padding=1),
                                  (x, w, b))


def test_conv2d_errors():
    x, w = autograd.randn(1, 2, 5, 5), autograd.randn(3, 2, 3, 3)
    with pytest.raises(RuntimeError, match="channels"):
        F.conv2d(autograd.randn(1, 3, 5, 5), w)
    with pytest.raises(RuntimeError, match="strided"):
        F.conv2d(x, w, stride=2, padding="same")
    with pytest.raises(RuntimeError):
        F.conv2d(x, w, padding="foo")
    with pytest.raises(RuntimeError):
        F.conv2d(x, w, padding=(1, 2, 3))
    with pytest.raises(RuntimeError):
        F.conv2d(x, w.double())
    with pytest.raises(RuntimeError, match="groups=3"):
        F.conv2d(x, w, groups=3)


POOL_CASES = [
    dict(kernel_size=2),
    dict(kernel_size=3, stride=2, padding=1),
    dict(kernel_size=(2, 3), stride=(1, 2), padding=(1, 0)),
    dict(kernel_size=2, ceil_mode=True),
    dict(kernel_size=3, stride=2, padding=1, ceil_mode=True),
]


@pytest.mark.parametrize("kw", POOL_CASES + [dict(kernel_size=2, dilation=2, padding=1)])
def test_max_pool2d(kw):
    # distinct values, so every window has one maximum and finite differences see one slope
    values = RNG.permutation(2 * 2 * 5 * 5).reshape(2, 2, 5, 5) / 10.0
    check_op(lambda x: F.max_pool2d(x, **kw), lambda x: np_max_pool2d(x, **kw), values)


@pytest.mark.parametrize("kw", POOL_CASES + [dict(kernel_size=3, padding=1,
                                                  count_include_pad=False),
                                             dict(kernel_size=2, divisor_override=3)])
def test_avg_pool2d(kw):
    check_op(lambda x: F.avg_pool2d(x, **kw), lambda x: np_avg_pool2d(x, **kw), (2, 2, 5, 5))


def test_pool_indices_and_double_backward():
    values = RNG.permutation(2 * 6 * 6).reshape(1, 2, 6, 6) / 7.0
    out, idx = F.max_pool2d(tensor(values), 2, return_indices=True)
    assert idx.dtype == autograd.int64 and not idx.requires_grad
    flat = values.reshape(1, 2, 36)
    np.testing.assert_array_equal(np.take_along_axis(flat, idx.numpy().reshape(1, 2, 9), 2),
                                  out.numpy().reshape(1, 2, 9))
    x = tensor(values[:, :, :4, :4], True)
    assert autograd.gradgradcheck(lambda x: F.max_pool2d(x, 2, 1), (x,))
    assert autograd.gradgradcheck(lambda x: F.avg_pool2d(x, 3, 1, 1), (x,))
    with pytest.raises(RuntimeError, match="half"):
        F.max_pool2d(autograd.randn(1, 1, 4, 4), 2, padding=2)


# ---------------------------------------------------------------------------------------------
# activations and softmax
# ---------------------------------------------------------------------------------------------

def _np_erf(x):
    return np.vectorize(math.erf)(x)


ACTIVATIONS = [
    ("relu", F.relu, lambda x: np.maximum(x, 0)),
    ("relu6", F.relu6, lambda x: np.clip(x, 0, 6)),
    ("hardtanh", F.hardtanh, lambda x: np.clip(x, -1, 1)),
    ("leaky_relu", lambda x: F.leaky_relu(x, 0.1), lambda x: np.where(x > 0, x, 0.1 * x)),
    ("leaky_relu>1", lambda x: F.leaky_relu(x, 2.5), lambda x: np.where(x > 0, x, 2.5 * x)),
    ("sigmoid", F.sigmoid, lambda x: 1 / (1 + np.exp(-x))),
    ("tanh", F.tanh, np.tanh),
    ("gelu", F.gelu, lambda x: 0.5 * x * (1 + _np_erf(x / np.sqrt(2)))),
    ("gelu_tanh", lambda x: F.gelu(x, approximate="tanh"),
     lambda x: 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x ** 3)))),
    ("softplus", F.softplus, lambda x: np.log1p(np.exp(x))),
    ("softplus_beta", lambda x: F.softplus(x, beta=2.0, threshold=3.0),
     lambda x: np.where(2 * x > 3, x, np.log1p(np.exp(2 * x)) / 2)),
    ("silu", F.silu, lambda x: x / (1 + np.exp(-x))),
    ("elu", lambda x: F.elu(x, 0.7), lambda x: np.where(x > 0, x, 0.7 * np.expm1(x))),
]


@pytest.mark.parametrize("name,fn,ref", ACTIVATIONS, ids=[a[0] for a in ACTIVATIONS])
def test_activation(name, fn, ref):
    # values away from the kinks at 0 (and relu6's 6, softplus' threshold) for finite differences
    values = RNG.uniform(0.1, 4, (3, 4)) * RNG.choice([-1, 1], (3, 4))
    values[0, 0] = 7.5 if name == "relu6" else values[0, 0]
    check_op(fn, ref, values, rtol=1e-12, atol=1e-12)


def test_gelu_exact_erf_and_double_backward():
    x = np.concatenate([np.linspace(-8, 8, 101), [-30.0, 30.0, 0.0, 1e-8]])
    got = F.gelu(tensor(x)).numpy()
    # 1 + erf(x / sqrt 2) cancels for x << 0 (in PyTorch's formula too): absolute tolerance
    np.testing.assert_allclose(got, 0.5 * x * (1 + _np_erf(x / np.sqrt(2))), rtol=1e-13,
                               atol=1e-14)
    got32 = F.gelu(tensor(x.astype(np.float32))).numpy()
    assert got32.dtype == np.float32
    np.testing.assert_allclose(got32, got, rtol=1e-6, atol=1e-7)
    with pytest.raises(RuntimeError, match="approximate"):
        F.gelu(tensor(x), approximate="fast")
    t = tensor(RNG.standard_normal(5), True)
    for fn in (F.gelu, lambda x: F.gelu(x, approximate="tanh"), F.softplus, F.leaky_relu):
        assert autograd.gradgradcheck(fn, (t,))


def test_inplace_activations():
    x = tensor(RNG.standard_normal((3, 4)), True)
    for fn, ref in ((lambda h: F.relu(h, inplace=True), lambda v: np.maximum(v, 0)),
                    (lambda h: F.leaky_relu(h, 0.2, inplace=True),
                     lambda v: np.where(v > 0, v, 0.2 * v))):
        h = x * 1.0
        out = fn(h)
        assert out is h
        np.testing.assert_allclose(h.detach().numpy(), ref(x.detach().numpy()))
        (g,) = autograd.grad(h.sum(), x)
        np.testing.assert_allclose(g.numpy(), np.where(x.detach().numpy() > 0, 1.0,
                                                       g.numpy().min()))
    with pytest.raises(RuntimeError, match="leaf"):
        F.relu(x, inplace=True)


def test_softmax_family():
    for dim in (0, 1, -1):
        check_op(lambda x: F.softmax(x, dim),
                 lambda x: np.exp(np_log_softmax(x, dim)), (3, 4), layouts=("transposed",))
        check_op(lambda x: F.log_softmax(x, dim), lambda x: np_log_softmax(x, dim), (3, 4),
                 layouts=("sliced",))
        check_op(lambda x: F.softmin(x, dim), lambda x: np.exp(np_log_softmax(-x, dim)),
                 (3, 4), layouts=("contiguous",))
    big = tensor(np.array([[1e4, 0.0, -1e4]], dtype=np.float32))
    np.testing.assert_allclose(F.log_softmax(big, 1).numpy(), [[0.0, -1e4, -2e4]])
    with pytest.warns(UserWarning, match="Implicit dimension"):
        out = F.softmax(tensor(RNG.standard_normal((2, 3))))
    np.testing.assert_allclose(out.numpy().sum(1), 1.0)


# ---------------------------------------------------------------------------------------------
# cross_entropy and nll_loss
# ---------------------------------------------------------------------------------------------

WEIGHT = np.array([1.0, 2.0, 0.5, 3.0])


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("ignore", [False, True])
@pytest.mark.parametrize("smoothing", [0.0, 0.25])
def test_cross_entropy_class_indices(reduction, weighted, ignore, smoothing):
    target = np.array([0, 3, 1, 2, 3])
    ignore_index = -100
    if ignore:
        ignore_index = 1 if weighted else -100
        target[2] = ignore_index
    weight = tensor(WEIGHT) if weighted else None
    kw = dict(weight=weight, ignore_index=ignore_index, reduction=reduction,
              label_smoothing=smoothing)
    check_op(lambda x: F.cross_entropy(x, tensor(target), **kw),
             lambda x: np_cross_entropy(x, target, WEIGHT if weighted else None, ignore_index,
                                        reduction, smoothing), (5, 4))
    if not smoothing:
        check_op(lambda x: F.nll_loss(x, tensor(target), weight=weight, ignore_index=ignore_index,
                                      reduction=reduction),
                 lambda x: np_cross_entropy(x, target, WEIGHT if weighted else None,
                                            ignore_index, reduction, log_probs=True), (5, 4))


@pytest.mark.parametrize("reduction", ["mean", "none"])
def test_cross_entropy_spatial_and_unbatched(reduction):
    target = RNG.integers(0, 3, (2, 2, 3))
    target[0, 1, 1] = -100
    check_op(lambda x: F.cross_entropy(x, tensor(target), reduction=reduction,
                                       label_smoothing=0.1),
             lambda x: np_cross_entropy(x, target, reduction=reduction, label_smoothing=0.1),
             (2, 3, 2, 3))
    check_op(lambda x: F.nll_loss(x, tensor(target), reduction=reduction),
             lambda x: np_cross_entropy(x, target, reduction=reduction, log_probs=True),
             (2, 3, 2, 3), layouts=("transposed",))
    check_op(lambda x: F.cross_entropy(x, tensor(np.array(2)), reduction=reduction),
             lambda x: np_cross_entropy(x, np.array(2), reduction=reduction),
             (4,))


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_cross_entropy_probabilities(reduction):
    probs = RNG.random((3, 4))
    probs /= probs.sum(1, keepdims=True)

    def ref(x, p, smoothing=0.2):
        q = p * (1 - smoothing) + smoothing / 4
        loss = -(np_log_softmax(x, 1) * q * WEIGHT).sum(1)
        return {"none": loss, "sum": loss.sum(), "mean": loss.mean()}[reduction]

    check_op(lambda x, p: F.cross_entropy(x, p, weight=tensor(WEIGHT), reduction=reduction,
                                          label_smoothing=0.2), ref, (3, 4), probs)


def test_cross_entropy_huge_logits_and_empty_mean():
    logits = np.array([[1e4, 0.0, -1e4], [0.0, 1e4, 3e4], [-1e4, -1e4, 1e4]], dtype=np.float32)
    target = np.array([0, 1, 2])
    x = tensor(logits, True)
    loss = F.cross_entropy(x, tensor(target))
    np.testing.assert_allclose(loss.item(), (0 + 2e4 + 0) / 3, rtol=1e-6)
    loss.backward()
    expected = np.array([[0, 0, 0], [0, -1, 1], [0, 0, 0]]) / 3
    np.testing.assert_allclose(x.grad.numpy(), expected, atol=1e-7)
    assert np.isfinite(F.cross_entropy(tensor(logits), tensor(target), label_smoothing=0.1,
                                       reduction="none").numpy()).all()
    # every target ignored: the mean is 0 / 0, but the gradient is 0 (as PyTorch's)
    for loss_fn in (lambda x, t: F.cross_entropy(x, t, label_smoothing=0.1), F.nll_loss):
        x = tensor(logits, True)
        loss = loss_fn(x, tensor(np.full(3, -100)))
        assert math.isnan(loss.item())
        loss.backward()
        np.testing.assert_array_equal(x.grad.numpy(), np.zeros((3, 3)))
        (grad,) = autograd.grad(loss_fn(x, tensor(np.full(3, -100))), x, create_graph=True)
        np.testing.assert_array_equal(grad.detach().numpy(), np.zeros((3, 3)))


def test_cross_entropy_double_backward():
    x = tensor(RNG.standard_normal((3, 4)), True)
    target = tensor(np.array([1, -100, 3]))
    for fn in (lambda x: F.cross_entropy(x, target, weight=tensor(WEIGHT), label_smoothing=0.1),
               lambda x: F.cross_entropy(x, target, reduction="none"),
               lambda x: F.nll_loss(F.log_softmax(x, 1), target, reduction="sum")):
        assert autograd.gradgradcheck(fn, (x,))


def test_class_loss_errors():
    x = autograd.randn(4, 3)
    with pytest.raises(IndexError, match="Target 5 is out of bounds"):
        F.cross_entropy(x, tensor(np.array([0, 1, 5, 0])))
    with pytest.raises(IndexError, match="Target -3"):
        F.nll_loss(x, tensor(np.array([0, 1, -3, 0])))
    with pytest.raises(ValueError, match="batch_size"):
        F.cross_entropy(x, tensor(np.array([0, 1, 2])))
    with pytest.raises(RuntimeError, match="Long"):
        F.nll_loss(x, tensor(np.array([0, 1, 2, 0], dtype=np.int32)))
    with pytest.raises(RuntimeError, match="weight tensor"):
        F.cross_entropy(x, tensor(np.array([0, 1, 2, 0])), weight=autograd.ones(4))
    for loss_fn in (F.cross_entropy, F.nll_loss):
        with pytest.raises(RuntimeError, match="expected scalar type Float but found Double"):
            loss_fn(x, tensor(np.array([0, 1, 2, 0])), weight=autograd.ones(3).double())
    with pytest.raises(RuntimeError, match="label_smoothing"):
        F.cross_entropy(x, tensor(np.array([0, 1, 2, 0])), label_smoothing=1.5)
    with pytest.raises(ValueError, match="reduction"):
        F.cross_entropy(x, tensor(np.array([0, 1, 2, 0])), reduction="avg")
    with pytest.raises(RuntimeError):
        F.cross_entropy(x, autograd.randn(4, 2))


# ---------------------------------------------------------------------------------------------
# other losses
# ---------------------------------------------------------------------------------------------

REDUCE = {"mean": np.mean, "sum": np.sum, "none": lambda v: v}


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_mse_l1(reduction):
    red = REDUCE[reduction]
    check_op(lambda x, y: F.mse_loss(x, y, reduction=reduction),
             lambda x, y: red((x - y) ** 2), (3, 4), (3, 4))
    check_op(lambda x, y: F.l1_loss(x, y, reduction=reduction),
             lambda x, y: red(np.abs(x - y)), (3, 4), (3, 4))
    # the legacy flags map to a reduction as in PyTorch
    a, b = tensor(RNG.standard_normal(3)), tensor(RNG.standard_normal(3))
    assert F.mse_loss(a, b, reduce=False).shape == (3,)
    np.testing.assert_allclose(F.mse_loss(a, b, size_average=False).item(),
                               ((a.numpy() - b.numpy()) ** 2).sum())


def test_mse_l1_errors():
    a = autograd.randn(3, 1)
    with pytest.warns(UserWarning, match="target size"):
        assert F.mse_loss(a, autograd.randn(3), reduction="none").shape == (3, 3)
    with pytest.raises(ValueError, match="reduction"):
        F.l1_loss(a, a, reduction="x")
    with pytest.raises(NotImplementedError):
        F.mse_loss(autograd.ones(3, dtype=autograd.int64), autograd.ones(3, dtype=autograd.int64))


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_binary_cross_entropy(reduction):
    red = REDUCE[reduction]
    target = RNG.random((3, 4))
    weight = RNG.random(4) + 0.5

    def ref(x, t, w):
        return red(-w * (t * np.log(x) + (1 - t) * np.log(1 - x)))

    check_op(lambda x, t, w: F.binary_cross_entropy(x, t, w, reduction=reduction), ref, (3, 4),
             target, weight, low=0.05, high=0.95)
    pos_weight = RNG.random(4) + 0.5

    def ref_logits(x, t, w, pw):
        s = 1 / (1 + np.exp(-x))
        return red(-w * (pw * t * np.log(s) + (1 - t) * np.log(1 - s)))

    check_op(lambda x, t, w, pw: F.binary_cross_entropy_with_logits(
        x, t, w, reduction=reduction, pos_weight=pw), ref_logits, (3, 4), target, weight,
        pos_weight)


def test_binary_cross_entropy_edges():
    # log is clamped at -100 as in PyTorch
    loss = F.binary_cross_entropy(tensor(np.array([0.0, 1.0])), tensor(np.array([1.0, 0.0])))
    assert loss.item() == pytest.approx(100.0)
    x = tensor(np.array([-1e4, 0.0, 1e4, 30.0]), True)
    t = tensor(np.array([1.0, 1.0, 0.0, 1.0]))
    loss = F.binary_cross_entropy_with_logits(x, t, reduction="none")
    np.testing.assert_allclose(loss.detach().numpy(), [1e4, math.log(2), 1e4, math.log1p(
        math.exp(-30))], rtol=1e-12)
    loss.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [-1.0, -0.5, 1.0, -1 / (1 + math.exp(30))],
                               rtol=1e-12)
    with pytest.raises(RuntimeError, match="between 0 and 1"):
        F.binary_cross_entropy(tensor(np.array([1.5])), tensor(np.array([1.0])))
    with pytest.raises(ValueError, match="size"):
        F.binary_cross_entropy(tensor(np.array([0.5, 0.5])), tensor(np.array([1.0])))
    with pytest.raises(ValueError, match="size"):
        F.binary_cross_entropy_with_logits(tensor(np.array([0.5, 0.5])),
                                           tensor(np.array([1.0])))


# ---------------------------------------------------------------------------------------------
# dropout and batch_norm
# ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("p", [0.1, 0.5, 0.8])
def test_dropout_statistics(p):
    x = autograd.ones(200, 100, requires_grad=True)
    out = F.dropout(x, p)
    values = out.detach().numpy()
    kept = values != 0
    n = values.size
    assert abs(1 - kept.mean() - p) < 5 * math.sqrt(p * (1 - p) / n)
    np.testing.assert_allclose(values[kept], 1 / (1 - p), rtol=1e-6)
    out.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), values)  # d out / d x is the scaled mask
    assert F.dropout(x, p).numpy(force=True).tolist() != values.tolist()  # a fresh mask


def test_dropout_modes_and_seed():
    x = tensor(RNG.standard_normal((4, 5)), True)
    assert F.dropout(x, 0.5, training=False) is x
    assert F.dropout(x, 0.0) is x
    assert (F.dropout(x, 1.0).detach().numpy() == 0).all()
    autograd.manual_seed(7)
    a = F.dropout(x, 0.3).detach().numpy()
    autograd.manual_seed(7)
    np.testing.assert_array_equal(F.dropout(x, 0.3).detach().numpy(), a)
    h = x * 1.0
    assert F.dropout(h, 0.5, inplace=True) is h
    with pytest.raises(ValueError, match="between 0 and 1"):
        F.dropout(x, 1.5)
    with pytest.raises(ValueError):
        F.dropout(x, -0.1)


def np_batch_norm(x, w, b, eps=1e-5):
    axes = (0,) + tuple(range(2, x.ndim))
    shape = (1, -1) + (1,) * (x.ndim - 2)
    mean, var = x.mean(axes, keepdims=True), x.var(axes, keepdims=True)
    return (x - mean) / np.sqrt(var + eps) * w.reshape(shape) + b.reshape(shape)


@pytest.mark.parametrize("shape", [(4, 3), (2, 3, 2, 2), (2, 2, 3)])
def test_batch_norm_training(shape):
    c = shape[1]
    check_op(lambda x, w, b: F.batch_norm(x, None, None, w, b, training=True), np_batch_norm,
             shape, (c,), (c,))
    check_op(lambda x: F.batch_norm(x, None, None, training=True, eps=0.1),
             lambda x: np_batch_norm(x, np.ones(c), np.zeros(c), 0.1), shape,
             layouts=("transposed",))


def test_batch_norm_running_stats_and_eval():
    x1, x2 = RNG.standard_normal((2, 4, 3, 3, 3)) * 3 + 1
    rm, rv = tensor(np.zeros(3)), tensor(np.ones(3))
    exp_m, exp_v = np.zeros(3), np.ones(3)
    for xs in (x1, x2):
        F.batch_norm(tensor(xs), rm, rv, training=True, momentum=0.3)
        exp_m = 0.7 * exp_m + 0.3 * xs.mean((0, 2, 3))
        exp_v = 0.7 * exp_v + 0.3 * xs.var((0, 2, 3), ddof=1)  # unbiased, as PyTorch
    np.testing.assert_allclose(rm.numpy(), exp_m, rtol=1e-12)
    np.testing.assert_allclose(rv.numpy(), exp_v, rtol=1e-12)
    assert rm._version == 2
    w, b = RNG.standard_normal(3), RNG.standard_normal(3)
    check_op(lambda x, w, b: F.batch_norm(x, rm, rv, w, b, eps=1e-3),
             lambda x, w, b: (x - exp_m[:, None, None]) / np.sqrt(exp_v[:, None, None] + 1e-3)
             * w[:, None, None] + b[:, None, None], (2, 3, 2, 2), w, b)
    before = rm.numpy().copy()
    F.batch_norm(tensor(x1), rm, rv)  # evaluation leaves the stats alone
    np.testing.assert_array_equal(rm.numpy(), before)


def test_batch_norm_double_backward_and_errors():
    x = tensor(RNG.standard_normal((3, 2, 2)), True)
    w, b = tensor(RNG.standard_normal(2), True), tensor(RNG.standard_normal(2), True)
    assert autograd.gradgradcheck(lambda x, w, b: F.batch_norm(x, None, None, w, b, True),
                                  (x, w, b))
    with pytest.raises(ValueError, match="more than 1 value per channel"):
        F.batch_norm(autograd.randn(1, 3), autograd.zeros(3), autograd.ones(3), training=True)
    with pytest.raises(RuntimeError, match="evaluation mode"):
        F.batch_norm(autograd.randn(2, 3), None, None)
    with pytest.raises(RuntimeError, match="3 elements not 4"):
        F.batch_norm(autograd.randn(2, 3), autograd.zeros(4), autograd.ones(4), training=True)
    x64 = autograd.randn(2, 3, dtype=autograd.float64)
    for training in (True, False):  # PyTorch refuses to mix float32 and float64
        with pytest.raises(RuntimeError, match="mixed dtype"):
            F.batch_norm(x64, autograd.zeros(3), autograd.ones(3), training=training)
        with pytest.raises(RuntimeError, match="mixed dtype"):
            F.batch_norm(x64, x64[0], x64[0], autograd.ones(3), training=training)


# ---------------------------------------------------------------------------------------------
# pad, one_hot, embedding
# ---------------------------------------------------------------------------------------------

NP_PAD_MODE = {"reflect": "reflect", "replicate": "edge", "circular": "wrap"}


@pytest.mark.parametrize("mode", ["constant", "reflect", "replicate", "circular"])
def test_pad(mode):
    pads = (2, 1, 0, 2)   # last dim (2, 1), the one before (0, 2)
    widths = ((0, 0), (0, 0), (0, 2), (2, 1))
    if mode == "constant":
        ref = lambda x: np.pad(x, widths, constant_values=1.5)  # noqa: E731
        check_op(lambda x: F.pad(x, pads, value=1.5), ref, (1, 2, 3, 4))
        check_op(lambda x: F.pad(x, (-1, 2)), lambda x: np.pad(x[:, 1:], ((0, 0), (0, 2))),
                 (3, 4))
    else:
        ref = lambda x: np.pad(x, widths, mode=NP_PAD_MODE[mode])  # noqa: E731
        check_op(lambda x: F.pad(x, pads, mode=mode), ref, (1, 2, 3, 4))


def test_pad_errors():
    x = autograd.randn(1, 2, 3)
    with pytest.raises(NotImplementedError):
        F.pad(x, (1, 1), mode="mirror")
    with pytest.raises(RuntimeError, match="Padding size"):
        F.pad(x, (3, 3), mode="reflect")
    with pytest.raises(RuntimeError, match="wrapping"):
        F.pad(x, (4, 0), mode="circular")
    with pytest.raises(RuntimeError):
        F.pad(x, (1, 1, 1))
    with pytest.raises(NotImplementedError):
        F.pad(autograd.randn(3), (1, 1), mode="reflect")


def test_one_hot():
    t = np.array([[0, 3], [1, 1]])
    out = F.one_hot(tensor(t))
    assert out.dtype == autograd.int64 and out.shape == (2, 2, 4)
    np.testing.assert_array_equal(out.numpy(), np.eye(4, dtype=np.int64)[t])
    assert F.one_hot(tensor(t), 6).shape == (2, 2, 6)
    assert F.one_hot(tensor(np.zeros(0, dtype=np.int64)), 3).shape == (0, 3)
    for bad, num, match in ((t.astype(np.float64), -1, "LongTensor"), (-t - 1, -1, "negative"),
                            (t, 3, "smaller"), (np.zeros(0, dtype=np.int64), -1, "empty")):
        with pytest.raises(RuntimeError, match=match):
            F.one_hot(tensor(bad), num)


def test_embedding():
    idx = np.array([[0, 2, 2], [3, 0, 1]])
    check_op(lambda w: F.embedding(tensor(idx), w), lambda w: w[idx], (4, 3))
    w = tensor(RNG.standard_normal((4, 3)), True)
    F.embedding(tensor(idx.astype(np.int32)), w, padding_idx=2).sum().backward()
    np.testing.assert_array_equal(w.grad.numpy()[:, 0], [2, 1, 0, 1])  # repeats add up
    w.grad = None
    F.embedding(tensor(idx), w, scale_grad_by_freq=True).sum().backward()
    np.testing.assert_array_equal(w.grad.numpy()[:, 0], [1, 1, 1, 1])
    assert autograd.gradgradcheck(lambda w: F.embedding(tensor(idx), w) ** 2, (w,))


def test_embedding_max_norm_and_errors():
    weight = tensor(RNG.standard_normal((5, 3)) * 4)
    before = weight.numpy().copy()
    out = F.embedding(tensor(np.array([1, 3])), weight, max_norm=1.0)
    norms = np.linalg.norm(weight.numpy(), axis=1)
    assert (norms[[1, 3]] <= 1.0 + 1e-6).all()
    np.testing.assert_array_equal(weight.numpy()[[0, 2, 4]], before[[0, 2, 4]])
    np.testing.assert_allclose(out.numpy(), weight.numpy()[[1, 3]])
    with pytest.raises(IndexError, match="index out of range"):
        F.embedding(tensor(np.array([5])), weight)
    with pytest.raises(IndexError):
        F.embedding(tensor(np.array([-1])), weight)
    with pytest.raises(RuntimeError, match="Long, Int"):
        F.embedding(tensor(np.array([1.0])), weight)
    with pytest.raises(RuntimeError, match="2-D"):
        F.embedding(tensor(np.array([1])), tensor(np.ones(3)))


# ---------------------------------------------------------------------------------------------
# PyTorch, when installed
# ---------------------------------------------------------------------------------------------

TORCH_CASES = [
    ("conv2d", lambda F_, x, w: F_.conv2d(x, w, stride=2, padding=1, dilation=1),
     ((2, 3, 7, 6), (4, 3, 3, 3))),
    ("conv2d_same_groups", lambda F_, x, w: F_.conv2d(x, w, padding="same", groups=3),
     ((1, 3, 5, 6), (6, 1, 2, 4))),
    ("max_pool2d", lambda F_, x: F_.max_pool2d(x, 3, 2, 1, ceil_mode=True), ((2, 2, 7, 8),)),
    ("max_pool2d_dilated", lambda F_, x: F_.max_pool2d(x, 2, 1, 1, dilation=2),
     ((1, 2, 6, 5),)),
    ("avg_pool2d", lambda F_, x: F_.avg_pool2d(x, 3, 2, 1, ceil_mode=True,
                                               count_include_pad=False), ((2, 2, 7, 8),)),
    ("cross_entropy", lambda F_, x: F_.cross_entropy(
        x, F_._t(np.array([[0, 2], [1, -100]])), weight=F_._t(np.array([1.0, 0.5, 2.0])),
        label_smoothing=0.3), ((2, 3, 2),)),
    ("batch_norm", lambda F_, x, w, b: F_.batch_norm(x, None, None, w, b, training=True),
     ((3, 4, 2, 2), (4,), (4,))),
    ("gelu", lambda F_, x: F_.gelu(x * 3), ((5, 4),)),
    ("bce_logits", lambda F_, x, t: F_.binary_cross_entropy_with_logits(x * 50, t.sigmoid()),
     ((5, 4), (5, 4))),
]


@pytest.mark.filterwarnings("ignore:Using padding=.same. with even kernel")
@pytest.mark.parametrize("name,fn,shapes", TORCH_CASES, ids=[c[0] for c in TORCH_CASES])
def test_against_torch(name, fn, shapes):
    torch = pytest.importorskip("torch")
    import torch.nn.functional as TF

    class Ours:
        _t = staticmethod(tensor)

        def __getattr__(self, name):
            return getattr(F, name)

    class Theirs:
        _t = staticmethod(torch.from_numpy)

        def __getattr__(self, name):
            return getattr(TF, name)

    values = [RNG.standard_normal(s) for s in shapes]
    ours = [tensor(v, True) for v in values]
    theirs = [torch.from_numpy(v.copy()).requires_grad_(True) for v in values]
    out, ref = fn(Ours(), *ours), fn(Theirs(), *theirs)
    np.testing.assert_allclose(out.detach().numpy(), ref.detach().numpy(), rtol=1e-10,
                               atol=1e-12)
    seed = RNG.standard_normal(ref.shape)
    grads = autograd.grad(out, ours, tensor(seed))
    ref_grads = torch.autograd.grad(ref, theirs, torch.from_numpy(seed))
    for g, r in zip(grads, ref_grads):
        np.testing.assert_allclose(g.numpy(), r.numpy(), rtol=1e-9, atol=1e-12)


def test_noncontiguous_float32_against_torch():
    torch = pytest.importorskip("torch")
    import torch.nn.functional as TF
    x = RNG.standard_normal((3, 8, 6, 5)).astype(np.float32)
    w = RNG.standard_normal((4, 5, 3, 3)).astype(np.float32)
    xt = make_input(x, "transposed", requires_grad=False).permute(0, 3, 2, 1)  # (3, 5, 6, 8)
    out = F.max_pool2d(F.relu(F.conv2d(xt, tensor(w), padding=1)), 2)
    ref = TF.max_pool2d(TF.relu(TF.conv2d(torch.from_numpy(x).permute(0, 3, 2, 1),
                                          torch.from_numpy(w), padding=1)), 2)
    np.testing.assert_allclose(out.numpy(), ref.numpy(), rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_cross_entropy_create_graph_with_ignored_rows(reduction):
    """The recorded gradient (create_graph) of cross_entropy is 0 on ignored rows, also when
    ignore_index is a class index and when every row is ignored ('mean': 0, not NaN), and equals
    the unrecorded gradient."""
    rng = np.random.default_rng(4)
    x0 = rng.standard_normal((3, 4))
    for target, ignore in [([2, 2, 1], 2), ([-100, -100, -100], -100), ([0, 3, -100], -100)]:
        x = autograd.tensor(x0, requires_grad=True)
        t = autograd.tensor(target)
        loss = F.cross_entropy(x, t, ignore_index=ignore, reduction=reduction)
        (g,) = autograd.grad(loss.sum(), x, create_graph=True)
        plain = autograd.tensor(x0, requires_grad=True)
        F.cross_entropy(plain, t, ignore_index=ignore, reduction=reduction).sum().backward()
        np.testing.assert_allclose(g.detach().numpy(), plain.grad.numpy(), atol=1e-12)
        ignored = np.array(target) == ignore
        assert not np.isnan(g.detach().numpy()).any()
        assert (g.detach().numpy()[ignored] == 0).all()
