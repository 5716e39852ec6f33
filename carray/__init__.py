"""carray: a small, fast strided n-d array library (Cython, with an OpenCL path to come).

NumPy's array model and names; dtypes bool, int32, int64, float32 (the default float), float64.
`import carray` never imports NumPy.
"""

from carray._array import (
    Array,
    AxisError,
    DeviceMismatchError,
    add_at,
    array,
    asarray,
    ascontiguousarray,
    broadcast_arrays,
    broadcast_shapes,
    broadcast_to,
    copy,
    expand_dims,
    from_dlpack,
    moveaxis,
    ndim,
    permute_dims,
    reshape,
    shape,
    size,
    squeeze,
    swapaxes,
    transpose,
)
from carray._creation import (
    arange,
    empty,
    empty_like,
    eye,
    full,
    full_like,
    identity,
    linspace,
    ones,
    ones_like,
    zeros,
    zeros_like,
)
from carray._cumulative import cumprod, cumsum
from carray._dtype import (
    DType,
    as_dtype as dtype,
    bool_,
    float32,
    float64,
    int32,
    int64,
    promote_types,
    result_type,
)
from carray._join import (
    array_split,
    atleast_1d,
    atleast_2d,
    atleast_3d,
    column_stack,
    concatenate,
    dsplit,
    dstack,
    flip,
    fliplr,
    flipud,
    hsplit,
    hstack,
    pad,
    split,
    stack,
    vsplit,
    vstack,
)
from carray._matmul import matmul
from carray._sort import argsort, sort
from carray._storage import cache_info, empty_cache, set_cache_limit
from carray._ufunc import (
    abs,
    absolute,
    add,
    all,
    any,
    argmax,
    argmin,
    amax,
    amin,
    bitwise_and,
    bitwise_not,
    bitwise_or,
    bitwise_xor,
    ceil,
    clip,
    cos,
    divide,
    equal,
    exp,
    expm1,
    floor,
    floor_divide,
    greater,
    greater_equal,
    invert,
    isfinite,
    isnan,
    less,
    less_equal,
    log,
    log1p,
    logical_and,
    logical_not,
    logical_or,
    max,
    maximum,
    mean,
    min,
    minimum,
    mod,
    multiply,
    negative,
    not_equal,
    power,
    prod,
    reciprocal,
    relu,
    remainder,
    sigmoid,
    sign,
    sin,
    sqrt,
    square,
    std,
    subtract,
    sum,
    tanh,
    true_divide,
    var,
    where,
)
from carray._strided import get_num_threads, set_num_threads
from carray import random  # carray.random: Generator, default_rng
from carray import nn  # carray.nn: conv2d, max_pool2d, avg_pool2d and gradients

bool = bool_  # noqa: A001  (carray.bool, as numpy.bool)
ndarray = Array

__version__ = "0.1.0"


def __getattr__(name):
    # carray.opencl: the OpenCL runtime device="gpu" uses (its device, context, queue, pool),
    # made on first access; ImportError without pyopencl, RuntimeError without a device.
    if name == "opencl":
        from carray._opencl import runtime
        return runtime()
    raise AttributeError(f"module 'carray' has no attribute {name!r}")
