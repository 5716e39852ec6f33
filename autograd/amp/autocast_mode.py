"""autocast: mixed precision as PyTorch spells it (torch.autocast / torch.amp.autocast).

Inside `with autograd.autocast(device_type="cuda"):` the ops whose Function declares
`autocast_policy = "lower"` (matmul, linear, convolution) cast their float32 tensor arguments on
that device to the region's dtype (float16 on the GPU, bfloat16 on the CPU by default); the ops
declaring "float32" (cross_entropy, nll_loss, prod, batch norm, attention, the recurrent cells)
cast 2-byte float arguments up to float32, and those declaring "float32_gpu" (softmax,
log_softmax, layer/rms norm, sum, cumsum, cumprod, logsumexp) do so on the GPU only: PyTorch's
CUDA and CPU lists. Other ops run in their arguments' dtypes (binary ops promote). float64
tensors are never cast, as in PyTorch. The casts are autograd ops, so gradients reach the
float32 parameters in float32. While cache_enabled, the lower-precision copy of a leaf that
requires grad (a weight) is made once per outermost region.

Where this differs from PyTorch: BatchNorm, attention and the recurrent cells run in float32
here (PyTorch runs the first in the input's dtype and the others in float16 on CUDA), so their
outputs are float32.
"""

import functools
import warnings

import carray
from autograd import function as _function
from autograd.tensor import Tensor, device_name

__all__ = ["autocast", "is_autocast_available", "is_autocast_enabled", "get_autocast_dtype",
           "custom_fwd", "custom_bwd"]

# the dtypes a region may compute in, and each device's default (PyTorch's)
_LOWER = (carray.float16, carray.bfloat16)
_DEFAULT_DTYPE = {"gpu": carray.float16, "cpu": carray.bfloat16}

_active = {}         # device ("cpu"/"gpu") -> the dtype of the innermost enabled region
_cache = {}          # id(leaf tensor) -> (leaf, its lower-precision copy), per outermost region
_cache_on = [True]   # whether the innermost region caches weight casts
_depth = [0]         # nesting depth of autocast regions (of any state)


def _device_of_type(device_type):
    """'cpu' or 'gpu' for an autocast device_type ('cuda', 'gpu', 'cpu', ...)."""
    if not isinstance(device_type, str):
        raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
    try:
        return device_name(device_type)
    except RuntimeError:
        raise RuntimeError(f"User specified an unsupported autocast device_type "
                           f"'{device_type}'") from None


def _cast_one(t, policy):
    """t cast by policy when it is a floating tensor on a device with an active region."""
    if not isinstance(t, Tensor):
        return t
    target = _active.get(t.array.device)
    if target is None:
        return t
    dt = t.array.dtype
    if policy == "lower":
        if dt != carray.float32:       # float64, the 2-byte floats and integers stay
            return t
        if _cache_on[0] and t.requires_grad and t.grad_fn is None:
            hit = _cache.get(id(t))
            if hit is not None and hit[0] is t and hit[1].dtype == target:
                return hit[1]
            low = t.to(target)
            _cache[id(t)] = (t, low)
            return low
        return t.to(target)
    if policy == "float32_gpu" and t.array.device != "gpu":
        return t
    if dt in _LOWER:                   # policy "float32", or "float32_gpu" on the GPU
        return t.to(carray.float32)
    return t


def _cast_args(policy, args):
    """The hook autograd.function calls: args with their floating tensors cast by policy."""
    out = []
    changed = False
    for a in args:
        if isinstance(a, (list, tuple)) and a and isinstance(a[0], Tensor):
            b = type(a)(_cast_one(x, policy) for x in a)
            changed = changed or any(x is not y for x, y in zip(a, b))
        else:
            b = _cast_one(a, policy)
            changed = changed or b is not a
        out.append(b)
    return tuple(out) if changed else args


class autocast:
    """Context manager and decorator: the ops inside run in mixed precision on device_type
    ('cuda'/'gpu' or 'cpu'). dtype: float16 or bfloat16 (default float16 on the GPU, bfloat16
    on the CPU); enabled=False runs the region in full precision (nested regions can switch it
    off); cache_enabled: cast each weight once per region.

    Raises ValueError when device_type is not a str, RuntimeError for an unknown device type;
    an unsupported dtype warns and disables the region, as PyTorch does."""

    def __init__(self, device_type, dtype=None, enabled=True, cache_enabled=None):
        self.device = _device_of_type(device_type)
        self.device_type = device_type
        self.fast_dtype = _DEFAULT_DTYPE[self.device] if dtype is None else carray.dtype(dtype)
        self._enabled = bool(enabled)
        self._cache_enabled = True if cache_enabled is None else bool(cache_enabled)
        if self._enabled and self.fast_dtype not in _LOWER:
            kind = "CUDA" if self.device == "gpu" else "CPU"
            warnings.warn(f"In {kind} autocast, but the target dtype {self.fast_dtype} is not "
                          f"supported. Disabling autocast.\n{kind} Autocast only supports "
                          f"dtypes of torch.float16 and torch.bfloat16 currently.",
                          UserWarning, stacklevel=2)
            self._enabled = False

    def __enter__(self):
        self._prev = (_active.get(self.device), _cache_on[0])
        if self._enabled:
            _active[self.device] = self.fast_dtype
        else:
            _active.pop(self.device, None)
        _cache_on[0] = self._cache_enabled
        _depth[0] += 1
        prev = _function.set_autocast_hook(_cast_args if _active else None)
        if _depth[0] == 1:
            self._outer_hook = prev      # restored when the outermost region ends
        return self

    def __exit__(self, *exc):
        prev_dtype, _cache_on[0] = self._prev
        if prev_dtype is None:
            _active.pop(self.device, None)
        else:
            _active[self.device] = prev_dtype
        _depth[0] -= 1
        if _depth[0] == 0:
            _cache.clear()
        _function.set_autocast_hook(self._outer_hook if _depth[0] == 0 else
                                    _cast_args if _active else None)
        return False

    def __call__(self, fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with autocast(self.device_type, self.fast_dtype, self._enabled,
                          self._cache_enabled):
                return fn(*args, **kwargs)
        return wrapper


def is_autocast_available(device_type):
    """True for the device types autocast accepts ('cpu', 'cuda', 'gpu')."""
    try:
        _device_of_type(device_type)
    except (ValueError, RuntimeError):
        return False
    return True


def is_autocast_enabled(device_type=None):
    """Whether an enabled autocast region is active on device_type (default: the GPU, as
    torch.is_autocast_enabled() means CUDA)."""
    return _device_of_type("cuda" if device_type is None else device_type) in _active


def get_autocast_dtype(device_type):
    """The dtype autocast regions on device_type compute in (the innermost region's, else the
    device's default)."""
    dev = _device_of_type(device_type)
    return _active.get(dev, _DEFAULT_DTYPE[dev])


def custom_fwd(fwd=None, *, device_type, cast_inputs=None):
    """Decorator for a custom Function's forward, as torch.amp.custom_fwd: with cast_inputs
    set, inside an autocast region on device_type the floating tensor arguments are cast to
    cast_inputs and forward runs with autocast off; backward (custom_bwd) then runs with the
    forward's autocast state."""
    if fwd is None:
        return functools.partial(custom_fwd, device_type=device_type, cast_inputs=cast_inputs)
    dev = _device_of_type(device_type)

    @functools.wraps(fwd)
    def forward(ctx, *args, **kwargs):
        ctx._fwd_autocast = (dev in _active, _active.get(dev))
        if cast_inputs is None or dev not in _active:
            return fwd(ctx, *args, **kwargs)
        target = carray.dtype(cast_inputs)
        args = tuple(a.to(target) if isinstance(a, Tensor) and a.is_floating_point()
                     and a.array.device == dev else a for a in args)
        with autocast(device_type, enabled=False):
            return fwd(ctx, *args, **kwargs)
    return forward


def custom_bwd(bwd=None, *, device_type):
    """Decorator for a custom Function's backward, as torch.amp.custom_bwd: runs it under the
    autocast state its forward (decorated by custom_fwd) ran with."""
    if bwd is None:
        return functools.partial(custom_bwd, device_type=device_type)

    @functools.wraps(bwd)
    def backward(ctx, *grads):
        on, dtype = getattr(ctx, "_fwd_autocast", (False, None))
        with autocast(device_type, dtype=dtype, enabled=on):
            return bwd(ctx, *grads)
    return backward
