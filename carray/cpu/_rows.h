/* Vectorised row primitives behind the CPU row kernels (softmax, log_softmax, cross entropy and
 * their gradients, max/min/argmax along a contiguous row), float32 and float64.
 *
 * The modules that include this are compiled for baseline x86-64 (SSE2: 4 floats a vector, no
 * FMA); on x86-64 Linux each entry point is cloned for x86-64-v3 (AVX2) and x86-64-v4 (AVX-512)
 * and the loader picks the best clone the CPU runs (GCC/Clang target_clones, an ifunc). Results
 * do not depend on the clone: every loop keeps 16 partial results whose combination order is
 * fixed in the source (16 floats fill one AVX-512 register, two AVX2 or four SSE registers), and
 * -std=c11 turns off FMA contraction (explicit fmaf, as in erf, rounds once in every clone), so
 * each clone rounds exactly alike.
 *
 * NaN handling without a branch in the loop: max/min keep SSE2 max/min lanes plus a separate NaN
 * flag; a row that holds a NaN gives its first NaN, as NumPy's max and argmax do.
 * float32 exponentials go through carray_expf (_math.h, about 1 ulp); float64 ones through
 * libm's exp (full double accuracy).
 */
#ifndef CARRAY_ROWS_H
#define CARRAY_ROWS_H
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include "_math.h"

#if defined(__x86_64__) && defined(__linux__) && defined(__GNUC__) && !defined(__INTEL_COMPILER)
#define CARRAY_CLONES __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define CARRAY_CLONES
#endif

#define CARRAY_LANES 16

/* carray_row_{max,min}{f,d}_lanes(x, n, &any): the max (min) of the non-NaN elements of x[0..n)
 * (x[0] when there are none), n >= 1, and whether a NaN was seen. SSE2 max/min in four
 * accumulators (maxps(v, acc) is v > acc ? v : acc, so a NaN v leaves acc alone), a NaN flag by
 * cmpunord; GCC does not vectorise the scalar `v > m ? v : m` reduction without -ffast-math. */
#if defined(__SSE2__)
#include <emmintrin.h>
#define CARRAY_ROW_LANES(NAME, T, V, SUF, OP, CMP, W)                                            \
  static inline T NAME##_lanes(const T* x, ptrdiff_t n, int* any) {                          \
    V a0 = _mm_set1_##SUF(x[0]), a1 = a0, a2 = a0, a3 = a0, bad = _mm_setzero_##SUF();        \
    T acc[W], m = x[0];                                                                      \
    ptrdiff_t i = 0, j;                                                                      \
    for (; i + 4 * W <= n; i += 4 * W) {                                                     \
      V v0 = _mm_loadu_##SUF(x + i), v1 = _mm_loadu_##SUF(x + i + W);                        \
      V v2 = _mm_loadu_##SUF(x + i + 2 * W), v3 = _mm_loadu_##SUF(x + i + 3 * W);            \
      a0 = _mm_##OP##_##SUF(v0, a0);                                                         \
      a1 = _mm_##OP##_##SUF(v1, a1);                                                         \
      a2 = _mm_##OP##_##SUF(v2, a2);                                                         \
      a3 = _mm_##OP##_##SUF(v3, a3);                                                         \
      bad = _mm_or_##SUF(bad, _mm_or_##SUF(_mm_or_##SUF(_mm_cmpunord_##SUF(v0, v0),           \
                                                       _mm_cmpunord_##SUF(v1, v1)),          \
                                         _mm_or_##SUF(_mm_cmpunord_##SUF(v2, v2),             \
                                                      _mm_cmpunord_##SUF(v3, v3))));         \
    }                                                                                        \
    a0 = _mm_##OP##_##SUF(_mm_##OP##_##SUF(a0, a1), _mm_##OP##_##SUF(a2, a3));                \
    _mm_storeu_##SUF(acc, a0);                                                               \
    *any = _mm_movemask_##SUF(bad) != 0;                                                     \
    for (j = 0; j < W; ++j) m = acc[j] CMP m ? acc[j] : m;                                   \
    for (; i < n; ++i) {                                                                     \
      m = x[i] CMP m ? x[i] : m;                                                             \
      *any |= x[i] != x[i];                                                                  \
    }                                                                                        \
    return m;                                                                                \
  }
CARRAY_ROW_LANES(carray_row_maxf, float, __m128, ps, max, >, 4)
CARRAY_ROW_LANES(carray_row_minf, float, __m128, ps, min, <, 4)
CARRAY_ROW_LANES(carray_row_maxd, double, __m128d, pd, max, >, 2)
CARRAY_ROW_LANES(carray_row_mind, double, __m128d, pd, min, <, 2)
#else
#define CARRAY_ROW_LANES(NAME, T, CMP)                                                           \
  static inline T NAME##_lanes(const T* x, ptrdiff_t n, int* any) {                          \
    T m = x[0];                                                                              \
    *any = 0;                                                                                \
    for (ptrdiff_t i = 0; i < n; ++i) {                                                      \
      m = x[i] CMP m ? x[i] : m;                                                             \
      *any |= x[i] != x[i];                                                                  \
    }                                                                                        \
    return m;                                                                                \
  }
CARRAY_ROW_LANES(carray_row_maxf, float, >)
CARRAY_ROW_LANES(carray_row_minf, float, <)
CARRAY_ROW_LANES(carray_row_maxd, double, >)
CARRAY_ROW_LANES(carray_row_mind, double, <)
#endif

/* carray_row_{max,min}{f,d}(x, n): the max (min) of x[0..n), n >= 1; the first NaN if any.
 * carray_row_arg{max,min}{f,d}(x, n): the index of the first max (min), or of the first NaN. */
#define CARRAY_ROW_EXTREME(NAME, T, CMP)                                                        \
  static inline T NAME##_core(const T* x, ptrdiff_t n, ptrdiff_t* nan_at) {                   \
    int any;                                                                                 \
    T m = NAME##_lanes(x, n, &any);                                                          \
    *nan_at = -1;                                                                            \
    if (any)                                                                                 \
      for (ptrdiff_t i = 0; i < n; ++i)                                                      \
        if (x[i] != x[i]) { *nan_at = i; return x[i]; }                                      \
    return m;                                                                                \
  }                                                                                          \
  CARRAY_CLONES static T NAME(const T* x, ptrdiff_t n) {                                     \
    ptrdiff_t at;                                                                            \
    return NAME##_core(x, n, &at);                                                           \
  }                                                                                          \
  CARRAY_CLONES static ptrdiff_t NAME##_arg(const T* x, ptrdiff_t n) {                       \
    /* block by block: a block's extreme (vectorised), then a scan only of a block that       \
     * holds a new best; NaN: the first NaN */                                               \
    const ptrdiff_t B = 256;                                                                 \
    ptrdiff_t i0, i, at, best = 0;                                                           \
    T bv = x[0];                                                                             \
    for (i0 = 0; i0 < n; i0 += B) {                                                          \
      ptrdiff_t len = n - i0 < B ? n - i0 : B;                                               \
      T v = NAME##_core(x + i0, len, &at);                                                   \
      if (at >= 0) return i0 + at;                                                           \
      if (v CMP bv)                                                                          \
        for (i = i0; i < i0 + len; ++i)                                                      \
          if (x[i] == v) { bv = v; best = i; break; }                                        \
    }                                                                                        \
    return best;                                                                             \
  }

CARRAY_ROW_EXTREME(carray_row_maxf, float, >)
CARRAY_ROW_EXTREME(carray_row_minf, float, <)
CARRAY_ROW_EXTREME(carray_row_maxd, double, >)
CARRAY_ROW_EXTREME(carray_row_mind, double, <)

static inline float carray_lanes_sumf(const float* s) {
  /* the 16 partial sums, pairwise in a fixed order */
  float a = ((s[0] + s[1]) + (s[2] + s[3])) + ((s[4] + s[5]) + (s[6] + s[7]));
  float b = ((s[8] + s[9]) + (s[10] + s[11])) + ((s[12] + s[13]) + (s[14] + s[15]));
  return a + b;
}

static inline double carray_lanes_sumd(const double* s) {
  double a = ((s[0] + s[1]) + (s[2] + s[3])) + ((s[4] + s[5]) + (s[6] + s[7]));
  double b = ((s[8] + s[9]) + (s[10] + s[11])) + ((s[12] + s[13]) + (s[14] + s[15]));
  return a + b;
}

CARRAY_CLONES static float carray_row_expsumf(const float* x, float* y, ptrdiff_t n, float m) {
  /* y[k] = e^(x[k] - m); returns their sum */
  float s[CARRAY_LANES] = {0};
  ptrdiff_t i = 0, j;
  for (; i + CARRAY_LANES <= n; i += CARRAY_LANES)
    for (j = 0; j < CARRAY_LANES; ++j) {
      float e = carray_expf(x[i + j] - m);
      y[i + j] = e;
      s[j] += e;
    }
  for (j = 0; i < n; ++i, ++j) {
    float e = carray_expf(x[i] - m);
    y[i] = e;
    s[j] += e;
  }
  return carray_lanes_sumf(s);
}

CARRAY_CLONES static double carray_row_expsumd(const double* x, double* y, ptrdiff_t n,
                                               double m) {
  double s[CARRAY_LANES] = {0};
  ptrdiff_t i = 0, j;
  for (; i + CARRAY_LANES <= n; i += CARRAY_LANES)
    for (j = 0; j < CARRAY_LANES; ++j) {
      double e = exp(x[i + j] - m);
      y[i + j] = e;
      s[j] += e;
    }
  for (j = 0; i < n; ++i, ++j) {
    double e = exp(x[i] - m);
    y[i] = e;
    s[j] += e;
  }
  return carray_lanes_sumd(s);
}

/* y[k] = y[k] / s */
CARRAY_CLONES static void carray_row_divf(float* y, ptrdiff_t n, float s) {
  for (ptrdiff_t i = 0; i < n; ++i) y[i] = y[i] / s;
}
CARRAY_CLONES static void carray_row_divd(double* y, ptrdiff_t n, double s) {
  for (ptrdiff_t i = 0; i < n; ++i) y[i] = y[i] / s;
}

/* y[k] = (x[k] - m) - c */
CARRAY_CLONES static void carray_row_shiftf(const float* x, float* y, ptrdiff_t n, float m,
                                            float c) {
  for (ptrdiff_t i = 0; i < n; ++i) y[i] = (x[i] - m) - c;
}
CARRAY_CLONES static void carray_row_shiftd(const double* x, double* y, ptrdiff_t n, double m,
                                            double c) {
  for (ptrdiff_t i = 0; i < n; ++i) y[i] = (x[i] - m) - c;
}

/* y[k] = x[k] * s */
CARRAY_CLONES static void carray_row_scalef(const float* x, float* y, ptrdiff_t n, float s) {
  for (ptrdiff_t i = 0; i < n; ++i) y[i] = x[i] * s;
}
CARRAY_CLONES static void carray_row_scaled(const double* x, double* y, ptrdiff_t n, double s) {
  for (ptrdiff_t i = 0; i < n; ++i) y[i] = x[i] * s;
}

/* sum(a[k] * b[k]) in double (b NULL: sum(a[k])) */
CARRAY_CLONES static double carray_row_dotf(const float* a, const float* b, ptrdiff_t n) {
  double s[CARRAY_LANES] = {0};
  ptrdiff_t i = 0, j;
  if (b == NULL) {
    for (; i + CARRAY_LANES <= n; i += CARRAY_LANES)
      for (j = 0; j < CARRAY_LANES; ++j) s[j] += (double)a[i + j];
    for (j = 0; i < n; ++i, ++j) s[j] += (double)a[i];
  } else {
    for (; i + CARRAY_LANES <= n; i += CARRAY_LANES)
      for (j = 0; j < CARRAY_LANES; ++j) s[j] += (double)a[i + j] * (double)b[i + j];
    for (j = 0; i < n; ++i, ++j) s[j] += (double)a[i] * (double)b[i];
  }
  return carray_lanes_sumd(s);
}
CARRAY_CLONES static double carray_row_dotd(const double* a, const double* b, ptrdiff_t n) {
  double s[CARRAY_LANES] = {0};
  ptrdiff_t i = 0, j;
  if (b == NULL) {
    for (; i + CARRAY_LANES <= n; i += CARRAY_LANES)
      for (j = 0; j < CARRAY_LANES; ++j) s[j] += a[i + j];
    for (j = 0; i < n; ++i, ++j) s[j] += a[i];
  } else {
    for (; i + CARRAY_LANES <= n; i += CARRAY_LANES)
      for (j = 0; j < CARRAY_LANES; ++j) s[j] += a[i + j] * b[i + j];
    for (j = 0; i < n; ++i, ++j) s[j] += a[i] * b[i];
  }
  return carray_lanes_sumd(s);
}

/* softmax gradient: gx = y (g - s); log_softmax gradient: gx = g - e^y s */
CARRAY_CLONES static void carray_row_softmax_gradf(const float* y, const float* g, float* gx,
                                                   ptrdiff_t n, float s, int lg) {
  ptrdiff_t i;
  if (lg)
    for (i = 0; i < n; ++i) gx[i] = g[i] - carray_expf(y[i]) * s;
  else
    for (i = 0; i < n; ++i) gx[i] = y[i] * (g[i] - s);
}
CARRAY_CLONES static void carray_row_softmax_gradd(const double* y, const double* g, double* gx,
                                                   ptrdiff_t n, double s, int lg) {
  ptrdiff_t i;
  if (lg)
    for (i = 0; i < n; ++i) gx[i] = g[i] - exp(y[i]) * s;
  else
    for (i = 0; i < n; ++i) gx[i] = y[i] * (g[i] - s);
}

/* layer norm and RMS norm rows (carray.nn.layer_norm / rms_norm on the CPU), float32 and
 * float64: the row sums in 16 double lanes (two passes: the mean, then the squares about it), the
 * elementwise parts in the row's own type, so every clone vectorises them all.
 *   carray_norm_row:      mean (0 unless center), rstd = 1 / sqrt(mean((x - mean)^2) + eps),
 *                         y = (x - mean) rstd w + b (w, b may be NULL)
 *   carray_norm_grad_row: dx = r (gh - mean(gh) - xhat mean(gh xhat)), gh = g w, xhat = (x - mu) r
 *                         (RMS norm: without mean(gh))
 *   carray_norm_wb_row:   aw += g xhat, ab += g over one row (the weight and bias gradients;
 *                         either may be NULL) */
#define CARRAY_NORM_ROWS(T, SUF)                                                                  \
  CARRAY_CLONES static void carray_norm_row##SUF(const T* x, T* y, const T* w, const T* b,       \
                                                 ptrdiff_t n, double eps, int center, T* mean,    \
                                                 T* rstd) {                                       \
    double s[CARRAY_LANES] = {0}, mu = 0, d;                                                      \
    ptrdiff_t i = 0, j;                                                                           \
    T m, r;                                                                                       \
    if (center) {                                                                                 \
      for (; i + CARRAY_LANES <= n; i += CARRAY_LANES)                                            \
        for (j = 0; j < CARRAY_LANES; ++j) s[j] += (double)x[i + j];                              \
      for (j = 0; i < n; ++i, ++j) s[j] += (double)x[i];                                          \
      mu = carray_lanes_sumd(s) / (double)n;                                                      \
      for (j = 0; j < CARRAY_LANES; ++j) s[j] = 0;                                                \
    }                                                                                             \
    for (i = 0; i + CARRAY_LANES <= n; i += CARRAY_LANES)                                         \
      for (j = 0; j < CARRAY_LANES; ++j) {                                                        \
        d = (double)x[i + j] - mu;                                                                \
        s[j] += d * d;                                                                            \
      }                                                                                           \
    for (j = 0; i < n; ++i, ++j) {                                                                \
      d = (double)x[i] - mu;                                                                      \
      s[j] += d * d;                                                                              \
    }                                                                                             \
    m = (T)mu;                                                                                    \
    r = (T)(1.0 / sqrt(carray_lanes_sumd(s) / (double)n + eps));                                  \
    *mean = m;                                                                                    \
    *rstd = r;                                                                                    \
    if (w != NULL && b != NULL)                                                                   \
      for (i = 0; i < n; ++i) y[i] = (x[i] - m) * r * w[i] + b[i];                                \
    else if (w != NULL)                                                                           \
      for (i = 0; i < n; ++i) y[i] = (x[i] - m) * r * w[i];                                       \
    else if (b != NULL)                                                                           \
      for (i = 0; i < n; ++i) y[i] = (x[i] - m) * r + b[i];                                       \
    else                                                                                          \
      for (i = 0; i < n; ++i) y[i] = (x[i] - m) * r;                                              \
  }                                                                                               \
  CARRAY_CLONES static void carray_norm_grad_row##SUF(const T* g, const T* x, T mu, T r,         \
                                                      const T* w, T* gx, ptrdiff_t n,            \
                                                      int center) {                              \
    double sa[CARRAY_LANES] = {0}, sc[CARRAY_LANES] = {0};                                        \
    ptrdiff_t i = 0, j;                                                                           \
    T am, cm, gh;                                                                                 \
    for (; i + CARRAY_LANES <= n; i += CARRAY_LANES)                                              \
      for (j = 0; j < CARRAY_LANES; ++j) {                                                        \
        gh = w != NULL ? g[i + j] * w[i + j] : g[i + j];                                          \
        sa[j] += (double)gh;                                                                      \
        sc[j] += (double)gh * (double)((x[i + j] - mu) * r);                                      \
      }                                                                                           \
    for (j = 0; i < n; ++i, ++j) {                                                                \
      gh = w != NULL ? g[i] * w[i] : g[i];                                                        \
      sa[j] += (double)gh;                                                                        \
      sc[j] += (double)gh * (double)((x[i] - mu) * r);                                            \
    }                                                                                             \
    am = center ? (T)(carray_lanes_sumd(sa) / (double)n) : (T)0;                                  \
    cm = (T)(carray_lanes_sumd(sc) / (double)n);                                                  \
    if (w != NULL)                                                                                \
      for (i = 0; i < n; ++i) gx[i] = r * (g[i] * w[i] - am - (x[i] - mu) * r * cm);              \
    else                                                                                          \
      for (i = 0; i < n; ++i) gx[i] = r * (g[i] - am - (x[i] - mu) * r * cm);                     \
  }                                                                                               \
  CARRAY_CLONES static void carray_norm_wb_row##SUF(const T* g, const T* x, T mu, T r,           \
                                                    double* aw, double* ab, ptrdiff_t n) {        \
    ptrdiff_t i;                                                                                  \
    if (aw != NULL)                                                                               \
      for (i = 0; i < n; ++i) aw[i] += (double)(g[i] * ((x[i] - mu) * r));                        \
    if (ab != NULL)                                                                               \
      for (i = 0; i < n; ++i) ab[i] += (double)g[i];                                              \
  }
CARRAY_NORM_ROWS(float, f)
CARRAY_NORM_ROWS(double, d)

/* exact GELU, y = x Phi(x) with Phi(x) = (erf(x / sqrt 2) + 1) / 2, and its gradient
 * gx = g (Phi(x) + x phi(x)), phi(x) = exp(-x^2 / 2) / sqrt(2 pi): one pass (carray.nn.gelu's
 * CPU path). float32 erf is carray_erf_expf, whose exp(-z^2) at z = x / sqrt 2 is phi's
 * exponential, so the gradient costs one exponential; its fmaf are instructions in the v3/v4
 * clones (the default clone, for CPUs without FMA, calls libm's and is slower, not different). */
#define CARRAY_SQRT_HALF 0.70710678118654752440
#define CARRAY_INV_SQRT_2PI 0.39894228040143267794
CARRAY_CLONES static void carray_geluf(const float* x, float* y, ptrdiff_t n) {
  ptrdiff_t i;
  for (i = 0; i < n; ++i)
    y[i] = x[i] * ((carray_erff(x[i] * (float)CARRAY_SQRT_HALF) + 1.0f) * 0.5f);
}
CARRAY_CLONES static void carray_gelud(const double* x, double* y, ptrdiff_t n) {
  ptrdiff_t i;
  for (i = 0; i < n; ++i) y[i] = x[i] * ((erf(x[i] * CARRAY_SQRT_HALF) + 1.0) * 0.5);
}
CARRAY_CLONES static void carray_gelu_gradf(const float* g, const float* x, float* gx,
                                            ptrdiff_t n) {
  ptrdiff_t i;
  for (i = 0; i < n; ++i) {
    float a = x[i], e;    /* e = exp(-(a / sqrt 2)^2): erf's own exponential gives phi(a) */
    float phi = (carray_erf_expf(a * (float)CARRAY_SQRT_HALF, &e) + 1.0f) * 0.5f;
    gx[i] = g[i] * (phi + a * (e * (float)CARRAY_INV_SQRT_2PI));
  }
}
CARRAY_CLONES static void carray_gelu_gradd(const double* g, const double* x, double* gx,
                                            ptrdiff_t n) {
  ptrdiff_t i;
  for (i = 0; i < n; ++i) {
    double a = x[i];
    double pdf = exp((a * a) * -0.5) * CARRAY_INV_SQRT_2PI;
    double phi = (erf(a * CARRAY_SQRT_HALF) + 1.0) * 0.5;
    gx[i] = g[i] * (phi + a * pdf);
  }
}
#endif
