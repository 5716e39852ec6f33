/* GEMM micro-kernels for carray/cpu/_gemm.pyx, one per (dtype, instruction set), picked at run time.
 *
 * Plain C with GCC/Clang vector extensions: the compiler turns `acc += b * a_scalar` on
 * vector_size(64) types into AVX-512 FMAs inside functions compiled with
 * __attribute__((target("avx512f..."))), into AVX2 FMAs inside target("avx2,fma") functions,
 * and into SSE2 (x86-64) or NEON (aarch64) code in the baseline variant. The extension itself is
 * built for the baseline ISA, so one wheel runs on any CPU of its architecture: carray_gemm_best()
 * asks the CPU (once) which variants it can run.
 *
 * Variants (register tile MR x NR, edge tiles of MR/2 or 2MR/3 rows and/or NR/2 columns; block sizes
 * KC x NC packed from B stay in L2, MC rows of A x KC in L3; see _matmul.pyx for the loop nest):
 *   avx512  float 12x32  double 6x32   (24 zmm accumulators)
 *   avx2    float  6x16  double 6x8    (12 ymm accumulators)
 *   plain   float  6x8   double 6x4    (12 xmm/NEON accumulators; scalars without vector types)
 * Each variant also has the packing routines and matrix-vector loops, compiled for its target.
 */
#ifndef CARRAY_GEMM_H
#define CARRAY_GEMM_H

#include "_cpu.h"
#include <string.h>

#ifdef _OPENMP
#include <omp.h>
#endif

/* FMA contraction inside the kernels: -std=c11 turns GCC's default (fast) off, and without it
 * `acc += b * a` is a multiply and an add. Contraction only makes results more accurate; it is
 * not -ffast-math (NaN, inf and signed zeros keep their IEEE meaning). */
#if defined(__clang__)
#define CARRAY_FP_CONTRACT _Pragma("clang fp contract(fast)")
#define CARRAY_OPT_ATTR
#define CARRAY_UNROLL _Pragma("unroll")
#elif defined(__GNUC__)
#define CARRAY_FP_CONTRACT
#define CARRAY_OPT_ATTR __attribute__((optimize("fp-contract=fast")))
#define CARRAY_UNROLL _Pragma("GCC unroll 32")
#else
#define CARRAY_FP_CONTRACT
#define CARRAY_OPT_ATTR
#define CARRAY_UNROLL
#endif

#if defined(__GNUC__)
#define CARRAY_HAVE_VECTORS 1
#define CARRAY_INLINE __attribute__((always_inline))
#define CARRAY_PREFETCH(p) __builtin_prefetch((p), 1, 3)
#else
#define CARRAY_HAVE_VECTORS 0
#define CARRAY_INLINE
#define CARRAY_PREFETCH(p) ((void)(p))
#define restrict
#endif

/* two-operand shuffles of 16-byte vectors (GCC and Clang spell them differently) */
#if defined(__clang__)
#define CARRAY_SHUF4(a, b, i0, i1, i2, i3) __builtin_shufflevector(a, b, i0, i1, i2, i3)
#define CARRAY_SHUF2(a, b, i0, i1) __builtin_shufflevector(a, b, i0, i1)
#elif defined(__GNUC__)
typedef int carray_mask4 __attribute__((vector_size(16)));
typedef long long carray_mask2 __attribute__((vector_size(16)));
#define CARRAY_SHUF4(a, b, i0, i1, i2, i3) __builtin_shuffle(a, b, (carray_mask4){i0, i1, i2, i3})
#define CARRAY_SHUF2(a, b, i0, i1) __builtin_shuffle(a, b, (carray_mask2){i0, i1})
#endif

#if defined(__GNUC__) && defined(__x86_64__)
#define CARRAY_GEMM_X86 1
#else
#define CARRAY_GEMM_X86 0
#endif

#define GK_CAT_(a, b) a##_##b
#define GK_CAT(a, b) GK_CAT_(a, b)

/* ---- baseline variant (SSE2 on x86-64, NEON on aarch64, scalars elsewhere) ---------------- */
#define GK_ATTR CARRAY_OPT_ATTR
#define GK_MR 6
#if CARRAY_HAVE_VECTORS
#define GK_VBYTES 16
#define GK_NV 2
#else
#define GK_VBYTES 0
#define GK_NV 4
#endif
#define GK_T float
#define GK_TSIZE 4
#define GK_NAME(x) GK_CAT(carray_sgemm_plain, x)
#include "_gemm_kernel.h"
#undef GK_T
#undef GK_TSIZE
#undef GK_NAME
#define GK_T double
#define GK_TSIZE 8
#define GK_NAME(x) GK_CAT(carray_dgemm_plain, x)
#include "_gemm_kernel.h"
#undef GK_T
#undef GK_TSIZE
#undef GK_NAME
#undef GK_ATTR
#undef GK_MR
#undef GK_VBYTES
#undef GK_NV

#if CARRAY_GEMM_X86
/* ---- AVX2 + FMA ------------------------------------------------------------------------- */
#define GK_ATTR CARRAY_OPT_ATTR __attribute__((target("avx2,fma")))
#define GK_VBYTES 32
#define GK_MR 6
#define GK_NV 2
#define GK_T float
#define GK_TSIZE 4
#define GK_NAME(x) GK_CAT(carray_sgemm_avx2, x)
#include "_gemm_kernel.h"
#undef GK_T
#undef GK_TSIZE
#undef GK_NAME
#define GK_T double
#define GK_TSIZE 8
#define GK_NAME(x) GK_CAT(carray_dgemm_avx2, x)
#include "_gemm_kernel.h"
#undef GK_T
#undef GK_TSIZE
#undef GK_NAME
#undef GK_ATTR
#undef GK_MR
#undef GK_NV
#undef GK_VBYTES

/* ---- AVX-512 ---------------------------------------------------------------------------- */
#define GK_ATTR CARRAY_OPT_ATTR __attribute__((target("avx512f,avx512vl,avx2,fma")))
#define GK_VBYTES 64
#define GK_T float
#define GK_TSIZE 4
#define GK_MR 12
#define GK_NV 2
#define GK_NAME(x) GK_CAT(carray_sgemm_avx512, x)
#include "_gemm_kernel.h"
#undef GK_T
#undef GK_TSIZE
#undef GK_NAME
#undef GK_MR
#undef GK_NV
#define GK_T double
#define GK_TSIZE 8
#define GK_MR 6
#define GK_NV 4
#define GK_NAME(x) GK_CAT(carray_dgemm_avx512, x)
#include "_gemm_kernel.h"
#undef GK_T
#undef GK_TSIZE
#undef GK_NAME
#undef GK_MR
#undef GK_NV
#undef GK_ATTR
#undef GK_VBYTES
#endif

/* ---- the table ---------------------------------------------------------------------------- */

typedef void (*carray_gemm_kernel_t)(Py_ssize_t kc, const void* a, const void* b, void* c,
                                     Py_ssize_t rsc, Py_ssize_t csc, double alpha, double beta,
                                     int m, int n);
typedef void (*carray_gemm_pack_t)(int rows, Py_ssize_t kc, const void* x, Py_ssize_t rs,
                                   Py_ssize_t ks, void* dst);
typedef void (*carray_gemv_dot_t)(Py_ssize_t rows, Py_ssize_t K, double alpha, const void* x,
                                  Py_ssize_t rs, const void* v, double beta, void* y,
                                  Py_ssize_t ys);
typedef void (*carray_gemv_axpy_t)(Py_ssize_t rows, Py_ssize_t K, double alpha, const void* x,
                                   Py_ssize_t ks, const void* v, Py_ssize_t vs, double beta,
                                   void* y);

typedef struct {
    const char* name;
    int mr, nr;              /* register tile */
    int mr_half, mr_two3, nr_half;    /* the edge kernels' tiles */
    Py_ssize_t kc;           /* K block: an A micro-panel (mr x kc) stays in L1 */
    Py_ssize_t nc;           /* columns of the packed B block (kc x nc, in L2) */
    Py_ssize_t mc;           /* rows of the packed A panel (mc x kc, in L3) */
    /* [2 * rows + cols]: rows 0 mr, 1 mr_half, 2 mr_two3; cols 0 nr, 1 nr_half */
    carray_gemm_kernel_t kernel[6];
    carray_gemm_pack_t pack_a, pack_b;
    carray_gemv_dot_t gemv_dot;
    carray_gemv_axpy_t gemv_axpy;
} carray_gemm_impl;

#define CARRAY_GEMM_NVARIANTS 3
#define GK_ENTRY(pfx, nm, mr, nv, vl, kc, nc, mc)                                        \
    {nm, mr, (nv) * (vl), (mr) / 2, 2 * (mr) / 3, ((nv) > 1 ? (nv) / 2 : 1) * (vl), kc, nc, mc, \
     {pfx##_kernel, pfx##_kernel_n2, pfx##_kernel_m2, pfx##_kernel_m2n2, pfx##_kernel_m3,   \
      pfx##_kernel_m3n2},                                                                  \
     pfx##_pack_a, pfx##_pack_b, pfx##_gemv_dot, pfx##_gemv_axpy}

/* [variant][0: float32, 1: float64]; variant 0 = plain, 1 = avx2, 2 = avx512 */
static const carray_gemm_impl carray_gemm_impls[CARRAY_GEMM_NVARIANTS][2] = {
#if CARRAY_HAVE_VECTORS
    {GK_ENTRY(carray_sgemm_plain, "plain", 6, 2, 4, 256, 256, 3072),
     GK_ENTRY(carray_dgemm_plain, "plain", 6, 2, 2, 256, 128, 3072)},
#else
    {GK_ENTRY(carray_sgemm_plain, "plain", 6, 4, 1, 256, 256, 3072),
     GK_ENTRY(carray_dgemm_plain, "plain", 6, 4, 1, 256, 128, 3072)},
#endif
#if CARRAY_GEMM_X86
    {GK_ENTRY(carray_sgemm_avx2, "avx2", 6, 2, 8, 384, 480, 6144),
     GK_ENTRY(carray_dgemm_avx2, "avx2", 6, 2, 4, 256, 384, 4002)},
    {GK_ENTRY(carray_sgemm_avx512, "avx512", 12, 2, 16, 480, 512, 6144),
     GK_ENTRY(carray_dgemm_avx512, "avx512", 6, 4, 8, 512, 256, 4002)},
#else
    {{0}, {0}},
    {{0}, {0}},
#endif
};

/* The best variant this CPU (and its OS) can run: 2 avx512, 1 avx2, 0 plain (the same SIMD
 * level the elementwise kernels are chosen by). */
static int carray_gemm_best(void)
{
#if CARRAY_GEMM_X86
    return carray_simd_level();
#else
    return 0;
#endif
}

static const carray_gemm_impl* carray_gemm_get(int variant, int is_double)
{
    return &carray_gemm_impls[variant][is_double ? 1 : 0];
}

/* ---- OpenMP pieces the Cython driver calls inside its parallel block ------------------- */

static void carray_gemm_barrier(void)
{
#ifdef _OPENMP
#pragma omp barrier
#endif
}

/* *p += v, atomically across the team; returns the old *p */
static Py_ssize_t carray_fetch_add(Py_ssize_t* p, Py_ssize_t v)
{
    Py_ssize_t old;
#ifdef _OPENMP
#pragma omp atomic capture
    { old = *p; *p += v; }
#else
    old = *p;
    *p += v;
#endif
    return old;
}

static int carray_gemm_team_size(void)
{
#ifdef _OPENMP
    return omp_get_num_threads();
#else
    return 1;
#endif
}

static int carray_gemm_in_parallel(void)
{
#ifdef _OPENMP
    return omp_in_parallel();
#else
    return 0;
#endif
}

#endif
