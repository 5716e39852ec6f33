# The elementwise/reduction op table: every primitive is declared once here, by arity. Each
# kernel build (_kernels_generic/_avx2/_avx512, one source compiled for three SIMD levels) fills
# a KernelTable with one loop per (op, dtype); _ufunc picks the build the CPU supports.

from carray._strided cimport loop1d_t

cdef enum UnaryOp:          # T -> T
    U_NEG, U_ABS, U_SIGN, U_EXP, U_LOG, U_LOG1P, U_EXPM1, U_SQRT, U_SQUARE, U_RECIP,
    U_SIN, U_COS, U_TANH, U_FLOOR, U_CEIL, U_RELU, U_SIGMOID,
    U_INVERT,               # bitwise not (bool: logical not); _ufunc refuses floats
    NUNARY

cdef enum BinaryOp:         # (T, T) -> T
    B_ADD, B_SUB, B_MUL, B_DIV, B_POW, B_MAX, B_MIN, B_FLOORDIV, B_MOD,
    B_AND, B_OR, B_XOR,     # bitwise (bool: logical); _ufunc refuses floats
    NBINARY

cdef enum CompareOp:        # (T, T) -> bool
    C_EQ, C_NE, C_LT, C_LE, C_GT, C_GE, C_AND, C_OR, NCOMPARE

cdef enum PredicateOp:      # T -> bool
    P_NOT, P_ISNAN, P_ISFINITE, NPREDICATE

cdef enum ReduceOp:         # out (T) combined with in (T) along reduced dims (out step 0)
    R_SUM, R_PROD, R_MAX, R_MIN, NREDUCE

ctypedef struct KernelTable:
    loop1d_t unary[<int>NUNARY][5]
    loop1d_t binary[<int>NBINARY][5]
    loop1d_t compare[<int>NCOMPARE][5]
    loop1d_t predicate[<int>NPREDICATE][5]
    loop1d_t reduce[<int>NREDUCE][5]
    loop1d_t where[5]                # data: out T, cond bool, x T, y T
