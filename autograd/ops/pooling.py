"""Pooling beyond max_pool2d / avg_pool2d (torch.nn.functional's max_pool1d, avg_pool1d,
adaptive_avg_pool1d/2d, adaptive_max_pool1d/2d).

1-d pooling is 2-d pooling over a unit height. Adaptive average pooling is avg_pool2d when the
windows are equal (the input size a multiple of the output size), else two small matmuls with
averaging matrices (a window mean is separable: rows, then columns). Adaptive max pooling is one
Function: a gather of every window (padded to the largest by repeating its last element, which
never changes the max or the first argmax), an argmax, and max_pool2d's gradient.
"""

import carray
from autograd.ops._util import Builtin, wrap
from autograd.ops.nn import AvgPool2D, MaxPool2dGrad, MaxPool2DWithIndices

__all__ = ["AdaptiveMaxPool2D", "adaptive_avg_pool1d", "adaptive_avg_pool2d",
           "adaptive_max_pool1d", "adaptive_max_pool2d", "avg_pool1d", "max_pool1d"]


def _size(shape):
    return "[" + ", ".join(str(n) for n in shape) + "]"


def _single(value, name, op):
    """An int or a one-int sequence, as an int."""
    if isinstance(value, (tuple, list)):
        if len(value) != 1:
            raise RuntimeError(f"{op}(): {name} must be a single int, or a tuple of one int, "
                               f"got {list(value)}")
        value = value[0]
    if isinstance(value, (bool, float)) or not hasattr(value, "__index__"):
        raise TypeError(f"{op}(): argument '{name}' must be tuple of ints, not "
                        f"{type(value).__name__}")
    return value.__index__()


# ---------------------------------------------------------------------------------------------
# 1-d pooling: 2-d pooling over a unit height
# ---------------------------------------------------------------------------------------------


def _check_1d(op, input):
    if input.ndim not in (2, 3):
        raise RuntimeError(f"{op}: Expected 2D or 3D (batch mode) tensor with optional 0 dim "
                           f"batch size for input, but got: {_size(input.shape)}")


def max_pool1d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
               return_indices=False):
    """1-d max pooling over (N, C, L) or (C, L) (torch.nn.functional.max_pool1d); stride
    defaults to kernel_size; with return_indices also the int64 argmax positions along L.
    RuntimeError for sizes that do not fit."""
    _check_1d("max_pool1d()", input)
    k = _single(kernel_size, "kernel_size", "max_pool1d")
    s = k if stride is None or stride == () else _single(stride, "stride", "max_pool1d")
    p = _single(padding, "padding", "max_pool1d")
    d = _single(dilation, "dilation", "max_pool1d")
    res = MaxPool2DWithIndices.apply(input.unsqueeze(-2), (1, k), (1, s), (0, p), (1, d),
                                     bool(ceil_mode), bool(return_indices))
    if return_indices:
        return res[0].squeeze(-2), res[1].squeeze(-2)
    return res.squeeze(-2)


def avg_pool1d(input, kernel_size, stride=None, padding=0, ceil_mode=False,
               count_include_pad=True):
    """1-d average pooling over (N, C, L) or (C, L) (torch.nn.functional.avg_pool1d); padding
    counts in the mean unless count_include_pad=False. RuntimeError for sizes that do not fit."""
    _check_1d("avg_pool1d()", input)
    k = _single(kernel_size, "kernel_size", "avg_pool1d")
    s = k if stride is None or stride == () else _single(stride, "stride", "avg_pool1d")
    p = _single(padding, "padding", "avg_pool1d")
    return AvgPool2D.apply(input.unsqueeze(-2), (1, k), (1, s), (0, p), bool(ceil_mode),
                           bool(count_include_pad), None).squeeze(-2)


# ---------------------------------------------------------------------------------------------
# adaptive pooling
# ---------------------------------------------------------------------------------------------


def _windows(n, m):
    """The m adaptive windows over n positions: [floor(i n / m), ceil((i + 1) n / m))."""
    return [(i * n // m, -(-(i + 1) * n // m)) for i in range(m)]


def _output_size(op, input, output_size, nd):
    """output_size (an int, or nd ints or Nones meaning the input's size) as a tuple, after
    PyTorch's checks of the input's dims."""
    if input.ndim not in (nd + 1, nd + 2):
        raise RuntimeError(f"{op}(): Expected {nd + 1}D or {nd + 2}D tensor, but got "
                           f"{_size(input.shape)}")
    for i in range(1, input.ndim):
        if input.shape[i] == 0:
            raise RuntimeError(f"{op}(): Expected input to have non-zero size for non-batch "
                               f"dimensions, but input has sizes {_size(input.shape)} with "
                               f"dimension {i} being empty")
    if isinstance(output_size, (tuple, list)):
        if len(output_size) != nd:
            raise RuntimeError(f"{op}(): internal error: output_size.size() must be {nd}")
        sizes = tuple(input.shape[input.ndim - nd + i] if v is None else v
                      for i, v in enumerate(output_size))
    else:
        sizes = (output_size,) * nd
    for v in sizes:
        if isinstance(v, (bool, float)) or not hasattr(v, "__index__"):
            raise TypeError(f"{op}(): argument 'output_size' must be tuple of ints, not "
                            f"{type(v).__name__}")
        if v < 0:
            raise RuntimeError(f"{op}(): elements of output_size must be greater than or equal "
                               f"to 0 but received {list(sizes)}")
    return tuple(v.__index__() for v in sizes)


def _averaging_matrix(n, m, like):
    """(m, n): row i holds 1 / |window i| over adaptive window i."""
    rows = []
    for a, b in _windows(n, m):
        rows.append([0.0] * a + [1.0 / (b - a)] * (b - a) + [0.0] * (n - b))
    arr = carray.asarray(rows, dtype=like.dtype).reshape((m, n))
    return wrap(arr.to(like.device) if like.device != "cpu" else arr)


def adaptive_avg_pool2d(input, output_size):
    """Adaptive 2-d average pooling over (N, C, H, W) or (C, H, W) to output_size (Ho, Wo)
    (torch.nn.functional.adaptive_avg_pool2d): out[i, j] is the mean of rows
    [floor(i H / Ho), ceil((i + 1) H / Ho)) and the like columns. RuntimeError for inputs that
    are not 3-d or 4-d or have empty non-batch dims."""
    ho, wo = _output_size("adaptive_avg_pool2d", input, output_size, 2)
    h, w = input.shape[-2:]
    if ho and wo and h % ho == 0 and w % wo == 0:
        k = (h // ho, w // wo)
        return AvgPool2D.apply(input, k, k, 0, False, True, None)
    out = input
    if wo != w:
        out = out.matmul(_averaging_matrix(w, wo, input.array).t())
    if ho != h:
        out = _averaging_matrix(h, ho, input.array).matmul(out)
    return out


def adaptive_avg_pool1d(input, output_size):
    """Adaptive 1-d average pooling over (N, C, L) or (C, L) (torch.nn.functional's)."""
    lo, = _output_size("adaptive_avg_pool1d", input, _one(output_size), 1)
    return adaptive_avg_pool2d(input.unsqueeze(-2), (1, lo)).squeeze(-2)


def _one(output_size):
    return output_size if isinstance(output_size, (tuple, list)) else (output_size,)


def _candidates(n, m):
    """(m x K) positions: window i's positions, padded to K = the widest by its last one."""
    wins = _windows(n, m)
    k = max((b - a for a, b in wins), default=1)
    return [[min(a + t, b - 1) for t in range(k)] for a, b in wins], k


class AdaptiveMaxPool2D(Builtin):
    """y = the max over each adaptive window of x (N, C, H, W), with its flat (H x W) argmax
    position (the first, as PyTorch);  dx = g added at those positions (max_pool2d's
    gradient)."""

    @staticmethod
    def forward(ctx, x, output_size, return_indices):
        xd = x.array
        (h, w), (ho, wo) = xd.shape[2:], output_size
        rows, kh = _candidates(h, ho)
        cols, kw = _candidates(w, wo)
        # flat[i][j] = the K = kh kw flat positions of window (i, j), rows first
        flat = [[[r * w + c for r in rs for c in cs] for cs in cols] for rs in rows]
        table = carray.asarray(flat, dtype=carray.int64).reshape((ho, wo, kh * kw))
        if xd.device != "cpu":
            table = table.to(xd.device)
        picked = xd.reshape(xd.shape[:2] + (h * w,))[:, :, table]
        arg = carray.argmax(picked, axis=-1)
        ii = carray.arange(ho, device=xd.device).reshape((ho, 1))
        jj = carray.arange(wo, device=xd.device).reshape((1, wo))
        idx = table[ii, jj, arg]
        out = carray.max(picked, axis=-1)
        ctx.idx, ctx.shape = idx, xd.shape
        if return_indices:
            indices = wrap(idx)
            ctx.mark_non_differentiable(indices)
            return wrap(out), indices
        return wrap(out)

    @staticmethod
    def backward(ctx, g, _=None):
        return MaxPool2dGrad.apply(g, ctx.idx, ctx.shape), None, None


def adaptive_max_pool2d(input, output_size, return_indices=False):
    """Adaptive 2-d max pooling over (N, C, H, W) or (C, H, W) to output_size
    (torch.nn.functional.adaptive_max_pool2d), windows as adaptive_avg_pool2d's; with
    return_indices also the int64 argmax positions, flat in each (H x W) plane. RuntimeError as
    adaptive_avg_pool2d."""
    size = _output_size("adaptive_max_pool2d", input, output_size, 2)
    x = input.unsqueeze(0) if input.ndim == 3 else input
    res = AdaptiveMaxPool2D.apply(x, size, True)
    if input.ndim == 3:
        res = tuple(r.squeeze(0) for r in res)
    return res if return_indices else res[0]


def adaptive_max_pool1d(input, output_size, return_indices=False):
    """Adaptive 1-d max pooling over (N, C, L) or (C, L) (torch.nn.functional's); the indices
    are positions along L."""
    lo, = _output_size("adaptive_max_pool1d", input, _one(output_size), 1)
    out, idx = adaptive_max_pool2d(input.unsqueeze(-2), (1, lo), True)
    out, idx = out.squeeze(-2), idx.squeeze(-2)
    return (out, idx) if return_indices else out
