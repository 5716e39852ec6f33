"""carray's type numbers (from carray.core._dtype, where every per-dtype table is indexed) and the
OpenCL C type of each."""

from carray.core._dtype import DTYPE_NAMES

(BOOL, INT8, INT16, INT32, INT64, UINT8, UINT16, UINT32, UINT64, FLOAT32, FLOAT64, FLOAT16,
 BFLOAT16, COMPLEX64, COMPLEX128) = (
    DTYPE_NAMES.index(name) for name in
    ("bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float32",
     "float64", "float16", "bfloat16", "complex64", "complex128"))

_CL_BY_NAME = {"bool": "uchar", "int8": "char", "int16": "short", "int32": "int", "int64": "long",
               "uint8": "uchar", "uint16": "ushort", "uint32": "uint", "uint64": "ulong",
               "float32": "float", "float64": "double",
               # storage types: the 2-byte floats are their bits (vload_half/vstore_half and bit
               # shifts convert; no cl_khr_fp16 needed), complex is (real, imag)
               "float16": "ushort", "bfloat16": "ushort", "complex64": "float2",
               "complex128": "double2"}
CL_TYPES = tuple(_CL_BY_NAME[name] for name in DTYPE_NAMES)    # by carray type number
UNSIGNED = frozenset((UINT8, UINT16, UINT32, UINT64))
INTEGERS = frozenset((INT8, INT16, INT32, INT64)) | UNSIGNED
FLOATS = frozenset((FLOAT32, FLOAT64, FLOAT16, BFLOAT16))         # (real ones)
# the smallest and largest value of each type, as OpenCL C literals (max/min identities)
LIMITS = {BOOL: ("0", "1"), INT8: ("CHAR_MIN", "CHAR_MAX"), INT16: ("SHRT_MIN", "SHRT_MAX"),
          INT32: ("INT_MIN", "INT_MAX"), INT64: ("LONG_MIN", "LONG_MAX"), UINT8: ("0", "UCHAR_MAX"),
          UINT16: ("0", "USHRT_MAX"), UINT32: ("0", "UINT_MAX"), UINT64: ("0", "ULONG_MAX"),
          FLOAT32: ("-INFINITY", "INFINITY"), FLOAT64: ("-INFINITY", "INFINITY")}
