"""nn.Module: the base class of layers and models (torch.nn.Module).

A Module keeps three ordered registries, filled by attribute assignment as in PyTorch:
`_parameters` (Parameter or None), `_buffers` (Tensor or None; names in
`_non_persistent_buffers` stay out of state_dict) and `_modules` (child Modules). Every walk
(parameters, state_dict, train, to ...) visits a module's own entries first, then its children
in registration order, which gives PyTorch's dotted names ('fc1.weight', 'bn.running_mean').
"""

from collections import OrderedDict, namedtuple
from collections.abc import Mapping

import carray
from autograd._defaults import is_floating
from autograd.grad_mode import no_grad
from autograd.nn._backward_hooks import BackwardHook
from autograd.nn.parameter import Parameter
from autograd.tensor import Tensor, device_name

__all__ = ["Module"]


class _IncompatibleKeys(namedtuple("IncompatibleKeys", ["missing_keys", "unexpected_keys"])):
    """What load_state_dict returns: the keys it missed and the keys it did not expect."""

    def __repr__(self):
        if not self.missing_keys and not self.unexpected_keys:
            return "<All keys matched successfully>"
        return super().__repr__()

    __str__ = __repr__


class _RemovableHandle:
    """Returned by register_forward_hook: .remove() unregisters the hook."""

    def __init__(self, hooks, key):
        self._hooks = hooks
        self._key = key
        self.id = key

    def remove(self):
        self._hooks.pop(self._key, None)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.remove()


class Module:
    """Base class of all layers: subclasses set parameters, buffers and child modules as
    attributes in __init__ (after calling super().__init__()) and define forward()."""

    training = True
    _next_hook_id = 0
    _optional_state = ()  # state_dict names that may be absent from a loaded state_dict

    def __init__(self, *args, **kwargs):
        if args or kwargs:
            raise TypeError(f"{type(self).__name__}.__init__() got unexpected arguments")
        d = self.__dict__
        d["training"] = True
        d["_parameters"] = OrderedDict()
        d["_buffers"] = OrderedDict()
        d["_non_persistent_buffers"] = set()
        d["_modules"] = OrderedDict()
        d["_forward_hooks"] = OrderedDict()
        d["_forward_pre_hooks"] = OrderedDict()
        d["_forward_hooks_with_kwargs"] = set()
        d["_forward_pre_hooks_with_kwargs"] = set()
        d["_backward_hooks"] = OrderedDict()

    def forward(self, *input):
        """Subclasses define the computation here (NotImplementedError otherwise)."""
        raise NotImplementedError(f'Module [{type(self).__name__}] is missing the required '
                                  f'"forward" function')

    def __call__(self, *args, **kwargs):
        """forward(*args, **kwargs), with the forward pre-hooks before and forward hooks after;
        full backward hooks are attached to the inputs and outputs (see _backward_hooks.py)."""
        d = self.__dict__
        pre = d.get("_forward_pre_hooks")
        post = d.get("_forward_hooks")
        backward = d.get("_backward_hooks")
        if pre:
            with_kwargs = d["_forward_pre_hooks_with_kwargs"]
            for key, hook in list(pre.items()):
                if key in with_kwargs:
                    new = hook(self, args, kwargs)
                    if new is not None:
                        if not (isinstance(new, tuple) and len(new) == 2):
                            raise RuntimeError(f"forward pre-hook must return None or a tuple "
                                               f"of (new_args, new_kwargs), but got {new}.")
                        args, kwargs = new
                else:
                    new = hook(self, args)
                    if new is not None:
                        args = new if isinstance(new, tuple) else (new,)
        if backward:
            state = BackwardHook(self, backward)
            args = state.setup_inputs(args)
        out = self.forward(*args, **kwargs)
        if post:
            with_kwargs = d["_forward_hooks_with_kwargs"]
            for key, hook in list(post.items()):
                new = hook(self, args, kwargs, out) if key in with_kwargs else \
                    hook(self, args, out)
                if new is not None:
                    out = new
        if backward:
            out = state.setup_outputs(out)
        return out

    def register_forward_hook(self, hook, *, prepend=False, with_kwargs=False,
                              always_call=False):
        """Run hook(module, args, output) after each forward (hook(module, args, kwargs,
        output) with_kwargs); a non-None result replaces the output. prepend: run it before
        the hooks already registered. Returns a handle with .remove(). (always_call is accepted;
        hooks do not run when forward raises.)"""
        handle = self._add_hook(self._forward_hooks, hook, prepend)
        if with_kwargs:
            self._forward_hooks_with_kwargs.add(handle.id)
        return handle

    def register_forward_pre_hook(self, hook, *, prepend=False, with_kwargs=False):
        """Run hook(module, args) before each forward; a non-None result (a tuple, or one value)
        replaces the arguments. with_kwargs: hook(module, args, kwargs) returning None or
        (new_args, new_kwargs). prepend: run it before the hooks already registered. Returns a
        handle with .remove()."""
        handle = self._add_hook(self._forward_pre_hooks, hook, prepend)
        if with_kwargs:
            self._forward_pre_hooks_with_kwargs.add(handle.id)
        return handle

    def register_full_backward_hook(self, hook, prepend=False):
        """Run hook(module, grad_input, grad_output) when the gradients of the module's
        positional inputs are computed: grad_input and grad_output are tuples with one entry
        per positional argument / output (None for non-tensors and tensors without grad); a
        non-None result replaces grad_input. Returns a handle with .remove()."""
        return self._add_hook(self._backward_hooks, hook, prepend)

    @staticmethod
    def _add_hook(hooks, hook, prepend=False):
        Module._next_hook_id += 1
        hooks[Module._next_hook_id] = hook
        if prepend:
            hooks.move_to_end(Module._next_hook_id, last=False)
        return _RemovableHandle(hooks, Module._next_hook_id)

    # -- registration ------------------------------------------------------------------------------

    def _check_name(self, name, kind, registry):
        if not isinstance(name, str):
            raise TypeError(f"{kind} name should be a string. Got {type(name).__name__}")
        if "." in name:
            raise KeyError(f'{kind} name can\'t contain "."')
        if name == "":
            raise KeyError(f'{kind} name can\'t be empty string ""')
        if hasattr(self, name) and name not in registry:
            raise KeyError(f"attribute '{name}' already exists")

    def register_parameter(self, name, param):
        """Add param (a Parameter, or None) under name. AttributeError before __init__, KeyError
        for a bad or taken name, TypeError when param is not a Parameter, ValueError for a
        non-leaf one."""
        if "_parameters" not in self.__dict__:
            raise AttributeError("cannot assign parameter before Module.__init__() call")
        self._check_name(name, "parameter", self._parameters)
        if param is not None and not isinstance(param, Parameter):
            raise TypeError(f"cannot assign '{_typename(param)}' object to parameter '{name}' "
                            f"(autograd.nn.Parameter or None required)")
        if param is not None and param.grad_fn is not None:
            raise ValueError(f"Cannot assign non-leaf Tensor to parameter '{name}'. Model "
                             f"parameters must be created explicitly. To express '{name}' as a "
                             f"function of another Tensor, compute the value in the forward() "
                             f"method.")
        self._parameters[name] = param

    def register_buffer(self, name, tensor, persistent=True):
        """Add a tensor that is state but not a parameter (BatchNorm's running_mean ...).
        Non-persistent buffers stay out of state_dict. Errors as register_parameter."""
        if "_buffers" not in self.__dict__:
            raise AttributeError("cannot assign buffer before Module.__init__() call")
        self._check_name(name, "buffer", self._buffers)
        if tensor is not None and not isinstance(tensor, Tensor):
            raise TypeError(f"cannot assign '{_typename(tensor)}' object to buffer '{name}' "
                            f"(autograd Tensor or None required)")
        self._buffers[name] = tensor
        if persistent:
            self._non_persistent_buffers.discard(name)
        else:
            self._non_persistent_buffers.add(name)

    def add_module(self, name, module):
        """Add a child module (or None) under name. TypeError when module is not a Module,
        KeyError for a bad or taken name."""
        if module is not None and not isinstance(module, Module):
            raise TypeError(f"{_typename(module)} is not a Module subclass")
        if "_modules" not in self.__dict__:
            raise AttributeError("cannot assign module before Module.__init__() call")
        self._check_name(name, "module", self._modules)
        self._modules[name] = module

    register_module = add_module

    def __setattr__(self, name, value):
        d = self.__dict__
        params = d.get("_parameters")
        if isinstance(value, Parameter):
            if params is None:
                raise AttributeError("cannot assign parameters before Module.__init__() call")
            self._remove_name(name, params)
            self.register_parameter(name, value)
        elif params is not None and name in params:
            if value is not None:
                raise TypeError(f"cannot assign '{_typename(value)}' as parameter '{name}' "
                                f"(autograd.nn.Parameter or None expected)")
            params[name] = None
        elif isinstance(value, Module):
            modules = d.get("_modules")
            if modules is None:
                raise AttributeError("cannot assign module before Module.__init__() call")
            self._remove_name(name, modules)
            modules[name] = value
        elif name in d.get("_modules", ()):
            if value is not None:
                raise TypeError(f"cannot assign '{_typename(value)}' as child module '{name}' "
                                f"(autograd.nn.Module or None expected)")
            d["_modules"][name] = None
        elif name in d.get("_buffers", ()):
            if value is not None and not isinstance(value, Tensor):
                raise TypeError(f"cannot assign '{_typename(value)}' as buffer '{name}' "
                                f"(autograd Tensor or None expected)")
            d["_buffers"][name] = value
        else:
            object.__setattr__(self, name, value)

    def _remove_name(self, name, keep):
        """Drop name from every registry but `keep` (and from the plain attributes)."""
        d = self.__dict__
        d.pop(name, None)
        for registry in (d["_parameters"], d["_buffers"], d["_modules"]):
            if registry is not keep:
                registry.pop(name, None)
        d["_non_persistent_buffers"].discard(name)

    def __getattr__(self, name):
        d = self.__dict__
        for key in ("_parameters", "_buffers", "_modules"):
            registry = d.get(key)
            if registry is not None and name in registry:
                return registry[name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __delattr__(self, name):
        d = self.__dict__
        for key in ("_parameters", "_buffers", "_modules"):
            if name in d.get(key, ()):
                del d[key][name]
                d["_non_persistent_buffers"].discard(name)
                return
        object.__delattr__(self, name)

    def __dir__(self):
        names = list(super().__dir__())
        for key in ("_parameters", "_buffers", "_modules"):
            names += list(self.__dict__.get(key, ()))
        return sorted(set(n for n in names if not n.isdigit()))

    def get_submodule(self, target):
        """The module at dotted path target ('' is self). AttributeError naming the missing
        part."""
        mod = self
        if target == "":
            return mod
        for item in target.split("."):
            if item not in mod._modules:
                raise AttributeError(f"{type(mod).__name__} has no attribute `{item}`")
            mod = mod._modules[item]
            if not isinstance(mod, Module):
                raise AttributeError(f"`{item}` is not an nn.Module")
        return mod

    def get_parameter(self, target):
        """The parameter at dotted path target ('fc1.weight'). AttributeError when absent."""
        path, _, name = target.rpartition(".")
        mod = self.get_submodule(path)
        if not hasattr(mod, name):
            raise AttributeError(f"{type(mod).__name__} has no attribute `{name}`")
        if name not in mod._parameters:
            raise AttributeError(f"`{name}` is not an nn.Parameter")
        return mod._parameters[name]

    def get_buffer(self, target):
        """The buffer at dotted path target ('bn.running_mean'). AttributeError when absent or
        not a buffer."""
        path, _, name = target.rpartition(".")
        mod = self.get_submodule(path)
        if not hasattr(mod, name):
            raise AttributeError(f"{type(mod).__name__} has no attribute `{name}`")
        if name not in mod._buffers:
            raise AttributeError(f"`{name}` is not a buffer")
        return mod._buffers[name]

    # -- iteration ---------------------------------------------------------------------------------

    def named_modules(self, memo=None, prefix="", remove_duplicate=True):
        """(dotted name, module) for self and all descendants, parents before children; a
        module reachable twice is listed once unless remove_duplicate is False."""
        if memo is None:
            memo = set()
        if remove_duplicate:
            if self in memo:
                return
            memo.add(self)
        yield prefix, self
        for name, module in self._modules.items():
            if module is None:
                continue
            sub = prefix + ("." if prefix else "") + name
            yield from module.named_modules(memo, sub, remove_duplicate)

    def modules(self):
        """Self and all descendant modules, each once."""
        for _, module in self.named_modules():
            yield module

    def named_children(self):
        """(name, module) for the direct children, each once."""
        seen = set()
        for name, module in self._modules.items():
            if module is not None and module not in seen:
                seen.add(module)
                yield name, module

    def children(self):
        for _, module in self.named_children():
            yield module

    def _named_members(self, registry, prefix, recurse, remove_duplicate):
        seen = set()
        modules = self.named_modules(prefix=prefix, remove_duplicate=remove_duplicate) \
            if recurse else [(prefix, self)]
        for mod_prefix, module in modules:
            for name, value in module.__dict__[registry].items():
                if value is None:
                    continue
                if remove_duplicate:
                    if id(value) in seen:
                        continue
                    seen.add(id(value))
                yield mod_prefix + ("." if mod_prefix else "") + name, value

    def named_parameters(self, prefix="", recurse=True, remove_duplicate=True):
        """(dotted name, Parameter) for every parameter, each tensor once."""
        return self._named_members("_parameters", prefix, recurse, remove_duplicate)

    def parameters(self, recurse=True):
        """Every parameter of self (and of the descendants when recurse), each once."""
        for _, param in self.named_parameters(recurse=recurse):
            yield param

    def named_buffers(self, prefix="", recurse=True, remove_duplicate=True):
        """(dotted name, Tensor) for every buffer, each tensor once."""
        return self._named_members("_buffers", prefix, recurse, remove_duplicate)

    def buffers(self, recurse=True):
        for _, buf in self.named_buffers(recurse=recurse):
            yield buf

    # -- modes and gradients -----------------------------------------------------------------------

    def train(self, mode=True):
        """Set training mode (Dropout drops, BatchNorm uses batch statistics) on self and all
        descendants; returns self. ValueError when mode is not a bool."""
        if not isinstance(mode, bool):
            raise ValueError("training mode is expected to be boolean")
        for module in self.modules():
            module.__dict__["training"] = mode
        return self

    def eval(self):
        """train(False)."""
        return self.train(False)

    def requires_grad_(self, requires_grad=True):
        """Set requires_grad on every parameter; returns self."""
        for p in self.parameters():
            p.requires_grad_(requires_grad)
        return self

    def zero_grad(self, set_to_none=True):
        """Reset the gradients of all parameters: to None (the default) or to zeros."""
        for p in self.parameters():
            _zero_grad(p, set_to_none)

    def apply(self, fn):
        """Call fn(module) on every descendant, children first, then on self; returns self."""
        for module in self.children():
            module.apply(fn)
        fn(self)
        return self

    # -- devices and dtypes ------------------------------------------------------------------------

    def to(self, *args, **kwargs):
        """to(device), to(dtype), to(device, dtype), to(tensor): move parameters and buffers in
        place (parameters stay the same objects; only floating tensors change dtype); returns
        self. TypeError for a non-floating dtype."""
        device, dtype = _parse_to(args, kwargs)
        return self._apply_data(lambda arr: _convert(arr, device, dtype))

    def cpu(self):
        """Move parameters and buffers to the CPU; returns self."""
        return self.to("cpu")

    def cuda(self, device=None):
        """Move parameters and buffers to the GPU (the OpenCL device, "cuda"); returns self."""
        return self.to("gpu")

    def double(self):
        return self.to(carray.float64)

    def float(self):
        return self.to(carray.float32)

    def half(self):
        return self.to(carray.float16)

    def bfloat16(self):
        return self.to(carray.bfloat16)

    def type(self, dst_type):
        return self.to(dst_type)

    def _apply_data(self, convert):
        """Replace each parameter's, gradient's and buffer's .array with convert(data)."""
        for module in self.modules():
            for registry in (module._parameters, module._buffers):
                for t in registry.values():
                    if t is None:
                        continue
                    t.array = convert(t.array)
                    if t.grad is not None:
                        t.grad.array = convert(t.grad.array)
        return self

    # -- state_dict --------------------------------------------------------------------------------

    def _state_items_local(self):
        """(name, tensor) for this module's own parameters and persistent buffers."""
        for name, p in self._parameters.items():
            if p is not None:
                yield name, p
        skip = self._non_persistent_buffers
        for name, b in self._buffers.items():
            if b is not None and name not in skip:
                yield name, b

    def _state_items(self):
        """(dotted key, tensor) for every parameter and persistent buffer, in PyTorch's order;
        a shared module appears under each of its names."""
        for prefix, module in self.named_modules(remove_duplicate=False):
            dot = prefix + "." if prefix else ""
            for name, t in module._state_items_local():
                yield dot + name, t

    def state_dict(self, destination=None, prefix="", keep_vars=False):
        """OrderedDict of parameters and persistent buffers by dotted name ('fc1.weight',
        'bn.running_mean'); values are detached tensors sharing memory (the tensors themselves
        when keep_vars)."""
        if destination is None:
            destination = OrderedDict()
        for key, t in self._state_items():
            destination[prefix + key] = t if keep_vars else t.detach()
        return destination

    def load_state_dict(self, state_dict, strict=True, assign=False):
        """Copy the tensors of state_dict into the parameters and buffers (under no_grad;
        assign=True puts the given tensors in place instead); names in a module's
        _optional_state (BatchNorm's num_batches_tracked) may be absent and keep their value.
        Returns (missing_keys, unexpected_keys). RuntimeError listing every problem when
        strict and keys differ, and always for shape mismatches or non-tensor values.
        TypeError when state_dict is not a mapping."""
        if not isinstance(state_dict, Mapping):
            raise TypeError(f"Expected state_dict to be dict-like, got {type(state_dict)}.")
        missing, errors = [], []
        with no_grad():
            for prefix, module in self.named_modules(remove_duplicate=False):
                dot = prefix + "." if prefix else ""
                for name, t in module._state_items_local():
                    key = dot + name
                    if key in state_dict:
                        err = self._load_one(key, t, state_dict[key], assign)
                        if err:
                            errors.append(err)
                    elif name not in module._optional_state:
                        missing.append(key)
        unexpected = self._unexpected_keys(state_dict)
        if strict:
            if unexpected:
                errors.insert(0, "Unexpected key(s) in state_dict: {}. ".format(
                    ", ".join(f'"{k}"' for k in unexpected)))
            if missing:
                errors.insert(0, "Missing key(s) in state_dict: {}. ".format(
                    ", ".join(f'"{k}"' for k in missing)))
        if errors:
            raise RuntimeError("Error(s) in loading state_dict for {}:\n\t{}".format(
                type(self).__name__, "\n\t".join(errors)))
        return _IncompatibleKeys(missing, unexpected)

    def _unexpected_keys(self, state_dict):
        """Keys of state_dict that name no parameter or persistent buffer, found module by
        module as PyTorch does (so they come in the same order)."""
        unexpected = []
        for prefix, module in self.named_modules(remove_duplicate=False):
            dot = prefix + "." if prefix else ""
            local = {name for name, _ in module._state_items_local()}
            for key in state_dict:
                if not key.startswith(dot):
                    continue
                head, sep, _ = key[len(dot):].partition(".")
                if (head not in module._modules) if sep else (head not in local):
                    unexpected.append(key)
        return unexpected

    def _load_one(self, key, t, value, assign):
        """Copy value into tensor t (key names it in messages); the error text, or None."""
        if not isinstance(value, Tensor):
            return (f'While copying the parameter named "{key}", expected autograd.Tensor or '
                    f'Tensor-like object from checkpoint but received {type(value)}')
        if value.shape != t.shape:
            return (f"size mismatch for {key}: copying a param with shape {list(value.shape)} "
                    f"from checkpoint, the shape in current model is {list(t.shape)}.")
        if assign:
            path, _, name = key.rpartition(".")
            owner = self.get_submodule(path)
            if isinstance(t, Parameter):
                value = value if isinstance(value, Parameter) else \
                    Parameter(value, t.requires_grad and value.is_floating_point())
            owner.__setattr__(name, value)
            return None
        try:
            t.copy_(value)
        except (RuntimeError, TypeError, ValueError) as e:
            return (f'While copying the parameter named "{key}", whose dimensions in the model '
                    f'are {list(t.shape)} and whose dimensions in the checkpoint are '
                    f'{list(value.shape)}, an exception occurred : {e.args}.')
        return None

    # -- repr --------------------------------------------------------------------------------------

    def _get_name(self):
        return type(self).__name__

    def extra_repr(self):
        """The text between the parentheses of this module's repr (override in layers)."""
        return ""

    def __repr__(self):
        extra = self.extra_repr()
        extra_lines = extra.split("\n") if extra else []
        child_lines = [f"({key}): " + _addindent(repr(module), 2)
                       for key, module in self._modules.items()]
        lines = extra_lines + child_lines
        text = self._get_name() + "("
        if lines:
            if len(extra_lines) == 1 and not child_lines:
                text += extra_lines[0]
            else:
                text += "\n  " + "\n  ".join(lines) + "\n"
        return text + ")"


def _addindent(text, spaces):
    """text with every line but the first indented by `spaces` (blank lines stay empty)."""
    lines = text.split("\n")
    if len(lines) == 1:
        return text
    rest = [" " * spaces + line if line.strip() else "" for line in lines[1:]]
    return "\n".join([lines[0]] + rest)


def _typename(obj):
    if isinstance(obj, Tensor):
        return "autograd." + type(obj).__name__
    cls = type(obj)
    return cls.__name__ if cls.__module__ == "builtins" else f"{cls.__module__}.{cls.__name__}"


def _zero_grad(p, set_to_none):
    """p.grad = None, or zeroed in place (taken out of any graph first)."""
    if p.grad is None:
        return
    if set_to_none:
        p.grad = None
        return
    g = p.grad
    if g.grad_fn is not None:
        g.detach_()
    else:
        g.requires_grad_(False)
    g.array.fill(0)
    g._vc[0] += 1


_DEVICES = ("cpu", "gpu", "cuda", "opencl")


def _parse_to(args, kwargs):
    """(device or None, dtype or None) from Module.to's arguments (TypeError on others)."""
    device = kwargs.pop("device", None)
    dtype = kwargs.pop("dtype", None)
    kwargs.pop("non_blocking", None)
    if kwargs:
        raise TypeError(f"to() got unexpected keyword arguments {sorted(kwargs)}")
    for a in args:
        if isinstance(a, Tensor):
            device, dtype = a.device, a.dtype
        elif isinstance(a, str) and a.split(":")[0] in _DEVICES:
            device = a
        elif a is not None:
            dtype = a
    if device is not None:
        device = device_name(device)
    if dtype is not None:
        dtype = carray.dtype(dtype)
        if not is_floating(dtype):
            raise TypeError(f"nn.Module.to only accepts floating point dtypes, but got "
                            f"desired dtype={dtype}")
    return device, dtype


def _convert(arr, device, dtype):
    """arr on device, and of dtype when it is floating (integer buffers keep theirs)."""
    if dtype is not None and is_floating(arr.dtype) and arr.dtype != dtype:
        arr = arr.astype(dtype)
    if device is not None and arr.device != device:
        arr = arr.to(device)
    return arr
