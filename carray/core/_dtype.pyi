# Stub for the compiled module carray.core._dtype: the dtypes and NumPy 2 promotion.
import builtins
from typing import Any, Protocol

from typing_extensions import TypeAlias

class _HasName(Protocol):
    # NumPy's dtype objects (their .name picks the carray dtype)
    @property
    def name(self) -> str: ...

# what a dtype= argument takes: a carray dtype, a name or type string ('float32', 'f4', 'int'),
# the Python types bool/int/float, or NumPy's dtype and scalar type objects
_DTypeLike: TypeAlias = DType | str | type | _HasName

# the dtype names by type number (the order of every per-dtype table)
DTYPE_NAMES: tuple[str, ...]

class DType:
    # (builtins.str/type below: this class has properties named str and type)
    # read-only attributes
    @property
    def name(self) -> builtins.str: ...
    @property
    def num(self) -> int: ...
    @property
    def itemsize(self) -> int: ...
    @property
    def kind(self) -> builtins.str: ...
    @property
    def char(self) -> builtins.str: ...
    @property
    def str(self) -> builtins.str: ...
    @property
    def type(self) -> builtins.type[bool | int | float | complex]: ...
    # (not constructible: use carray.float32, carray.dtype("int64"), ...)
    def __hash__(self) -> int: ...
    def __eq__(self, other: object, /) -> bool: ...
    def __ne__(self, other: object, /) -> bool: ...
    def __reduce__(self) -> tuple[Any, ...]: ...

# the dtypes
bool_: DType
int32: DType
int64: DType
float32: DType
float64: DType
int8: DType
int16: DType
uint8: DType
uint16: DType
uint32: DType
uint64: DType
float16: DType
bfloat16: DType
complex64: DType
complex128: DType

def as_dtype(obj: _DTypeLike) -> DType: ...

# -- promotion (NumPy 2 rules) --------------------------------------------------------------
def promote_types(type1: _DTypeLike, type2: _DTypeLike) -> DType: ...
def result_type(*arrays_and_dtypes: Any) -> DType: ...
