# The op table's enums: every carray primitive has one member here, by family. cpdef enums are
# usable from Cython (C constants) and from Python (carray.ops._optable.UnaryOp.U_EXP, an IntEnum
# member); the table of rows (name, kind, dtype rule, identity, flags) is in _optable.pyx.
# This module imports nothing of carray: the core, the front ends and both backends build on it.

cpdef enum Kind:
    UNARY           # T -> T (or a wider float for TO_FLOAT ops)
    BINARY          # (T, T) -> T, broadcasting
    COMPARE         # (T, T) -> bool
    PREDICATE       # T -> bool
    WHERE           # (bool, T, T) -> T
    REDUCE          # T over axes -> T, folded from an identity
    SCAN            # T -> T, cumulative along one axis
    NN              # a network kernel of carray.nn (both backends' nn modules)

cpdef enum UnaryOp:
    U_NEG, U_ABS, U_SIGN, U_EXP, U_LOG, U_LOG1P, U_EXPM1, U_SQRT, U_SQUARE, U_RECIP,
    U_SIN, U_COS, U_TANH, U_FLOOR, U_CEIL, U_RELU, U_SIGMOID, U_INVERT,
    U_ARCSIN, U_ARCCOS, U_ARCTAN, U_SINH, U_COSH, U_ARCSINH, U_ARCCOSH, U_ARCTANH, U_ERF, U_ERFINV,
    NUNARY

cpdef enum BinaryOp:
    B_ADD, B_SUB, B_MUL, B_DIV, B_POW, B_MAX, B_MIN, B_FLOORDIV, B_MOD, B_AND, B_OR, B_XOR,
    B_ARCTAN2, B_HYPOT, B_FMOD, B_LOGADDEXP,
    NBINARY

cpdef enum CompareOp:
    C_EQ, C_NE, C_LT, C_LE, C_GT, C_GE, C_AND, C_OR,
    NCOMPARE

cpdef enum PredicateOp:
    P_NOT, P_ISNAN, P_ISFINITE,
    NPREDICATE

cpdef enum WhereOp:
    W_WHERE,
    NWHERE

cpdef enum ReduceOp:
    R_SUM, R_PROD, R_MAX, R_MIN,
    NREDUCE

cpdef enum ScanOp:
    S_SUM, S_PROD,
    NSCAN

cpdef enum NNOp:
    NN_CONV2D, NN_CONV2D_GRAD_INPUT, NN_CONV2D_GRAD_WEIGHT, NN_CONV2D_GRAD_BIAS,
    NN_MAX_POOL2D, NN_MAX_POOL2D_GRAD, NN_AVG_POOL2D, NN_AVG_POOL2D_GRAD,
    NN_SOFTMAX_CROSS_ENTROPY, NN_SOFTMAX_CROSS_ENTROPY_GRAD, NN_SGD_STEP,
    # fused row kernels (h13)
    NN_SOFTMAX, NN_SOFTMAX_GRAD, NN_LOG_SOFTMAX, NN_LOG_SOFTMAX_GRAD,
    NN_LAYER_NORM, NN_LAYER_NORM_GRAD, NN_RMS_NORM, NN_RMS_NORM_GRAD,
    NNN

# How an op picks its compute dtype from its (promoted) input dtype.
cpdef enum DTypeRule:
    SAME            # the input's dtype
    TO_FLOAT        # floats keep theirs; bool -> float32, integers -> float64 (true division
                    # and transcendental functions)
    BOOL_TO_INT     # bool -> int64 (NumPy gives int8, which carray does not have)
    INTEGER         # bool and integers only: a float input raises TypeError
    TO_BOOL         # any dtype in, bool out (comparisons, predicates)

# Identities of the reductions, symbolic: each backend writes them in its own types.
cpdef enum Identity:
    NO_IDENTITY, ZERO, ONE, LOWEST, HIGHEST
