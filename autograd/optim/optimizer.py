"""Optimizer: the base class of SGD, Adam and AdamW (torch.optim.Optimizer).

`param_groups` is a list of dicts, each with 'params' (a list of tensors) and that group's
hyperparameters; `state` maps each parameter to its per-parameter state (momentum buffers,
moments, step counts). state_dict() refers to parameters by their position across all groups,
as PyTorch does: {'state': {0: {...}, ...}, 'param_groups': [{'lr': ..., 'params': [0, 1]}]}.
"""

import copy
from collections import defaultdict
from collections.abc import Mapping

import carray
from autograd._defaults import is_floating
from autograd.grad_mode import enable_grad
from autograd.tensor import Tensor

__all__ = ["Optimizer", "required"]


class _Required:
    """Marks a hyperparameter that every param group must give."""

    def __repr__(self):
        return "<required parameter>"


required = _Required()


class Optimizer:
    """Base class: subclasses pass their defaults and implement step()."""

    def __init__(self, params, defaults):
        """TypeError when params is a single tensor (or a set, or holds non-tensors),
        ValueError when it is empty."""
        self.defaults = defaults
        self.state = defaultdict(dict)
        self.param_groups = []
        if isinstance(params, Tensor):
            raise TypeError("params argument given to the optimizer should be an iterable of "
                            "Tensors or dicts, but got " + _typename(params))
        groups = list(params)
        if not groups:
            raise ValueError("optimizer got an empty parameter list")
        if not isinstance(groups[0], dict):
            groups = [{"params": groups}]
        for group in groups:
            self.add_param_group(group)

    def add_param_group(self, param_group):
        """Append a group ({'params': [...], hyperparameter overrides}); missing
        hyperparameters take the defaults. (name, tensor) pairs (named_parameters()) put the
        names in the group's 'param_names', as PyTorch: all groups with names or none.
        TypeError for non-tensor or unordered params, ValueError for non-leaf tensors, a
        missing required value, a parameter that is already in another group, or names given
        for some params or groups only."""
        if not isinstance(param_group, dict):
            raise TypeError(f"param_group must be a dict, but got {_typename(param_group)}")
        params = param_group["params"]
        if isinstance(params, Tensor):
            params = [params]
        elif isinstance(params, set):
            raise TypeError("optimizer parameters need to be organized in ordered collections, "
                            "but the ordering of tensors in sets will change between runs. "
                            "Please use a list instead.")
        else:
            params = list(params)
        names = [p[0] for p in params if isinstance(p, tuple)]  # from named_parameters()
        params = [p[1] if isinstance(p, tuple) else p for p in params]
        if names and len(names) != len(params):
            raise ValueError("all optimizer params should be with/without names. Some param "
                             "names are missing")
        for p in params:
            if not isinstance(p, Tensor):
                raise TypeError("optimizer can only optimize Tensors, but one of the params is "
                                + _typename(p))
            if not p.is_leaf:
                raise ValueError("can't optimize a non-leaf Tensor")
        group = dict(param_group, params=params)
        if names:
            group["param_names"] = names
        if self.param_groups and ("param_names" in group) != ("param_names" in
                                                              self.param_groups[0]):
            kind = "with" if "param_names" in group else "without"
            raise ValueError(f"all optimizer param groups should be with/without names. cannot "
                             f"add param group {kind} names to the optimizer")
        for name, default in self.defaults.items():
            if default is required and name not in group:
                raise ValueError("parameter group didn't specify a value of required "
                                 "optimization parameter " + name)
            group.setdefault(name, default)
        seen = {id(p) for g in self.param_groups for p in g["params"]}
        if any(id(p) in seen for p in params):
            raise ValueError("some parameters appear in more than one parameter group")
        self.param_groups.append(group)

    def zero_grad(self, set_to_none=True):
        """Reset every parameter's gradient: to None (the default), or to zeros in place."""
        for group in self.param_groups:
            for p in group["params"]:
                g = p.grad
                if g is None:
                    continue
                if set_to_none:
                    p.grad = None
                else:
                    if g.grad_fn is not None:
                        g.detach_()
                    else:
                        g.requires_grad_(False)
                    g.array.fill(0)
                    g._vc[0] += 1

    def step(self, closure=None):
        """Update the parameters once (subclasses)."""
        raise NotImplementedError

    @staticmethod
    def _closure_loss(closure):
        """closure() run with grad enabled, or None without a closure."""
        if closure is None:
            return None
        with enable_grad():
            return closure()

    # -- state_dict -------------------------------------------------------------------------------

    def state_dict(self):
        """{'state': {index: per-parameter state}, 'param_groups': [group with 'params' as
        indices]}, parameters numbered in group order. Tensors in it are the optimizer's own
        (not copies); 'step' counts appear as float32 0-d tensors, as in PyTorch."""
        index = {}
        groups = []
        for group in self.param_groups:
            packed = {k: v for k, v in group.items() if k != "params"}
            for p in group["params"]:
                index.setdefault(id(p), len(index))
            packed["params"] = [index[id(p)] for p in group["params"]]
            groups.append(packed)
        state = {}
        for p, s in self.state.items():
            key = index[id(p)] if isinstance(p, Tensor) else p
            state[key] = {k: _export(k, v) for k, v in s.items()}
        return {"state": state, "param_groups": groups}

    def load_state_dict(self, state_dict):
        """Take over the state and hyperparameters of state_dict (a deep copy of it), keeping
        this optimizer's parameters; state tensors are cast to each parameter's dtype and
        device. ValueError when the number or sizes of the groups differ."""
        if not isinstance(state_dict, Mapping):
            raise TypeError(f"Expected state_dict to be dict-like, got {type(state_dict)}.")
        state_dict = copy.deepcopy(dict(state_dict))
        saved_groups = state_dict["param_groups"]
        if len(saved_groups) != len(self.param_groups):
            raise ValueError("loaded state dict has a different number of parameter groups")
        for mine, saved in zip(self.param_groups, saved_groups):
            if len(mine["params"]) != len(saved["params"]):
                raise ValueError("loaded state dict contains a parameter group that doesn't "
                                 "match the size of optimizer's group")
        by_index = {}
        for mine, saved in zip(self.param_groups, saved_groups):
            for i, p in zip(saved["params"], mine["params"]):
                by_index[i] = p
        state = defaultdict(dict)
        for key, value in state_dict["state"].items():
            if key in by_index:
                p = by_index[key]
                state[p] = {k: _import(k, v, p) for k, v in value.items()}
            else:
                state[key] = value
        self.state = state
        groups = []
        for mine, saved in zip(self.param_groups, saved_groups):
            groups.append(dict(saved, params=mine["params"]))
            if "param_names" in mine:
                groups[-1].setdefault("param_names", mine["param_names"])
        self.param_groups = groups

    def __repr__(self):
        text = type(self).__name__ + " ("
        for i, group in enumerate(self.param_groups):
            text += f"\nParameter Group {i}\n"
            for key in sorted(group):
                if key != "params":
                    text += f"    {key}: {group[key]}\n"
        return text + ")"


def _export(key, value):
    """A state value as state_dict shows it: an int 'step' becomes a float32 0-d tensor."""
    if key == "step" and isinstance(value, int):
        return Tensor._wrap(carray.asarray(float(value), dtype=carray.float32))
    return value


def _import(key, value, param):
    """A loaded state value for param: 'step' back to an int, floating tensors to the
    parameter's dtype and device."""
    if key == "step":
        return int(value.item() if isinstance(value, Tensor) else value)
    if isinstance(value, Tensor):
        data = value.array
        if is_floating(param.array.dtype) and is_floating(data.dtype) and \
                data.dtype != param.array.dtype:
            data = data.astype(param.array.dtype)
        if data.device != param.array.device:
            data = data.to(param.array.device)
        if data is not value.array:
            value = Tensor._wrap(data)
    return value


def _typename(obj):
    if isinstance(obj, Tensor):
        return "autograd.Tensor"
    cls = type(obj)
    return cls.__name__ if cls.__module__ == "builtins" else f"{cls.__module__}.{cls.__name__}"
