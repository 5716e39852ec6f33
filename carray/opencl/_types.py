"""carray's type numbers (from carray.core._dtype, where every per-dtype table is indexed) and the
OpenCL C type of each."""

from carray.core._dtype import DTYPE_NAMES

BOOL, INT32, INT64, FLOAT32, FLOAT64 = (DTYPE_NAMES.index(name) for name in
                                        ("bool", "int32", "int64", "float32", "float64"))

_CL_BY_NAME = {"bool": "uchar", "int32": "int", "int64": "long", "float32": "float",
               "float64": "double"}
CL_TYPES = tuple(_CL_BY_NAME[name] for name in DTYPE_NAMES)    # by carray type number
