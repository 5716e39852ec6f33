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
    _util.py             the Builtin base, wrapping, the one unbroadcast helper, dim checks

Each Function (forward and backward side by side) is importable from here, as are the torch.*
functions.
"""

from autograd.ops import tensor_methods  # noqa: F401  (gives Tensor its op methods)
from autograd.ops.binary_math import *  # noqa: F403
from autograd.ops.contract import *  # noqa: F403
from autograd.ops.elementwise import *  # noqa: F403
from autograd.ops.indexing import *  # noqa: F403
from autograd.ops.linalg import *  # noqa: F403
from autograd.ops.nn import *  # noqa: F403
from autograd.ops.random_ops import *  # noqa: F403
from autograd.ops.reduce import *  # noqa: F403
from autograd.ops.scan import *  # noqa: F403
from autograd.ops.shape import *  # noqa: F403
from autograd.ops.sort import *  # noqa: F403
from autograd.ops.torch_functions import *  # noqa: F403
