// Batched GEMM, C[b] = A[b] @ B[b], A (M x K, row step lda, column step csa), B (K x N, row step
// ldb, column step csb), C (M x N, row-major, ldc); batch steps sa, sb, sc (0 broadcasts an
// operand). With split > 0 batch entry b is the K slice [b split, (b + 1) split) of one product
// (split-K: C[b] are partial sums the host adds up). $ta / $tb = 1 load A / B tiles with
// consecutive work items along m / k (for operands whose column step is not 1: transposed views).
// Tiled and register-blocked: a work group computes a TM x TN block of C with (TM/WM) x (TN/WN)
// work items, each a WM x WN block held in registers; BK-deep slices of A and B are staged in
// local memory (A transposed so the inner loop reads rows of both tiles contiguously). Edges are
// zero-filled on load and masked on store, so any M, N, K work. The host fills the type,
// MAC(acc, a, b) and the tile sizes TM TN BK WM WN.

#define T $t
#define TM $tm
#define TN $tn
#define BK $bk
#define WM $wm
#define WN $wn
#define NX (TN / WN)
#define NY (TM / WM)
#define NT (NX * NY)
#define MAC(acc, a, b) $mac

#if !$fast
__kernel __attribute__((reqd_work_group_size(NX, NY, 1)))
void gemm(__global T* restrict C, __global const T* restrict A, __global const T* restrict B,
          const long M, const long N, const long K, const long lda, const long ldb,
          const long ldc, const long sa, const long sb, const long sc,
          const long offa, const long offb, const long offc, const long csa, const long csb,
          const long split)
{
    __local T As[BK][TM + 1];
    __local T Bs[BK][TN];
    const int tx = get_local_id(0), ty = get_local_id(1);
    const int tid = ty * NX + tx;
    const long bz = get_global_id(2);
    const long m0 = (long)get_group_id(1) * TM, n0 = (long)get_group_id(0) * TN;
    A += offa + bz * sa;
    B += offb + bz * sb;
    C += offc + bz * sc;
    T acc[WM][WN];
    for (int i = 0; i < WM; ++i)
        for (int j = 0; j < WN; ++j)
            acc[i][j] = 0;
    const long KB = split > 0 ? min(split, K - bz * split) : K;
    for (long k0 = 0; k0 < KB; k0 += BK) {
        // A tile: TM rows x BK columns, consecutive work items along k (along m when $ta)
        for (int e = tid; e < TM * BK; e += NT) {
#if $ta
            int r = e % TM, c = e / TM;
#else
            int r = e / BK, c = e % BK;
#endif
            long gm = m0 + r, gk = k0 + c;
            As[c][r] = (gm < M && gk < KB) ? A[gm * lda + gk * csa] : (T)0;
        }
        // B tile: BK rows x TN columns, consecutive work items along n (along k when $tb)
        for (int e = tid; e < BK * TN; e += NT) {
#if $tb
            int r = e % BK, c = e / BK;
#else
            int r = e / TN, c = e % TN;
#endif
            long gk = k0 + r, gn = n0 + c;
            Bs[r][c] = (gk < KB && gn < N) ? B[gk * ldb + gn * csb] : (T)0;
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        for (int k = 0; k < BK; ++k) {
            T a[WM], b[WN];
            for (int i = 0; i < WM; ++i) a[i] = As[k][ty * WM + i];
            for (int j = 0; j < WN; ++j) b[j] = Bs[k][tx + j * NX];
            for (int i = 0; i < WM; ++i)
                for (int j = 0; j < WN; ++j)
                    MAC(acc[i][j], a[i], b[j]);
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    for (int i = 0; i < WM; ++i) {
        long gm = m0 + ty * WM + i;
        if (gm >= M) break;
        for (int j = 0; j < WN; ++j) {
            long gn = n0 + tx + j * NX;
            if (gn < N) C[gm * ldc + gn] = acc[i][j];
        }
    }
}
#else

// The fast path (float, contiguous, tile-aligned): M % TM == N % TN == K % BK == 0, every row
// step and offset a multiple of 4 floats, every index within int. WM = 8, WN = 8 or 16: a work
// item holds an 8 x WN block of C as 4-row by 4-column pieces (rows ty*4 and TM/2 + ty*4,
// columns tx*4 + j TN/NCG for the NCG = WN/4 column groups), so each k step reads 2 + NCG float4
// from local memory for 32 NCG FMAs.
// Tiles are loaded from global memory as float4 into registers one step ahead (prefetch) and
// stored to the other half of double-buffered local memory: one barrier per BK step. As is kept
// transposed (k-major) with rows padded by PAD floats against bank conflicts on its stores.
// $ta / $tb: A / B is a transposed view (A stored K x M, B stored N x K, row steps lda / ldb):
// its tile is then read as float4 along m / along k instead, and stored k-major the same way.

#define PAD $pad
#define NCG (WN / 4)                          // float4 column groups per work item (2 or 4)
#define LDA_T (TM + PAD)
#define NA ((TM * BK / 4 + NT - 1) / NT)      // float4 loads of A per work item
#define NB ((BK * TN / 4 + NT - 1) / NT)      // float4 loads of B per work item

__kernel __attribute__((reqd_work_group_size(NX, NY, 1)))
void gemm(__global float* restrict C, __global const float* restrict A,
          __global const float* restrict B, const int K, const int lda, const int ldb,
          const int ldc, const int sa, const int sb, const int sc, const int offa,
          const int offb, const int offc)
{
    __local float As[2][BK][LDA_T];
    __local float4 Bs[2][BK][TN / 4];
    const int tx = get_local_id(0), ty = get_local_id(1);
    const int tid = ty * NX + tx;
    const int m0 = get_group_id(1) * TM, n0 = get_group_id(0) * TN;
    const int bz = get_group_id(2);
#if $ta
    A += offa + bz * sa + m0;
#else
    A += offa + bz * sa + m0 * lda;
#endif
#if $tb
    B += offb + bz * sb + n0 * ldb;
#else
    B += offb + bz * sb + n0;
#endif
    C += offc + bz * sc + m0 * ldc + n0;
    float4 ra[NA], rb[NB];
    float4 acc[8][NCG];
    #pragma unroll
    for (int i = 0; i < 8; ++i)
        #pragma unroll
        for (int j = 0; j < NCG; ++j) acc[i][j] = (float4)(0.0f);

    // global -> registers: A tile (TM rows x BK columns) as float4 along k (along m when $ta),
    // B tile (BK rows x TN columns) as float4 along n (along k when $tb); consecutive work
    // items read consecutive float4s
#if $ta
#define LOAD_A(k0) \
    _Pragma("unroll") \
    for (int l = 0; l < NA; ++l) { \
        int e = tid + l * NT; \
        if (NA * NT == TM * BK / 4 || e < TM * BK / 4) \
            ra[l] = *(__global const float4*)(A + ((k0) + e / (TM / 4)) * lda + \
                                              (e % (TM / 4)) * 4); \
    }
#define STORE_A(s) \
    _Pragma("unroll") \
    for (int l = 0; l < NA; ++l) { \
        int e = tid + l * NT; \
        if (NA * NT == TM * BK / 4 || e < TM * BK / 4) \
            *(__local float4*)&As[s][e / (TM / 4)][(e % (TM / 4)) * 4] = ra[l]; \
    }
#else
#define LOAD_A(k0) \
    _Pragma("unroll") \
    for (int l = 0; l < NA; ++l) { \
        int e = tid + l * NT; \
        if (NA * NT == TM * BK / 4 || e < TM * BK / 4) \
            ra[l] = *(__global const float4*)(A + (e / (BK / 4)) * lda + (k0) + \
                                              (e % (BK / 4)) * 4); \
    }
#define STORE_A(s) \
    _Pragma("unroll") \
    for (int l = 0; l < NA; ++l) { \
        int e = tid + l * NT; \
        if (NA * NT == TM * BK / 4 || e < TM * BK / 4) { \
            int r = e / (BK / 4), c = (e % (BK / 4)) * 4; \
            As[s][c][r] = ra[l].x; As[s][c + 1][r] = ra[l].y; \
            As[s][c + 2][r] = ra[l].z; As[s][c + 3][r] = ra[l].w; \
        } \
    }
#endif
#if $tb
#define LOAD_B(k0) \
    _Pragma("unroll") \
    for (int l = 0; l < NB; ++l) { \
        int e = tid + l * NT; \
        if (NB * NT == BK * TN / 4 || e < BK * TN / 4) \
            rb[l] = *(__global const float4*)(B + (e / (BK / 4)) * ldb + (k0) + \
                                              (e % (BK / 4)) * 4); \
    }
#define STORE_B(s) \
    _Pragma("unroll") \
    for (int l = 0; l < NB; ++l) { \
        int e = tid + l * NT; \
        if (NB * NT == BK * TN / 4 || e < BK * TN / 4) { \
            __local float* bs = (__local float*)Bs[s]; \
            int r = e / (BK / 4), c = (e % (BK / 4)) * 4; \
            bs[c * TN + r] = rb[l].x; bs[(c + 1) * TN + r] = rb[l].y; \
            bs[(c + 2) * TN + r] = rb[l].z; bs[(c + 3) * TN + r] = rb[l].w; \
        } \
    }
#else
#define LOAD_B(k0) \
    _Pragma("unroll") \
    for (int l = 0; l < NB; ++l) { \
        int e = tid + l * NT; \
        if (NB * NT == BK * TN / 4 || e < BK * TN / 4) \
            rb[l] = *(__global const float4*)(B + ((k0) + e / (TN / 4)) * ldb + \
                                              (e % (TN / 4)) * 4); \
    }
#define STORE_B(s) \
    _Pragma("unroll") \
    for (int l = 0; l < NB; ++l) { \
        int e = tid + l * NT; \
        if (NB * NT == BK * TN / 4 || e < BK * TN / 4) \
            Bs[s][e / (TN / 4)][e % (TN / 4)] = rb[l]; \
    }
#endif
#define LOAD(k0) LOAD_A(k0) LOAD_B(k0)
    // registers -> local half s
#define STORE(s) STORE_A(s) STORE_B(s)

    LOAD(0)
    STORE(0)
    barrier(CLK_LOCAL_MEM_FENCE);
    int s = 0;
    for (int k0 = 0; k0 < K; k0 += BK) {
        const bool more = k0 + BK < K;
        if (more) { LOAD(k0 + BK) }
        #pragma unroll
        for (int k = 0; k < BK; ++k) {
            const float4 a0 = *(__local const float4*)&As[s][k][ty * 4];
            const float4 a1 = *(__local const float4*)&As[s][k][TM / 2 + ty * 4];
            float4 b[NCG];
            #pragma unroll
            for (int j = 0; j < NCG; ++j) b[j] = Bs[s][k][j * (TN / 4 / NCG) + tx];
            const float a[8] = {a0.x, a0.y, a0.z, a0.w, a1.x, a1.y, a1.z, a1.w};
            #pragma unroll
            for (int i = 0; i < 8; ++i) {
                #pragma unroll
                for (int j = 0; j < NCG; ++j)
                    acc[i][j] = fma((float4)(a[i]), b[j], acc[i][j]);
            }
        }
        if (more) {
            s ^= 1;
            STORE(s)
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    #pragma unroll
    for (int i = 0; i < 8; ++i) {
        const int r = (i < 4 ? ty * 4 + i : TM / 2 + ty * 4 + i - 4);
        #pragma unroll
        for (int j = 0; j < NCG; ++j)
            *(__global float4*)(C + r * ldc + j * (TN / NCG) + tx * 4) = acc[i][j];
    }
}
#endif
