# The typed 1-d loops of every elementwise op and reduction, over fused dtypes.
#
# Included by _kernels_generic.pyx, _kernels_avx2.pyx and _kernels_avx512.pyx: the same source
# compiled for three SIMD levels (setup.py sets the -m flags), so the compiler's auto-vectorised
# loops use the widest registers the CPU has; _ufunc imports the best one the CPU supports.
#
# Each op is a tag type (an empty struct); `*_apply` holds the scalar formula of every op, chosen
# at compile time with `if op is Tag`. One driver per arity walks the data with contiguous and
# scalar-operand fast paths. _fill_table registers one loop per (op, dtype).

from cpython.pycapsule cimport PyCapsule_New
from libc.math cimport (NAN, INFINITY, acos, acosh, asin, asinh, atan, atan2, atanh, ceil,
                        ceilf, copysign, cos, cosf, cosh, erf, exp, expf, expm1, expm1f, fabs,
                        fabsf, floor, floorf, fmod, fmodf, hypot, isfinite, isnan, log, log1p,
                        log1pf, logf, pow, powf, sin, sinf, sinh, sqrt, sqrtf, tanh)
from libc.stdint cimport (int8_t, int16_t, int32_t, int64_t, uint8_t, uint16_t, uint32_t, uint64_t,
                         INT32_MAX, INT32_MIN, INT64_MAX, INT64_MIN)

cdef extern from "_math.h" nogil:
    float carray_expf(float x)
    float carray_sigmoidf(float x)
    float carray_tanhf(float x)
    float carray_erff(float x)
    double carray_erfinv(double x)
    double carray_logaddexp(double a, double b)

cdef extern from "_rows.h" nogil:
    # the vectorised max/min of a contiguous row (this module's own SIMD level: the _core forms)
    float carray_row_maxf_core(const float* x, Py_ssize_t n, Py_ssize_t* nan_at)
    float carray_row_minf_core(const float* x, Py_ssize_t n, Py_ssize_t* nan_at)
    double carray_row_maxd_core(const double* x, Py_ssize_t n, Py_ssize_t* nan_at)
    double carray_row_mind_core(const double* x, Py_ssize_t n, Py_ssize_t* nan_at)

from carray.core._dtype cimport (BOOL, FLOAT32, FLOAT64, INT8, INT16, INT32, INT64, UINT8, UINT16,
                                 UINT32, UINT64, bool_t, u8_t)
from carray.cpu._kernel_table cimport KernelTable
from carray.ops._optable cimport *
from carray.core._strided cimport loop1d_t

ctypedef fused T:
    bool_t
    int8_t
    int16_t
    int32_t
    int64_t
    u8_t
    uint16_t
    uint32_t
    uint64_t
    float
    double

# the unsigned integer types (their division and remainder need no sign fix-ups)
ctypedef fused unsigned_t:
    u8_t
    uint16_t
    uint32_t
    uint64_t

# -- op tags ----------------------------------------------------------------------------------

ctypedef struct Neg:
    char _
ctypedef struct Abs:
    char _
ctypedef struct Sign:
    char _
ctypedef struct Exp:
    char _
ctypedef struct Log:
    char _
ctypedef struct Log1p:
    char _
ctypedef struct Expm1:
    char _
ctypedef struct Sqrt:
    char _
ctypedef struct Square:
    char _
ctypedef struct Recip:
    char _
ctypedef struct Sin:
    char _
ctypedef struct Cos:
    char _
ctypedef struct Tanh:
    char _
ctypedef struct Floor:
    char _
ctypedef struct Ceil:
    char _
ctypedef struct Relu:
    char _
ctypedef struct Sigmoid:
    char _
ctypedef struct Invert:
    char _
ctypedef struct Arcsin:
    char _
ctypedef struct Arccos:
    char _
ctypedef struct Arctan:
    char _
ctypedef struct Sinh:
    char _
ctypedef struct Cosh:
    char _
ctypedef struct Arcsinh:
    char _
ctypedef struct Arccosh:
    char _
ctypedef struct Arctanh:
    char _
ctypedef struct Erf:
    char _
ctypedef struct Erfinv:
    char _

ctypedef fused unary_t:
    Neg
    Abs
    Sign
    Exp
    Log
    Log1p
    Expm1
    Sqrt
    Square
    Recip
    Sin
    Cos
    Tanh
    Floor
    Ceil
    Relu
    Sigmoid
    Invert
    Arcsin
    Arccos
    Arctan
    Sinh
    Cosh
    Arcsinh
    Arccosh
    Arctanh
    Erf
    Erfinv

ctypedef struct Add:
    char _
ctypedef struct Sub:
    char _
ctypedef struct Mul:
    char _
ctypedef struct Div:
    char _
ctypedef struct Pow:
    char _
ctypedef struct Max:
    char _
ctypedef struct Min:
    char _

ctypedef struct FloorDiv:
    char _
ctypedef struct Mod:
    char _
ctypedef struct BitAnd:
    char _
ctypedef struct BitOr:
    char _
ctypedef struct BitXor:
    char _
ctypedef struct Arctan2:
    char _
ctypedef struct Hypot:
    char _
ctypedef struct Fmod:
    char _
ctypedef struct LogAddExp:
    char _

ctypedef fused binary_t:
    Add
    Sub
    Mul
    Div
    Pow
    Max
    Min
    FloorDiv
    Mod
    BitAnd
    BitOr
    BitXor
    Arctan2
    Hypot
    Fmod
    LogAddExp

ctypedef fused reduce_t:
    Add
    Mul
    Max
    Min

ctypedef struct Eq:
    char _
ctypedef struct Ne:
    char _
ctypedef struct Lt:
    char _
ctypedef struct Le:
    char _
ctypedef struct Gt:
    char _
ctypedef struct Ge:
    char _
ctypedef struct And:
    char _
ctypedef struct Or:
    char _

ctypedef fused compare_t:
    Eq
    Ne
    Lt
    Le
    Gt
    Ge
    And
    Or

ctypedef struct Not:
    char _
ctypedef struct IsNan:
    char _
ctypedef struct IsFinite:
    char _

ctypedef fused predicate_t:
    Not
    IsNan
    IsFinite


# -- scalar formulas --------------------------------------------------------------------------

cdef inline double _sigmoid(double x) noexcept nogil:
    cdef double e
    if x >= 0:
        return 1.0 / (1.0 + exp(-x))
    e = exp(x)
    return e / (1.0 + e)


cdef inline T _mul(T a, T b) noexcept nogil:
    """a * b wrapping as NumPy's: 1- and 2-byte ints multiply as unsigned 32-bit (C would
    promote them to int, where 65535 * 65535 overflows)."""
    if T is int8_t or T is int16_t or T is u8_t or T is uint16_t:
        return <T>(<uint32_t>a * <uint32_t>b)
    else:
        return a * b


cdef inline T unary_apply(T x, unary_t* op) noexcept nogil:
    # float-only ops (exp, log, ...) reach here with float or double: _ufunc casts ints first.
    if unary_t is Neg:
        if T is float or T is double or T is bool_t:
            return -x
        else:
            return <T>(<uint64_t>0 - <uint64_t>x)     # wraps (unsigned, and INT_MIN) as NumPy
    elif unary_t is Abs:
        if T is float:
            return fabsf(x)
        elif T is double:
            return fabs(x)
        elif T is bool_t or T is u8_t or T is uint16_t or T is uint32_t or T is uint64_t:
            return x
        else:
            return <T>(<uint64_t>0 - <uint64_t>x) if x < 0 else x
    elif unary_t is Sign:
        if T is float or T is double:
            if x != x:
                return x
        return (x > 0) - (x < 0)
    elif unary_t is Square:
        return _mul(x, x)
    elif unary_t is Recip:
        if T is float or T is double:
            return 1 / x
        elif T is int64_t:
            return INT64_MIN if x == 0 else 1 // x      # NumPy gives the most negative value
        elif T is int32_t:
            return INT32_MIN if x == 0 else 1 // x
        elif T is bool_t:
            return x
        else:
            return 0 if x == 0 else <T>(1 // x)        # NumPy's small and unsigned ints give 0
    elif unary_t is Relu:
        return 0 if x <= 0 else x      # NaN is kept (NaN <= 0 is false), as PyTorch
    elif unary_t is Floor:
        if T is float:
            return floorf(x)
        elif T is double:
            return floor(x)
        else:
            return x
    elif unary_t is Ceil:
        if T is float:
            return ceilf(x)
        elif T is double:
            return ceil(x)
        else:
            return x
    elif unary_t is Invert:
        if T is bool_t:
            return x == 0
        elif T is float or T is double:
            return x                     # floats never get here: _ufunc refuses them
        else:
            return <T>(~x)
    elif T is float or T is double:
        # the inverse trigonometric and hyperbolic functions and erfinv: float32 is computed in
        # double and rounded (correctly rounded results, as NumPy's within 1 ulp); float32 erf
        # is carray_erff (_math.h, within about 1 ulp)
        if unary_t is Arcsin:
            return <T>asin(<double>x)
        elif unary_t is Arccos:
            return <T>acos(<double>x)
        elif unary_t is Arctan:
            return <T>atan(<double>x)
        elif unary_t is Sinh:
            return <T>sinh(<double>x)
        elif unary_t is Cosh:
            return <T>cosh(<double>x)
        elif unary_t is Arcsinh:
            return <T>asinh(<double>x)
        elif unary_t is Arccosh:
            return <T>acosh(<double>x)
        elif unary_t is Arctanh:
            return <T>atanh(<double>x)
        elif unary_t is Erf:
            if T is float:              # a branch-free polynomial the compiler vectorises
                return carray_erff(x)
            return erf(x)
        elif unary_t is Erfinv:
            return <T>carray_erfinv(<double>x)
    if unary_t is Arcsin or unary_t is Arccos or unary_t is Arctan or unary_t is Sinh or \
            unary_t is Cosh or unary_t is Arcsinh or unary_t is Arccosh or \
            unary_t is Arctanh or unary_t is Erf or unary_t is Erfinv:
        return x                         # integer inputs never get here: _ufunc casts them
    elif T is float:
        if unary_t is Exp:
            return carray_expf(x)
        elif unary_t is Log:
            return logf(x)
        elif unary_t is Log1p:
            return log1pf(x)
        elif unary_t is Expm1:
            return expm1f(x)
        elif unary_t is Sqrt:
            return sqrtf(x)
        elif unary_t is Sin:
            return sinf(x)
        elif unary_t is Cos:
            return cosf(x)
        elif unary_t is Tanh:
            return carray_tanhf(x)
        elif unary_t is Sigmoid:
            return carray_sigmoidf(x)
    elif T is double:
        if unary_t is Exp:
            return exp(x)
        elif unary_t is Log:
            return log(x)
        elif unary_t is Log1p:
            return log1p(x)
        elif unary_t is Expm1:
            return expm1(x)
        elif unary_t is Sqrt:
            return sqrt(x)
        elif unary_t is Sin:
            return sin(x)
        elif unary_t is Cos:
            return cos(x)
        elif unary_t is Tanh:
            return tanh(x)
        elif unary_t is Sigmoid:
            return _sigmoid(x)
    return x


cdef inline int64_t _ipow(int64_t base, int64_t e) noexcept nogil:
    """Integer power by squaring (e >= 0; _ufunc rejects negative exponents)."""
    cdef int64_t r = 1
    while e > 0:
        if e & 1:
            r *= base
        base *= base
        e >>= 1
    return r


ctypedef fused floating_t:
    float
    double


cdef inline floating_t _fmod(floating_t a, floating_t b) noexcept nogil:
    if floating_t is float:
        return fmodf(a, b)
    else:
        return fmod(a, b)


cdef inline floating_t _floordiv_f(floating_t a, floating_t b) noexcept nogil:
    """a // b as Python and NumPy define it for floats (floor of the exact quotient), in the
    precision of the operands (float32 rounds each step to float32, as NumPy does)."""
    cdef floating_t mod, div, fl
    if b == 0:
        return a / b
    mod = _fmod(a, b)
    div = (a - mod) / b
    if mod != 0 and ((b < 0) != (mod < 0)):
        div -= 1
    if div == 0:
        return <floating_t>copysign(0.0, <double>(a / b))
    fl = floorf(div) if floating_t is float else floor(div)
    if div - fl > <floating_t>0.5:
        fl += 1
    return fl


cdef inline floating_t _mod_f(floating_t a, floating_t b) noexcept nogil:
    """a % b with the sign of b (Python's and NumPy's remainder); NaN for b == 0."""
    cdef floating_t mod = _fmod(a, b)
    if b == 0:
        return mod
    if mod != 0:
        if (b < 0) != (mod < 0):
            mod += b
    else:
        mod = <floating_t>copysign(0.0, <double>b)
    return mod


cdef inline int64_t _floordiv_i(int64_t a, int64_t b) noexcept nogil:
    """a // b rounded towards -inf; 0 for b == 0 (NumPy's result, which also warns)."""
    cdef int64_t q
    if b == 0:
        return 0
    if b == -1:
        return <int64_t>(0 - <uint64_t>a)        # wraps for the most negative value, no trap
    q = a // b                                   # C division (cdivision): truncates
    if (a % b != 0) and ((a < 0) != (b < 0)):
        q -= 1
    return q


cdef inline int64_t _mod_i(int64_t a, int64_t b) noexcept nogil:
    """a % b with the sign of b; 0 for b == 0 (as NumPy)."""
    cdef int64_t r
    if b == 0 or b == -1:
        return 0
    r = a % b
    if r != 0 and ((r < 0) != (b < 0)):
        r += b
    return r


cdef inline int64_t _fmod_i(int64_t a, int64_t b) noexcept nogil:
    """The C remainder a % b (sign of a); 0 for b == 0 (as NumPy's fmod) and for b == -1 (no
    trap on the most negative value)."""
    if b == 0 or b == -1:
        return 0
    return a % b


cdef inline unsigned_t _floordiv_u(unsigned_t a, unsigned_t b) noexcept nogil:
    """a // b of unsigned ints; 0 for b == 0 (as NumPy)."""
    return 0 if b == 0 else <unsigned_t>(a // b)


cdef inline unsigned_t _mod_u(unsigned_t a, unsigned_t b) noexcept nogil:
    """a % b of unsigned ints; 0 for b == 0 (as NumPy)."""
    return 0 if b == 0 else <unsigned_t>(a % b)


cdef inline T binary_apply(T a, T b, binary_t* op) noexcept nogil:
    # bool: add is or, multiply/min is and, max is or (NumPy); sub/div/pow are rejected by _ufunc.
    if binary_t is Add:
        if T is bool_t:
            return a | b
        else:
            return a + b
    elif binary_t is Sub:
        return a - b
    elif binary_t is Mul:
        if T is bool_t:
            return a & b
        else:
            return _mul(a, b)
    elif binary_t is Div:
        if T is float or T is double:
            return a / b
        else:
            return 0 if b == 0 else a // b
    elif binary_t is Pow:
        if T is float:
            return powf(a, b)
        elif T is double:
            return pow(a, b)
        elif T is bool_t:
            return a | (not b)
        else:
            return <T>_ipow(<int64_t>a, <int64_t>b)
    elif binary_t is Max:
        return a if (a >= b or a != a) else b     # NaN wins, as NumPy's maximum
    elif binary_t is Min:
        return a if (a <= b or a != a) else b
    elif binary_t is FloorDiv:
        if T is float:
            return _floordiv_f[float](a, b)
        elif T is double:
            return _floordiv_f[double](a, b)
        elif T is u8_t or T is uint16_t or T is uint32_t or T is uint64_t:
            return _floordiv_u(a, b)
        else:
            return <T>_floordiv_i(a, b)
    elif binary_t is Mod:
        if T is float:
            return _mod_f[float](a, b)
        elif T is double:
            return _mod_f[double](a, b)
        elif T is u8_t or T is uint16_t or T is uint32_t or T is uint64_t:
            return _mod_u(a, b)
        else:
            return <T>_mod_i(a, b)
    elif binary_t is Fmod:
        if T is float or T is double:
            return <T>fmod(<double>a, <double>b)      # exact, so float32 rounds nothing
        elif T is bool_t:
            return a                     # bool is computed as an int (BOOL_TO_INT)
        elif T is u8_t or T is uint16_t or T is uint32_t or T is uint64_t:
            return _mod_u(a, b)
        else:
            return <T>_fmod_i(a, b)
    elif binary_t is Arctan2 or binary_t is Hypot or binary_t is LogAddExp:
        if T is float or T is double:    # float32 computed in double and rounded
            if binary_t is Arctan2:
                return <T>atan2(<double>a, <double>b)
            elif binary_t is Hypot:
                return <T>hypot(<double>a, <double>b)
            else:
                return <T>carray_logaddexp(<double>a, <double>b)
        return a                         # integer inputs never get here: _ufunc casts them
    elif T is float or T is double:
        return a                         # bitwise ops of floats: _ufunc refuses them
    elif binary_t is BitAnd:
        return a & b
    elif binary_t is BitOr:
        return a | b
    elif binary_t is BitXor:
        return a ^ b


cdef inline T reduce_apply(T a, T b, reduce_t* op) noexcept nogil:
    if reduce_t is Add:
        if T is bool_t:
            return a | b
        else:
            return a + b
    elif reduce_t is Mul:
        if T is bool_t:
            return a & b
        else:
            return _mul(a, b)
    elif reduce_t is Max:
        return a if (a >= b or a != a) else b
    elif reduce_t is Min:
        return a if (a <= b or a != a) else b


cdef inline bint compare_apply(T a, T b, compare_t* op) noexcept nogil:
    if compare_t is Eq:
        return a == b
    elif compare_t is Ne:
        return a != b
    elif compare_t is Lt:
        return a < b
    elif compare_t is Le:
        return a <= b
    elif compare_t is Gt:
        return a > b
    elif compare_t is Ge:
        return a >= b
    elif compare_t is And:
        return (a != 0) & (b != 0)
    elif compare_t is Or:
        return (a != 0) | (b != 0)


cdef inline bint predicate_apply(T x, predicate_t* op) noexcept nogil:
    if predicate_t is Not:
        return x == 0
    elif predicate_t is IsNan:
        return x != x
    elif predicate_t is IsFinite:
        if T is float or T is double:
            return x - x == 0            # false for inf and nan
        else:
            return True


# -- drivers: data[0] is the output ------------------------------------------------------------

cdef void unary_loop(char** d, const Py_ssize_t* s, Py_ssize_t n, T* tag,
                     unary_t* op) noexcept nogil:
    cdef Py_ssize_t i
    cdef T* o = <T*>d[0]
    cdef T* a = <T*>d[1]
    if s[0] == sizeof(T) and s[1] == sizeof(T):
        for i in range(n):
            o[i] = unary_apply(a[i], op)
    else:
        for i in range(n):
            (<T*>(d[0] + i * s[0]))[0] = unary_apply((<T*>(d[1] + i * s[1]))[0], op)


cdef void binary_loop(char** d, const Py_ssize_t* s, Py_ssize_t n, T* tag,
                      binary_t* op) noexcept nogil:
    cdef Py_ssize_t i
    cdef T* o = <T*>d[0]
    cdef T* a = <T*>d[1]
    cdef T* b = <T*>d[2]
    cdef T c
    if s[0] == sizeof(T) and s[1] == sizeof(T) and s[2] == sizeof(T):
        for i in range(n):
            o[i] = binary_apply(a[i], b[i], op)
    elif s[0] == sizeof(T) and s[1] == sizeof(T) and s[2] == 0:
        c = b[0]
        for i in range(n):
            o[i] = binary_apply(a[i], c, op)
    elif s[0] == sizeof(T) and s[1] == 0 and s[2] == sizeof(T):
        c = a[0]
        for i in range(n):
            o[i] = binary_apply(c, b[i], op)
    else:
        for i in range(n):
            (<T*>(d[0] + i * s[0]))[0] = binary_apply((<T*>(d[1] + i * s[1]))[0],
                                                      (<T*>(d[2] + i * s[2]))[0], op)


cdef void compare_loop(char** d, const Py_ssize_t* s, Py_ssize_t n, T* tag,
                       compare_t* op) noexcept nogil:
    cdef Py_ssize_t i
    cdef bool_t* o = <bool_t*>d[0]
    cdef T* a = <T*>d[1]
    cdef T* b = <T*>d[2]
    cdef T c
    if s[0] == 1 and s[1] == sizeof(T) and s[2] == sizeof(T):
        for i in range(n):
            o[i] = compare_apply(a[i], b[i], op)
    elif s[0] == 1 and s[1] == sizeof(T) and s[2] == 0:
        c = b[0]
        for i in range(n):
            o[i] = compare_apply(a[i], c, op)
    else:
        for i in range(n):
            (<bool_t*>(d[0] + i * s[0]))[0] = compare_apply((<T*>(d[1] + i * s[1]))[0],
                                                            (<T*>(d[2] + i * s[2]))[0], op)


cdef void predicate_loop(char** d, const Py_ssize_t* s, Py_ssize_t n, T* tag,
                         predicate_t* op) noexcept nogil:
    cdef Py_ssize_t i
    for i in range(n):
        (<bool_t*>(d[0] + i * s[0]))[0] = predicate_apply((<T*>(d[1] + i * s[1]))[0], op)


cdef void where_loop(char** d, const Py_ssize_t* s, Py_ssize_t n, T* tag,
                     void* unused) noexcept nogil:
    # both values are loaded before the select, so it compiles to a blend (no branch to
    # mispredict on a random mask); the contiguous case gets its own vectorisable loop
    cdef Py_ssize_t i
    cdef T* o
    cdef const T* a
    cdef const T* b
    cdef const bool_t* c
    cdef T va, vb
    if s[0] == sizeof(T) and s[1] == 1 and (s[2] == sizeof(T) or s[2] == 0) and \
            (s[3] == sizeof(T) or s[3] == 0):
        o, c, a, b = <T*>d[0], <const bool_t*>d[1], <const T*>d[2], <const T*>d[3]
        va, vb = a[0], b[0]
        if s[2] and s[3]:
            for i in range(n):
                o[i] = a[i] if c[i] else b[i]
        elif s[2]:      # y a broadcast scalar
            for i in range(n):
                o[i] = a[i] if c[i] else vb
        elif s[3]:      # x a broadcast scalar
            for i in range(n):
                o[i] = va if c[i] else b[i]
        else:
            for i in range(n):
                o[i] = va if c[i] else vb
        return
    cdef Py_ssize_t sa = s[2], sb = s[3]
    for i in range(n):
        # select the address, not the value: a conditional move instead of a branch
        (<T*>(d[0] + i * s[0]))[0] = (<T*>((d[2] + i * sa) if (<bool_t*>(d[1] + i * s[1]))[0]
                                          else (d[3] + i * sb)))[0]


cdef T _pairwise_sum(char* a, Py_ssize_t n, Py_ssize_t step, T* tag) noexcept nogil:
    """Sum of n elements `step` bytes apart, by pairwise (cascade) summation as NumPy: blocks of
    128 summed with 8 accumulators, blocks combined as a binary tree (error O(log n))."""
    cdef T r0, r1, r2, r3, r4, r5, r6, r7, res
    cdef Py_ssize_t i, half
    if n < 8:
        res = 0
        for i in range(n):
            res = res + (<T*>(a + i * step))[0]
        return res
    if n <= 128:
        r0 = (<T*>(a + 0 * step))[0]
        r1 = (<T*>(a + 1 * step))[0]
        r2 = (<T*>(a + 2 * step))[0]
        r3 = (<T*>(a + 3 * step))[0]
        r4 = (<T*>(a + 4 * step))[0]
        r5 = (<T*>(a + 5 * step))[0]
        r6 = (<T*>(a + 6 * step))[0]
        r7 = (<T*>(a + 7 * step))[0]
        i = 8
        while i < n - n % 8:
            r0 = r0 + (<T*>(a + (i + 0) * step))[0]
            r1 = r1 + (<T*>(a + (i + 1) * step))[0]
            r2 = r2 + (<T*>(a + (i + 2) * step))[0]
            r3 = r3 + (<T*>(a + (i + 3) * step))[0]
            r4 = r4 + (<T*>(a + (i + 4) * step))[0]
            r5 = r5 + (<T*>(a + (i + 5) * step))[0]
            r6 = r6 + (<T*>(a + (i + 6) * step))[0]
            r7 = r7 + (<T*>(a + (i + 7) * step))[0]
            i += 8
        res = ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7))
        while i < n:
            res = res + (<T*>(a + i * step))[0]
            i += 1
        return res
    half = n // 2
    half -= half % 8
    return _pairwise_sum(a, half, step, tag) + _pairwise_sum(a + half * step, n - half, step, tag)


cdef T _pairwise_sum_contig(T* a, Py_ssize_t n) noexcept nogil:
    """_pairwise_sum for contiguous data: the same blocks and order, with typed loads the
    compiler turns into one vector of 8 accumulators."""
    cdef T r[8]
    cdef T res
    cdef Py_ssize_t i, j, half
    if n < 8:
        res = 0
        for i in range(n):
            res = res + a[i]
        return res
    if n <= 128:
        for j in range(8):
            r[j] = a[j]
        i = 8
        while i < n - n % 8:
            for j in range(8):
                r[j] = r[j] + a[i + j]
            i += 8
        res = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]))
        while i < n:
            res = res + a[i]
            i += 1
        return res
    half = n // 2
    half -= half % 8
    return _pairwise_sum_contig(a, half) + _pairwise_sum_contig(a + half, n - half)


cdef inline T _extreme_contig(T* a, Py_ssize_t n, reduce_t* op) noexcept nogil:
    """max/min of n >= 1 contiguous floats by lanes plus a NaN flag (vectorised); the first NaN
    if any, as the scalar fold gives."""
    cdef Py_ssize_t at
    if T is float:
        if reduce_t is Max:
            return carray_row_maxf_core(a, n, &at)
        else:
            return carray_row_minf_core(a, n, &at)
    elif T is double:
        if reduce_t is Max:
            return carray_row_maxd_core(a, n, &at)
        else:
            return carray_row_mind_core(a, n, &at)
    else:
        return a[0]


cdef void reduce_loop(char** d, const Py_ssize_t* s, Py_ssize_t n, T* tag,
                      reduce_t* op) noexcept nogil:
    """out[i] = out[i] (op) in[i]; when out's step is 0, folds all n inputs into out[0]."""
    cdef Py_ssize_t i
    cdef T acc
    cdef T* o = <T*>d[0]
    cdef T* a = <T*>d[1]
    if s[0] == 0:
        if reduce_t is Add and T is not bool_t and s[1] == sizeof(T):
            acc = _pairwise_sum_contig(a, n)
        elif reduce_t is Add and T is not bool_t:
            acc = _pairwise_sum(d[1], n, s[1], tag)
        elif (reduce_t is Max or reduce_t is Min) and (T is float or T is double) and \
                s[1] == sizeof(T) and n > 0:
            acc = _extreme_contig(a, n, op)
        else:
            acc = (<T*>d[1])[0]
            for i in range(1, n):
                acc = reduce_apply(acc, (<T*>(d[1] + i * s[1]))[0], op)
        o[0] = reduce_apply(o[0], acc, op)
    elif s[0] == sizeof(T) and s[1] == sizeof(T):
        for i in range(n):
            o[i] = reduce_apply(o[i], a[i], op)
    else:
        for i in range(n):
            (<T*>(d[0] + i * s[0]))[0] = reduce_apply((<T*>(d[0] + i * s[0]))[0],
                                                      (<T*>(d[1] + i * s[1]))[0], op)


# -- the table ----------------------------------------------------------------------------------

cdef KernelTable _TABLE


cdef void _fill(int num, T* tag) noexcept:
    """Register the loops of dtype T (type number num): one line per op."""
    _TABLE.unary[<int>U_NEG][num] = <loop1d_t>unary_loop[T, Neg]
    _TABLE.unary[<int>U_ABS][num] = <loop1d_t>unary_loop[T, Abs]
    _TABLE.unary[<int>U_SIGN][num] = <loop1d_t>unary_loop[T, Sign]
    _TABLE.unary[<int>U_EXP][num] = <loop1d_t>unary_loop[T, Exp]
    _TABLE.unary[<int>U_LOG][num] = <loop1d_t>unary_loop[T, Log]
    _TABLE.unary[<int>U_LOG1P][num] = <loop1d_t>unary_loop[T, Log1p]
    _TABLE.unary[<int>U_EXPM1][num] = <loop1d_t>unary_loop[T, Expm1]
    _TABLE.unary[<int>U_SQRT][num] = <loop1d_t>unary_loop[T, Sqrt]
    _TABLE.unary[<int>U_SQUARE][num] = <loop1d_t>unary_loop[T, Square]
    _TABLE.unary[<int>U_RECIP][num] = <loop1d_t>unary_loop[T, Recip]
    _TABLE.unary[<int>U_SIN][num] = <loop1d_t>unary_loop[T, Sin]
    _TABLE.unary[<int>U_COS][num] = <loop1d_t>unary_loop[T, Cos]
    _TABLE.unary[<int>U_TANH][num] = <loop1d_t>unary_loop[T, Tanh]
    _TABLE.unary[<int>U_FLOOR][num] = <loop1d_t>unary_loop[T, Floor]
    _TABLE.unary[<int>U_CEIL][num] = <loop1d_t>unary_loop[T, Ceil]
    _TABLE.unary[<int>U_RELU][num] = <loop1d_t>unary_loop[T, Relu]
    _TABLE.unary[<int>U_SIGMOID][num] = <loop1d_t>unary_loop[T, Sigmoid]
    _TABLE.unary[<int>U_INVERT][num] = <loop1d_t>unary_loop[T, Invert]
    _TABLE.unary[<int>U_ARCSIN][num] = <loop1d_t>unary_loop[T, Arcsin]
    _TABLE.unary[<int>U_ARCCOS][num] = <loop1d_t>unary_loop[T, Arccos]
    _TABLE.unary[<int>U_ARCTAN][num] = <loop1d_t>unary_loop[T, Arctan]
    _TABLE.unary[<int>U_SINH][num] = <loop1d_t>unary_loop[T, Sinh]
    _TABLE.unary[<int>U_COSH][num] = <loop1d_t>unary_loop[T, Cosh]
    _TABLE.unary[<int>U_ARCSINH][num] = <loop1d_t>unary_loop[T, Arcsinh]
    _TABLE.unary[<int>U_ARCCOSH][num] = <loop1d_t>unary_loop[T, Arccosh]
    _TABLE.unary[<int>U_ARCTANH][num] = <loop1d_t>unary_loop[T, Arctanh]
    _TABLE.unary[<int>U_ERF][num] = <loop1d_t>unary_loop[T, Erf]
    _TABLE.unary[<int>U_ERFINV][num] = <loop1d_t>unary_loop[T, Erfinv]
    _TABLE.binary[<int>B_ADD][num] = <loop1d_t>binary_loop[T, Add]
    _TABLE.binary[<int>B_SUB][num] = <loop1d_t>binary_loop[T, Sub]
    _TABLE.binary[<int>B_MUL][num] = <loop1d_t>binary_loop[T, Mul]
    _TABLE.binary[<int>B_DIV][num] = <loop1d_t>binary_loop[T, Div]
    _TABLE.binary[<int>B_POW][num] = <loop1d_t>binary_loop[T, Pow]
    _TABLE.binary[<int>B_MAX][num] = <loop1d_t>binary_loop[T, Max]
    _TABLE.binary[<int>B_MIN][num] = <loop1d_t>binary_loop[T, Min]
    _TABLE.binary[<int>B_FLOORDIV][num] = <loop1d_t>binary_loop[T, FloorDiv]
    _TABLE.binary[<int>B_MOD][num] = <loop1d_t>binary_loop[T, Mod]
    _TABLE.binary[<int>B_AND][num] = <loop1d_t>binary_loop[T, BitAnd]
    _TABLE.binary[<int>B_OR][num] = <loop1d_t>binary_loop[T, BitOr]
    _TABLE.binary[<int>B_XOR][num] = <loop1d_t>binary_loop[T, BitXor]
    _TABLE.binary[<int>B_ARCTAN2][num] = <loop1d_t>binary_loop[T, Arctan2]
    _TABLE.binary[<int>B_HYPOT][num] = <loop1d_t>binary_loop[T, Hypot]
    _TABLE.binary[<int>B_FMOD][num] = <loop1d_t>binary_loop[T, Fmod]
    _TABLE.binary[<int>B_LOGADDEXP][num] = <loop1d_t>binary_loop[T, LogAddExp]
    _TABLE.compare[<int>C_EQ][num] = <loop1d_t>compare_loop[T, Eq]
    _TABLE.compare[<int>C_NE][num] = <loop1d_t>compare_loop[T, Ne]
    _TABLE.compare[<int>C_LT][num] = <loop1d_t>compare_loop[T, Lt]
    _TABLE.compare[<int>C_LE][num] = <loop1d_t>compare_loop[T, Le]
    _TABLE.compare[<int>C_GT][num] = <loop1d_t>compare_loop[T, Gt]
    _TABLE.compare[<int>C_GE][num] = <loop1d_t>compare_loop[T, Ge]
    _TABLE.compare[<int>C_AND][num] = <loop1d_t>compare_loop[T, And]
    _TABLE.compare[<int>C_OR][num] = <loop1d_t>compare_loop[T, Or]
    _TABLE.predicate[<int>P_NOT][num] = <loop1d_t>predicate_loop[T, Not]
    _TABLE.predicate[<int>P_ISNAN][num] = <loop1d_t>predicate_loop[T, IsNan]
    _TABLE.predicate[<int>P_ISFINITE][num] = <loop1d_t>predicate_loop[T, IsFinite]
    _TABLE.reduce[<int>R_SUM][num] = <loop1d_t>reduce_loop[T, Add]
    _TABLE.reduce[<int>R_PROD][num] = <loop1d_t>reduce_loop[T, Mul]
    _TABLE.reduce[<int>R_MAX][num] = <loop1d_t>reduce_loop[T, Max]
    _TABLE.reduce[<int>R_MIN][num] = <loop1d_t>reduce_loop[T, Min]
    _TABLE.where[num] = <loop1d_t>where_loop[T]


_fill(BOOL, <bool_t*>NULL)
_fill(INT8, <int8_t*>NULL)
_fill(INT16, <int16_t*>NULL)
_fill(INT32, <int32_t*>NULL)
_fill(INT64, <int64_t*>NULL)
_fill(UINT8, <u8_t*>NULL)
_fill(UINT16, <uint16_t*>NULL)
_fill(UINT32, <uint32_t*>NULL)
_fill(UINT64, <uint64_t*>NULL)
_fill(FLOAT32, <float*>NULL)
_fill(FLOAT64, <double*>NULL)


def kernel_table():
    """A capsule holding this build's KernelTable (read by carray.ops._ufunc)."""
    return PyCapsule_New(&_TABLE, b"carray.KernelTable", NULL)
