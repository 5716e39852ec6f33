"""carray: a small, fast strided n-d array library (Cython, with an OpenCL path to come).

NumPy's array model and names; dtypes bool, int8/16/32/64, uint8/16/32/64, float32 (the default
float), float64.
`import carray` never imports NumPy.
"""

import types

from carray import (
    _api_manipulation,  # the array API's manipulation functions (and EXTENDED, see below)
    linalg,  # carray.linalg: the array API linear algebra extension and numpy.linalg's extras
    nn,  # carray.nn: conv2d, max_pool2d, avg_pool2d and gradients
    random,  # carray.random: Generator, default_rng
)

# the array API standard (2025.12): the inspection API, dtype functions, constants, and the
# functions composed from carray's ops
from carray._api_elementwise import (
    bitwise_invert,
    bitwise_left_shift,
    bitwise_right_shift,
    conj,
    copysign,
    imag,
    isinf,
    log2,
    log10,
    logical_xor,
    nextafter,
    positive,
    pow,
    real,
    round,
    signbit,
    tan,
    trunc,
)
from carray._api_manipulation import (
    concat,
    cumulative_prod,
    cumulative_sum,
    diff,
    meshgrid,
    repeat,
    roll,
    take,
    take_along_axis,
    tile,
    tril,
    triu,
    unstack,
)
from carray._api_search import (
    count_nonzero,
    isin,
    nonzero,
    searchsorted,
    unique_all,
    unique_counts,
    unique_inverse,
    unique_values,
)
from carray._array_api import (
    __array_api_version__,
    __array_namespace_info__,
    astype,
    can_cast,
    e,
    finfo,
    iinfo,
    inf,
    isdtype,
    nan,
    newaxis,
    pi,
)
from carray.core._array import (
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
from carray.core._dtype import (
    DType,
    bool_,
    float32,
    float64,
    int32,
    int64,
    promote_types,
    result_type,
)
from carray.core._dtype import (
    as_dtype as dtype,
)
from carray.core._storage import cache_info, empty_cache, set_cache_limit
from carray.core._strided import get_num_threads, set_num_threads
from carray.ops._creation import (
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
from carray.ops._cumulative import cumprod, cumsum
from carray.ops._join import (
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
from carray.ops._linalg_products import matrix_transpose, tensordot, vecdot
from carray.ops._matmul import matmul
from carray.ops._sort import argsort, sort

# the elementwise functions (made from the op table's rows: add, exp, less, isnan, ...), where,
# clip and the reductions
from carray.ops._ufunc import *  # noqa: F403

bool = bool_  # noqa: A001  (carray.bool, as numpy.bool)
ndarray = Array
# NumPy's names with the array API standard's keywords added (reshape(copy=), sort(descending=),
# std/var(correction=), clip(min=, max=)) replace the plain versions imported above
globals().update({name: getattr(_api_manipulation, name) for name in _api_manipulation.EXTENDED})

# the narrow and unsigned integer dtypes
from carray.core._dtype import (  # noqa: E402
    bfloat16,
    complex64,
    complex128,
    float16,
    int8,
    int16,
    uint8,
    uint16,
    uint32,
    uint64,
)

# isort: split
# complex numbers (carray.real/imag/conj, above, handle them too) and the fft extension
from carray import fft  # noqa: E402
from carray._api_complex import (  # noqa: E402
    angle,
    conjugate,
    iscomplex,
    iscomplexobj,
    isreal,
    isrealobj,
)

# isort: split
# NumPy's product functions: dot, vdot, inner, outer, kron, cross, einsum, trace, diagonal
from carray._api_products import (  # noqa: E402
    cross,
    diagonal,
    dot,
    einsum,
    inner,
    kron,
    outer,
    trace,
    vdot,
)

__version__ = "0.1.0"


def __getattr__(name: str) -> types.ModuleType:
    # carray.opencl: the OpenCL backend, whose repr and attributes (name, queue, context, fp64)
    # are the device's; made on first access, raising ImportError without pyopencl and
    # RuntimeError without a device.
    if name == "opencl":
        import carray.opencl as backend
        backend.runtime()
        return backend
    raise AttributeError(f"module 'carray' has no attribute {name!r}")
