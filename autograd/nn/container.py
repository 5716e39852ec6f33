"""Containers of modules: Sequential (runs its children in order) and ModuleList (holds them)."""

import operator
from collections import OrderedDict

from autograd.nn.module import Module, _addindent

__all__ = ["ModuleList", "Sequential"]


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
