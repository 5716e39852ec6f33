"""autograd.ops: every differentiable op, as PyTorch names it.

    torch_functions.py   the torch.* functions (autograd.exp, autograd.cat, ...): arguments,
                         dtype promotion and PyTorch's errors, in front of the Functions below
    tensor_methods.py    Tensor's op methods (x.exp(), x + y, x.add_(y), x[i] = v), set on the
                         class there; autograd/tensor.pyi lists them
    elementwise.py       arithmetic and math; the one-formula derivatives in one table
    reduce.py            sum, mean, var, prod, max/min, logsumexp, softmax, log_softmax
    linalg.py            the matrix product (matmul, mm, bmm, dot)
    scan.py              cumsum, cumprod
    sort.py              sort, argsort, topk
    shape.py             views, indexing, cat, stack, flip, pad, copies
    inplace.py           how in-place ops keep the graph right (CopySlices)
    nn.py                the Functions behind autograd.nn.functional (linear, conv2d, losses)
    conv.py pooling.py   (h6) unfold/fold, grouped, 1-d and transposed convolutions; 1-d and
    resample.py          adaptive pooling; interpolate, pixel_shuffle
    normalization.py     layer_norm's and rms_norm's Functions
    _util.py             the Builtin base, wrapping, the one unbroadcast helper, dim checks

Each Function (forward and backward side by side) is importable from here, as are the torch.*
functions.
"""

from autograd.ops import tensor_methods  # noqa: F401  (gives Tensor its op methods)
from autograd.ops.attention import *  # noqa: F403,E402  (area h4: attention)
from autograd.ops.binary_math import *  # noqa: F403
from autograd.ops.contract import *  # noqa: F403
from autograd.ops.elementwise import *  # noqa: F403
from autograd.ops.indexing import *  # noqa: F403
from autograd.ops.linalg import *  # noqa: F403
from autograd.ops.nn import *  # noqa: F403
from autograd.ops.normalization import *  # noqa: F403  (h3)
from autograd.ops.random_ops import *  # noqa: F403
from autograd.ops.reduce import *  # noqa: F403
from autograd.ops.scan import *  # noqa: F403
from autograd.ops.shape import *  # noqa: F403
from autograd.ops.sort import *  # noqa: F403
from autograd.ops.torch_functions import *  # noqa: F403

# -- out= (h1: PyTorch's surface): these torch.* functions take out=, in place of the above ----
# isort: split
from autograd.ops.out import (  # noqa: E402,F401
    add,
    bmm,
    cat,
    concat,
    concatenate,
    div,
    matmul,
    mm,
    mul,
    stack,
    sub,
)

# isort: split
# recurrent layers' Functions (h5)
from autograd.ops.rnn import *  # noqa: F403,E402

# convolutions, pooling, resampling (h6)
# isort: split
from autograd.ops.conv import *  # noqa: F403,E402
from autograd.ops.pooling import *  # noqa: F403,E402
from autograd.ops.resample import *  # noqa: F403,E402
