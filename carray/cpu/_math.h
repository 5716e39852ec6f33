/* Branch-free float32 math that compilers vectorise (libm's expf is a call per element).
 *
 * carray_expf: e^x = 2^n * e^r with n = round(x / ln2) and |r| <= ln2/2; e^r from Cephes' degree-7
 * polynomial (max error about 1 ulp); 2^n applied as two exact power-of-two factors so results
 * down to the subnormal range are right. NaN in gives NaN; x > 88.72 gives inf, x < -103.98 gives 0.
 * Selections are written as bit masks (carray_select): GCC does not if-convert float ?: without
 * -ffast-math, and a branch in the loop stops vectorisation.
 */
#ifndef CARRAY_MATH_H
#define CARRAY_MATH_H
#include <math.h>
#include <stdint.h>
#include <string.h>

static inline float carray_select(int cond, float a, float b) {
  /* cond ? a : b without a branch */
  uint32_t m = -(uint32_t)(cond != 0), ua, ub, r;
  float f;
  memcpy(&ua, &a, sizeof ua);
  memcpy(&ub, &b, sizeof ub);
  r = (ua & m) | (ub & ~m);
  memcpy(&f, &r, sizeof f);
  return f;
}

static inline float carray_pow2i(int32_t n) {
  /* 2^n for -126 <= n <= 127, built from its exponent bits */
  int32_t bits = (n + 127) << 23;
  float f;
  memcpy(&f, &bits, sizeof f);
  return f;
}

static inline float carray_expf(float x) {
  const float log2e = 1.44269504088896341f;
  const float ln2_hi = 0.693359375f, ln2_lo = -2.12194440e-4f;
  const float magic = 12582912.0f;                 /* 1.5 * 2^23: adding it rounds to an integer */
  const float hi = 88.7228f, lo = -103.98f;
  float xc = carray_select(x > hi, hi, x);
  xc = carray_select(xc < lo, lo, xc);
  float fn = (xc * log2e + magic) - magic;         /* round(x / ln2), |fn| <= 150 */
  float r = xc - fn * ln2_hi;
  r = r - fn * ln2_lo;
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  p = p * r * r + r + 1.0f;
  int32_t n = (int32_t)fn;
  int32_t n1 = n >> 1;                             /* 2^n = 2^n1 * 2^(n - n1), both normal */
  float y = p * carray_pow2i(n1) * carray_pow2i(n - n1);
  y = carray_select(x > hi, __builtin_inff(), y);
  y = carray_select(x < lo, 0.0f, y);
  return carray_select(x != x, x, y);
}

static inline float carray_sigmoidf(float x) {
  /* 1 / (1 + e^-x) without overflow: e^-|x| never exceeds 1 */
  float e = carray_expf(carray_select(x >= 0, -x, x));
  float s = 1.0f / (1.0f + e);
  return carray_select(x >= 0, s, e * s);
}

static inline float carray_tanhf(float x) {
  /* tanh without a branch, about 1 ulp: for |x| < 0.625 Cephes' odd minimax polynomial
   * x + x^3 P(x^2); above, 1 - 2 / (e^(2|x|) + 1) with the sign restored (no cancellation
   * there since tanh(0.625) > 1/2; e^(2|x|) = inf for large |x| gives exactly 1). */
  float a = carray_select(x < 0, -x, x);
  float z = x * x;
  float p = -5.70498872745e-3f;
  p = p * z + 2.06390887954e-2f;
  p = p * z - 5.37397155531e-2f;
  p = p * z + 1.33314422036e-1f;
  p = p * z - 3.33332819422e-1f;
  float small = carray_select(x == 0, x, p * z * x + x);   /* keeps -0 */
  float big = 1.0f - 2.0f / (carray_expf(a + a) + 1.0f);
  big = carray_select(x < 0, -big, big);
  return carray_select(a < 0.625f, small, big);
}

/* a * b + c rounded once: an instruction where the target has FMA (the x86-64-v3/v4 clones of
 * _rows.h, the -mfma kernel modules, arm64), else libm's exact fmaf, so a result never depends on
 * the SIMD level that computed it */
#define CARRAY_FMAF(a, b, c) fmaf((a), (b), (c))

static inline float carray_expnegf(float x) {
  /* e^x for x <= 0 (NaN for NaN), 0 below -87.3 where e^x leaves the normal range: carray_expf's
   * reduction and polynomial with FMA, and a single 2^n factor (n >= -126 is always normal) */
  const float log2e = 1.44269504088896341f, ln2_hi = 0.693359375f, ln2_lo = -2.12194440e-4f;
  const float magic = 12582912.0f;
  float xc = carray_select(x < -87.3f, -87.3f, x);
  float fn = CARRAY_FMAF(xc, log2e, magic) - magic;
  float r = CARRAY_FMAF(fn, -ln2_hi, xc);
  r = CARRAY_FMAF(fn, -ln2_lo, r);
  float p = 1.9875691500e-4f;
  p = CARRAY_FMAF(p, r, 1.3981999507e-3f);
  p = CARRAY_FMAF(p, r, 8.3334519073e-3f);
  p = CARRAY_FMAF(p, r, 4.1665795894e-2f);
  p = CARRAY_FMAF(p, r, 1.6666665459e-1f);
  p = CARRAY_FMAF(p, r, 5.0000001201e-1f);
  p = CARRAY_FMAF(p * r, r, r) + 1.0f;
  float y = p * carray_pow2i((int32_t)fn);
  return carray_select(x < -87.3f, 0.0f, y);
}

static inline float carray_erf_expf(float x, float* e) {
  /* erf(x) in float32 without a branch, at most about 1.1 ulp (1.33 where fmaf is emulated;
   * checked over every float below 4.5), and *e = exp(-x^2), which GELU's gradient needs too.
   * With a = |x|: for a < 0.875 erf = a + a P(a^2) (P a degree-6 polynomial fitted to
   * erf(a)/a - 1, so the leading 1 is exact); above, erf = 1 - e^(-a^2) R(a) with R a degree-8
   * polynomial in a - 2.4375 fitted to erfcx(a) = e^(a^2) erfc(a) on [0.875, 4] (a weighted
   * minimax fit of the error in erf, within 0.12 ulp), a clamped at 4 where erf rounds to 1.
   * Both fits are our own, rounded to float. The sign is copied back; NaN in gives NaN. */
  uint32_t ux, ua, ur;
  float a, r;
  memcpy(&ux, &x, sizeof ux);
  ua = ux & 0x7fffffffu;
  memcpy(&a, &ua, sizeof a);
  float s = a * a;
  float p = 8.675488061271608e-05f;
  p = CARRAY_FMAF(p, s, -0.0008211128297261894f);
  p = CARRAY_FMAF(p, s, 0.005206749774515629f);
  p = CARRAY_FMAF(p, s, -0.026861585676670074f);
  p = CARRAY_FMAF(p, s, 0.11283732950687408f);
  p = CARRAY_FMAF(p, s, -0.37612634897232056f);
  p = CARRAY_FMAF(p, s, 0.12837916612625122f);
  float small = CARRAY_FMAF(a, p, a);
  float ex = carray_expnegf(-s);
  float u = carray_select(a < 4.0f, a, 4.0f) - 2.4375f;
  float q = 1.427669049e-04f;
  q = CARRAY_FMAF(q, u, 3.506224602e-04f);
  q = CARRAY_FMAF(q, u, 7.743838942e-04f);
  q = CARRAY_FMAF(q, u, -6.510951207e-04f);
  q = CARRAY_FMAF(q, u, 2.473263768e-03f);
  q = CARRAY_FMAF(q, u, -8.868400939e-03f);
  q = CARRAY_FMAF(q, u, 2.644974925e-02f);
  q = CARRAY_FMAF(q, u, -7.755379379e-02f);
  q = CARRAY_FMAF(q, u, 2.155546844e-01f);
  float big = CARRAY_FMAF(-ex, q, 1.0f);
  r = carray_select(a < 0.875f, small, big);
  memcpy(&ur, &r, sizeof ur);
  ur |= ux & 0x80000000u;
  memcpy(&r, &ur, sizeof r);
  *e = ex;
  return carray_select(x != x, x, r);
}

static inline float carray_erff(float x) {
  /* erf in float32 (carray_erf_expf without the exponential) */
  float e;
  return carray_erf_expf(x, &e);
}

static inline double carray_erfinv(double x) {
  /* erf's inverse: M. Giles' single-precision approximation ("Approximating the erfinv
   * function", GPU Gems 4) refined by Newton steps on erf, which give double precision.
   * +-inf at +-1, NaN outside [-1, 1] and for NaN. */
  if (!(x >= -1.0 && x <= 1.0)) return NAN;
  if (x == 1.0) return INFINITY;
  if (x == -1.0) return -INFINITY;
  double w = -log((1.0 - x) * (1.0 + x)), p;
  if (w < 5.0) {
    w = w - 2.5;
    p = 2.81022636e-08;
    p = 3.43273939e-07 + p * w;
    p = -3.5233877e-06 + p * w;
    p = -4.39150654e-06 + p * w;
    p = 0.00021858087 + p * w;
    p = -0.00125372503 + p * w;
    p = -0.00417768164 + p * w;
    p = 0.246640727 + p * w;
    p = 1.50140941 + p * w;
  } else {
    w = sqrt(w) - 3.0;
    p = -0.000200214257;
    p = 0.000100950558 + p * w;
    p = 0.00134934322 + p * w;
    p = -0.00367342844 + p * w;
    p = 0.00573950773 + p * w;
    p = -0.0076224613 + p * w;
    p = 0.00943887047 + p * w;
    p = 1.00167406 + p * w;
    p = 2.83297682 + p * w;
  }
  double y = p * x;
  for (int i = 0; i < 3; ++i) {               /* y -= (erf(y) - x) / erf'(y) */
    double d = 1.1283791670955126 * exp(-y * y);
    if (d == 0.0) break;
    y -= (erf(y) - x) / d;
  }
  return y;
}

static inline double carray_logaddexp(double a, double b) {
  /* log(e^a + e^b) as NumPy's npy_logaddexp: a == b (infinities too) gives a + log 2 */
  if (a == b) return a + 0.693147180559945309;
  double d = a - b;
  if (d > 0) return a + log1p(exp(-d));
  if (d <= 0) return b + log1p(exp(d));
  return d;                                    /* NaN */
}
#endif
