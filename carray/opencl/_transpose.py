"""Copies that transpose: when a copy's input walks the output's rows with stride 1 (a transposed
view, e.g. a.T.copy() or the k-major operand the staged GEMM needs), the elementwise kernel would
read or write with a stride; kernels/transpose.cl moves 32 x 32 tiles through local memory so
both sides are coalesced (about 3.1-3.4 TB/s on an H200 at 4096^2 and 8192^2 float32 against
well under half of that strided)."""

from carray.opencl import _cache
from carray.opencl._launch import LAUNCH_LOCK, submit
from carray.opencl._layout import numbered
from carray.opencl._runtime import runtime
from carray.opencl._types import CL_TYPES

MIN_SIDE = 16       # smaller matrices gain nothing from tiles
MAX_GROUPS = 65535  # work groups along the grid's 2nd and 3rd dims (CUDA's limit, NVIDIA's OpenCL)
# On CPU devices (PoCL) the tiles' barriers cost about what the strided reads do (0.4-1.6x the
# elementwise copy's time from 256^2 to 2048^2 float32): they keep the elementwise copy unless
# this is set (the tests set it to check the kernel there).
ON_CPU_DEVICES = False


def wanted():
    """Whether the runtime's device takes the tiled copies."""
    return ON_CPU_DEVICES or not runtime().is_cpu


def fits(shape, strides):
    """True when a copy of coalesced `shape` with per-operand `strides` (output first, then the
    input) is a batch of transposes this kernel does: the output C-contiguous, the input stepping
    1 along the rows and more than 1 along the columns."""
    if len(shape) not in (2, 3) or len(strides) != 2:
        return False
    ost, ist = strides
    R, C = shape[-2], shape[-1]
    if R < MIN_SIDE or C < MIN_SIDE or ost[-1] != 1 or ost[-2] != C or ist[-2] != 1 \
            or ist[-1] <= 1:
        return False
    if -(-R // 32) > MAX_GROUPS or (len(shape) == 3 and shape[0] > MAX_GROUPS):
        return False
    return len(shape) == 2 or ost[0] == R * C


def transposed(in_buf, num, itemsize, R, C, ioff, isc, nb=1, isb=0):
    """A new pooled buffer holding nb row-major R x C matrices, entry b's element (r, c) copied
    from in_buf's element ioff + b isb + r + c isc (all in elements); the copy is enqueued, not
    waited for. For callers that need the transposes of operands they hold as buffers (the
    staged GEMM), without making Arrays. Raises ValueError when the layout is one the kernel
    cannot take (fits())."""
    shape = (nb, R, C) if nb > 1 else (R, C)
    strides = ((R * C, C, 1), (isb, 1, isc)) if nb > 1 else ((C, 1), (1, isc))
    if not fits(shape, strides):
        raise ValueError(f"transposed: no tiled copy for shape {shape} with strides {strides}")
    out = runtime().alloc(nb * R * C * itemsize)
    run(out, in_buf, num, shape, strides, (0, ioff))
    return out


def run(out_buf, in_buf, num, shape, strides, offs):
    """Enqueue the tiled copy for a layout fits() accepted (buffers, type number, coalesced
    shape, strides and element offsets of the output and the input)."""
    R, C = shape[-2], shape[-1]
    nb = shape[0] if len(shape) == 3 else 1
    osb = strides[0][0] if len(shape) == 3 else 0
    isb = strides[1][0] if len(shape) == 3 else 0
    t = CL_TYPES[num]
    knl = _cache.kernel(("transpose_copy", num), "transpose_copy",
                        lambda: _cache.render("transpose.cl", t=t), "long",
                        t in ("double", "double2"))
    consts = numbered("q", 2, (R, C, offs[0], offs[1], osb, isb, strides[1][-1]))
    with LAUNCH_LOCK:
        submit(runtime().queue, knl, [0, out_buf, 1, in_buf], consts,
               (-(-C // 32) * 32, -(-R // 32) * 8, nb), (32, 8, 1))
