"""Containers: Sequential (runs its children in order), ModuleList and ModuleDict (hold modules),
ParameterList and ParameterDict (hold parameters)."""

import operator
from collections import OrderedDict
from collections.abc import Mapping

from autograd._defaults import scalar_type_name
from autograd.nn.module import Module, _addindent
from autograd.nn.parameter import Parameter
from autograd.tensor import Tensor

__all__ = ["ModuleList", "Sequential",
           "ModuleDict", "ParameterDict", "ParameterList"]  # h3


def _index(n, idx):
    """idx wrapped into [0, n) (IndexError when out of range)."""
    idx = operator.index(idx)
    if not -n <= idx < n:
        raise IndexError(f"index {idx} is out of range")
    return idx % n


class _Numbered(Module):
    """What Sequential and ModuleList share: children named "0", "1", ... in order."""

    def __delitem__(self, idx):
        keys = list(self._modules)
        doomed = keys[idx] if isinstance(idx, slice) else [keys[_index(len(keys), idx)]]
        for key in doomed:
            del self._modules[key]
        self.__dict__["_modules"] = OrderedDict(
            (str(i), m) for i, m in enumerate(self._modules.values()))

    def __len__(self):
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules.values())


class Sequential(_Numbered):
    """Sequential(*modules) or Sequential(OrderedDict(name=module)): forward feeds the input
    through the children in order."""

    def __init__(self, *args):
        super().__init__()
        if len(args) == 1 and isinstance(args[0], OrderedDict):
            for key, module in args[0].items():
                self.add_module(key, module)
        else:
            for i, module in enumerate(args):
                self.add_module(str(i), module)

    def forward(self, input):
        for module in self._modules.values():
            input = module(input)
        return input

    def __getitem__(self, idx):
        """The idx-th child, or a Sequential of the children a slice selects."""
        if isinstance(idx, slice):
            return type(self)(OrderedDict(list(self._modules.items())[idx]))
        return list(self._modules.values())[_index(len(self._modules), idx)]

    def __setitem__(self, idx, module):
        key = list(self._modules)[_index(len(self._modules), idx)]
        setattr(self, key, module)

    def append(self, module):
        """Add module at the end; returns self."""
        self.add_module(str(len(self)), module)
        return self

    def extend(self, modules):
        for module in modules:
            self.append(module)
        return self

    def insert(self, index, module):
        """Put module before position index (IndexError out of range); returns self."""
        n = len(self._modules)
        if not -n <= index <= n:
            raise IndexError(f"Index out of range: {index}")
        if index < 0:
            index += n
        mods = list(self._modules.values())
        mods.insert(index, module)
        self.__dict__["_modules"] = OrderedDict()
        for i, m in enumerate(mods):
            self.add_module(str(i), m)
        return self

    def pop(self, idx):
        module = self[idx]
        del self[idx]
        return module

    def __add__(self, other):
        """A new Sequential of self's modules, then other's (ValueError unless other is a
        Sequential)."""
        return Sequential(*self, *_sequential(other))

    def __iadd__(self, other):
        return self.extend(_sequential(other))

    def __mul__(self, times):
        """A new Sequential of self's modules repeated times (> 0) times."""
        if not isinstance(times, int) or isinstance(times, bool):
            raise TypeError(f"unsupported operand type(s) for *: {type(self)} and "
                            f"{type(times)}")
        if times <= 0:
            raise ValueError(f"Non-positive multiplication factor {times} for {type(self)}")
        return Sequential(*(list(self) * times))

    __rmul__ = __mul__


def _sequential(other):
    """other, when it is a Sequential (ValueError otherwise, as PyTorch's + and +=)."""
    if not isinstance(other, Sequential):
        raise ValueError(f"add operator supports only objects of Sequential class, but "
                         f"{type(other)} is given.")
    return other


class ModuleList(_Numbered):
    """ModuleList(modules=None): a list of modules whose parameters the parent Module sees."""

    def __init__(self, modules=None):
        super().__init__()
        if modules is not None:
            self.extend(modules)

    def __getitem__(self, idx):
        if isinstance(idx, slice):
            return type(self)(list(self._modules.values())[idx])
        return self._modules[str(_index(len(self._modules), idx))]

    def __setitem__(self, idx, module):
        self.add_module(str(_index(len(self._modules), idx)), module)

    def __iadd__(self, modules):
        return self.extend(modules)

    def __add__(self, other):
        return ModuleList(list(self) + list(other))

    def append(self, module):
        """Add module at the end; returns self."""
        self.add_module(str(len(self)), module)
        return self

    def extend(self, modules):
        """Append each of modules (TypeError when it is not iterable); returns self."""
        try:
            modules = list(modules)
        except TypeError:
            raise TypeError(f"ModuleList.extend should be called with an iterable, but got "
                            f"{type(modules).__name__}") from None
        for module in modules:
            self.append(module)
        return self

    def insert(self, index, module):
        """Put module before position index."""
        mods = list(self._modules.values())
        mods.insert(index, module)
        self.__dict__["_modules"] = OrderedDict()
        for i, m in enumerate(mods):
            self.add_module(str(i), m)

    def pop(self, idx):
        module = self[idx]
        del self[idx]
        return module

    def __repr__(self):
        """PyTorch's compressed form: runs of equal children print once as '(0-2): 3 x ...'."""
        reprs = [repr(m) for m in self]
        if not reprs:
            return self._get_name() + "()"
        blocks = []  # [start, end, text]
        for i, r in enumerate(reprs):
            if blocks and blocks[-1][2] == r:
                blocks[-1][1] = i
            else:
                blocks.append([i, i, r])
        lines = []
        for start, end, text in blocks:
            head = f"({start})" if start == end else f"({start}-{end}): {end - start + 1} x"
            lines.append(_addindent(f"{head}: {text}" if start == end else f"{head} {text}", 2))
        return self._get_name() + "(\n  " + "\n  ".join(lines) + "\n)"


# ---------------------------------------------------------------------------------------------
# h3: ModuleDict, ParameterList, ParameterDict
# ---------------------------------------------------------------------------------------------


def _pairs(kind, values):
    """(key, value) pairs of a mapping or of an iterable of pairs (TypeError / ValueError as
    PyTorch's update())."""
    if isinstance(values, (OrderedDict, dict, Mapping, ModuleDict, ParameterDict)):
        return list(values.items())
    if not hasattr(values, "__iter__"):
        raise TypeError(f"{kind}.update should be called with an iterable of key/value pairs, "
                        f"but got {type(values).__name__}")
    out = []
    for j, pair in enumerate(values):
        if not hasattr(pair, "__iter__") or isinstance(pair, (str, bytes)):
            raise TypeError(f"{kind} update sequence element #{j} should be Iterable; is "
                            f"{type(pair).__name__}")
        pair = list(pair)
        if len(pair) != 2:
            raise ValueError(f"{kind} update sequence element #{j} has length {len(pair)}; 2 is "
                             f"required")
        out.append((pair[0], pair[1]))
    return out


class ModuleDict(Module):
    """ModuleDict(modules=None): an ordered dict of named child modules (state_dict keys are
    "<key>.<name>"). KeyError for a missing key, TypeError for a value that is not a Module."""

    def __init__(self, modules=None):
        super().__init__()
        if modules is not None:
            self.update(modules)

    def __getitem__(self, key):
        return self._modules[key]

    def __setitem__(self, key, module):
        self.add_module(key, module)

    def __delitem__(self, key):
        del self._modules[key]

    def __len__(self):
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules)

    def __contains__(self, key):
        return key in self._modules

    def clear(self):
        """Remove every module."""
        self._modules.clear()

    def pop(self, key):
        """Remove the module at key and return it."""
        module = self[key]
        del self[key]
        return module

    def keys(self):
        return self._modules.keys()

    def items(self):
        return self._modules.items()

    def values(self):
        return self._modules.values()

    def update(self, modules):
        """Add (or replace) each (key, module) of a mapping or an iterable of pairs."""
        for key, module in _pairs("ModuleDict", modules):
            self[key] = module


def _param_line(key, p, typename):
    if isinstance(p, Tensor):
        size = "x".join(str(n) for n in p.shape)
        kind = "Parameter" if isinstance(p, Parameter) else "Tensor"
        device = f" ({p.device})" if str(p.device) != "cpu" else ""
        return f"  ({key}): {kind} containing: [{typename(p)} of size {size}{device}]"
    return f"  ({key}): Object of type: {type(p).__name__}"


def _as_parameter(value):
    """Tensors (not Parameters) become Parameters, as PyTorch's containers do."""
    if isinstance(value, Tensor) and not isinstance(value, Parameter):
        return Parameter(value)
    return value


class ParameterList(Module):
    """ParameterList(values=None): a list of parameters registered under "0", "1", ... (tensors
    are made Parameters; other objects are kept as plain attributes)."""

    def __init__(self, values=None):
        super().__init__()
        self._size = 0
        if values is not None:
            self += values

    def _key(self, idx):
        idx = operator.index(idx)
        if not -self._size <= idx < self._size:
            raise IndexError(f"index {idx} is out of range")
        return str(idx % self._size)

    def __getitem__(self, idx):
        if isinstance(idx, slice):
            return type(self)([self[i] for i in range(self._size)[idx]])
        return getattr(self, self._key(idx))

    def __setitem__(self, idx, param):
        setattr(self, self._key(idx), _as_parameter(param))

    def __len__(self):
        return self._size

    def __iter__(self):
        return (self[i] for i in range(self._size))

    def __iadd__(self, parameters):
        return self.extend(parameters)

    def __dir__(self):
        return [k for k in super().__dir__() if not k.isdigit()]

    def append(self, value):
        """Add value at the end; returns self."""
        self._size += 1
        setattr(self, str(self._size - 1), _as_parameter(value))
        return self

    def extend(self, values):
        """Append each of values (TypeError when it is not iterable or is a Tensor); returns
        self."""
        if not hasattr(values, "__iter__") or isinstance(values, Tensor):
            raise TypeError(f"ParameterList.extend should be called with an iterable, but got "
                            f"{type(values).__name__}")
        for value in values:
            self.append(value)
        return self

    def extra_repr(self):
        return "\n".join(_param_line(k, p, lambda t: f"autograd.{t.dtype}")
                         for k, p in enumerate(self))


class ParameterDict(Module):
    """ParameterDict(parameters=None): an ordered dict of parameters registered under their keys
    (state_dict keys are the keys). KeyError for a missing key."""

    def __init__(self, parameters=None):
        super().__init__()
        self._keys = {}
        if parameters is not None:
            self.update(parameters)

    def __getitem__(self, key):
        if key not in self._keys:
            raise KeyError(key)
        return getattr(self, key)

    def __setitem__(self, key, value):
        if not isinstance(key, str):
            raise TypeError(f"module name should be a string. Got {type(key).__name__}")
        self._keys[key] = None
        setattr(self, key, _as_parameter(value))

    def __delitem__(self, key):
        del self._keys[key]
        delattr(self, key)

    def __len__(self):
        return len(self._keys)

    def __iter__(self):
        return iter(self._keys)

    def __reversed__(self):
        return reversed(list(self._keys))

    def __contains__(self, key):
        return key in self._keys

    def copy(self):
        """A new ParameterDict holding the same parameters."""
        return ParameterDict(OrderedDict((k, self[k]) for k in self._keys))

    def setdefault(self, key, default=None):
        if key not in self:
            self[key] = default
        return self[key]

    def clear(self):
        for key in list(self._keys):
            del self[key]

    def pop(self, key):
        value = self[key]
        del self[key]
        return value

    def popitem(self):
        key = list(self._keys)[-1]
        return key, self.pop(key)

    def get(self, key, default=None):
        return self[key] if key in self else default

    def fromkeys(self, keys, default=None):
        return ParameterDict((k, default) for k in keys)

    def keys(self):
        return self._keys.keys()

    def items(self):
        return ((k, self[k]) for k in self._keys)

    def values(self):
        return (self[k] for k in self._keys)

    def update(self, parameters):
        """Add (or replace) each (key, value) of a mapping or an iterable of pairs (a plain
        mapping's keys in sorted order, as PyTorch; an OrderedDict's in its order)."""
        pairs = _pairs("ParameterDict", parameters)
        if isinstance(parameters, Mapping) and not isinstance(parameters, OrderedDict):
            pairs = sorted(pairs)
        for key, value in pairs:
            self[key] = value

    def extra_repr(self):
        return "\n".join(_param_line(k, p, lambda t: f"autograd.{scalar_type_name(t.dtype)}"
                                                      f"Tensor")
                         for k, p in self.items())
