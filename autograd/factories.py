"""Tensor factories with PyTorch's names and defaults (float32 for floats, int64 for ints) and
the global random generator (manual_seed)."""

import operator
import os
import sys

import carray
from autograd._defaults import get_default_dtype, is_floating, set_default_dtype
from autograd.tensor import Tensor, _to_array, device_name
from carray.core._dtype import DTYPE_NAMES
from carray.cpu._random import _restore

__all__ = ["arange", "empty", "empty_like", "eye", "full", "full_like", "linspace",
           "manual_seed", "ones", "ones_like", "rand", "rand_like", "randint", "randn",
           "randn_like", "randint_like", "randperm", "tensor", "zeros", "zeros_like", "Generator",
           "default_generator", "get_rng_state", "set_rng_state", "get_default_dtype",
           "set_default_dtype", "seed", "initial_seed"]


def _finish(arr, requires_grad):
    t = Tensor._wrap(arr)
    if requires_grad:
        t.requires_grad = True
    return t


def _dtype(dtype):
    return carray.dtype(dtype) if dtype is not None else None


def _device(device):
    return device_name(device) if device is not None else "cpu"


def _size(size):
    """zeros(2, 3), zeros((2, 3)) and zeros([2, 3]) all mean the shape (2, 3)."""
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        size = size[0]
    try:
        shape = tuple(operator.index(s) for s in size)
    except TypeError:
        raise TypeError(f"size must be a sequence of ints, got {size!r}") from None
    numel = 1
    for s in shape:
        if s < 0:
            raise RuntimeError(f"Trying to create tensor with negative dimension {s}: "
                               f"{list(shape)}")
        numel *= s or 1
    if numel * 16 > sys.maxsize:   # its bytes overflow (16: the widest dtype), as PyTorch checks
        raise RuntimeError(f"Storage size calculation overflowed with sizes={list(shape)}")
    return shape


def tensor(data, *, dtype=None, device=None, requires_grad=False):
    """A new tensor holding a copy of data (nested lists, numbers, a carray/NumPy array or a
    Tensor). Python floats give float32 (the default dtype), ints int64, bools bool.
    RuntimeError when requires_grad is asked for a non-float dtype."""
    src = data.detach() if isinstance(data, Tensor) else data
    arr = _to_array(src, dtype, _device(device) if device is not None else None)
    if dtype is None and arr.dtype == carray.float32 and get_default_dtype() != carray.float32 \
            and not hasattr(src, "dtype"):
        arr = arr.astype(get_default_dtype())
    if arr is src or isinstance(src, Tensor) and arr is src.array or _shares(arr, src) \
            or not isinstance(src, (list, tuple, int, float, bool, carray.Array, Tensor)):
        # (NumPy arrays and other buffers are read without a copy by asarray)
        arr = arr.copy()
    return _finish(arr, requires_grad)


def _shares(arr, src):
    base = arr.base
    return isinstance(src, carray.Array) and base is not None and (base is src or
                                                                    base is src.base)


def as_tensor(data, dtype=None, device=None):
    """data as a tensor, sharing memory with a carray.Array or Tensor when no conversion is
    needed."""
    if isinstance(data, Tensor):
        return data.to(dtype=dtype, device=device) if dtype or device else data
    return Tensor._wrap(_to_array(data, dtype, _device(device) if device else None))


def from_numpy(array):
    """A tensor sharing memory with a NumPy array. TypeError for anything else, or a dtype
    carray does not hold (PyTorch's errors)."""
    if type(array).__name__ != "ndarray" or not hasattr(array, "__array_interface__"):
        raise TypeError(f"expected np.ndarray (got {type(array).__name__})")
    if array.dtype.name not in DTYPE_NAMES:
        raise TypeError(f"can't convert np.ndarray of type numpy.{array.dtype.name}. The only "
                        f"supported types are: float64, float32, int64, int32, int16, int8, "
                        f"uint64, uint32, uint16, uint8, and bool.")
    return Tensor._wrap(carray.asarray(array))


def _float(dtype):
    return _dtype(dtype) or get_default_dtype()


def zeros(*size, dtype=None, device=None, requires_grad=False):
    """A tensor of zeros (float32 by default)."""
    return _finish(carray.zeros(_size(size), dtype=_float(dtype), device=_device(device)),
                   requires_grad)


def ones(*size, dtype=None, device=None, requires_grad=False):
    """A tensor of ones (float32 by default)."""
    return _finish(carray.ones(_size(size), dtype=_float(dtype), device=_device(device)),
                   requires_grad)


def empty(*size, dtype=None, device=None, requires_grad=False):
    """An uninitialised tensor (float32 by default)."""
    return _finish(carray.empty(_size(size), dtype=_float(dtype), device=_device(device)),
                   requires_grad)


def full(size, fill_value, *, dtype=None, device=None, requires_grad=False):
    """A tensor filled with fill_value; the dtype follows it (bool, int64, or float32)."""
    if dtype is None:
        dtype = carray.bool_ if isinstance(fill_value, bool) else carray.int64 \
            if isinstance(fill_value, int) else get_default_dtype()
    return _finish(carray.full(_size((size,)), fill_value, dtype=_dtype(dtype),
                               device=_device(device)), requires_grad)


def _like(input, dtype):
    return _dtype(dtype) or input.array.dtype


def zeros_like(input, *, dtype=None, device=None, requires_grad=False):
    return _finish(carray.zeros(input.shape, dtype=_like(input, dtype),
                                device=_device(device or input.device)), requires_grad)


def ones_like(input, *, dtype=None, device=None, requires_grad=False):
    return _finish(carray.ones(input.shape, dtype=_like(input, dtype),
                               device=_device(device or input.device)), requires_grad)


def empty_like(input, *, dtype=None, device=None, requires_grad=False):
    return _finish(carray.empty(input.shape, dtype=_like(input, dtype),
                                device=_device(device or input.device)), requires_grad)


def full_like(input, fill_value, *, dtype=None, device=None, requires_grad=False):
    return _finish(carray.full(input.shape, fill_value, dtype=_like(input, dtype),
                               device=_device(device or input.device)), requires_grad)


def arange(start, end=None, step=1, *, dtype=None, device=None, requires_grad=False):
    """Values from start (default 0) to end, exclusive, by step: int64 when all are ints,
    else float32."""
    if end is None:
        start, end = 0, start
    if step == 0:
        raise RuntimeError("step must be nonzero")
    if dtype is None:
        is_int = all(isinstance(v, int) or isinstance(v, Tensor) and v.dtype.kind in "iu"
                     for v in (start, end, step))
        dtype = carray.int64 if is_int else get_default_dtype()
    vals = [v.item() if isinstance(v, Tensor) else v for v in (start, end, step)]
    if _dtype(dtype) == carray.int64:  # int64 truncates the bounds first (as PyTorch)
        vals = [int(v) for v in vals]
        if vals[2] == 0:
            raise ValueError("step must be nonzero")
    if (vals[1] - vals[0]) * vals[2] < 0:
        raise RuntimeError("upper bound and larger bound inconsistent with step sign")
    dev = _device(device)
    if dev != "cpu" and _dtype(dtype).kind in "iu":     # made on the device (no upload)
        return _finish(carray.arange(vals[0], vals[1], vals[2], dtype=_dtype(dtype),
                                     device=dev), requires_grad)
    arr = carray.arange(vals[0], vals[1], vals[2], dtype=carray.float64 if
                        is_floating(_dtype(dtype)) else _dtype(dtype))
    arr = arr.astype(_dtype(dtype)) if arr.dtype != _dtype(dtype) else arr
    if dev != "cpu":
        arr = arr.to(dev)
    return _finish(arr, requires_grad)


def linspace(start, end, steps, *, dtype=None, device=None, requires_grad=False):
    """steps values evenly spaced from start to end inclusive (float32 by default)."""
    if steps < 0:
        raise RuntimeError("number of steps must be non-negative")
    arr = carray.linspace(start, end, steps, dtype=_float(dtype))
    if _device(device) != "cpu":
        arr = arr.to(_device(device))
    return _finish(arr, requires_grad)


def eye(n, m=None, *, dtype=None, device=None, requires_grad=False):
    """The identity matrix (n x m)."""
    if n < 0 or (m is not None and m < 0):
        raise RuntimeError(f"n must be greater or equal to 0, got {n if n < 0 else m}")
    arr = carray.eye(n, m, dtype=_float(dtype))
    if _device(device) != "cpu":
        arr = arr.to(_device(device))
    return _finish(arr, requires_grad)


# ---------------------------------------------------------------------------------------------
# random
# ---------------------------------------------------------------------------------------------

class Generator:
    """A random generator (torch.Generator): Philox counters under carray.random, so the same
    seed gives the same numbers on every device."""

    def __init__(self, device="cpu"):
        self.device = _device(device)
        self._seed = 67280421310721
        self._rng = carray.random.default_rng(self._seed)

    def manual_seed(self, seed):
        """Restart the stream from seed, an int in [-2**63, 2**64) (negative seeds wrap modulo
        2**64, as PyTorch); returns self. RuntimeError for a non-int, ValueError out of range."""
        if isinstance(seed, bool) or not hasattr(seed, "__index__"):
            raise RuntimeError(f"manual_seed expected a long, but got {type(seed).__name__}")
        seed = operator.index(seed)
        if not -2**63 <= seed < 2**64:
            raise ValueError("Overflow when unpacking long long")
        self._seed = seed % 2**64
        self._rng = carray.random.default_rng(self._seed)
        return self

    def get_state(self):
        """The state (seed and counter offset, as int64) for set_state."""
        state = [self._seed - 2**64 if self._seed >= 2**63 else self._seed, self._rng.offset]
        return Tensor._wrap(carray.asarray(state, dtype=carray.int64))

    def set_state(self, new_state):
        """Restore a state from get_state (TypeError for anything else); returns self."""
        if not isinstance(new_state, Tensor) or new_state.dtype != carray.int64 \
                or new_state.shape != (2,):
            raise TypeError("RNG state must be a tensor from Generator.get_state()")
        seed, offset = new_state.tolist()
        self._seed = seed % 2**64
        self._rng = _restore(self._seed, offset)
        return self

    def initial_seed(self):
        return self._seed

    def seed(self):
        return self.manual_seed(int.from_bytes(os.urandom(8), "little"))._seed


default_generator = Generator()


def manual_seed(seed):
    """Seed the global generator (used by rand, randn, randint, randperm, nn.init, dropout);
    seed goes through int() first, as PyTorch's."""
    return default_generator.manual_seed(int(seed))


def get_rng_state():
    """The global generator's state (see Generator.get_state)."""
    return default_generator.get_state()


def set_rng_state(new_state):
    """Restore the global generator's state from get_rng_state()."""
    default_generator.set_state(new_state)


def seed():
    return default_generator.seed()


def initial_seed():
    return default_generator.initial_seed()


def _rng(generator):
    return (generator or default_generator)._rng


def _random_array(kind, shape, dtype, device, a=None, b=None, generator=None):
    """carray draws for the random factories and in-place fills: uniform(a=0, b=1) or
    normal(mean a=0, std b=1)."""
    rng = _rng(generator)
    if kind == "uniform":
        lo = 0.0 if a is None else a
        hi = 1.0 if b is None else b
        return rng.uniform(lo, hi, shape, dtype=dtype, device=device)
    if kind == "normal":
        return rng.normal(0.0 if a is None else a, 1.0 if b is None else b, shape, dtype=dtype,
                          device=device)
    raise ValueError(kind)


def _sizes(args, size):
    """The shape of rand(2, 3), rand((2, 3)) or rand(size=(2, 3))."""
    if size is not None:
        if args:
            raise TypeError("size given both positionally and as a keyword")
        args = (size,)
    return _size(args)


def rand(*args, size=None, generator=None, dtype=None, device=None, requires_grad=False):
    """Uniform samples in [0, 1) (float32 by default). NotImplementedError for a non-float
    dtype, as PyTorch."""
    d = _float(dtype)
    if not is_floating(d):
        raise NotImplementedError(f'"check_uniform_bounds" not implemented for \'{d}\'')
    return _finish(_rng(generator).random(_sizes(args, size), dtype=d, device=_device(device)),
                   requires_grad)


def randn(*args, size=None, generator=None, dtype=None, device=None, requires_grad=False):
    """Standard normal samples (float32 by default). NotImplementedError for a non-float
    dtype, as PyTorch."""
    d = _float(dtype)
    if not is_floating(d):
        raise NotImplementedError(f'"normal_kernel_cpu" not implemented for \'{d}\'')
    return _finish(_rng(generator).normal(0.0, 1.0, _sizes(args, size), dtype=d,
                                          device=_device(device)), requires_grad)


def rand_like(input, *, generator=None, dtype=None, device=None, requires_grad=False):
    return rand(input.shape, generator=generator, dtype=_like(input, dtype),
                device=device or input.device, requires_grad=requires_grad)


def randn_like(input, *, generator=None, dtype=None, device=None, requires_grad=False):
    return randn(input.shape, generator=generator, dtype=_like(input, dtype),
                 device=device or input.device, requires_grad=requires_grad)


def randint_like(input, low=0, high=None, *, generator=None, dtype=None, device=None,
                 requires_grad=False):
    """Integers in [low, high) in input's shape, dtype and device; randint_like(input, high)
    starts at 0."""
    if high is None:
        low, high = 0, low
    return randint(low, high, tuple(input.shape), generator=generator,
                   dtype=_like(input, dtype), device=device or input.device,
                   requires_grad=requires_grad)


def _int_arg(x, name):
    if isinstance(x, float) or not hasattr(x, "__index__"):
        raise TypeError(f"argument '{name}' must be int, not {type(x).__name__}")
    return operator.index(x)


def randint(low=0, high=None, size=None, *, generator=None, dtype=None, device=None,
            requires_grad=False):
    """Integers in [low, high) (int64 by default); randint(high, size) starts at 0. size is a
    tuple (TypeError otherwise); RuntimeError for low >= high or bounds outside the dtype."""
    if size is None:
        low, high, size = 0, low, high
    if high is None or size is None:
        raise TypeError("randint() missing required arguments: 'high' and 'size'")
    if not isinstance(size, (tuple, list)):
        raise TypeError(f"randint(): argument 'size' must be tuple of ints, not "
                        f"{type(size).__name__}")
    low, high = _int_arg(low, "low"), _int_arg(high, "high")
    if low >= high:
        raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got "
                           f"from={low} >= to={high}")
    d = _dtype(dtype) or carray.int64
    try:
        arr = _rng(generator).integers(low, high, _size((size,)), dtype=d if not is_floating(d) else
                                       carray.int64, device=_device(device))
    except ValueError as e:         # bounds outside the dtype
        raise RuntimeError(str(e)) from None
    if arr.dtype != d:  # (a float dtype holds the integers drawn as int64)
        arr = arr.astype(d)
    return _finish(arr, requires_grad)


def randperm(n, *, generator=None, dtype=None, device=None, requires_grad=False):
    """A random permutation of 0..n-1 (int64 by default)."""
    n = _int_arg(n, "n")
    if n < 0:
        raise RuntimeError(f"Trying to create tensor with negative dimension {n}: [{n}]")
    arr = _rng(generator).permutation(n)
    if dtype is not None:
        arr = arr.astype(_dtype(dtype))
    if _device(device) != "cpu":
        arr = arr.to(_device(device))
    return _finish(arr, requires_grad)
