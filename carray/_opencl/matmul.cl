// Batched GEMM, C[b] = A[b] @ B[b], row-major A (M x K, row step lda), B (K x N, ldb), C (M x N,
// ldc); batch steps sa, sb, sc (0 broadcasts an operand). Tiled and register-blocked: a work
// group computes a TM x TN block of C with (TM/WM) x (TN/WN) work items, each a WM x WN block
// held in registers; BK-deep slices of A and B are staged in local memory (A transposed so the
// inner loop reads rows of both tiles contiguously). Edges are zero-filled on load and masked
// on store, so any M, N, K work. The host fills the type, MAC(acc, a, b) and the tile sizes
// TM TN BK WM WN.

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

__kernel __attribute__((reqd_work_group_size(NX, NY, 1)))
void gemm(__global T* restrict C, __global const T* restrict A, __global const T* restrict B,
          const long M, const long N, const long K, const long lda, const long ldb,
          const long ldc, const long sa, const long sb, const long sc,
          const long offa, const long offb, const long offc)
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
    for (long k0 = 0; k0 < K; k0 += BK) {
        // A tile: TM rows x BK columns, consecutive work items along k
        for (int e = tid; e < TM * BK; e += NT) {
            int r = e / BK, c = e % BK;
            long gm = m0 + r, gk = k0 + c;
            As[c][r] = (gm < M && gk < K) ? A[gm * lda + gk] : (T)0;
        }
        // B tile: BK rows x TN columns, consecutive work items along n
        for (int e = tid; e < BK * TN; e += NT) {
            int r = e / TN, c = e % TN;
            long gk = k0 + r, gn = n0 + c;
            Bs[r][c] = (gk < K && gn < N) ? B[gk * ldb + gn] : (T)0;
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
