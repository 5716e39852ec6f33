/* GEMM micro-kernels, packing routines and GEMV loops for one element type and one SIMD width.
 *
 * _gemm.h includes this file once per (type, instruction set) after defining:
 *   GK_T        element type (float or double)
 *   GK_VBYTES   bytes per SIMD vector (64: AVX-512, 32: AVX2, 16: SSE2/NEON); 0 for plain scalars
 *   GK_NV       vectors per row of the register tile: NR = GK_NV * (elements per vector)
 *   GK_MR       rows of the register tile
 *   GK_ATTR     function attributes (the target instruction set)
 *   GK_NAME(x)  the name of this instance's symbol x
 *
 * Packed layouts (what the kernels read, contiguous and 64-byte aligned):
 *   A micro-panel: MR rows x kc, stored k-major: a[k * MR + i] = A[i, k]
 *   B micro-panel: kc x NR,      stored k-major: b[k * NR + j] = B[k, j]
 * so step k of a kernel reads MR scalars of A (broadcast) and NV vectors of B, and does
 * MR * NV vector FMAs into the MR x NV accumulator vectors that stay in registers.
 *
 * Six kernels share one body: the full MR x NR tile and, for the edges of C, tiles of MR/2 or
 * 2MR/3 rows and/or NV/2 vectors (they read the same full-size packed panels), so a 100 x 100
 * product wastes 4% of its multiply-adds on padding instead of 38%, and a 32-row one (a
 * convolution with 32 filters: 12 + 12 + 8 rows) none instead of 11%.
 */

#if GK_VBYTES > 0
#define GK_VL (GK_VBYTES / (int)sizeof(GK_T))
typedef GK_T GK_NAME(vec) __attribute__((vector_size(GK_VBYTES)));
#else
#define GK_VL 1
typedef GK_T GK_NAME(vec);
#endif
#define GK_V GK_NAME(vec)
#define GK_NR (GK_NV * GK_VL)
#define GK_MR2 (GK_MR / 2)
#define GK_MR3 (2 * GK_MR / 3)
#define GK_NV2 (GK_NV > 1 ? GK_NV / 2 : 1)

/* C[0:m, 0:n] = alpha * (A_panel @ B_panel) + beta * C (beta == 0: C is not read), for a tile
 * of at most KM rows and KNV vectors; c points at C[0, 0], rsc/csc are its steps in elements. */
CARRAY_INLINE GK_ATTR static inline void GK_NAME(kernel_body)(
    const int KM, const int KNV, Py_ssize_t kc, const GK_T* restrict a, const GK_T* restrict b,
    GK_T* c, Py_ssize_t rsc, Py_ssize_t csc, GK_T alpha, GK_T beta, int m, int n)
{
    CARRAY_FP_CONTRACT
    GK_V acc[GK_MR][GK_NV];
    Py_ssize_t k;
    int i, v, j;

    CARRAY_UNROLL
    for (i = 0; i < KM; i++) {
        CARRAY_UNROLL
        for (v = 0; v < KNV; v++)
            acc[i][v] = (GK_V){0};
    }
    if (csc == 1 && beta != 0) {     /* C's tile will be read at the end: fetch it meanwhile */
        CARRAY_UNROLL
        for (i = 0; i < KM; i++) {
            CARRAY_PREFETCH(c + i * rsc);
            CARRAY_PREFETCH(c + i * rsc + KNV * GK_VL - 1);
        }
    }
    for (k = 0; k < kc; k++) {
        GK_V bv[GK_NV];
        CARRAY_UNROLL
        for (v = 0; v < KNV; v++)
            bv[v] = *(const GK_V*)(b + v * GK_VL);
        CARRAY_UNROLL
        for (i = 0; i < KM; i++) {
            const GK_T ai = a[i];
            CARRAY_UNROLL
            for (v = 0; v < KNV; v++)
                acc[i][v] += bv[v] * ai;
        }
        a += GK_MR;
        b += GK_NR;
    }

    if (m == KM && n == KNV * GK_VL && csc == 1) {
        /* a full tile in contiguous rows: vector read-modify-write */
        CARRAY_UNROLL
        for (i = 0; i < KM; i++) {
            CARRAY_UNROLL
            for (v = 0; v < KNV; v++) {
                GK_T* p = c + i * rsc + v * GK_VL;
                GK_V r = acc[i][v] * alpha, old;
                if (beta != 0) {
                    memcpy(&old, p, sizeof(GK_V));
                    r += old * beta;
                }
                memcpy(p, &r, sizeof(GK_V));
            }
        }
    } else {
        /* an edge tile or a strided C: go through a scratch tile */
        GK_T tile[GK_MR * GK_NR];
        CARRAY_UNROLL
        for (i = 0; i < KM; i++) {
            CARRAY_UNROLL
            for (v = 0; v < KNV; v++)
                memcpy(tile + i * GK_NR + v * GK_VL, &acc[i][v], sizeof(GK_V));
        }
        for (i = 0; i < m; i++) {
            GK_T* row = c + i * rsc;
            for (j = 0; j < n; j++) {
                GK_T r = alpha * tile[i * GK_NR + j];
                if (beta != 0)
                    r += beta * row[j * csc];
                row[j * csc] = r;
            }
        }
    }
}

#define GK_KERNEL(suffix, KM, KNV)                                                          \
    GK_ATTR static void GK_NAME(suffix)(Py_ssize_t kc, const void* a, const void* b, void* c, \
                                        Py_ssize_t rsc, Py_ssize_t csc, double alpha,       \
                                        double beta, int m, int n)                          \
    {                                                                                       \
        GK_NAME(kernel_body)(KM, KNV, kc, (const GK_T*)a, (const GK_T*)b, (GK_T*)c, rsc, csc, \
                             (GK_T)alpha, (GK_T)beta, m, n);                                \
    }
GK_KERNEL(kernel, GK_MR, GK_NV)            /* MR x NR */
GK_KERNEL(kernel_m2, GK_MR2, GK_NV)        /* MR/2 x NR */
GK_KERNEL(kernel_n2, GK_MR, GK_NV2)        /* MR x NR/2 */
GK_KERNEL(kernel_m2n2, GK_MR2, GK_NV2)     /* MR/2 x NR/2 */
GK_KERNEL(kernel_m3, GK_MR3, GK_NV)        /* 2MR/3 x NR */
GK_KERNEL(kernel_m3n2, GK_MR3, GK_NV2)     /* 2MR/3 x NR/2 */
#undef GK_KERNEL

/* ---- packing ------------------------------------------------------------------------------ */

/* dst[k * W + r] = x[r * rs + k * ks] for r < rows, k < kc; zero for rows..W-1.
 * The case that matters most, rows contiguous along k (ks == 1: a row-major A, or the B of
 * x @ W.T), is a transpose: done 4 x 4 (float) or 2 x 2 (double) in registers with shuffles
 * instead of one scalar store per element. */
CARRAY_INLINE GK_ATTR static inline void GK_NAME(pack_panel)(const int W, int rows, Py_ssize_t kc,
                                                      const GK_T* x, Py_ssize_t rs,
                                                      Py_ssize_t ks, GK_T* dst)
{
    Py_ssize_t k = 0;
    int r;
    if (rows == W && rs == 1) {
        for (k = 0; k < kc; k++)
            memcpy(dst + k * W, x + k * ks, W * sizeof(GK_T));
        return;
    }
    if (rows == W && ks == 1) {
#if CARRAY_HAVE_VECTORS && GK_VBYTES > 0
#define GK_TB (16 / GK_TSIZE)          /* transpose block: 4 floats or 2 doubles */
        typedef GK_T tv __attribute__((vector_size(16)));
        int g;
        for (; k + GK_TB <= kc; k += GK_TB) {
            for (g = 0; g + GK_TB <= W; g += GK_TB) {
                tv r0, r1, o0, o1;
                memcpy(&r0, x + (g + 0) * rs + k, 16);
                memcpy(&r1, x + (g + 1) * rs + k, 16);
#if GK_TB == 4
                tv r2, r3, t0, t1, t2, t3, o2, o3;
                memcpy(&r2, x + (g + 2) * rs + k, 16);
                memcpy(&r3, x + (g + 3) * rs + k, 16);
                t0 = CARRAY_SHUF4(r0, r1, 0, 4, 1, 5);
                t1 = CARRAY_SHUF4(r0, r1, 2, 6, 3, 7);
                t2 = CARRAY_SHUF4(r2, r3, 0, 4, 1, 5);
                t3 = CARRAY_SHUF4(r2, r3, 2, 6, 3, 7);
                o0 = CARRAY_SHUF4(t0, t2, 0, 1, 4, 5);
                o1 = CARRAY_SHUF4(t0, t2, 2, 3, 6, 7);
                o2 = CARRAY_SHUF4(t1, t3, 0, 1, 4, 5);
                o3 = CARRAY_SHUF4(t1, t3, 2, 3, 6, 7);
                memcpy(dst + (k + 2) * W + g, &o2, 16);
                memcpy(dst + (k + 3) * W + g, &o3, 16);
#else
                o0 = CARRAY_SHUF2(r0, r1, 0, 2);
                o1 = CARRAY_SHUF2(r0, r1, 1, 3);
#endif
                memcpy(dst + (k + 0) * W + g, &o0, 16);
                memcpy(dst + (k + 1) * W + g, &o1, 16);
            }
            for (; g < W; g++) {
                int j;
                for (j = 0; j < GK_TB; j++)
                    dst[(k + j) * W + g] = x[g * rs + k + j];
            }
        }
#undef GK_TB
#endif
        for (; k < kc; k++)
            for (r = 0; r < W; r++)
                dst[k * W + r] = x[r * rs + k];
        return;
    }
    for (k = 0; k < kc; k++) {
        for (r = 0; r < rows; r++)
            dst[k * W + r] = x[r * rs + k * ks];
        for (; r < W; r++)
            dst[k * W + r] = 0;
    }
}

/* A micro-panel: rows are rows of A (rs = A's row step), ks = A's column step. */
GK_ATTR static void GK_NAME(pack_a)(int rows, Py_ssize_t kc, const void* x, Py_ssize_t rs,
                                    Py_ssize_t ks, void* dst)
{
    GK_NAME(pack_panel)(GK_MR, rows, kc, (const GK_T*)x, rs, ks, (GK_T*)dst);
}

/* B micro-panel: "rows" are columns of B (rs = B's column step), ks = B's row step. */
GK_ATTR static void GK_NAME(pack_b)(int rows, Py_ssize_t kc, const void* x, Py_ssize_t rs,
                                    Py_ssize_t ks, void* dst)
{
    GK_NAME(pack_panel)(GK_NR, rows, kc, (const GK_T*)x, rs, ks, (GK_T*)dst);
}

/* ---- GEMV --------------------------------------------------------------------------------- */

/* y[r * ys] = alpha * sum_k X[r, k] * v[k] + beta * y[r * ys] for r < rows, where X's rows are
 * contiguous (X[r, k] = x[r * rs + k]) and v is contiguous: dot products, four rows at a time
 * so each load of v feeds four FMAs. */
GK_ATTR static void GK_NAME(gemv_dot)(Py_ssize_t rows, Py_ssize_t K, double alpha_, const void* x_,
                                      Py_ssize_t rs, const void* v_, double beta_, void* y_,
                                      Py_ssize_t ys)
{
    CARRAY_FP_CONTRACT
    const GK_T* x = (const GK_T*)x_;
    const GK_T* v = (const GK_T*)v_;
    GK_T* y = (GK_T*)y_;
    const GK_T alpha = (GK_T)alpha_, beta = (GK_T)beta_;
    Py_ssize_t r = 0, k;
    int i, l;
    for (; r < rows; r += 4) {
        const int nr = rows - r < 4 ? (int)(rows - r) : 4;
        GK_V acc[4];
        GK_T s[4] = {0, 0, 0, 0};
        const GK_T* xr[4];
        for (i = 0; i < 4; i++) {
            acc[i] = (GK_V){0};
            xr[i] = x + (r + (i < nr ? i : 0)) * rs;
        }
        for (k = 0; k + GK_VL <= K; k += GK_VL) {
            GK_V vk, xv;
            memcpy(&vk, v + k, sizeof(GK_V));
            CARRAY_UNROLL
            for (i = 0; i < 4; i++) {
                memcpy(&xv, xr[i] + k, sizeof(GK_V));
                acc[i] += xv * vk;
            }
        }
        for (i = 0; i < 4; i++) {
            GK_T lanes[GK_VL];
            memcpy(lanes, &acc[i], sizeof(GK_V));
            for (l = 0; l < GK_VL; l++)
                s[i] += lanes[l];
            for (Py_ssize_t kk = k; kk < K; kk++)
                s[i] += xr[i][kk] * v[kk];
        }
        for (i = 0; i < nr; i++) {
            GK_T out = alpha * s[i];
            if (beta != 0)
                out += beta * y[(r + i) * ys];
            y[(r + i) * ys] = out;
        }
    }
}

/* y[r] = alpha * sum_k v[k * vs] * X[r, k] + beta * y[r] for r < rows, where X's columns are
 * contiguous (X[r, k] = x[r + k * ks]) and y is contiguous: axpys down the columns of X, on
 * blocks of rows that stay in L1. */
GK_ATTR static void GK_NAME(gemv_axpy)(Py_ssize_t rows, Py_ssize_t K, double alpha_, const void* x_,
                                       Py_ssize_t ks, const void* v_, Py_ssize_t vs, double beta_,
                                       void* y_)
{
    CARRAY_FP_CONTRACT
    enum { BLOCK = 512 };
    const GK_T* x = (const GK_T*)x_;
    const GK_T* v = (const GK_T*)v_;
    GK_T* y = (GK_T*)y_;
    const GK_T alpha = (GK_T)alpha_, beta = (GK_T)beta_;
    GK_T acc[BLOCK];
    Py_ssize_t r0, r, k, nb;
    for (r0 = 0; r0 < rows; r0 += BLOCK) {
        nb = rows - r0 < BLOCK ? rows - r0 : BLOCK;
        for (r = 0; r < nb; r++)
            acc[r] = 0;
        for (k = 0; k + 4 <= K; k += 4) {        /* four columns per pass over acc */
            const GK_T v0 = v[k * vs], v1 = v[(k + 1) * vs], v2 = v[(k + 2) * vs],
                       v3 = v[(k + 3) * vs];
            const GK_T* x0 = x + k * ks + r0;
            const GK_T* x1 = x0 + ks;
            const GK_T* x2 = x1 + ks;
            const GK_T* x3 = x2 + ks;
            for (r = 0; r < nb; r++)
                acc[r] += v0 * x0[r] + v1 * x1[r] + v2 * x2[r] + v3 * x3[r];
        }
        for (; k < K; k++) {
            const GK_T vk = v[k * vs];
            const GK_T* xk = x + k * ks + r0;
            for (r = 0; r < nb; r++)
                acc[r] += vk * xk[r];
        }
        for (r = 0; r < nb; r++)
            y[r0 + r] = beta != 0 ? alpha * acc[r] + beta * y[r0 + r] : alpha * acc[r];
    }
}

#undef GK_V
#undef GK_VL
#undef GK_NR
#undef GK_MR2
#undef GK_MR3
#undef GK_NV2
