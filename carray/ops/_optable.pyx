"""The op table: every carray primitive, declared once.

A row says what the op is (its public name, kind and enum member), how it picks its compute
dtype, which dtypes have a loop, its identity (reductions), whether it is heavy (its CPU loop goes
parallel at a lower size) and which autograd function differentiates it. Everything else derives
from these rows: the public functions of carray.ops._ufunc and their names in error messages, the
reduction identities of both backends, the OpenCL expressions (keyed by the same enum members),
and the test lists. tests/carray/test_op_table.py checks that every row has a public function, a
CPU loop for each dtype it accepts, an OpenCL implementation and, when differentiable, an autograd
function.

Adding an elementwise op: one row here, one enum member in _optable.pxd, one tag and formula in
carray/cpu/_kernels.pxi, one expression in carray/opencl/_elementwise.py, one derivative in
autograd's elementwise table; the coverage test names whichever is missing.
"""

_SMALL_INTS = ("int8", "int16", "uint8", "uint16", "uint32", "uint64")
ALL_DTYPES = ("bool", "int32", "int64", "float32", "float64") + _SMALL_INTS
NUMERIC_DTYPES = ("int32", "int64", "float32", "float64") + _SMALL_INTS
INTEGER_DTYPES = ("bool", "int32", "int64") + _SMALL_INTS


class Op:
    """One row of the op table (see the module docstring); read-only by convention."""

    __slots__ = ("name", "kind", "code", "rule", "dtypes", "identity", "heavy", "grad",
                 "aliases", "ufunc", "bool_error", "doc")

    def __init__(self, name, kind, code, rule=DTypeRule.SAME, dtypes=ALL_DTYPES,
                 identity=Identity.NO_IDENTITY, heavy=False, grad=None, aliases=(),
                 ufunc=None, bool_error=None, doc=""):
        self.name = name            # the public carray name
        self.kind = kind            # a Kind
        self.code = code            # the member of the kind's enum (UnaryOp, BinaryOp, ...)
        self.rule = rule            # a DTypeRule
        self.dtypes = dtypes        # the compute dtypes it takes (each has a loop on every
                                    # backend); bool_error names why bool is not among them
        self.identity = identity    # an Identity (reductions)
        self.heavy = heavy          # costly per element: the CPU loop goes parallel sooner
        self.grad = grad            # the autograd function (by PyTorch's name) that
                                    # differentiates it, None when not differentiable
        self.aliases = aliases      # other public names of the same function
        self.ufunc = ufunc or name  # NumPy's ufunc name, for error messages
        self.bool_error = bool_error    # TypeError message for bool input (NumPy's), or None
        self.doc = doc

    def __repr__(self):
        return f"Op({self.name!r}, {self.kind!r}, {self.code!r})"


_NO_BOOL_NEG = ("The numpy boolean negative, the `-` operator, is not supported, use the `~` "
                "operator or the logical_not function instead.")
_NO_BOOL_SIGN = "ufunc 'sign' did not contain a loop with signature matching types bool"
_NO_BOOL_SUB = ("numpy boolean subtract, the `-` operator, is not supported, use the "
                "bitwise_xor, the `^` operator, or the logical_xor function instead.")

U, B, C, P = Kind.UNARY, Kind.BINARY, Kind.COMPARE, Kind.PREDICATE
F, I, BI, TB = DTypeRule.TO_FLOAT, DTypeRule.INTEGER, DTypeRule.BOOL_TO_INT, DTypeRule.TO_BOOL

OPS = (
    # -- unary: x -> y of the same shape ---------------------------------------------------------
    Op("negative", U, UnaryOp.U_NEG, dtypes=NUMERIC_DTYPES, grad="neg", bool_error=_NO_BOOL_NEG,
       doc="-x elementwise (TypeError for bool)."),
    Op("abs", U, UnaryOp.U_ABS, grad="abs", aliases=("absolute",), ufunc="absolute",
       doc="|x| elementwise."),
    Op("sign", U, UnaryOp.U_SIGN, dtypes=NUMERIC_DTYPES, grad="sign", bool_error=_NO_BOOL_SIGN,
       doc="-1, 0 or 1 by the sign of x (NaN stays NaN)."),
    Op("exp", U, UnaryOp.U_EXP, F, heavy=True, grad="exp",
       doc="e ** x elementwise (integers give float64)."),
    Op("log", U, UnaryOp.U_LOG, F, heavy=True, grad="log",
       doc="Natural logarithm elementwise (integers give float64)."),
    Op("log1p", U, UnaryOp.U_LOG1P, F, heavy=True, grad="log1p",
       doc="log(1 + x), accurate for small x."),
    Op("expm1", U, UnaryOp.U_EXPM1, F, heavy=True, grad="expm1",
       doc="exp(x) - 1, accurate for small x."),
    Op("sqrt", U, UnaryOp.U_SQRT, F, grad="sqrt", doc="Square root elementwise (NaN for negatives)."),
    Op("square", U, UnaryOp.U_SQUARE, BI, grad="square", doc="x * x elementwise."),
    Op("reciprocal", U, UnaryOp.U_RECIP, BI, grad="reciprocal",
       doc="1 / x elementwise (integers stay integers, truncated, as NumPy's)."),
    Op("sin", U, UnaryOp.U_SIN, F, heavy=True, grad="sin", doc="Sine elementwise."),
    Op("cos", U, UnaryOp.U_COS, F, heavy=True, grad="cos", doc="Cosine elementwise."),
    Op("tanh", U, UnaryOp.U_TANH, F, heavy=True, grad="tanh",
       doc="Hyperbolic tangent elementwise."),
    Op("floor", U, UnaryOp.U_FLOOR, grad="floor",
       doc="Largest integer <= x elementwise (integers unchanged)."),
    Op("ceil", U, UnaryOp.U_CEIL, grad="ceil",
       doc="Smallest integer >= x elementwise (integers unchanged)."),
    Op("relu", U, UnaryOp.U_RELU, grad="relu", doc="max(x, 0) elementwise (NaN stays NaN, as PyTorch)."),
    Op("sigmoid", U, UnaryOp.U_SIGMOID, F, heavy=True, grad="sigmoid",
       doc="1 / (1 + exp(-x)) elementwise, computed without overflow."),
    Op("invert", U, UnaryOp.U_INVERT, I, INTEGER_DTYPES, aliases=("bitwise_not",),
       doc="~x bitwise for bool and integer types (bool: logical not; ints: -x - 1).\n"
           "TypeError for floats."),
    Op("arcsin", U, UnaryOp.U_ARCSIN, F, heavy=True, grad="asin", aliases=("asin",),
       doc="Inverse sine elementwise (NaN outside [-1, 1])."),
    Op("arccos", U, UnaryOp.U_ARCCOS, F, heavy=True, grad="acos", aliases=("acos",),
       doc="Inverse cosine elementwise (NaN outside [-1, 1])."),
    Op("arctan", U, UnaryOp.U_ARCTAN, F, heavy=True, grad="atan", aliases=("atan",),
       doc="Inverse tangent elementwise."),
    Op("sinh", U, UnaryOp.U_SINH, F, heavy=True, grad="sinh", doc="Hyperbolic sine elementwise."),
    Op("cosh", U, UnaryOp.U_COSH, F, heavy=True, grad="cosh",
       doc="Hyperbolic cosine elementwise."),
    Op("arcsinh", U, UnaryOp.U_ARCSINH, F, heavy=True, grad="asinh", aliases=("asinh",),
       doc="Inverse hyperbolic sine elementwise."),
    Op("arccosh", U, UnaryOp.U_ARCCOSH, F, heavy=True, grad="acosh", aliases=("acosh",),
       doc="Inverse hyperbolic cosine elementwise (NaN below 1)."),
    Op("arctanh", U, UnaryOp.U_ARCTANH, F, heavy=True, grad="atanh", aliases=("atanh",),
       doc="Inverse hyperbolic tangent elementwise (+-inf at +-1, NaN outside [-1, 1])."),
    Op("erf", U, UnaryOp.U_ERF, F, heavy=True, grad="erf",
       doc="The error function 2/sqrt(pi) * integral of exp(-t**2) from 0 to x, elementwise\n"
           "(scipy.special.erf; NumPy has none)."),
    Op("erfinv", U, UnaryOp.U_ERFINV, F, heavy=True, grad="erfinv",
       doc="The inverse error function elementwise: erf(erfinv(x)) == x; +-inf at +-1, NaN\n"
           "outside [-1, 1] (scipy.special.erfinv)."),
    # -- binary: (x1, x2) -> y, broadcasting ------------------------------------------------------
    Op("add", B, BinaryOp.B_ADD, grad="add", doc="x1 + x2 elementwise, broadcasting (bool: logical or)."),
    Op("subtract", B, BinaryOp.B_SUB, dtypes=NUMERIC_DTYPES, grad="sub", bool_error=_NO_BOOL_SUB,
       doc="x1 - x2 elementwise, broadcasting (TypeError for bool)."),
    Op("multiply", B, BinaryOp.B_MUL, grad="mul",
       doc="x1 * x2 elementwise, broadcasting (bool: logical and)."),
    Op("divide", B, BinaryOp.B_DIV, F, grad="div", aliases=("true_divide",),
       doc="x1 / x2 (true division: integers give float64), broadcasting."),
    Op("power", B, BinaryOp.B_POW, BI, grad="pow",
       doc="x1 ** x2 elementwise; ValueError for integers to negative integer powers."),
    Op("maximum", B, BinaryOp.B_MAX, grad="maximum", doc="Elementwise maximum; NaN if either is NaN."),
    Op("minimum", B, BinaryOp.B_MIN, grad="minimum", doc="Elementwise minimum; NaN if either is NaN."),
    Op("floor_divide", B, BinaryOp.B_FLOORDIV, BI, grad="floor_divide",
       doc="x1 // x2: the quotient rounded towards -inf (as Python); 0 for an integer division "
           "by 0."),
    Op("remainder", B, BinaryOp.B_MOD, BI, grad="remainder", aliases=("mod",),
       doc="x1 % x2 with the sign of x2 (as Python); 0 for integers modulo 0, NaN for floats."),
    Op("bitwise_and", B, BinaryOp.B_AND, I, INTEGER_DTYPES,
       doc="x1 & x2 bitwise for bool and integer types, broadcasting (bool: logical and).\n"
           "TypeError when the operands promote to a float type."),
    Op("bitwise_or", B, BinaryOp.B_OR, I, INTEGER_DTYPES,
       doc="x1 | x2 bitwise for bool and integer types, broadcasting (bool: logical or).\n"
           "TypeError when the operands promote to a float type."),
    Op("bitwise_xor", B, BinaryOp.B_XOR, I, INTEGER_DTYPES,
       doc="x1 ^ x2 bitwise for bool and integer types, broadcasting (bool: logical xor).\n"
           "TypeError when the operands promote to a float type."),
    Op("arctan2", B, BinaryOp.B_ARCTAN2, F, heavy=True, grad="atan2", aliases=("atan2",),
       doc="The angle of the point (x2, x1) (atan(x1 / x2) in the right quadrant), broadcasting."),
    Op("hypot", B, BinaryOp.B_HYPOT, F, heavy=True, grad="hypot",
       doc="sqrt(x1**2 + x2**2) elementwise without overflow, broadcasting."),
    Op("fmod", B, BinaryOp.B_FMOD, BI, grad="fmod",
       doc="The C remainder of x1 / x2, with the sign of x1, broadcasting; 0 for integers\n"
           "modulo 0, NaN for floats (NumPy's fmod)."),
    Op("logaddexp", B, BinaryOp.B_LOGADDEXP, F, heavy=True, grad="logaddexp",
       doc="log(exp(x1) + exp(x2)) elementwise without overflow, broadcasting."),
    # -- comparisons: (x1, x2) -> bool, broadcasting ----------------------------------------------
    Op("equal", C, CompareOp.C_EQ, TB, doc="x1 == x2 elementwise (bool result)."),
    Op("not_equal", C, CompareOp.C_NE, TB, doc="x1 != x2 elementwise (bool result)."),
    Op("less", C, CompareOp.C_LT, TB, doc="x1 < x2 elementwise (bool result)."),
    Op("less_equal", C, CompareOp.C_LE, TB, doc="x1 <= x2 elementwise (bool result)."),
    Op("greater", C, CompareOp.C_GT, TB, doc="x1 > x2 elementwise (bool result)."),
    Op("greater_equal", C, CompareOp.C_GE, TB, doc="x1 >= x2 elementwise (bool result)."),
    Op("logical_and", C, CompareOp.C_AND, TB, doc="(x1 != 0) and (x2 != 0) elementwise (bool result)."),
    Op("logical_or", C, CompareOp.C_OR, TB, doc="(x1 != 0) or (x2 != 0) elementwise (bool result)."),
    # -- predicates: x -> bool --------------------------------------------------------------------
    Op("logical_not", P, PredicateOp.P_NOT, TB, doc="x == 0 elementwise (bool result)."),
    Op("isnan", P, PredicateOp.P_ISNAN, TB, doc="True where x is NaN."),
    Op("isfinite", P, PredicateOp.P_ISFINITE, TB,
       doc="True where x is neither infinite nor NaN."),
    # -- selection --------------------------------------------------------------------------------
    Op("where", Kind.WHERE, WhereOp.W_WHERE, grad="where",
       doc="Elements of x where condition is true, else of y (all three broadcast together)."),
    # -- reductions over axes (sum/prod widen bool and int32 to int64) ----------------------------
    Op("sum", Kind.REDUCE, ReduceOp.R_SUM, identity=Identity.ZERO, grad="sum", ufunc="add"),
    Op("prod", Kind.REDUCE, ReduceOp.R_PROD, identity=Identity.ONE, grad="prod",
       ufunc="multiply"),
    Op("max", Kind.REDUCE, ReduceOp.R_MAX, identity=Identity.LOWEST, grad="amax",
       aliases=("amax",), ufunc="maximum"),
    Op("min", Kind.REDUCE, ReduceOp.R_MIN, identity=Identity.HIGHEST, grad="amin",
       aliases=("amin",), ufunc="minimum"),
    # -- scans along one axis ---------------------------------------------------------------------
    Op("cumsum", Kind.SCAN, ScanOp.S_SUM, identity=Identity.ZERO, grad="cumsum"),
    Op("cumprod", Kind.SCAN, ScanOp.S_PROD, identity=Identity.ONE, grad="cumprod"),
    # -- network kernels of carray.nn (float32 and float64; both backends' nn modules) ------------
    Op("conv2d", Kind.NN, NNOp.NN_CONV2D, dtypes=("float32", "float64"), grad="conv2d"),
    Op("conv2d_grad_input", Kind.NN, NNOp.NN_CONV2D_GRAD_INPUT, dtypes=("float32", "float64")),
    Op("conv2d_grad_weight", Kind.NN, NNOp.NN_CONV2D_GRAD_WEIGHT, dtypes=("float32", "float64")),
    Op("conv2d_grad_bias", Kind.NN, NNOp.NN_CONV2D_GRAD_BIAS, dtypes=("float32", "float64")),
    Op("max_pool2d", Kind.NN, NNOp.NN_MAX_POOL2D, dtypes=("float32", "float64"),
       grad="max_pool2d"),
    Op("max_pool2d_grad", Kind.NN, NNOp.NN_MAX_POOL2D_GRAD, dtypes=("float32", "float64")),
    Op("avg_pool2d", Kind.NN, NNOp.NN_AVG_POOL2D, dtypes=("float32", "float64"),
       grad="avg_pool2d"),
    Op("avg_pool2d_grad", Kind.NN, NNOp.NN_AVG_POOL2D_GRAD, dtypes=("float32", "float64")),
    Op("softmax_cross_entropy", Kind.NN, NNOp.NN_SOFTMAX_CROSS_ENTROPY,
       dtypes=("float32", "float64"), grad="cross_entropy"),
    Op("softmax_cross_entropy_grad", Kind.NN, NNOp.NN_SOFTMAX_CROSS_ENTROPY_GRAD,
       dtypes=("float32", "float64")),
    Op("sgd_step", Kind.NN, NNOp.NN_SGD_STEP, dtypes=("float32", "float64")),
    # fused row kernels (h13)
    Op("softmax", Kind.NN, NNOp.NN_SOFTMAX, dtypes=("float32", "float64"), grad="softmax"),
    Op("softmax_grad", Kind.NN, NNOp.NN_SOFTMAX_GRAD, dtypes=("float32", "float64")),
    Op("log_softmax", Kind.NN, NNOp.NN_LOG_SOFTMAX, dtypes=("float32", "float64"),
       grad="log_softmax"),
    Op("log_softmax_grad", Kind.NN, NNOp.NN_LOG_SOFTMAX_GRAD, dtypes=("float32", "float64")),
    Op("layer_norm", Kind.NN, NNOp.NN_LAYER_NORM, dtypes=("float32", "float64")),
    Op("layer_norm_grad", Kind.NN, NNOp.NN_LAYER_NORM_GRAD, dtypes=("float32", "float64")),
    Op("rms_norm", Kind.NN, NNOp.NN_RMS_NORM, dtypes=("float32", "float64")),
    Op("rms_norm_grad", Kind.NN, NNOp.NN_RMS_NORM_GRAD, dtypes=("float32", "float64")),
)

# the backends' names of the nn kernels (carray.cpu._nn and carray.opencl._nn have each)
NN_BACKEND_NAMES = {
    NNOp.NN_CONV2D: "conv2d_forward",
    NNOp.NN_CONV2D_GRAD_INPUT: "conv2d_grad_input",
    NNOp.NN_CONV2D_GRAD_WEIGHT: "conv2d_grad_weight",
    NNOp.NN_CONV2D_GRAD_BIAS: "conv2d_grad_bias",
    NNOp.NN_MAX_POOL2D: "max_pool2d_forward",
    NNOp.NN_MAX_POOL2D_GRAD: "max_pool2d_backward",
    NNOp.NN_AVG_POOL2D: "avg_pool2d_forward",
    NNOp.NN_AVG_POOL2D_GRAD: "avg_pool2d_backward",
    NNOp.NN_SOFTMAX_CROSS_ENTROPY: "softmax_nll",
    NNOp.NN_SOFTMAX_CROSS_ENTROPY_GRAD: "softmax_nll_grad",
    NNOp.NN_SGD_STEP: "sgd_step",
    # fused row kernels (h13)
    NNOp.NN_SOFTMAX: "softmax_rows",
    NNOp.NN_SOFTMAX_GRAD: "softmax_grad_rows",
    NNOp.NN_LOG_SOFTMAX: "log_softmax_rows",
    NNOp.NN_LOG_SOFTMAX_GRAD: "log_softmax_grad_rows",
    NNOp.NN_LAYER_NORM: "layer_norm_rows",
    NNOp.NN_LAYER_NORM_GRAD: "layer_norm_grad_rows",
    NNOp.NN_RMS_NORM: "rms_norm_rows",
    NNOp.NN_RMS_NORM_GRAD: "rms_norm_grad_rows",
}

_BY_KEY = {(op.kind, op.code): op for op in OPS}


def of_kind(kind):
    """The rows of one Kind, in enum order."""
    return tuple(sorted((op for op in OPS if op.kind == kind), key=lambda op: op.code))


def lookup(kind, code):
    """The row of (kind, code); KeyError when there is none."""
    return _BY_KEY[(kind, code)]
