"""autograd: PyTorch's autograd API in pure Python on top of carray.

    import autograd
    x = autograd.randn(3, requires_grad=True)
    y = (x * x).sum()
    y.backward()          # x.grad == 2 * x

Tensors wrap carray Arrays (`t.array`); every op is an autograd.Function recorded in a graph
that autograd/engine.py walks backwards. `import autograd` never imports NumPy.
"""

import carray as _carray
from autograd._format import get_printoptions, printoptions, set_printoptions
from autograd.engine import backward, grad
from autograd.factories import (
    Generator,
    arange,
    as_tensor,
    default_generator,
    empty,
    empty_like,
    eye,
    from_numpy,
    full,
    full_like,
    get_default_dtype,
    get_rng_state,
    initial_seed,
    linspace,
    manual_seed,
    ones,
    ones_like,
    rand,
    rand_like,
    randint,
    randint_like,
    randn,
    randn_like,
    randperm,
    seed,
    set_default_dtype,
    set_rng_state,
    tensor,
    zeros,
    zeros_like,
)
from autograd.function import Function, once_differentiable
from autograd.grad_mode import enable_grad, is_grad_enabled, no_grad, set_grad_enabled
from autograd.gradcheck import gradcheck, gradgradcheck
from autograd.ops import (  # the op functions (they are also Tensor methods)
    abs,
    acos,
    acosh,
    add,
    addcdiv,
    addcmul,
    all,
    allclose,
    amax,
    amin,
    any,
    arccos,
    arccosh,
    arcsin,
    arcsinh,
    arctan,
    arctan2,
    arctanh,
    argmax,
    argmin,
    argsort,
    asin,
    asinh,
    atan,
    atan2,
    atanh,
    baddbmm,
    bernoulli,
    bincount,
    bitwise_and,
    bitwise_not,
    bitwise_or,
    bitwise_xor,
    bmm,
    cat,
    cdist,
    ceil,
    chunk,
    clamp,
    clamp_max,
    clamp_min,
    clone,
    concat,
    concatenate,
    cos,
    cosh,
    cumprod,
    cumsum,
    diag,
    diagonal,
    div,
    dot,
    einsum,
    eq,
    equal,
    erf,
    erfinv,
    exp,
    expm1,
    flatten,
    flip,
    floor,
    floor_divide,
    fmod,
    gather,
    ge,
    gt,
    hypot,
    index_add,
    index_select,
    isclose,
    isfinite,
    isinf,
    isnan,
    le,
    lerp,
    log,
    log1p,
    log2,
    log10,
    log_softmax,
    logaddexp,
    logical_and,
    logical_not,
    logical_or,
    logical_xor,
    logsumexp,
    lt,
    masked_fill,
    masked_select,
    matmul,
    max,
    maximum,
    mean,
    median,
    meshgrid,
    min,
    minimum,
    mm,
    mul,
    multinomial,
    nan_to_num,
    narrow,
    ne,
    neg,
    nonzero,
    norm,
    normal,
    outer,
    permute,
    pow,
    prod,
    reciprocal,
    relu,
    remainder,
    repeat_interleave,
    reshape,
    roll,
    round,
    rsqrt,
    scatter,
    scatter_add,
    searchsorted,
    sigmoid,
    sign,
    sin,
    sinh,
    softmax,
    sort,
    split,
    sqrt,
    square,
    squeeze,
    stack,
    std,
    sub,
    sum,
    take_along_dim,
    tanh,
    tensordot,
    topk,
    trace,
    transpose,
    tril,
    tril_indices,
    triu,
    triu_indices,
    trunc,
    unbind,
    unflatten,
    unique,
    unsqueeze,
    var,
    where,
)
from autograd.tensor import Tensor, device

# dtypes, as torch.float32 ...
float32 = float = _carray.float32  # noqa: A001
float64 = double = _carray.float64
int32 = int = _carray.int32  # noqa: A001
int64 = long = _carray.int64
bool = _carray.bool_  # noqa: A001
dtype = _carray.DType
int8 = _carray.int8
int16 = short = _carray.int16
uint8 = _carray.uint8
uint16 = _carray.uint16
uint32 = _carray.uint32
uint64 = _carray.uint64
float16 = half = _carray.float16
bfloat16 = _carray.bfloat16


def is_tensor(obj):
    """True for autograd Tensors."""
    return isinstance(obj, Tensor)


def numel(input):
    return input.numel()


def clip(input, min=None, max=None):  # noqa: F811  (torch.clip's argument names)
    return clamp(input, min, max)


def detach(input):
    return input.detach()


__version__ = _carray.__version__
from autograd import datasets, nn, optim, utils  # noqa: E402,F401  (autograd.datasets, autograd.utils.data)  # noqa: E402,F401  (autograd.nn, autograd.optim as in torch)
from autograd.serialization import load, save  # noqa: E402

# -- PyTorch's surface around the ops (h1): the device module ("cuda" is the OpenCL GPU),
# torch.accelerator, torch.backends flags, inference_mode, Size ------------------------------
# isort: split
import sys as _sys  # noqa: E402

from autograd import accelerator, backends, gpu  # noqa: E402
from autograd._size import Size  # noqa: E402
from autograd.backends import (  # noqa: E402
    get_float32_matmul_precision,
    set_float32_matmul_precision,
)
from autograd.grad_mode import inference_mode, is_inference_mode_enabled  # noqa: E402

cuda = gpu          # the same module, so `import autograd.cuda` works too
_sys.modules[__name__ + ".cuda"] = gpu

# -- h14: autograd.onnx.export (the onnx package itself is imported only when export runs) ----
# isort: split
from autograd import onnx  # noqa: E402

# -- torch.* names for functions that live in nn.functional or are compositions (h12), and the
# torch.linalg / torch.special modules ---------------------------------------------------------
# isort: split
# -- data-parallel training over MPI (h15): torch.distributed (imports mpi4py only when a
# process group starts) ------------------------------------------------------------------------
from autograd import (  # noqa: E402,F401
    distributed,  # noqa: E402,F401
    linalg,
    special,
)
from autograd.nn._torch_forms import (  # noqa: E402,F401
    batch_norm,
    conv1d,
    conv2d,
    conv_transpose1d,
    conv_transpose2d,
    cosine_similarity,
    dropout,
    embedding,
    group_norm,
    instance_norm,
    layer_norm,
    pairwise_distance,
    pixel_shuffle,
    pixel_unshuffle,
)
from autograd.ops.extra_functions import (  # noqa: E402,F401
    cross,
    dist,
    erfc,
    exp2,
    kron,
    logit,
    pdist,
    relu_,
)

# -- profiler (issue 14): autograd.profiler, as torch.autograd.profiler / torch.profiler -------
# isort: split
from autograd import profiler  # noqa: E402,F401

# -- linear algebra (issue 13): torch.det, inverse, logdet, slogdet (also Tensor methods)
from autograd.ops.factorizations import det, inverse, logdet, slogdet  # noqa: E402,F401

# -- mixed precision (issue 13 item 6): torch.autocast, torch.amp, torch.cuda.amp -----------
# isort: split
from autograd import amp  # noqa: E402
from autograd.amp import (  # noqa: E402
    autocast,
    get_autocast_dtype,
    is_autocast_available,
    is_autocast_enabled,
)

_sys.modules[__name__ + ".cuda.amp"] = amp
