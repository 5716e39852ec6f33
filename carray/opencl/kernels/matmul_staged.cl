// float32 GEMM with multistage local tiles filled by asynchronous copies: C = A @ B for A stored
// K x M (k-major: a transposed view, or a transposed copy the host made) and B stored K x N
// (row-major), both with rows of contiguous floats, C row-major; M % TM == N % TN == K % BK == 0,
// every row step and offset a multiple of 4 floats. Batch entry b (get_group_id(2)) reads
// A + b sa, B + b sb and writes C + b sc.
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

__kernel __attribute__((reqd_work_group_size(NX, NY, 1)))
void gemm(__global float* restrict C, __global const float* restrict A,
          __global const float* restrict B, const int K, const int lda, const int ldb,
          const int ldc, const int sa, const int sb, const int sc, const int offa,
          const int offb, const int offc)
{
    // 16-byte alignment is required by cp.async (the default is 4)
    __local float As[STAGES][BK * TM] __attribute__((aligned(16)));
    __local float Bs[STAGES][BK * TN] __attribute__((aligned(16)));
    const int tx = get_local_id(0), ty = get_local_id(1);
    const int tid = ty * NX + tx;
    const int m0 = get_group_id(1) * TM, n0 = get_group_id(0) * TN;
    const int bz = get_group_id(2);
    A += offa + bz * sa + m0;
    B += offb + bz * sb + n0;
    C += offc + bz * sc + m0 * ldc + n0;
    float4 acc[8][NCG];
    #pragma unroll
    for (int i = 0; i < 8; ++i)
        #pragma unroll
        for (int j = 0; j < NCG; ++j) acc[i][j] = (float4)(0.0f);
    const int KT = K / BK;

    // slice k0 of A (BK rows of TM floats) and of B (BK rows of TN) into stage s: consecutive
    // work items copy consecutive float4s of a row
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

    #pragma unroll
    for (int s = 0; s < STAGES - 1; ++s) {
        if (s < KT) { ISSUE(s, s * BK) }
        COMMIT();                     // one group per slice, empty past the end
    }
    int s = 0;
    for (int kt = 0; kt < KT; ++kt) {
        WAIT($wait);                  // this work item's copies of slice kt have landed
        barrier(CLK_LOCAL_MEM_FENCE); // everyone's have, and everyone is done with slice kt - 1
        {
            // refill the stage slice kt - 1 used with slice kt + STAGES - 1
            const int nk = kt + STAGES - 1;
            const int ns = s == 0 ? STAGES - 1 : s - 1;
            if (nk < KT) { ISSUE(ns, nk * BK) }
            COMMIT();
        }
        __local const float* as = As[s];
        __local const float* bs = Bs[s];
        // 4 k steps at a time: the A values of all 4 first (2 float4 per step: 8 rows), then per
        // column group the 4 B float4s (the order the H100/H200 measurements favoured)
        #pragma unroll
        for (int kk = 0; kk < BK; kk += 4) {
            float4 av[8];
            #pragma unroll
            for (int q = 0; q < 4; ++q) {
                av[q * 2] = *(__local const float4*)&as[(kk + q) * TM + ty * 4];
                av[q * 2 + 1] = *(__local const float4*)&as[(kk + q) * TM + TM / 2 + ty * 4];
            }
            #pragma unroll
            for (int j = 0; j < NCG; ++j) {
                const int col = (j * (TN / 4 / NCG) + tx) * 4;
                float4 bv[4];
                #pragma unroll
                for (int q = 0; q < 4; ++q)
                    bv[q] = *(__local const float4*)&bs[(kk + q) * TN + col];
                #pragma unroll
                for (int q = 0; q < 4; ++q) {
                    const float a[8] = {av[q * 2].x, av[q * 2].y, av[q * 2].z, av[q * 2].w,
                                        av[q * 2 + 1].x, av[q * 2 + 1].y, av[q * 2 + 1].z,
                                        av[q * 2 + 1].w};
                    #pragma unroll
                    for (int i = 0; i < 8; ++i)
                        acc[i][j] = fma((float4)(a[i]), bv[q], acc[i][j]);
                }
            }
        }
        s = s == STAGES - 1 ? 0 : s + 1;
    }
    #pragma unroll
    for (int i = 0; i < 8; ++i) {
        const int r = (i < 4 ? ty * 4 + i : TM / 2 + ty * 4 + i - 4);
        #pragma unroll
        for (int j = 0; j < NCG; ++j)
            *(__global float4*)(C + r * ldc + j * (TN / NCG) + tx * 4) = acc[i][j];
    }
}
