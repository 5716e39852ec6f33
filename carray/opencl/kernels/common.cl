// Shared by every carray kernel: fp64 switch, index type, the one strided indexing helper and
// the scalar helpers whose semantics match the CPU loops (carray/cpu/_kernels.pxi).
// Defines set by the host: IDX (int or long), CARRAY_FP64 (when a kernel touches double).
#ifdef CARRAY_FP64
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#endif

// Element offsets of flat (C-order) index `i` over an n-d shape for NARR operands:
//   p[k] = off[k] + sum_d coord_d(i) * st[k][d]
// shape/st/off come from a layout struct the host packs (strides in elements, 0 = broadcast).
#define STRIDED_OFFSETS(RANK_, NARR_, L_, i_, p_) {                                  \
    IDX rem_ = (i_);                                                                  \
    for (int k_ = 0; k_ < NARR_; ++k_) p_[k_] = (L_).off[k_];        \
    for (int d_ = RANK_ - 1; d_ > 0; --d_) {                          \
        IDX c_ = rem_ % (L_).shape[d_];                                               \
        rem_ /= (L_).shape[d_];                                                       \
        for (int k_ = 0; k_ < NARR_; ++k_) p_[k_] += c_ * (L_).st[k_][d_]; \
    }                                                                                 \
    for (int k_ = 0; k_ < NARR_; ++k_) p_[k_] += rem_ * (L_).st[k_][0]; \
}

#define NAN_MAX(a, b) (((a) >= (b) || (a) != (a)) ? (a) : (b))
#define NAN_MIN(a, b) (((a) <= (b) || (a) != (a)) ? (a) : (b))

inline long carray_ipow(long base, long e) {
    long r = 1;
    while (e > 0) {
        if (e & 1) r *= base;
        base *= base;
        e >>= 1;
    }
    return r;
}

inline long carray_floordiv_i(long a, long b) {
    if (b == 0) return 0;
    if (b == -1) return (long)(0UL - (ulong)a);
    long q = a / b;
    if ((a % b != 0) && ((a < 0) != (b < 0))) q -= 1;
    return q;
}

inline long carray_fmod_i(long a, long b) {
    if (b == 0 || b == -1) return 0;
    return a % b;
}

inline long carray_mod_i(long a, long b) {
    if (b == 0 || b == -1) return 0;
    long r = a % b;
    if (r != 0 && ((r < 0) != (b < 0))) r += b;
    return r;
}

#define CARRAY_FLOAT_HELPERS(T)                                                        \
inline T carray_floordiv_##T(T a, T b) {                                              \
    if (b == 0) return a / b;                                                          \
    T mod = fmod(a, b);                                                                \
    T div = (a - mod) / b;                                                             \
    if (mod != 0 && ((b < 0) != (mod < 0))) div -= (T)1;                              \
    if (div == 0) return copysign((T)0, a / b);                                        \
    T fl = floor(div);                                                                 \
    if (div - fl > (T)0.5) fl += (T)1;                                                 \
    return fl;                                                                         \
}                                                                                      \
inline T carray_mod_##T(T a, T b) {                                                   \
    T mod = fmod(a, b);                                                                \
    if (b == 0) return mod;                                                            \
    if (mod != 0) { if ((b < 0) != (mod < 0)) mod += b; }                              \
    else mod = copysign((T)0, b);                                                      \
    return mod;                                                                        \
}                                                                                      \
inline T carray_sigmoid_##T(T x) {                                                    \
    T e = exp(x >= 0 ? -x : x);                                                        \
    T s = (T)1 / ((T)1 + e);                                                           \
    return x >= 0 ? s : e * s;                                                         \
}                                                                                      \
inline T carray_sign_##T(T x) { return x != x ? x : (T)((x > 0) - (x < 0)); }          \
inline T carray_logaddexp_##T(T a, T b) {                                             \
    if (a == b) return a + (T)0.693147180559945309;                                    \
    T d = a - b;                                                                       \
    if (d > 0) return a + log1p(exp(-d));                                              \
    if (d <= 0) return b + log1p(exp(d));                                              \
    return d;                                                                          \
}                                                                                      \
/* erf's inverse as the CPU's carray_erfinv (_math.h): Giles' approximation, Newton steps */ \
inline T carray_erfinv_##T(T x) {                                                     \
    if (!(x >= (T)-1 && x <= (T)1)) return (T)NAN;                                     \
    if (x == (T)1) return (T)INFINITY;                                                 \
    if (x == (T)-1) return -(T)INFINITY;                                               \
    T w = -log(((T)1 - x) * ((T)1 + x)), p;                                            \
    if (w < (T)5) {                                                                    \
        w = w - (T)2.5;                                                                \
        p = (T)2.81022636e-08;                                                         \
        p = (T)3.43273939e-07 + p * w;                                                 \
        p = (T)-3.5233877e-06 + p * w;                                                 \
        p = (T)-4.39150654e-06 + p * w;                                                \
        p = (T)0.00021858087 + p * w;                                                  \
        p = (T)-0.00125372503 + p * w;                                                 \
        p = (T)-0.00417768164 + p * w;                                                 \
        p = (T)0.246640727 + p * w;                                                    \
        p = (T)1.50140941 + p * w;                                                     \
    } else {                                                                           \
        w = sqrt(w) - (T)3;                                                            \
        p = (T)-0.000200214257;                                                        \
        p = (T)0.000100950558 + p * w;                                                 \
        p = (T)0.00134934322 + p * w;                                                  \
        p = (T)-0.00367342844 + p * w;                                                 \
        p = (T)0.00573950773 + p * w;                                                  \
        p = (T)-0.0076224613 + p * w;                                                  \
        p = (T)0.00943887047 + p * w;                                                  \
        p = (T)1.00167406 + p * w;                                                     \
        p = (T)2.83297682 + p * w;                                                     \
    }                                                                                  \
    T y = p * x;                                                                       \
    for (int i = 0; i < 3; ++i) {                                                      \
        T d = (T)1.1283791670955126 * exp(-y * y);                                     \
        if (d == (T)0) break;                                                          \
        y -= (erf(y) - x) / d;                                                         \
    }                                                                                  \
    return y;                                                                          \
}

// erf in float32 as the CPU's carray_erff (carray/cpu/_math.h; the same fitted polynomials, at
// most about 1 ulp with an exp of 1 ulp): a + a P(a^2) for a = |x| < 0.875, else
// 1 - exp(Q(a - 0.875)) with a clamped at 4; the sign copied back, NaN kept. Float64 uses the
// device's erf.
inline float carray_erf_float(float x) {
    float a = fabs(x);
    float s = a * a;
    float p = 8.675488061271608e-05f;
    p = p * s + -0.0008211128297261894f;
    p = p * s + 0.005206749774515629f;
    p = p * s + -0.026861585676670074f;
    p = p * s + 0.11283732950687408f;
    p = p * s + -0.37612634897232056f;
    p = p * s + 0.12837916612625122f;
    float small = a + a * p;
    float u = (a < 4.0f ? a : 4.0f) - 0.875f;
    float q = 2.3228730938740227e-08f;
    q = q * u + -4.576678520606947e-07f;
    q = q * u + 3.8544080780411605e-06f;
    q = q * u + -1.6580443116254173e-05f;
    q = q * u + 1.8693404854275286e-05f;
    q = q * u + 0.00024946738267317414f;
    q = q * u + -0.002182908123359084f;
    q = q * u + 0.01134326308965683f;
    q = q * u + -0.0469021201133728f;
    q = q * u + -0.8265407085418701f;
    q = q * u + -2.430219888687134f;
    q = q * u + -1.5328243970870972f;
    float r = a < 0.875f ? small : 1.0f - exp(q);
    return x != x ? x : copysign(r, x);
}

CARRAY_FLOAT_HELPERS(float)
#ifdef CARRAY_FP64
CARRAY_FLOAT_HELPERS(double)
#endif
