"""autograd.Size: the type of Tensor.shape and Tensor.size() (torch.Size).

A tuple of ints (so it compares equal to tuples and unpacks like one) with numel() and
PyTorch's repr, `autograd.Size([2, 3])`. Slicing and concatenation with tuples give a Size.
"""

import operator

__all__ = ["Size"]


class Size(tuple):
    """The shape of a tensor: a tuple of ints. TypeError when an item is not an int."""

    __slots__ = ()

    def __new__(cls, sizes=()):
        try:
            return tuple.__new__(cls, [operator.index(s) for s in sizes])
        except TypeError:
            pass
        items = list(sizes)
        for i, s in enumerate(items):
            if not hasattr(s, "__index__"):
                raise TypeError(f"autograd.Size() takes an iterable of 'int' (item {i} is "
                                f"'{type(s).__name__}')") from None
        raise TypeError("autograd.Size() takes an iterable of 'int'")

    def numel(self):
        """The number of elements of a tensor of this shape (1 for the empty shape)."""
        n = 1
        for s in self:
            n *= s
        return n

    def __getitem__(self, key):
        out = tuple.__getitem__(self, key)
        return tuple.__new__(Size, out) if isinstance(key, slice) else out

    def __add__(self, other):
        if not isinstance(other, tuple):
            return NotImplemented
        return tuple.__new__(Size, tuple.__add__(self, other))

    def __radd__(self, other):
        if not isinstance(other, tuple):
            return NotImplemented
        return tuple.__new__(Size, tuple.__add__(other, self))

    def __mul__(self, n):
        return tuple.__new__(Size, tuple.__mul__(self, n))

    __rmul__ = __mul__

    def __repr__(self):
        return f"autograd.Size({list(self)})"

    __str__ = __repr__

    def __reduce__(self):
        return (Size, (tuple(self),))
