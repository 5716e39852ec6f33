// float32 GEMM with multistage local tiles filled by asynchronous copies: C = A @ B for A stored
// K x M (k-major: a transposed view, or a transposed copy the host made) and B stored K x N
// (row-major), both with rows of contiguous floats, C row-major; M % TM == N % TN == K % BK == 0,
// every row step and offset a multiple of 4 floats. Batch entry b reads A + b sa, B + b sb and
// writes C + b sc. The tiles are numbered in the order (batch entry, tile row, tile column).
//
// gemm takes tile get_group_id(0) whole. When the tiles are not a whole number of waves of
// resident groups, the last wave would run part-empty and take as long as a full one (at 8192^3
// on an H100, 15.5 waves took as long as 16): the host then runs gemm over the whole waves
// only, and gemm_sk over the rest (stream-K): its sk groups split the remaining tiles' k steps
// (KT = K / BK a tile) evenly, each a contiguous run that may begin or end inside a tile. A
// group stores a whole tile to C and a piece of one to its workspace slots (W: two TM x TN
// slots a group, for its first and its last piece), and gemm_fixup (launched next) sums each
// shared tile's pieces, in order, into C.
//
// Each work group computes a TM x TN block of C; each work item an 8 x WN block held in
// registers (rows ty*4 and TM/2 + ty*4, 4 each; columns in WN/4 groups of 4 TN/(WN/4) apart),
// as in matmul.cl's fast kernel. The BK-deep slices of A and B go straight from global to local
// memory, STAGES slices in flight: on NVIDIA GPUs of compute capability 8.0 and later by
// cp.async (inline PTX), which bypasses registers, so the loads of later slices overlap the
// arithmetic on the current one without holding registers; elsewhere by plain copies (the same
// kernel and order, for testing on any device). Both tiles are stored as they
// are in global memory (rows of TM and TN floats): a warp copies whole 512-byte rows, and the
// inner loop reads float4 rows of both with no bank conflicts. One barrier per slice.

#define TM $tm
#define TN $tn
#define BK $bk
#define WN $wn
#define STAGES $stages
#define NX (TN / WN)
#define NY (TM / 8)
#define NT (NX * NY)
#define NCG (WN / 4)                     // float4 column groups per work item
#define NA (TM * BK / 4 / NT)            // float4 copies of A per work item and slice
#define NB (TN * BK / 4 / NT)

#if $async_
// 16-byte global -> local copy, not waited for; commit closes a group of copies, wait_group n
// waits until at most n of this work item's groups are still in flight
#define COPY16(dst, src) asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" \
                                      :: "r"((uint)(size_t)(dst)), "l"(src) : "memory")
#define COMMIT() asm volatile("cp.async.commit_group;" ::: "memory")
#define WAIT_(n) asm volatile("cp.async.wait_group " #n ";" ::: "memory")
#define WAIT(n) WAIT_(n)
#else
#define COPY16(dst, src) (*(__local float4*)(dst) = *(__global const float4*)(src))
#define COMMIT()
#define WAIT(n)
#endif

// slice k0 of the tile's A (BK rows of TM floats) and of its B (BK rows of TN) into stage s:
// consecutive work items copy consecutive float4s of a row
#define ISSUE(s, k0) \
    _Pragma("unroll") \
    for (int l = 0; l < NA; ++l) { \
        const int e = tid + l * NT, r = e / (TM / 4), c = (e % (TM / 4)) * 4; \
        COPY16(&As[s][r * TM + c], A + ((k0) + r) * lda + c); \
    } \
    _Pragma("unroll") \
    for (int l = 0; l < NB; ++l) { \
        const int e = tid + l * NT, r = e / (TN / 4), c = (e % (TN / 4)) * 4; \
        COPY16(&Bs[s][r * TN + c], B + ((k0) + r) * ldb + c); \
    }

// (tile row offset m0, tile column offset n0, batch entry bz) of tile t
#define TILE_AT(t) \
    const int bz = (t) / tiles_mn, tr = (t) - bz * tiles_mn; \
    const int m0 = (tr / tiles_n) * TM, n0 = (tr % tiles_n) * TN;

__kernel __attribute__((reqd_work_group_size(NX, NY, 1)))
void gemm(__global float* restrict C, __global const float* restrict A,
          __global const float* restrict B, const int K, const int lda, const int ldb,
          const int ldc, const int sa, const int sb, const int sc, const int offa,
          const int offb, const int offc, const int tiles_n, const int tiles_mn)
{
    // 16-byte alignment is required by cp.async (the default is 4)
    __local float As[STAGES][BK * TM] __attribute__((aligned(16)));
    __local float Bs[STAGES][BK * TN] __attribute__((aligned(16)));
    const int tx = get_local_id(0), ty = get_local_id(1);
    const int tid = ty * NX + tx;
    TILE_AT((int)get_group_id(0))
    A += offa + bz * sa + m0;
    B += offb + bz * sb + n0;
    C += offc + bz * sc + m0 * ldc + n0;
    const int steps = K / BK;
$steps}


// The first k step of stream-K group g's run over the steps of tiles dp .. tiles - 1, counted
// from tile dp's first (g = sk: the end of the last run). The host makes sk no more than the
// steps: no run is empty.
#define RUN_START(g) ((int)((long)(g) * ((tiles - dp) * KT) / sk))

__kernel __attribute__((reqd_work_group_size(NX, NY, 1)))
void gemm_sk(__global float* restrict C0, __global const float* restrict A0,
             __global const float* restrict B0, const int K, const int lda, const int ldb,
             const int ldc0, const int sa, const int sb, const int sc, const int offa,
             const int offb, const int offc, const int tiles_n, const int tiles_mn,
             __global float* restrict W, const int tiles, const int dp, const int sk)
{
    __local float As[STAGES][BK * TM] __attribute__((aligned(16)));
    __local float Bs[STAGES][BK * TN] __attribute__((aligned(16)));
    const int tx = get_local_id(0), ty = get_local_id(1);
    const int tid = ty * NX + tx;
    const int KT = K / BK, g = get_group_id(0);
    const int start = RUN_START(g), end = RUN_START(g + 1);
    #pragma unroll 1
    for (int it = start; it < end; ) {
        const int t = it / KT, kb = it - t * KT;
        const int steps = end - it < KT - kb ? end - it : KT - kb;
        TILE_AT(dp + t)
        __global const float* A = A0 + offa + bz * sa + m0 + kb * BK * lda;
        __global const float* B = B0 + offb + bz * sb + n0 + kb * BK * ldb;
        // a whole tile to C; a piece to slot 2 g (the run's first piece) or 2 g + 1 (its last)
        const bool whole = kb == 0 && steps == KT;
        __global float* C = whole ? C0 + offc + bz * sc + m0 * ldc0 + n0
                                  : W + (2 * g + (it != start)) * (TM * TN);
        const int ldc = whole ? ldc0 : TN;
        barrier(CLK_LOCAL_MEM_FENCE);   // everyone is done with the previous tile's stages
$steps        it += steps;
    }
}


// After gemm_sk: tile dp + get_group_id(0), when no one group took it whole, is the sum of its
// pieces, in the order of the runs that computed them.
__kernel __attribute__((reqd_work_group_size(NX, NY, 1)))
void gemm_fixup(__global float* restrict C, __global const float* restrict W, const int K,
                const int ldc, const int sc, const int offc, const int tiles_n,
                const int tiles_mn, const int tiles, const int dp, const int sk)
{
    const int KT = K / BK, t = get_group_id(0);
    const int tid = get_local_id(1) * NX + get_local_id(0);
    const int s0 = t * KT, s1 = s0 + KT;          // the tile's steps
    // the runs g0 .. g1 that meet them (the estimate never starts after s0)
    int g0 = (int)((long)s0 * sk / ((tiles - dp) * KT));
    while (RUN_START(g0 + 1) <= s0) ++g0;
    int g1 = g0;
    while (RUN_START(g1 + 1) < s1) ++g1;
    if (g0 == g1)                                 // one run took it whole (to C)
        return;
    TILE_AT(dp + t)
    C += offc + bz * sc + m0 * ldc + n0;
    // run g0's piece is its last (slot 2 g0 + 1) when it started before the tile; the later
    // runs start inside it, and theirs are their first pieces (slot 2 g)
    const int first = 2 * g0 + (RUN_START(g0) < s0);
    for (int e = tid; e < TM * TN / 4; e += NT) {
        const int r = e / (TN / 4), c = (e % (TN / 4)) * 4;
        float4 v = *(__global const float4*)(W + first * (TM * TN) + r * TN + c);
        for (int g = g0 + 1; g <= g1; ++g)
            v += *(__global const float4*)(W + 2 * g * (TM * TN) + r * TN + c);
        *(__global float4*)(C + r * ldc + c) = v;
    }
}
