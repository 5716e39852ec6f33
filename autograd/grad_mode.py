"""Grad mode: whether ops record the graph. Thread-local, as in PyTorch.

    with autograd.no_grad(): ...          @autograd.no_grad()  def f(): ...
    with autograd.enable_grad(): ...      with autograd.set_grad_enabled(False): ...
"""

import functools
import threading

__all__ = ["enable_grad", "is_grad_enabled", "no_grad", "set_grad_enabled", "inference_mode",
           "is_inference_mode_enabled"]


class _GradState(threading.local):
    enabled = True
    inference = False    # inside inference_mode()


_state = _GradState()


def is_grad_enabled():
    """True when ops record the graph for backward in this thread."""
    return _state.enabled


class _GradModeContext:
    """A context manager that is also a decorator: the function runs inside the context."""

    _mode = True

    def __new__(cls, orig_func=None):
        if orig_func is None:
            return super().__new__(cls)
        return _run_in_mode(orig_func, cls._mode)  # used as @no_grad, without parentheses

    def __init__(self, orig_func=None):
        pass

    def __enter__(self):
        self._prev = _state.enabled
        _state.enabled = self._mode

    def __exit__(self, *exc):
        _state.enabled = self._prev
        return False

    def __call__(self, fn):
        return _run_in_mode(fn, self._mode)


def _run_in_mode(fn, mode):
    """fn wrapped to run with grad mode `mode`, restoring the caller's mode afterwards."""
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        prev = _state.enabled
        _state.enabled = mode
        try:
            return fn(*args, **kwargs)
        finally:
            _state.enabled = prev
    return wrapper


class no_grad(_GradModeContext):
    """Context manager and decorator: ops inside do not record the graph."""

    _mode = False


class enable_grad(_GradModeContext):
    """Context manager and decorator: ops inside record the graph (undoes an outer no_grad)."""

    _mode = True


class set_grad_enabled(_GradModeContext):
    """set_grad_enabled(mode): turn recording on or off. Used as a function it takes effect at
    once (as torch.set_grad_enabled); as a context manager or decorator it restores the previous
    mode on exit. Raises TypeError when mode is not a bool."""

    def __new__(cls, mode):
        return object.__new__(cls)

    def __init__(self, mode):
        if not isinstance(mode, bool):
            raise TypeError(f"set_grad_enabled(): argument 'mode' must be bool, "
                            f"not {type(mode).__name__}")
        self._prev = _state.enabled
        self._mode = mode
        _state.enabled = mode

    def __enter__(self):
        _state.enabled = self._mode

    def __exit__(self, *exc):
        _state.enabled = self._prev
        return False

    def __call__(self, fn):
        _state.enabled = self._prev  # used as a decorator: no effect until fn is called
        return _run_in_mode(fn, self._mode)


# -- inference mode (h1: PyTorch's surface) ---------------------------------------------------

def is_inference_mode_enabled():
    """True inside inference_mode() in this thread."""
    return _state.inference


class inference_mode:
    """inference_mode(mode=True): context manager and decorator (with or without parentheses)
    for code that never needs backward, as torch.inference_mode. mode=True turns grad mode off;
    mode=False turns it on and leaves inference mode (as PyTorch's, it undoes an outer
    inference_mode or no_grad). The previous modes come back on exit. Here it is no_grad plus
    the is_inference_mode_enabled() flag: tensors made inside are ordinary tensors (PyTorch's
    "inference tensors" refuse later autograd use; ours do not). TypeError when mode is not a
    bool."""

    def __new__(cls, mode=True):
        if isinstance(mode, bool):
            return super().__new__(cls)
        if callable(mode):          # @inference_mode, without parentheses
            return cls()(mode)
        raise TypeError(f"inference_mode(): argument 'mode' must be bool, not "
                        f"{type(mode).__name__}")

    def __init__(self, mode=True):
        self.mode = mode

    def __enter__(self):
        self._prev = (_state.enabled, _state.inference)
        _state.enabled, _state.inference = not self.mode, self.mode

    def __exit__(self, *exc):
        _state.enabled, _state.inference = self._prev
        return False

    def __call__(self, fn):
        mode = self.mode

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            prev = (_state.enabled, _state.inference)
            _state.enabled, _state.inference = not mode, mode
            try:
                return fn(*args, **kwargs)
            finally:
                _state.enabled, _state.inference = prev
        return wrapper

    def clone(self):
        """A new context manager with the same mode."""
        return type(self)(self.mode)
