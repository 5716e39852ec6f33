"""dtype objects, dtype parsing and NumPy 2 type promotion.

carray has NumPy's bool, int8/16/32/64, uint8/16/32/64, float16, float32, float64, complex64 and
complex128, and bfloat16 (as PyTorch and ml_dtypes have it). The one deliberate difference from
NumPy is the default float: float32 (Python floats and float factories without dtype= give
float32; Python complex numbers give complex64).
"""

cdef tuple _NAMES = ("bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32",
                     "uint64", "float32", "float64", "float16", "bfloat16", "complex64",
                     "complex128")
DTYPE_NAMES = _NAMES        # by type number: the numbers every per-dtype table is indexed by
cdef tuple _KINDS = ("b", "i", "i", "i", "i", "u", "u", "u", "u", "f", "f", "f", "V", "c", "c")
cdef tuple _CHARS = ("?", "b", "h", "i", "l", "B", "H", "I", "L", "f", "d", "e", "E", "F", "D")
cdef tuple _SIZES = (1, 1, 2, 4, 8, 1, 2, 4, 8, 4, 8, 2, 2, 8, 16)
# bfloat16 has no array-interface type code: '<V2' (raw 2 bytes), as ml_dtypes' bfloat16 reports
cdef tuple _TYPESTRS = ("|b1", "|i1", "<i2", "<i4", "<i8", "|u1", "<u2", "<u4", "<u8", "<f4", "<f8",
                        "<f2", "<V2", "<c8", "<c16")
# the value range of each integer type (bool: 0..1, floats: None)
cdef tuple _RANGES = ((0, 1), (-2**7, 2**7 - 1), (-2**15, 2**15 - 1), (-2**31, 2**31 - 1),
                      (-2**63, 2**63 - 1), (0, 2**8 - 1), (0, 2**16 - 1), (0, 2**32 - 1),
                      (0, 2**64 - 1), None, None, None, None, None, None)


cdef class DType:
    """One of carray's dtypes: name, itemsize, kind ('b', 'i', 'u', 'f', 'c'; bfloat16's is 'V'
    as ml_dtypes reports it) and NumPy char code.

    Compares equal to its name ('float32'), to NumPy's dtype and scalar type of the same name, and
    to the Python type that maps to it (float -> float32, int -> int64, bool -> bool).
    """

    def __init__(self, *args, **kwargs):
        raise TypeError("cannot create carray dtypes; use carray.float32, carray.int64, ...")

    @property
    def str(self):
        """The array-interface type string, e.g. '<f4' (NumPy's dtype.str)."""
        return _TYPESTRS[self.num]

    @property
    def type(self):
        """The Python type whose values this dtype holds (bool, int, float or complex)."""
        return (bool, int, float, complex)[kind_rank(self.num)]

    def __repr__(self):
        return f"dtype('{self.name}')"

    def __str__(self):
        return self.name

    def __hash__(self):
        return hash(self.name)

    def __eq__(self, other):
        if isinstance(other, DType):
            return self is other
        try:
            return as_dtype(other) is self
        except TypeError:
            return False

    def __ne__(self, other):
        return not self.__eq__(other)

    def __reduce__(self):
        return (as_dtype, (self.name,))


cdef DType _make(int num):
    cdef DType d = DType.__new__(DType)
    d.name = _NAMES[num]
    d.num = num
    d.itemsize = _SIZES[num]
    d.kind = _KINDS[num]
    d.char = _CHARS[num]
    return d


cdef tuple DTYPES = tuple(_make(i) for i in range(NTYPES))
(bool_, int8, int16, int32, int64, uint8, uint16, uint32, uint64, float32, float64, float16, bfloat16,
 complex64, complex128) = DTYPES


cdef DType dtype_of(int num):
    """The dtype object of type number num."""
    return <DType>DTYPES[num]

cdef dict _ALIASES = {
    "bool": bool_, "bool_": bool_, "?": bool_, "b1": bool_, "|b1": bool_,
    "int32": int32, "i4": int32, "<i4": int32, "=i4": int32, "i": int32, "intc": int32,
    "int64": int64, "i8": int64, "<i8": int64, "=i8": int64, "l": int64, "q": int64,
    "int": int64, "int_": int64, "long": int64, "longlong": int64, "intp": int64,
    "float32": float32, "f4": float32, "<f4": float32, "=f4": float32, "f": float32,
    "single": float32, "float": float32,
    "float64": float64, "f8": float64, "<f8": float64, "=f8": float64, "d": float64,
    "double": float64,
    "int8": int8, "i1": int8, "|i1": int8, "<i1": int8, "=i1": int8, "b": int8, "byte": int8,
    "int16": int16, "i2": int16, "<i2": int16, "=i2": int16, "h": int16, "short": int16,
    "uint8": uint8, "u1": uint8, "|u1": uint8, "<u1": uint8, "=u1": uint8, "B": uint8,
    "ubyte": uint8,
    "uint16": uint16, "u2": uint16, "<u2": uint16, "=u2": uint16, "H": uint16, "ushort": uint16,
    "uint32": uint32, "u4": uint32, "<u4": uint32, "=u4": uint32, "I": uint32, "uintc": uint32,
    "uint64": uint64, "u8": uint64, "<u8": uint64, "=u8": uint64, "L": uint64, "Q": uint64,
    "uint": uint64, "ulong": uint64, "ulonglong": uint64, "uintp": uint64,
    "float16": float16, "f2": float16, "<f2": float16, "=f2": float16, "e": float16,
    "half": float16,
    "bfloat16": bfloat16, "E": bfloat16,
    "complex64": complex64, "c8": complex64, "<c8": complex64, "=c8": complex64, "F": complex64,
    "csingle": complex64,
    "complex128": complex128, "c16": complex128, "<c16": complex128, "=c16": complex128,
    "D": complex128, "cdouble": complex128, "complex": complex128,
}


cpdef DType as_dtype(object obj):
    """Return the carray dtype named by `obj`.

    Accepts a carray dtype, a name or type string ('float32', 'f4', 'int'), the Python types
    bool/int/float (float means float32, carray's default float), or NumPy's dtype and scalar
    type objects. Raises TypeError for anything else ("data type 'x' not understood").
    """
    if isinstance(obj, DType):
        return <DType>obj
    if obj is float:
        return float32
    if obj is int:
        return int64
    if obj is bool:
        return bool_
    if obj is complex:
        return complex64
    key = obj
    if not isinstance(obj, str):
        # NumPy dtype objects have .name; NumPy scalar types have __name__ ('float32', 'bool').
        key = getattr(obj, "name", None)
        if not isinstance(key, str):
            key = getattr(obj, "__name__", None)
        if not isinstance(key, str):
            raise TypeError(f"data type {obj!r} not understood")
    found = _ALIASES.get(key)
    if found is None:
        raise TypeError(f"data type {obj!r} not understood; expected one of "
                        f"{', '.join(_NAMES)}")
    return <DType>found


cdef int _float_holding(int num):
    """The smallest real float that holds every value of bool/int/float type num exactly (NumPy's
    rule: float16 for 1-byte ints, float32 for 2-byte ones, float64 beyond)."""
    if is_float_num(num):
        return num
    return (FLOAT16, FLOAT16, FLOAT32, FLOAT64, FLOAT64)[(0, 1, 2, 4, 8).index(
        0 if num == BOOL else itemsize_of(num))]


cdef int _promote_float(int a, int b):
    """Promotion of two real float types: the wider one; float16 with bfloat16 gives float32."""
    if a == b:
        return a
    if is_half_num(a) and is_half_num(b):
        return FLOAT32
    if itemsize_of(a) == itemsize_of(b):
        return a
    return a if itemsize_of(a) > itemsize_of(b) else b


cdef int _promote_rule(int a, int b):
    """NumPy 2's promotion of two type numbers, from kinds and sizes (fills _PROMOTE). bfloat16
    promotes as ml_dtypes and PyTorch do: with ints as float16 would, with float16 to float32."""
    cdef int ka = kind_rank(a), kb = kind_rank(b), ia = itemsize_of(a), ib = itemsize_of(b)
    if a == b:
        return a
    if ka > kb:
        a, b, ka, kb, ia, ib = b, a, kb, ka, ib, ia
    if a == BOOL:
        return b
    if kb == 3:
        # complex with anything: the complex type of the promoted component floats
        part = _promote_float(_float_holding(a) if ka < 3 else
                              (FLOAT32 if a == COMPLEX64 else FLOAT64),
                              FLOAT32 if b == COMPLEX64 else FLOAT64)
        return COMPLEX128 if part == FLOAT64 else COMPLEX64
    if kb == 2:
        if ka == 1 and ia == 1 and is_half_num(b):
            return b
        return _promote_float(_float_holding(a), b)
    # two integers
    if is_unsigned_num(a) == is_unsigned_num(b):
        return a if ia > ib else b
    if is_unsigned_num(a):
        a, b, ia, ib = b, a, ib, ia
    # a signed, b unsigned: the signed type that holds both, float64 beyond int64
    if ia > ib:
        return a
    return (INT16, INT32, INT64, FLOAT64)[(1, 2, 4, 8).index(ib)]


cdef int _PROMOTE[NTYPES][NTYPES]


cdef int _fill_promote() except -1:
    cdef int a, b
    for a in range(NTYPES):
        for b in range(NTYPES):
            _PROMOTE[a][b] = _promote_rule(a, b)
    return 0


_fill_promote()


cdef int promote_nums(int a, int b) noexcept:
    """The NumPy 2 promotion of two array dtypes (type numbers)."""
    return _PROMOTE[a][b]


# the order of NumPy's type numbers over carray's dtypes (bfloat16 beside float16): promote_seq's
# "main" dtype is the highest
cdef tuple _NUMPY_TYPENUM = (0, 1, 3, 5, 7, 2, 4, 6, 8, 11, 12, 9, 10, 13, 14)


cdef int promote_seq(list nums) except -2:
    """NumPy 2's promotion of several dtypes (type numbers; -1 for an empty list), which is not
    a pairwise fold (int8, uint16, float32 give float32, not float64): every dtype is promoted
    with the "main" one (the highest in NumPy's type order), and those results together."""
    if not nums:
        return -1
    cdef int main = nums[0], num, result = -1
    for num in nums:
        if _NUMPY_TYPENUM[num] > _NUMPY_TYPENUM[main]:
            main = num
    for num in nums:
        num = _PROMOTE[main][num]
        result = num if result < 0 else _PROMOTE[result][num]
    return result


cdef int int_fits(object value, int num) except -1:
    """1 when the Python int `value` lies in the range of integer (or bool) type num, else 0."""
    lo, hi = _RANGES[num]
    return 1 if lo <= value <= hi else 0


cdef int default_float_num() noexcept:
    return FLOAT32


def promote_types(type1, type2):
    """The smallest dtype to which both dtypes can be safely cast (NumPy 2 rules)."""
    return DTYPES[promote_nums((<DType>as_dtype(type1)).num, (<DType>as_dtype(type2)).num)]


def result_type(*arrays_and_dtypes):
    """The dtype of an operation on the given arrays, dtypes and Python scalars (NumPy 2 rules).

    Arrays and dtypes are "strong"; Python bool/int/float scalars are "weak": they take the
    strong operands' dtype within their kind (int32 array + 1 -> int32) and only raise the kind
    when needed (int array + 1.5 -> float32, the default float; bool array + 1 -> int64).
    Raises ValueError when given nothing.
    """
    if not arrays_and_dtypes:
        raise ValueError("at least one array or dtype is required")
    cdef int strong = -1
    cdef int weak_rank = -1
    cdef int num
    cdef list strongs = []
    for x in arrays_and_dtypes:
        if isinstance(x, bool):
            weak_rank = max(weak_rank, 0)
        elif isinstance(x, int):
            weak_rank = max(weak_rank, 1)
        elif isinstance(x, float) and not hasattr(x, "dtype"):    # np.float64 is strong
            weak_rank = max(weak_rank, 2)
        elif isinstance(x, complex) and not hasattr(x, "dtype"):  # complex64, or 128 beside f8
            weak_rank = max(weak_rank, 3)
        else:
            d = None if isinstance(x, (type, str, DType)) else getattr(x, "dtype", None)
            strongs.append((<DType>as_dtype(x if d is None else d)).num)
    strong = promote_seq(strongs)
    if strong < 0:
        return DTYPES[(BOOL, INT64, FLOAT32, COMPLEX64)[weak_rank]]
    if weak_rank > kind_rank(strong):
        if weak_rank == 3 and strong == FLOAT64:
            return DTYPES[COMPLEX128]
        return DTYPES[(BOOL, INT64, FLOAT32, COMPLEX64)[weak_rank]]
    return DTYPES[strong]
