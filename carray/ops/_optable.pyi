# Stub for the compiled module carray.ops._optable: the op table, every carray primitive declared
# once (the enums are cpdef enums of _optable.pxd: IntEnums in Python).
from enum import IntEnum
from typing import Literal

from typing_extensions import TypeAlias

# -- the dtype lists of the rows ------------------------------------------------------------

ALL_DTYPES: tuple[str, ...]
NUMERIC_DTYPES: tuple[str, ...]
INTEGER_DTYPES: tuple[str, ...]

# -- the enums: one member per primitive, by family -----------------------------------------

class Kind(IntEnum):  # the families of primitives
    UNARY = 0
    BINARY = 1
    COMPARE = 2
    PREDICATE = 3
    WHERE = 4
    REDUCE = 5
    SCAN = 6
    NN = 7

class UnaryOp(IntEnum):  # T -> T
    U_NEG = 0
    U_ABS = 1
    U_SIGN = 2
    U_EXP = 3
    U_LOG = 4
    U_LOG1P = 5
    U_EXPM1 = 6
    U_SQRT = 7
    U_SQUARE = 8
    U_RECIP = 9
    U_SIN = 10
    U_COS = 11
    U_TANH = 12
    U_FLOOR = 13
    U_CEIL = 14
    U_RELU = 15
    U_SIGMOID = 16
    U_INVERT = 17
    U_ARCSIN = 18
    U_ARCCOS = 19
    U_ARCTAN = 20
    U_SINH = 21
    U_COSH = 22
    U_ARCSINH = 23
    U_ARCCOSH = 24
    U_ARCTANH = 25
    U_ERF = 26
    U_ERFINV = 27
    NUNARY = 28

class BinaryOp(IntEnum):  # (T, T) -> T, broadcasting
    B_ADD = 0
    B_SUB = 1
    B_MUL = 2
    B_DIV = 3
    B_POW = 4
    B_MAX = 5
    B_MIN = 6
    B_FLOORDIV = 7
    B_MOD = 8
    B_AND = 9
    B_OR = 10
    B_XOR = 11
    B_ARCTAN2 = 12
    B_HYPOT = 13
    B_FMOD = 14
    B_LOGADDEXP = 15
    NBINARY = 16

class CompareOp(IntEnum):  # (T, T) -> bool
    C_EQ = 0
    C_NE = 1
    C_LT = 2
    C_LE = 3
    C_GT = 4
    C_GE = 5
    C_AND = 6
    C_OR = 7
    NCOMPARE = 8

class PredicateOp(IntEnum):  # T -> bool
    P_NOT = 0
    P_ISNAN = 1
    P_ISFINITE = 2
    NPREDICATE = 3

class WhereOp(IntEnum):  # (bool, T, T) -> T
    W_WHERE = 0
    NWHERE = 1

class ReduceOp(IntEnum):  # T over axes -> T
    R_SUM = 0
    R_PROD = 1
    R_MAX = 2
    R_MIN = 3
    NREDUCE = 4

class ScanOp(IntEnum):  # cumulative along one axis
    S_SUM = 0
    S_PROD = 1
    NSCAN = 2

class NNOp(IntEnum):  # the network kernels of carray.nn
    NN_CONV2D = 0
    NN_CONV2D_GRAD_INPUT = 1
    NN_CONV2D_GRAD_WEIGHT = 2
    NN_CONV2D_GRAD_BIAS = 3
    NN_MAX_POOL2D = 4
    NN_MAX_POOL2D_GRAD = 5
    NN_AVG_POOL2D = 6
    NN_AVG_POOL2D_GRAD = 7
    NN_SOFTMAX_CROSS_ENTROPY = 8
    NN_SOFTMAX_CROSS_ENTROPY_GRAD = 9
    NN_SGD_STEP = 10
    NN_SOFTMAX = 11
    NN_SOFTMAX_GRAD = 12
    NN_LOG_SOFTMAX = 13
    NN_LOG_SOFTMAX_GRAD = 14
    NN_LAYER_NORM = 15
    NN_LAYER_NORM_GRAD = 16
    NN_RMS_NORM = 17
    NN_RMS_NORM_GRAD = 18
    NNN = 19

class DTypeRule(IntEnum):  # how an op picks its compute dtype
    SAME = 0
    TO_FLOAT = 1
    BOOL_TO_INT = 2
    INTEGER = 3
    TO_BOOL = 4

class Identity(IntEnum):  # the reductions' identities, symbolic
    NO_IDENTITY = 0
    ZERO = 1
    ONE = 2
    LOWEST = 3
    HIGHEST = 4

# a row's code: the member of its kind's enum
_Code: TypeAlias = UnaryOp | BinaryOp | CompareOp | PredicateOp | WhereOp | ReduceOp | ScanOp | NNOp

# -- the rows -------------------------------------------------------------------------------

class Op:
    # one row of the op table; read-only by convention (its __slots__ are these attributes)
    name: str  # the public carray name
    kind: Kind
    code: _Code
    rule: DTypeRule
    dtypes: tuple[str, ...]  # the compute dtypes it takes
    identity: Identity  # (reductions)
    heavy: bool  # costly per element: the CPU loop goes parallel sooner
    grad: str | None  # the autograd function that differentiates it
    aliases: tuple[str, ...]  # other public names of the same function
    ufunc: str  # NumPy's ufunc name, for error messages
    bool_error: str | None  # TypeError message for bool input, or None
    doc: str
    # (rule=DTypeRule.SAME, dtypes=ALL_DTYPES, identity=Identity.NO_IDENTITY by default)
    def __init__(
        self,
        name: str,
        kind: Kind,
        code: _Code,
        rule: DTypeRule = ...,
        dtypes: tuple[str, ...] = ...,
        identity: Identity = ...,
        heavy: bool = False,
        grad: str | None = None,
        aliases: tuple[str, ...] = (),
        ufunc: str | None = None,
        bool_error: str | None = None,
        doc: str = "",
    ) -> None: ...

# shorthands of the table
U: Literal[Kind.UNARY]
B: Literal[Kind.BINARY]
C: Literal[Kind.COMPARE]
P: Literal[Kind.PREDICATE]
F: Literal[DTypeRule.TO_FLOAT]
I: Literal[DTypeRule.INTEGER]
BI: Literal[DTypeRule.BOOL_TO_INT]
TB: Literal[DTypeRule.TO_BOOL]

OPS: tuple[Op, ...]

# the backends' names of the nn kernels (carray.cpu._nn and carray.opencl._nn have each)
NN_BACKEND_NAMES: dict[NNOp, str]

# -- lookups --------------------------------------------------------------------------------

# the rows of one Kind, in enum order
def of_kind(kind: Kind | int) -> tuple[Op, ...]: ...

# the row of (kind, code); KeyError when there is none
def lookup(kind: Kind | int, code: int) -> Op: ...
