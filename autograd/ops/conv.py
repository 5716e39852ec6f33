"""Convolutions beyond conv2d with groups=1: sliding blocks (unfold / fold), grouped and 1-d
convolutions, transposed convolutions (torch.nn.functional's conv1d, conv_transpose1d/2d, unfold,
fold; conv2d with groups > 1).

Im2Col and Col2Im are each other's adjoint (as Convolution and Conv2dGradInput are), so every
order of gradient works. A grouped convolution is one Im2Col and one batched matmul of the
per-group weights with the per-group columns; a transposed convolution is carray's conv2d input
gradient (groups == 1) or the matmul's adjoint followed by Col2Im (groups > 1).
"""

import numbers
import operator

import carray
from autograd.ops._composite import Composite
from autograd.ops._util import Builtin, wrap
from autograd.ops.nn import Conv2dGradInput, Convolution
from autograd.ops.shape import Pad

__all__ = ["Col2Im", "Im2Col", "conv1d", "conv2d_groups", "conv_transpose1d",
           "conv_transpose2d", "fold", "unfold"]


def _size(shape):
    return "[" + ", ".join(str(n) for n in shape) + "]"


def ntuple(value, n, name, op):
    """value (an int or a sequence of n ints) as a tuple of n ints; TypeError otherwise."""
    if isinstance(value, (tuple, list)):
        if len(value) == 1 and n > 1:
            value = tuple(value) * n
        if len(value) != n:
            raise RuntimeError(f"{op}(): expected {name} to be a single integer value or a list "
                               f"of {n} values to match the convolution dimensions, but got "
                               f"{name}={list(value)}")
        items = tuple(value)
    else:
        items = (value,) * n
    try:
        if any(isinstance(v, (bool, float)) for v in items):
            raise TypeError
        return tuple(operator.index(v) for v in items)
    except TypeError:
        raise TypeError(f"{op}(): argument '{name}' must be tuple of ints, but found element of "
                        f"type {type(value).__name__}") from None


def _blocks(hw, k, d, p, s):
    """The number of sliding blocks along each spatial dim."""
    return tuple((n + 2 * pp - dd * (kk - 1) - 1) // ss + 1 for n, kk, dd, pp, ss in
                 zip(hw, k, d, p, s))


def _check_block_args(k, d, p, s):
    if min(k) <= 0:
        raise RuntimeError(f"kernel size should be greater than zero, but got kernel_height: "
                           f"{k[0]} kernel_width: {k[1]}")
    if min(d) <= 0:
        raise RuntimeError(f"dilation should be greater than zero, but got dilation_height: "
                           f"{d[0]} dilation_width: {d[1]}")
    if min(p) < 0:
        raise RuntimeError(f"padding should be non-negative, but got pad_height: {p[0]} "
                           f"pad_width: {p[1]}")
    if min(s) <= 0:
        raise RuntimeError(f"stride should be greater than zero, but got stride_height: {s[0]} "
                           f"stride_width: {s[1]}")


def _window(u, d, s, n_out):
    """The slice of a padded dim that kernel offset u sees across the n_out blocks."""
    start = u * d
    return slice(start, start + s * (n_out - 1) + 1, s)


def im2col(x, k, d, p, s):
    """The sliding blocks of x (N, C, H, W) as (N, C kH kW, L), L = Ho Wo (one copy per kernel
    offset)."""
    n, c, h, w = x.shape
    ho, wo = _blocks((h, w), k, d, p, s)
    if p != (0, 0):
        x = carray.pad(x, ((0, 0), (0, 0), (p[0], p[0]), (p[1], p[1])))
    cols = carray.empty((n, c, k[0], k[1], ho, wo), dtype=x.dtype, device=x.device)
    for u in range(k[0]):
        rows = _window(u, d[0], s[0], ho)
        for v in range(k[1]):
            cols[:, :, u, v] = x[:, :, rows, _window(v, d[1], s[1], wo)]
    return cols.reshape((n, c * k[0] * k[1], ho * wo))


def col2im(cols, hw, k, d, p, s):
    """The adjoint of im2col: each block of cols (N, C kH kW, L) added into an (N, C, H, W)
    image at the place it was taken from."""
    n, ckk, _ = cols.shape
    c = ckk // (k[0] * k[1])
    ho, wo = _blocks(hw, k, d, p, s)
    cols = cols.reshape((n, c, k[0], k[1], ho, wo))
    hp, wp = hw[0] + 2 * p[0], hw[1] + 2 * p[1]
    out = carray.zeros((n, c, hp, wp), dtype=cols.dtype, device=cols.device)
    for u in range(k[0]):
        rows = _window(u, d[0], s[0], ho)
        for v in range(k[1]):
            view = out[:, :, rows, _window(v, d[1], s[1], wo)]
            carray.add(view, cols[:, :, u, v], out=view)
    if p != (0, 0):
        out = carray.ascontiguousarray(out[:, :, p[0]:p[0] + hw[0], p[1]:p[1] + hw[1]])
    return out


class Im2Col(Builtin):
    """y = the sliding blocks of x (N, C, H, W) as (N, C kH kW, L);  dx = col2im(g)."""

    @staticmethod
    def forward(ctx, x, kernel_size, dilation, padding, stride):
        ctx.hw = x.array.shape[2:]
        ctx.args = (kernel_size, dilation, padding, stride)
        return wrap(im2col(x.array, kernel_size, dilation, padding, stride))

    @staticmethod
    def backward(ctx, g):
        return (Col2Im.apply(g, ctx.hw, *ctx.args),) + (None,) * 4


class Col2Im(Builtin):
    """y = the blocks of x (N, C kH kW, L) summed into an (N, C, H, W) image; dx = im2col(g)."""

    @staticmethod
    def forward(ctx, x, output_size, kernel_size, dilation, padding, stride):
        ctx.args = (kernel_size, dilation, padding, stride)
        return wrap(col2im(x.array, output_size, kernel_size, dilation, padding, stride))

    @staticmethod
    def backward(ctx, g):
        return (Im2Col.apply(g, *ctx.args),) + (None,) * 5


# ---------------------------------------------------------------------------------------------
# unfold / fold (torch.nn.functional)
# ---------------------------------------------------------------------------------------------


def unfold(input, kernel_size, dilation=1, padding=0, stride=1):
    """The sliding local blocks of a (N, C, H, W) or (C, H, W) input as (N, C kH kW, L) or
    (C kH kW, L), L the number of blocks (torch.nn.functional.unfold). RuntimeError for
    non-positive kernel sizes, dilations or strides, negative padding, a kernel larger than the
    padded input, or an input that is not 3-d or 4-d."""
    k, d, p, s = (ntuple(v, 2, name, "unfold") for v, name in
                  ((kernel_size, "kernel_size"), (dilation, "dilation"), (padding, "padding"),
                   (stride, "stride")))
    _check_block_args(k, d, p, s)
    if input.ndim not in (3, 4) or 0 in input.shape[-3:]:
        raise RuntimeError(f"Expected 3D or 4D (batch mode) tensor for input with possibly 0 "
                           f"batch size and non-zero dimensions for input, but got: "
                           f"{_size(input.shape)}")
    hw = input.shape[-2:]
    blocks = _blocks(hw, k, d, p, s)
    if min(blocks) < 1:
        raise RuntimeError(f"Given input with spatial size ({hw[0]}, {hw[1]}), kernel_size={k},"
                           f" dilation={d}, padding={p}, calculated shape of the array of "
                           f"sliding blocks as ({blocks[0]}, {blocks[1]}), but its components "
                           f"must be at least one.")
    if input.ndim == 3:
        return Im2Col.apply(input.unsqueeze(0), k, d, p, s).squeeze(0)
    return Im2Col.apply(input, k, d, p, s)


def fold(input, output_size, kernel_size, dilation=1, padding=0, stride=1):
    """Sums the sliding blocks of a (N, C kH kW, L) or (C kH kW, L) input into an
    (N, C, H, W) or (C, H, W) image of output_size (H, W) (torch.nn.functional.fold), the
    adjoint of unfold. RuntimeError when C kH kW or L do not fit the sizes."""
    hw, k, d, p, s = (ntuple(v, 2, name, "fold") for v, name in
                      ((output_size, "output_size"), (kernel_size, "kernel_size"),
                       (dilation, "dilation"), (padding, "padding"), (stride, "stride")))
    _check_block_args(k, d, p, s)
    if min(hw) <= 0:
        raise RuntimeError(f"output_size should be greater than zero, but got output_height: "
                           f"{hw[0]} output_width: {hw[1]}")
    if input.ndim not in (2, 3) or 0 in input.shape[-2:]:
        raise RuntimeError(f"Expected 2D or 3D (batch mode) tensor for input with possibly 0 "
                           f"batch size and non-zero dimensions for input, but got: "
                           f"{_size(input.shape)}")
    ckk, n_blocks = input.shape[-2:]
    if ckk % (k[0] * k[1]):
        raise RuntimeError(f"Expected size of input's dimension {input.ndim - 2} to be divisible "
                           f"by the product of kernel_size, but got input.size("
                           f"{input.ndim - 2})={ckk} and kernel_size={k}.")
    blocks = _blocks(hw, k, d, p, s)
    if min(blocks) < 1 or blocks[0] * blocks[1] != n_blocks:
        raise RuntimeError(f"Given output_size={hw}, kernel_size={k}, dilation={d}, "
                           f"padding={p}, stride={s}, expected size of input's dimension "
                           f"{input.ndim - 1} to match the calculated number of sliding blocks "
                           f"{blocks[0]} * {blocks[1]} = {blocks[0] * blocks[1]}, but got "
                           f"input.size({input.ndim - 1})={n_blocks}.")
    if input.ndim == 2:
        return Col2Im.apply(input.unsqueeze(0), hw, k, d, p, s).squeeze(0)
    return Col2Im.apply(input, hw, k, d, p, s)


# ---------------------------------------------------------------------------------------------
# grouped and 1-d convolution
# ---------------------------------------------------------------------------------------------


def conv2d_groups(input, weight, bias, stride, padding, dilation, groups):
    """conv2d with groups > 1 (the caller checked the channels): each group's columns times its
    weights, all groups in one batched matmul (one GroupedConv2d application)."""
    return GroupedConv2d.apply(input, weight, bias, stride, padding, dilation, groups)


class GroupedConv2d(Composite):
    """conv2d with groups > 1 as one traced op (autograd.onnx: a Conv node with `group`)."""

    @staticmethod
    def compute(input, weight, bias, stride, padding, dilation, groups):
        return _conv2d_groups(input, weight, bias, stride, padding, dilation, groups)


def _conv2d_groups(input, weight, bias, stride, padding, dilation, groups):
    unbatched = input.ndim == 3
    x = input.unsqueeze(0) if unbatched else input
    k = tuple(weight.shape[2:])
    s = ntuple(stride, 2, "stride", "conv2d")
    d = ntuple(dilation, 2, "dilation", "conv2d")
    if isinstance(padding, str):
        if padding not in ("valid", "same"):
            raise RuntimeError(f"Invalid padding string: '{padding}'")
        p = (0, 0)
        if padding == "same":
            if s != (1, 1):
                raise RuntimeError("padding='same' is not supported for strided convolutions")
            th, tw = (dd * (kk - 1) for dd, kk in zip(d, k))
            x = Pad.apply(x, (tw // 2, tw - tw // 2, th // 2, th - th // 2), 0.0)
    else:
        p = ntuple(padding, 2, "padding", "conv2d")
    _check_block_args(k, d, p, s)
    n, c = x.shape[:2]
    ho, wo = _blocks(x.shape[2:], k, d, p, s)
    if min(ho, wo) < 1:
        hp, wp = (n_ + 2 * pp for n_, pp in zip(x.shape[2:], p))
        eh, ew = (dd * (kk - 1) + 1 for dd, kk in zip(d, k))
        raise RuntimeError(f"Calculated padded input size per channel: ({hp} x {wp}). Kernel "
                           f"size: ({eh} x {ew}). Kernel size can't be greater than actual input "
                           f"size")
    o, kk = weight.shape[0], k[0] * k[1]
    cols = Im2Col.apply(x, k, d, p, s).reshape((n, groups, c // groups * kk, ho * wo))
    wg = weight.reshape((groups, o // groups, c // groups * kk))
    out = wg.matmul(cols).reshape((n, o, ho, wo))
    if bias is not None:
        out = out + bias.reshape((o, 1, 1))
    return out.squeeze(0) if unbatched else out


def _check_groups(op, groups):
    if not isinstance(groups, numbers.Integral) or isinstance(groups, bool):
        raise TypeError(f"{op}(): argument 'groups' must be int, not {type(groups).__name__}")
    if groups < 1:
        raise RuntimeError("non-positive groups is not supported")


def conv1d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """1-d cross-correlation (torch.nn.functional.conv1d): input (N, C, L) or (C, L), weight
    (O, C / groups, k), bias (O,); conv2d over a unit height. RuntimeError for inputs that are
    not 2-d or 3-d, weights that are not 3-d, and what conv2d refuses."""
    _check_groups("conv1d", groups)
    if input.ndim not in (2, 3):
        raise RuntimeError(f"Expected 2D (unbatched) or 3D (batched) input to conv1d, but got "
                           f"input of size: {_size(input.shape)}")
    if weight.ndim != 3:
        raise RuntimeError(f"Expected 3-dimensional weight for 3-dimensional input "
                           f"{_size(input.shape)}, but got {weight.ndim}-dimensional weight of "
                           f"size {_size(weight.shape)} instead")
    if input.shape[-2] != weight.shape[1] * groups:
        raise RuntimeError(f"Given groups={groups}, weight of size {_size(weight.shape)}, "
                           f"expected input{_size(input.shape)} to have "
                           f"{weight.shape[1] * groups} channels, but got {input.shape[-2]} "
                           f"channels instead")
    s, = ntuple(stride, 1, "stride", "conv1d")
    d, = ntuple(dilation, 1, "dilation", "conv1d")
    p = padding if isinstance(padding, str) else (0, ntuple(padding, 1, "padding", "conv1d")[0])
    x, w = input.unsqueeze(-2), weight.unsqueeze(-2)
    if groups == 1:
        out = Convolution.apply(x, w, bias, (1, s), p, (1, d))
    else:
        if weight.shape[0] % groups:
            raise RuntimeError(f"Given groups={groups}, expected weight to be divisible by "
                               f"{groups} at dimension 0, but got weight of size "
                               f"{_size(weight.shape)} instead")
        out = conv2d_groups(x, w, bias, (1, s), p, (1, d), groups)
    return out.squeeze(-2)


# ---------------------------------------------------------------------------------------------
# transposed convolution
# ---------------------------------------------------------------------------------------------


def _transposed(x, weight, s, p, op_, d, groups):
    """conv_transpose2d of a 4-d x without bias, arguments checked. Where output_padding >=
    stride (allowed when below dilation) the block count of the output would not give back the
    input's size, so the whole output is built unpadded and cropped/zero-extended instead."""
    n, cin, h, w = x.shape
    k = tuple(weight.shape[2:])
    full = tuple((m - 1) * ss + dd * (kk - 1) + 1 for m, ss, dd, kk in zip((h, w), s, d, k))
    size = tuple(f - 2 * pp + oo for f, pp, oo in zip(full, p, op_))
    direct = all(oo < ss for oo, ss in zip(op_, s))
    hw, pad = (size, p) if direct else (full, (0, 0))
    o = weight.shape[1] * groups
    if groups == 1:
        out = Conv2dGradInput.apply(x, weight, (n, o) + hw, s, pad, d)
    else:
        cg, kk = cin // groups, k[0] * k[1]
        wg = weight.reshape((groups, cg, weight.shape[1] * kk)).transpose(1, 2)
        cols = wg.matmul(x.reshape((n, groups, cg, h * w))).reshape((n, o * kk, h * w))
        out = Col2Im.apply(cols, hw, k, d, pad, s)
    if not direct:
        out = Pad.apply(out, (-p[1], op_[1] - p[1], -p[0], op_[0] - p[0]), 0.0)
    return out


def _conv_transpose(op, nd, input, weight, bias, stride, padding, output_padding, groups,
                    dilation):
    _check_groups(op, groups)
    if input.ndim not in (nd + 1, nd + 2):
        raise RuntimeError(f"Expected {nd + 1}D (unbatched) or {nd + 2}D (batched) input to "
                           f"{op}, but got input of size: {_size(input.shape)}")
    if weight.ndim != nd + 2:
        raise RuntimeError(f"Expected {nd + 2}-dimensional weight for {input.ndim}-dimensional "
                           f"input {_size(input.shape)}, but got {weight.ndim}-dimensional "
                           f"weight of size {_size(weight.shape)} instead")
    if weight.shape[0] % groups:
        raise RuntimeError(f"Given groups={groups}, expected weight to be divisible by {groups} "
                           f"at dimension 0, but got weight of size [{_size(weight.shape)}] "
                           f"instead")
    if input.shape[-nd - 1] != weight.shape[0]:
        raise RuntimeError(f"Given transposed=1, weight of size {_size(weight.shape)}, expected "
                           f"input{_size(input.shape)} to have {weight.shape[0]} channels, but "
                           f"got {input.shape[-nd - 1]} channels instead")
    s, p, o, d = (ntuple(v, nd, name, op) for v, name in
                  ((stride, "stride"), (padding, "padding"), (output_padding, "output_padding"),
                   (dilation, "dilation")))
    if min(s) <= 0:
        raise RuntimeError(f"non-positive stride is not supported, got stride={list(s)}")
    if min(d) <= 0:
        raise RuntimeError(f"dilation should be greater than zero, got dilation={list(d)}")
    if min(p) < 0:
        raise RuntimeError("negative padding is not supported")
    if min(o) < 0:
        raise RuntimeError("negative output_padding is not supported")
    if any(oo >= max(ss, dd) for oo, ss, dd in zip(o, s, d)):
        raise RuntimeError(f"output padding must be smaller than either stride or dilation, but "
                           f"got output_padding={list(o)} stride={list(s)} dilation={list(d)}")
    k = weight.shape[2:]
    sizes = tuple((m - 1) * ss - 2 * pp + dd * (kk - 1) + oo + 1 for m, ss, pp, dd, kk, oo in
                  zip(input.shape[-nd:], s, p, d, k, o))
    if min(sizes) < 1:
        raise RuntimeError(f"Given input size per channel: {list(input.shape[-nd:])}. "
                           f"Calculated output size per channel: {list(sizes)}. Output size is "
                           f"too small")
    if bias is not None and tuple(bias.shape) != (weight.shape[1] * groups,):
        raise RuntimeError(f"Given transposed=1, weight of size {_size(weight.shape)}, expected "
                           f"bias to be 1-dimensional with {weight.shape[1] * groups} elements, "
                           f"but got bias of size {_size(bias.shape)} instead")
    x = input.unsqueeze(0) if input.ndim == nd + 1 else input
    out = ConvTranspose.apply(x, weight, bias, s, p, o, d, groups)
    return out.squeeze(0) if input.ndim == nd + 1 else out


class ConvTranspose(Composite):
    """The transposed convolution of a batched (N, C_in, *) x, arguments checked and as tuples
    of the spatial rank (1 or 2), as one traced op (autograd.onnx: a ConvTranspose node)."""

    @staticmethod
    def compute(x, weight, bias, s, p, o, d, groups):
        nd = weight.ndim - 2
        w = weight
        if nd == 1:
            x, w = x.unsqueeze(-2), w.unsqueeze(-2)
            s, p, o, d = (1,) + s, (0,) + p, (0,) + o, (1,) + d
        out = _transposed(x, w, s, p, o, d, groups)
        if nd == 1:
            out = out.squeeze(-2)
        if bias is not None:
            out = out + bias.reshape((-1,) + (1,) * nd)
        return out


def conv_transpose2d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1,
                     dilation=1):
    """2-d transposed convolution (torch.nn.functional.conv_transpose2d), the adjoint of conv2d
    in its input: input (N, C_in, H, W) or unbatched, weight (C_in, C_out / groups, kH, kW),
    output H_out = (H - 1) sH - 2 pH + dH (kH - 1) + output_padding + 1 (likewise W).
    RuntimeError for channels, groups, sizes or output_padding (must be below stride or
    dilation) that do not fit."""
    return _conv_transpose("conv_transpose2d", 2, input, weight, bias, stride, padding,
                           output_padding, groups, dilation)


def conv_transpose1d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1,
                     dilation=1):
    """1-d transposed convolution (torch.nn.functional.conv_transpose1d): input (N, C_in, L) or
    (C_in, L), weight (C_in, C_out / groups, k). Errors as conv_transpose2d."""
    return _conv_transpose("conv_transpose1d", 1, input, weight, bias, stride, padding,
                           output_padding, groups, dilation)
