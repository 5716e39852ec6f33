"""Operand layouts for kernels: broadcast, coalesced and packed into the structs kernels take.

Strides are in elements. An operand is a device Array (its buffer, offset and strides) or a host
0-d Array (a scalar passed by value). Dims of size 1 are dropped and neighbouring dims merged when
every operand steps through them as one, so most work runs at rank 1; when every operand then
has stride 1 the kernel takes the flat fast path.
"""

import struct

from carray.core._dtype import DTYPE_NAMES

INT_LIMIT = 2**31 - 1
_FORMAT_BY_NAME = {"bool": "B", "int8": "b", "int16": "h", "int32": "i", "int64": "q", "uint8": "B",
                   "uint16": "H", "uint32": "I", "uint64": "Q", "float32": "f", "float64": "d",
                   # 2-byte floats travel as their raw bits; complex as (real, imag)
                   "float16": "e", "bfloat16": "H", "complex64": "2f", "complex128": "2d"}
SCALAR_FORMATS = tuple(_FORMAT_BY_NAME[name] for name in DTYPE_NAMES)  # by carray type number


def broadcast_strides(shape, a_shape, a_strides):
    """a's element strides seen at `shape` (0 along new and size-1 dims)."""
    k = len(shape) - len(a_shape)
    return (0,) * k + tuple(0 if n == 1 else s for n, s in zip(a_shape, a_strides))


def coalesce(shape, strides):
    """(shape, strides) with size-1 dims dropped and mergeable neighbours merged; strides is a
    list of per-operand stride tuples. Rank at least 1."""
    dims = [d for d in range(len(shape)) if shape[d] != 1]
    if not dims:
        return [1], [[0] for _ in strides]
    out_shape = [shape[dims[0]]]
    out_st = [[st[dims[0]]] for st in strides]
    for d in dims[1:]:
        n = shape[d]
        if all(ost[-1] == st[d] * n for ost, st in zip(out_st, strides)):
            out_shape[-1] *= n
            for ost, st in zip(out_st, strides):
                ost[-1] = st[d]
        else:
            out_shape.append(n)
            for ost, st in zip(out_st, strides):
                ost.append(st[d])
    return out_shape, out_st


def index_type(n, shape, strides, offsets):
    """'int' when every index the kernel computes fits 32 bits, else 'long'."""
    if n > INT_LIMIT:
        return "long"
    for st, off in zip(strides, offsets):
        extent = off + sum(abs(s) * (m - 1) for s, m in zip(st, shape))
        if extent > INT_LIMIT:
            return "long"
    return "int"


def pack(idx, values):
    """values as the bytes of an array of IDX (kernel struct arguments by value)."""
    return struct.pack(("i" if idx == "int" else "q") * len(values), *values)


def numbered(fmt, first, values):
    """[index, bytes, ...] as submit() takes by-value arguments: values packed with the struct
    format fmt ("i": int, "q": long) as the kernel's arguments first, first + 1, ..."""
    return [v for i, x in enumerate(values, first) for v in (i, struct.pack(fmt, x))]


def long_arg(v):
    """v as the bytes of a `long` kernel argument."""
    return struct.pack("q", v)


def int_arg(v):
    """v (an int or bool) as the bytes of an `int` kernel argument."""
    return struct.pack("i", int(v))


def optional_operand(a, fallback):
    """(buffer, offset, present flag) of an optional operand for kernels that take one; absent:
    fallback's buffer, which the kernel does not read."""
    if a is None:
        return [fallback._cl()[0], long_arg(0), int_arg(0)]
    return [*dense_operand(a), int_arg(1)]


def pack_scalar(num, value):
    """A Python scalar as the bytes of one kernel argument of carray type `num`."""
    if DTYPE_NAMES[num] == "bfloat16":      # its bits: the top half of the float32 (exact)
        return struct.pack("<H", struct.unpack("<I", struct.pack("<f", value))[0] >> 16)
    return struct.pack(SCALAR_FORMATS[num], value)


def dense_operand(a):
    """(buffer, offset as a packed long) of a device array made C-contiguous (copied when it is
    not): the two arguments of kernels that read an operand densely from its offset."""
    if not a.flags.c_contiguous:
        a = a.copy()
    buf, off = a._cl()[:2]
    return buf, struct.pack("q", off)


def whole(a):
    """a device array C-contiguous from its buffer's first element (a copy when it is not): for
    kernels that take an operand without an offset."""
    return a if a._cl()[1] == 0 and a.flags.c_contiguous else a.copy()
