"""dtype objects, dtype parsing and NumPy 2 type promotion.

carray has five dtypes: bool, int32, int64, float32, float64. The one deliberate difference from
NumPy is the default float: float32 (Python floats and float factories without dtype= give float32).
"""

cdef tuple _NAMES = ("bool", "int32", "int64", "float32", "float64")
DTYPE_NAMES = _NAMES        # by type number: the numbers every per-dtype table is indexed by
cdef tuple _KINDS = ("b", "i", "i", "f", "f")
cdef tuple _CHARS = ("?", "i", "l", "f", "d")
cdef tuple _SIZES = (1, 4, 8, 4, 8)

# kind order for promotion: bool < int < float
cdef int _KIND_RANK[NTYPES]
_KIND_RANK[:] = [0, 1, 1, 2, 2]


cdef class DType:
    """One of carray's five dtypes: name, itemsize, kind ('b', 'i', 'f') and NumPy char code.

    Compares equal to its name ('float32'), to NumPy's dtype and scalar type of the same name, and
    to the Python type that maps to it (float -> float32, int -> int64, bool -> bool).
    """

    def __init__(self, *args, **kwargs):
        raise TypeError("cannot create carray dtypes; use carray.float32, carray.int64, ...")

    @property
    def str(self):
        """The array-interface type string, e.g. '<f4' (NumPy's dtype.str)."""
        return ("|b1", "<i4", "<i8", "<f4", "<f8")[self.num]

    @property
    def type(self):
        """The Python type whose values this dtype holds (bool, int or float)."""
        return (bool, int, int, float, float)[self.num]

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
bool_, int32, int64, float32, float64 = DTYPES


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
                        f"bool, int32, int64, float32, float64")
    return <DType>found


cdef int promote_nums(int a, int b) noexcept:
    """The NumPy 2 promotion of two array dtypes (type numbers)."""
    if a == b:
        return a
    if a > b:
        a, b = b, a
    # now a < b
    if b == FLOAT32 and a == INT32 or b == FLOAT32 and a == INT64:
        return FLOAT64      # float32 cannot hold every int32/int64 exactly: NumPy goes to float64
    return b


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
    for x in arrays_and_dtypes:
        if isinstance(x, bool):
            weak_rank = max(weak_rank, 0)
        elif isinstance(x, int):
            weak_rank = max(weak_rank, 1)
        elif isinstance(x, float) and not hasattr(x, "dtype"):    # np.float64 is strong
            weak_rank = max(weak_rank, 2)
        else:
            d = None if isinstance(x, (type, str, DType)) else getattr(x, "dtype", None)
            num = (<DType>as_dtype(x if d is None else d)).num
            strong = num if strong < 0 else promote_nums(strong, num)
    if strong < 0:
        return DTYPES[(BOOL, INT64, FLOAT32)[weak_rank]]
    if weak_rank > _KIND_RANK[strong]:
        return DTYPES[(BOOL, INT64, FLOAT32)[weak_rank]]
    return DTYPES[strong]
