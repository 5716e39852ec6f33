"""GradScaler: dynamic loss scaling for mixed-precision training, as torch.amp.GradScaler.

    scaler = autograd.amp.GradScaler()
    with autograd.autocast("cuda"):
        loss = loss_fn(model(x), y)
    scaler.scale(loss).backward()      # gradients of loss * scale: small ones survive float16
    scaler.step(optimizer)             # unscale, skip the step if any gradient is inf/nan
    scaler.update()                    # back off on overflow, grow after growth_interval steps

The finiteness checks and the unscaling run on the gradients' device; step() reads one flag
back (the only host read, as PyTorch's step makes).
"""

import importlib
import warnings

import carray
from autograd.tensor import Tensor, device_name

__all__ = ["GradScaler"]

_READY, _UNSCALED, _STEPPED = "ready", "unscaled", "stepped"


def _gpu_available():
    """Whether an OpenCL device can be used (autograd.cuda.is_available's answer; this module
    sits below autograd.cuda, which exports it as autograd.cuda.amp)."""
    try:
        return importlib.import_module("carray.opencl").device_count() > 0
    except Exception:    # no pyopencl, no driver or no device
        return False


class GradScaler:
    """Scales losses and unscales gradients (see the module docstring).

    device: the device of the gradients ('cuda'/'gpu' or 'cpu'); init_scale, growth_factor
    (> 1), backoff_factor (< 1), growth_interval (steps without inf/nan before the scale grows);
    enabled=False makes every method a pass-through. A GPU scaler without a GPU warns and
    disables itself, as PyTorch's does without CUDA. Raises ValueError for bad factors."""

    def __init__(self, device="cuda", init_scale=2.0**16, growth_factor=2.0, backoff_factor=0.5,
                 growth_interval=2000, enabled=True):
        self._device = device_name(device)
        if enabled and self._device == "gpu" and not _gpu_available():
            warnings.warn("torch.cuda.amp.GradScaler is enabled, but CUDA is not available.  "
                          "Disabling.", UserWarning, stacklevel=2)
            enabled = False
        self._enabled = bool(enabled)
        if not growth_factor > 1.0:
            raise ValueError(f"The growth factor must be > 1.0, got {growth_factor}")
        if not 0.0 < backoff_factor < 1.0:
            raise ValueError(f"The backoff factor must be in (0, 1), got {backoff_factor}")
        if int(growth_interval) <= 0:
            raise ValueError(f"growth_interval must be a positive int, got {growth_interval}")
        self._init_scale = float(init_scale)
        self._scale = None               # a Python float once scale() has run
        self._growth_factor = float(growth_factor)
        self._backoff_factor = float(backoff_factor)
        self._growth_interval = int(growth_interval)
        self._init_growth_tracker = 0
        self._growth_tracker = None
        self._states = {}                # id(optimizer) -> {"stage", "found_inf"}

    # -- scaling the loss ----------------------------------------------------------------------

    def scale(self, outputs):
        """outputs (a tensor, or a list/tuple of them, nested) multiplied by the scale factor;
        returned as they are when disabled."""
        if not self._enabled:
            return outputs
        if self._scale is None:
            self._scale = self._init_scale
            self._growth_tracker = self._init_growth_tracker

        def apply(v):
            if isinstance(v, Tensor):
                factor = Tensor._wrap(carray.asarray(self._scale, dtype=carray.float32,
                                                     device=v.array.device))
                return v * factor
            if isinstance(v, (list, tuple)):
                return type(v)(apply(x) for x in v)
            raise ValueError("outputs must be a Tensor or an iterable of Tensors")
        return apply(outputs)

    # -- unscaling and the step ----------------------------------------------------------------

    def _state(self, optimizer):
        return self._states.setdefault(id(optimizer), {"stage": _READY, "found_inf": None})

    def _check_scale(self, name):
        if self._scale is None:
            raise AssertionError(f"Attempted {name} but _scale is None.  This may indicate your "
                                 f"script did not use scaler.scale(loss or outputs) earlier in "
                                 f"the iteration.")

    def unscale_(self, optimizer):
        """Divide the gradients of optimizer's parameters by the scale, in place, and record
        whether any of them holds inf or nan. RuntimeError when called twice before update();
        ValueError for float16 gradients (unscale float32 master weights' gradients)."""
        if not self._enabled:
            return
        self._check_scale("unscale_")
        state = self._state(optimizer)
        if state["stage"] == _UNSCALED:
            raise RuntimeError("unscale_() has already been called on this optimizer since the "
                               "last update().")
        if state["stage"] == _STEPPED:
            raise RuntimeError("unscale_() is being called after step().")
        inv = 1.0 / self._scale
        finite = []
        for group in optimizer.param_groups:
            for p in group["params"]:
                if p.grad is None:
                    continue
                g = p.grad.array
                if g.dtype == carray.float16:
                    raise ValueError("Attempting to unscale FP16 gradients.")
                g *= inv
                finite.append(carray.isfinite(g).all())
        state["found_inf"] = (carray.logical_not(carray.stack(finite).all()) if finite
                              else None)
        state["stage"] = _UNSCALED

    def step(self, optimizer, *args, **kwargs):
        """Unscale (unless unscale_ ran), then optimizer.step(*args, **kwargs) unless a gradient
        held inf or nan; returns what step returned (None when skipped). RuntimeError for a
        closure or a second step before update()."""
        if not self._enabled:
            return optimizer.step(*args, **kwargs)
        if "closure" in kwargs:
            raise RuntimeError("Closure use is not currently supported if GradScaler is "
                               "enabled.")
        self._check_scale("step")
        state = self._state(optimizer)
        if state["stage"] == _STEPPED:
            raise RuntimeError("step() has already been called since the last update().")
        if state["stage"] == _READY:
            self.unscale_(optimizer)
        found = state["found_inf"]
        state["found_inf"] = bool(found.item()) if found is not None else False
        state["stage"] = _STEPPED
        if not state["found_inf"]:
            return optimizer.step(*args, **kwargs)
        return None

    def update(self, new_scale=None):
        """Set the scale for the next iteration: new_scale if given (a float or a 1-element
        tensor), else back off after an inf/nan (scale * backoff_factor) or grow after
        growth_interval clean steps (scale * growth_factor). AssertionError when no step or
        unscale_ recorded a check since the last update."""
        if not self._enabled:
            return
        self._check_scale("update")
        if new_scale is not None:
            if isinstance(new_scale, Tensor):
                if new_scale.numel() != 1:
                    raise ValueError("new_scale should be a float or a 1-element tensor.")
                new_scale = new_scale.item()
            self._scale = float(new_scale)
        else:
            checks = [s["found_inf"] for s in self._states.values() if s["stage"] != _READY]
            if not checks:
                raise AssertionError("No inf checks were recorded prior to update.")
            found = any(bool(f.item()) if hasattr(f, "item") else bool(f) for f in checks)
            if found:
                self._scale *= self._backoff_factor
                self._growth_tracker = 0
            else:
                self._growth_tracker += 1
                if self._growth_tracker == self._growth_interval:
                    grown = self._scale * self._growth_factor
                    if grown != float("inf"):
                        self._scale = grown
                    self._growth_tracker = 0
        self._states = {}

    # -- settings and checkpoints --------------------------------------------------------------

    def get_scale(self):
        """The current scale factor (init_scale before the first scale()); 1.0 if disabled."""
        if not self._enabled:
            return 1.0
        return self._init_scale if self._scale is None else self._scale

    def get_growth_factor(self):
        return self._growth_factor

    def set_growth_factor(self, new_factor):
        self._growth_factor = float(new_factor)

    def get_backoff_factor(self):
        return self._backoff_factor

    def set_backoff_factor(self, new_factor):
        self._backoff_factor = float(new_factor)

    def get_growth_interval(self):
        return self._growth_interval

    def set_growth_interval(self, new_interval):
        self._growth_interval = int(new_interval)

    def _get_growth_tracker(self):
        if not self._enabled:
            return 0
        return self._init_growth_tracker if self._growth_tracker is None else \
            self._growth_tracker

    def is_enabled(self):
        return self._enabled

    def state_dict(self):
        """{'scale', 'growth_factor', 'backoff_factor', 'growth_interval', '_growth_tracker'}
        as PyTorch's; {} when disabled."""
        if not self._enabled:
            return {}
        return {"scale": self.get_scale(), "growth_factor": self._growth_factor,
                "backoff_factor": self._backoff_factor, "growth_interval": self._growth_interval,
                "_growth_tracker": self._get_growth_tracker()}

    def load_state_dict(self, state_dict):
        """Restore what state_dict() returned. RuntimeError for an empty dict (saved from a
        disabled scaler)."""
        if not self._enabled:
            return
        if len(state_dict) == 0:
            raise RuntimeError("The source state dict is empty, possibly because it was saved "
                               "from a disabled instance of GradScaler.")
        self._init_scale = float(state_dict["scale"])
        if self._scale is not None:
            self._scale = self._init_scale
        self._growth_factor = float(state_dict["growth_factor"])
        self._backoff_factor = float(state_dict["backoff_factor"])
        self._growth_interval = int(state_dict["growth_interval"])
        self._init_growth_tracker = int(state_dict["_growth_tracker"])
        if self._growth_tracker is not None:
            self._growth_tracker = self._init_growth_tracker
