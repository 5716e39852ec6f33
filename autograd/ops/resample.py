"""Resampling (torch.nn.functional's interpolate, pixel_shuffle, pixel_unshuffle).

interpolate's 'nearest' and 'nearest-exact' modes gather the source pixels (one index op; its
backward adds the gradient back with carray.add_at); 'linear' and 'bilinear' multiply by small
interpolation matrices, one per spatial dim (out = A_h x A_w^T), so forward and backward are
matmuls. Source positions are computed as PyTorch's kernels compute them, in float32 for float32
inputs, so the same pixels and weights come out.
"""

import math
import numbers
import struct

import carray
from autograd.ops._util import wrap
from autograd.ops.shape import Index

__all__ = ["interpolate", "pixel_shuffle", "pixel_unshuffle"]

_MODES = "nearest | linear | bilinear | bicubic | trilinear | area | nearest-exact"


def _f32(v):
    """v rounded to float32 (a float32 op's result: the exact result is a double here)."""
    return struct.unpack("f", struct.pack("f", v))[0]


def _keep(v):
    return v


def _scale(n_in, n_out, align_corners, scale, r):
    """PyTorch's area_pixel_compute_scale: source step per output pixel."""
    if align_corners:
        return r(r(n_in - 1) / (n_out - 1)) if n_out > 1 else 0.0
    if scale is not None and scale > 0:
        return r(1.0 / scale)
    return r(r(n_in) / n_out)


def _nearest_index(n_in, n_out, scale, exact):
    """Source index of each output pixel: floor(i s) ('nearest', PyTorch's float32 formula), or
    floor((i + 0.5) s) ('nearest-exact'), clamped to n_in - 1."""
    if n_out == n_in and not exact:
        return list(range(n_out))
    s = _scale(n_in, n_out, False, scale, _f32)
    if exact:
        return [min(math.floor(_f32((i + 0.5) * s)), n_in - 1) for i in range(n_out)]
    return [min(math.floor(_f32(i * s)), n_in - 1) for i in range(n_out)]


def _linear_matrix(n_in, n_out, align_corners, scale, like):
    """(n_out, n_in) matrix of linear interpolation: row i has weights 1 - l and l at source
    pixels i0 and i0 + 1 (PyTorch's compute_source_index_and_lambda, in like's precision)."""
    r = _f32 if like.dtype == carray.float32 else _keep
    rows = [[0.0] * n_in for _ in range(n_out)]
    s = _scale(n_in, n_out, align_corners, scale, r)
    for i in range(n_out):
        if n_in == n_out:
            rows[i][i] = 1.0
            continue
        src = r(s * i) if align_corners else max(r(r(s * r(i + 0.5)) - 0.5), 0.0)
        i0 = int(src)
        i1 = i0 + 1 if i0 < n_in - 1 else i0
        lam1 = min(max(r(src - i0), 0.0), 1.0)
        rows[i][i0] += r(1.0 - lam1)
        rows[i][i1] += lam1
    arr = carray.asarray(rows, dtype=like.dtype).reshape((n_out, n_in))
    return wrap(arr.to(like.device) if like.device != "cpu" else arr)


def _sizes_and_scales(input, size, scale_factor, recompute_scale_factor):
    """(output sizes, scales passed to the kernels or Nones), as torch.nn.functional.interpolate
    works them out; ValueError / TypeError as it raises."""
    dim = input.ndim - 2
    spatial = list(input.shape[2:])
    if size is not None and scale_factor is not None:
        raise ValueError("only one of size or scale_factor should be defined")
    if size is not None:
        if isinstance(size, (list, tuple)):
            if len(size) != dim:
                raise ValueError(f"Input and output must have the same number of spatial "
                                 f"dimensions, but got input with spatial dimensions of "
                                 f"{spatial} and output size of {size}. Please provide input "
                                 f"tensor in (N, C, d1, d2, ...,dK) format and output size in "
                                 f"(o1, o2, ...,oK) format.")
            sizes = list(size)
        else:
            sizes = [size] * dim
        if not all(isinstance(v, numbers.Integral) and not isinstance(v, bool) for v in sizes):
            raise TypeError(f"expected size to be one of int or Tuple[int] or Tuple[int, int] or "
                            f"Tuple[int, int, int], but got size with types "
                            f"{[type(v) for v in sizes]}")
        if recompute_scale_factor:
            raise ValueError("recompute_scale_factor is not meaningful with an explicit size.")
        return [int(v) for v in sizes], [None] * dim
    if scale_factor is None:
        raise ValueError("either size or scale_factor should be defined")
    if isinstance(scale_factor, (list, tuple)):
        if len(scale_factor) != dim:
            raise ValueError(f"Input and scale_factor must have the same number of spatial "
                             f"dimensions, but got input with spatial dimensions of {spatial} "
                             f"and scale_factor of shape {scale_factor}. Please provide input "
                             f"tensor in (N, C, d1, d2, ...,dK) format and scale_factor in "
                             f"(s1, s2, ...,sK) format.")
        scales = [float(v) for v in scale_factor]
    else:
        scales = [float(scale_factor)] * dim
    sizes = [math.floor(float(n) * s) for n, s in zip(spatial, scales)]
    return sizes, [None] * dim if recompute_scale_factor else scales


def interpolate(input, size=None, scale_factor=None, mode="nearest", align_corners=None,
                recompute_scale_factor=None, antialias=False):
    """Resizes a 3-d (N, C, L) or 4-d (N, C, H, W) input to size, or by scale_factor
    (torch.nn.functional.interpolate), with mode 'nearest', 'nearest-exact', 'linear' (3-d) or
    'bilinear' (4-d); align_corners for the linear modes. ValueError for both or neither of
    size and scale_factor, align_corners with a nearest mode, or sizes of the wrong length;
    NotImplementedError for other modes and dims, as PyTorch."""
    if mode in ("nearest", "area", "nearest-exact"):
        if align_corners is not None:
            raise ValueError("align_corners option can only be set with the interpolating "
                             "modes: linear | bilinear | bicubic | trilinear")
    elif align_corners is None:
        align_corners = False
    if antialias and not (mode in ("bilinear", "bicubic") and input.ndim == 4):
        raise ValueError("Anti-alias option is restricted to bilinear and bicubic modes and "
                         "requires a 4-D tensor as input")
    if input.ndim not in (3, 4) or mode not in ("nearest", "nearest-exact", "linear",
                                                "bilinear"):
        if input.ndim == 3 and mode in ("bilinear", "bicubic", "trilinear"):
            raise NotImplementedError(f"Got 3D input, but {mode} mode needs "
                                      f"{5 if mode == 'trilinear' else 4}D input")
        if input.ndim == 4 and mode in ("linear", "trilinear"):
            raise NotImplementedError(f"Got 4D input, but {mode} mode needs "
                                      f"{3 if mode == 'linear' else 5}D input")
        raise NotImplementedError(f"Input Error: Only 3D and 4D input Tensors supported (got "
                                  f"{input.ndim}D) for the modes: nearest | linear | bilinear | "
                                  f"nearest-exact (got {mode})")
    if input.ndim == 3 and mode == "bilinear":
        raise NotImplementedError("Got 3D input, but bilinear mode needs 4D input")
    if input.ndim == 4 and mode == "linear":
        raise NotImplementedError("Got 4D input, but linear mode needs 3D input")
    if antialias:
        raise NotImplementedError("interpolate(): antialias=True is not supported by autograd")
    sizes, scales = _sizes_and_scales(input, size, scale_factor, recompute_scale_factor)
    spatial = input.shape[2:]
    if min(sizes) <= 0 or min(spatial) <= 0:
        raise RuntimeError(f"Input and output sizes should be greater than 0, but got input "
                           f"({', '.join(map(str, spatial))}) and output "
                           f"({', '.join(map(str, sizes))})")
    if mode in ("nearest", "nearest-exact"):
        idx = [carray.asarray(_nearest_index(n, m, s, mode == "nearest-exact"),
                              dtype=carray.int64, device=input.device)
               for n, m, s in zip(spatial, sizes, scales)]
        if len(idx) == 2:
            idx[0] = idx[0].reshape((-1, 1))
        return Index.apply(input, (slice(None), slice(None)) + tuple(idx))
    out = input
    a = _linear_matrix(spatial[-1], sizes[-1], align_corners, scales[-1], input.array)
    out = out.matmul(a.t())
    if len(sizes) == 2:
        out = _linear_matrix(spatial[0], sizes[0], align_corners, scales[0],
                             input.array).matmul(out)
    return out


# ---------------------------------------------------------------------------------------------
# pixel shuffle
# ---------------------------------------------------------------------------------------------


def _factor(op, name, value):
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{op}(): argument '{name}' must be int, not {type(value).__name__}")
    if value <= 0:
        raise RuntimeError(f"{op} expects a positive {name}, but got {value}")
    return int(value)


def pixel_shuffle(input, upscale_factor):
    """(*, C r^2, H, W) -> (*, C, H r, W r) (torch.nn.functional.pixel_shuffle):
    out[..., c, h r + i, w r + j] = in[..., c r^2 + i r + j, h, w]. RuntimeError for fewer than
    3 dims or channels not divisible by r^2."""
    r = _factor("pixel_shuffle", "upscale_factor", upscale_factor)
    if input.ndim < 3:
        raise RuntimeError(f"pixel_shuffle expects input to have at least 3 dimensions, but got "
                           f"input with {input.ndim} dimension(s)")
    *lead, c, h, w = input.shape
    if c % (r * r):
        raise RuntimeError(f"pixel_shuffle expects its input's 'channel' dimension to be "
                           f"divisible by the square of upscale_factor, but input.size(-3)={c} "
                           f"is not divisible by {r * r}")
    lead = tuple(lead)
    k = len(lead)
    x = input.reshape(lead + (c // (r * r), r, r, h, w))
    x = x.permute(tuple(range(k)) + (k, k + 3, k + 1, k + 4, k + 2))
    return x.reshape(lead + (c // (r * r), h * r, w * r))


def pixel_unshuffle(input, downscale_factor):
    """(*, C, H r, W r) -> (*, C r^2, H, W), the inverse of pixel_shuffle
    (torch.nn.functional.pixel_unshuffle). RuntimeError for fewer than 3 dims or a height or
    width not divisible by r."""
    r = _factor("pixel_unshuffle", "downscale_factor", downscale_factor)
    if input.ndim < 3:
        raise RuntimeError(f"pixel_unshuffle expects input to have at least 3 dimensions, but "
                           f"got input with {input.ndim} dimension(s)")
    *lead, c, h, w = input.shape
    for name, n, d in (("height", h, -2), ("width", w, -1)):
        if n % r:
            raise RuntimeError(f"pixel_unshuffle expects {name} to be divisible by "
                               f"downscale_factor, but input.size({d})={n} is not divisible by "
                               f"{r}")
    lead = tuple(lead)
    k = len(lead)
    x = input.reshape(lead + (c, h // r, r, w // r, r))
    x = x.permute(tuple(range(k)) + (k, k + 2, k + 4, k + 1, k + 3))
    return x.reshape(lead + (c * r * r, h // r, w // r))
