"""In-place carray steps shared by the optimizers (PyTorch's addcmul_/addcdiv_/lerp_), and the
zero state tensors they keep. Each works on carray arrays of any device."""

import carray as ca
from autograd.tensor import Tensor

__all__ = ["addcdiv_", "addcmul_", "full_state", "lerp_", "zeros_state"]


def zeros_state(p):
    """A zero tensor shaped like parameter p, on its device and of its dtype."""
    return Tensor._wrap(ca.zeros_like(p.array))


def full_state(p, value):
    """A tensor shaped like parameter p filled with value."""
    return Tensor._wrap(ca.full_like(p.array, value))


def addcmul_(out, a, b, value=1.0):
    """out += value * a * b in place; returns out."""
    t = ca.multiply(a, value) if value != 1 else a.copy()
    ca.multiply(t, b, out=t)
    return ca.add(out, t, out=out)


def addcdiv_(out, a, b, value=1.0):
    """out += value * a / b in place; returns out."""
    t = ca.divide(a, b)
    if value != 1:
        ca.multiply(t, value, out=t)
    return ca.add(out, t, out=out)


def lerp_(start, end, weight):
    """start += weight * (end - start) in place, with PyTorch's two formulas for precision."""
    diff = ca.subtract(end, start)
    if weight < 0.5:
        ca.add(start, ca.multiply(diff, weight, out=diff), out=start)
    else:
        ca.subtract(end, ca.multiply(diff, 1 - weight, out=diff), out=start)
    return start
