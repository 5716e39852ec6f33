// Implicit-GEMM convolution (NCHW, groups 1): matmul.cl's general tiled kernel with the operand
// tiles gathered from the images on load, so no im2col matrix is ever written. $mode picks the
// product (g: the geometry below; khkw = kh kw, HW = H W, HoWo = Ho Wo):
//   0 forward      out (M = O) x (N = N Ho Wo), K = C kh kw: A = w (O x K, row-major), B gathered
//                  from x (zero outside the image); stored into NCHW out, + bias[o] when $bias.
//   1 grad_input   gin (M = C) x (N = N H W), K = O kh kw: A = w read as its transpose, B gathered
//                  from gout; stored into NCHW gin. Work-group column z is the phase (h % sh,
//                  w % sw) = (z / sw, z % sw): its columns are the pixels of that phase and its K
//                  only the taps (o, i, j) with (h + ph - i dh) % sh == 0 (and likewise for w),
//                  an arithmetic progression of i (and of j); so a stride wastes no MACs on taps
//                  that read nothing, and gout's row is (h + ph - i dh) / sh exactly (zero outside
//                  0..Ho-1).
//   2 grad_weight  gw (M = O) x (N = C kh kw), K = N Ho Wo: A gathered from gout, B from x; with
//                  split > 0 work-group column z takes the K slice [z split, (z + 1) split) and
//                  writes partial sums to out + z M N (the host adds them up).
// Tiles and register blocking as in matmul.cl (TM x TN per work group, WM x WN per work item,
// BK deep), software-pipelined as its fast kernel: the next BK step's tiles are read into
// registers before the current step's MACs and stored to the other half of double-buffered
// local tiles after them, one barrier per step. The index decompositions (divisions) are done
// once per tile column, in local tables filled when the work group starts, and once per tile
// row, in tables for the step after next filled by BK work items during a step (double-
// buffered too); the loads only add table entries, and the MAC loop is matmul.cl's. A table
// entry BAD makes every gather through it fall outside the image: the edges of M, N and K.
// With $vec (WM = WN = 8) a work item's 8 x 8 block is four 4 x 4 quarters, as in matmul.cl's
// fast kernel: each k step reads four 4-vectors from local memory for 16 4-vector FMAs.
// The host fills the type (and its 4-vector), MAC, the tile sizes, the mode, $bias, $vec and
// $tb (1: B tiles loaded along k, for mode 2).

#define T $t
#define TM $tm
#define TN $tn
#define BK $bk
#define WM $wm
#define WN $wn
#define NX (TN / WN)
#define NY (TM / WM)
#define NT (NX * NY)
#define NA ((TM * BK + NT - 1) / NT)      // A elements a work item loads per BK step
#define NB ((BK * TN + NT - 1) / NT)      // B elements
#define MAC(acc, a, b) $mac
#define VEC $vec                          // 8 x 8 blocks read as 4-vectors (WM = WN = 8)
#define T4 $t4
#if VEC
// a work item's rows: ty*4 + i and TM/2 + ty*4 + i (i < 4); columns likewise with tx, TN
#define ROW_OF(i) ((i) < 4 ? ty * 4 + (i) : TM / 2 + ty * 4 + (i) - 4)
#define COL_OF(j) ((j) < 4 ? tx * 4 + (j) : TN / 2 + tx * 4 + (j) - 4)
#define APAD 4                            // local rows stay 4-vector aligned
#define BPAD ($tb * 4)
#else
#define ROW_OF(i) (ty * WM + (i))
#define COL_OF(j) (tx + (j) * NX)
#define APAD 1
#define BPAD $tb
#endif
#define MODE $mode
#define HAS_BIAS $bias
#define BAD (-(1 << 29))

typedef struct { int N, C, H, W, O, Ho, Wo, kh, kw, sh, sw, ph, pw, dh, dw; } cg_t;

// The taps t in [0, k) with (r + p - t d) % s == 0: their count, the first and the step.
inline int taps(int r, int p, int d, int s, int k, int* first, int* step)
{
    int n = 0, t0 = 0, t1 = 0;
    for (int t = 0; t < k; ++t)
        if ((r + p - t * d) % s == 0) {
            if (n == 0) t0 = t;
            else if (n == 1) t1 = t;
            ++n;
        }
    *first = t0;
    *step = n > 1 ? t1 - t0 : 1;
    return n;
}

__kernel __attribute__((reqd_work_group_size(NX, NY, 1)))
void conv(__global T* restrict out, __global const T* restrict A, __global const T* restrict B,
          __global const T* restrict bias, const cg_t g, const int offo, const int offa,
          const int offb, const int offbias, const int split)
{
    // two halves: step t computes from one and loads the other; rows padded against bank
    // conflicts on the stores (A always, B when stored along k)
    __local T As[2][BK][TM + APAD] __attribute__((aligned(4 * sizeof(T))));
    __local T Bs[2][BK][TN + BPAD] __attribute__((aligned(4 * sizeof(T))));
    __local int c0[TN], c1[TN], c2[TN], c3[TN];            // per tile column
    __local int r0[2][BK], r1[2][BK], r2[2][BK], r3[2][BK];  // per tile row, two BK steps
    const int tx = get_local_id(0), ty = get_local_id(1);
    const int tid = ty * NX + tx;
    const int khkw = g.kh * g.kw, HW = g.H * g.W, HoWo = g.Ho * g.Wo;
#if MODE == 0
    const int M = g.O, N = g.N * HoWo, K = g.C * khkw;
#elif MODE == 1
    // this work-group column's phase: rows rh + sh hq, columns rw + sw wq
    const int rh = get_group_id(2) / g.sw, rw = get_group_id(2) % g.sw;
    const int Hq = g.H > rh ? (g.H - rh + g.sh - 1) / g.sh : 0;
    const int Wq = g.W > rw ? (g.W - rw + g.sw - 1) / g.sw : 0;
    int i0, istep, j0, jstep;
    const int ni = taps(rh, g.ph, g.dh, g.sh, g.kh, &i0, &istep);
    const int nj = taps(rw, g.pw, g.dw, g.sw, g.kw, &j0, &jstep);
    const int M = g.C, N = g.N * Hq * Wq, K = g.O * ni * nj;
#else
    const int M = g.O, N = g.C * khkw, K = g.N * HoWo;
#endif
    const int m0 = get_group_id(1) * TM, n0 = get_group_id(0) * TN;
    if (n0 >= N) return;      // (grad_input: a phase with fewer columns; the whole group)
    const int bz = get_group_id(2);
    const int kbeg = split > 0 ? bz * split : 0;
    const int klen = split > 0 ? min(split, K - kbeg) : K;
#if MODE == 1
    const int BH = g.Ho, BW = g.Wo;      // B is gout
#else
    const int BH = g.H, BW = g.W;        // B is x
#endif
    A += offa;
    B += offb;
    out += offo + (split > 0 ? bz * M * N : 0);

    // column tables
    for (int cc = tid; cc < TN; cc += NT) {
        const int gn = n0 + cc;
        if (gn >= N) { c0[cc] = 0; c1[cc] = BAD; c2[cc] = 0; c3[cc] = 0; continue; }
#if MODE == 0
        // (n, oh, ow): x's base at the window's corner, the corner, out's base
        const int n = gn / HoWo, p = gn - n * HoWo;
        const int oh = p / g.Wo, ow = p - oh * g.Wo;
        const int ih = oh * g.sh - g.ph, iw = ow * g.sw - g.pw;
        c0[cc] = n * g.C * HW + ih * g.W + iw; c1[cc] = ih; c2[cc] = iw;
        c3[cc] = n * g.O * HoWo + p;
#elif MODE == 1
        // (n, hq, wq): gout's offset of (n, 0, hq, wq), hq, wq, gin's offset of (n, 0, h, w)
        const int n = gn / (Hq * Wq), p = gn - n * Hq * Wq;
        const int hq = p / Wq, wq = p - hq * Wq;
        c0[cc] = n * g.O * HoWo + hq * g.Wo + wq; c1[cc] = hq; c2[cc] = wq;
        c3[cc] = n * g.C * HW + (rh + hq * g.sh) * g.W + rw + wq * g.sw;
#else
        // (c, i, j): x's offset of the tap, its row and column offsets
        const int c = gn / khkw, q = gn - c * khkw;
        const int i = q / g.kw, j = q - i * g.kw;
        c0[cc] = c * HW + i * g.dh * g.W + j * g.dw; c1[cc] = i * g.dh; c2[cc] = j * g.dw;
        c3[cc] = 0;
#endif
    }

    // row tables for the BK step at k0 (relative to kbeg) into half s
#if MODE == 0
#define ROWS(k0, s) \
    for (int r = tid; r < BK; r += NT) { \
        const int gk = kbeg + (k0) + r; \
        if ((k0) + r >= klen) { r0[s][r] = 0; r1[s][r] = BAD; r2[s][r] = 0; r3[s][r] = -1; } \
        else { \
            const int c = gk / khkw, q = gk - c * khkw; \
            const int i = q / g.kw, j = q - i * g.kw; \
            r0[s][r] = c * HW + i * g.dh * g.W + j * g.dw; r1[s][r] = i * g.dh; \
            r2[s][r] = j * g.dw; r3[s][r] = gk; \
        } \
    }
#elif MODE == 1
#define ROWS(k0, s) \
    for (int r = tid; r < BK; r += NT) { \
        const int gk = kbeg + (k0) + r; \
        if ((k0) + r >= klen) { r0[s][r] = 0; r1[s][r] = BAD; r2[s][r] = 0; r3[s][r] = -1; } \
        else { \
            const int o = gk / (ni * nj), q = gk - o * ni * nj; \
            const int ii = q / nj, i = i0 + ii * istep, j = j0 + (q - ii * nj) * jstep; \
            const int oh = (rh + g.ph - i * g.dh) / g.sh, ow = (rw + g.pw - j * g.dw) / g.sw; \
            r0[s][r] = o * HoWo + oh * g.Wo + ow; r1[s][r] = oh; r2[s][r] = ow; \
            r3[s][r] = o * g.C * khkw + i * g.kw + j; \
        } \
    }
#else
#define ROWS(k0, s) \
    for (int r = tid; r < BK; r += NT) { \
        const int gk = kbeg + (k0) + r; \
        if ((k0) + r >= klen) { r0[s][r] = 0; r1[s][r] = BAD; r2[s][r] = 0; r3[s][r] = -1; } \
        else { \
            const int n = gk / HoWo, p = gk - n * HoWo; \
            const int oh = p / g.Wo, ow = p - oh * g.Wo; \
            const int ih = oh * g.sh - g.ph, iw = ow * g.sw - g.pw; \
            r0[s][r] = n * g.C * HW + ih * g.W + iw; r1[s][r] = ih; r2[s][r] = iw; \
            r3[s][r] = n * g.O * HoWo + p; \
        } \
    }
#endif

    // global -> registers: the A and B tiles of the BK step at k0, through row tables q
#if MODE == 0
#define A_AT(gm, ka) A[(gm) * K + (ka)]
#elif MODE == 1
#define A_AT(gm, ka) A[(ka) + (gm) * khkw]
#else
#define A_AT(gm, ka) A[(ka) + (gm) * HoWo]
#endif
#if $tb
#define B_RC(e) const int r = (e) % BK, c = (e) / BK;
#else
#define B_RC(e) const int r = (e) / TN, c = (e) % TN;
#endif
// A work item's A elements share one column (k) when NT % BK == 0: its row table entry is read
// once a step. Its B elements share one column (n) when loaded along n and NT % TN == 0 (the
// column's table entries are then read once, into registers), or one row (k) when loaded along
// k and NT % BK == 0 (read once a step); else every element reads both tables.
#if NT % BK == 0
#define A_PRE(q) const int ka = r3[q][tid % BK];
#define A_ELEM(l, q) \
    { \
        const int gm = m0 + tid / BK + (l) * (NT / BK); \
        ra[l] = (gm < M && ka >= 0) ? A_AT(gm, ka) : (T)0; \
    }
#else
#define A_PRE(q)
#define A_ELEM(l, q) \
    { \
        const int e = tid + (l) * NT; \
        const int gm = m0 + e / BK, ka = r3[q][e % BK]; \
        ra[l] = (gm < M && ka >= 0) ? A_AT(gm, ka) : (T)0; \
    }
#endif
#define B_GATHER(l, ih, iw, at) \
    rb[l] = ((uint)(ih) < (uint)BH && (uint)(iw) < (uint)BW) ? B[at] : (T)0;
#if !$tb && NT % TN == 0
#define B_FIXED_COLUMN 1
#define B_PRE(q)
#define B_ELEM(l, q) \
    { \
        const int r = tid / TN + (l) * (NT / TN); \
        B_GATHER(l, bc1 + r1[q][r], bc2 + r2[q][r], bc0 + r0[q][r]) \
    }
#elif $tb && NT % BK == 0
#define B_FIXED_COLUMN 0
#define B_PRE(q) \
    const int br0 = r0[q][tid % BK], br1 = r1[q][tid % BK], br2 = r2[q][tid % BK];
#define B_ELEM(l, q) \
    { \
        const int c = tid / BK + (l) * (NT / BK); \
        B_GATHER(l, c1[c] + br1, c2[c] + br2, c0[c] + br0) \
    }
#else
#define B_FIXED_COLUMN 0
#define B_PRE(q)
#define B_ELEM(l, q) \
    { \
        B_RC(tid + (l) * NT) \
        B_GATHER(l, c1[c] + r1[q][r], c2[c] + r2[q][r], c0[c] + r0[q][r]) \
    }
#endif
#define LOAD(q) \
    { \
        A_PRE(q) \
        _Pragma("unroll") \
        for (int l = 0; l < NA; ++l) \
            if (NA * NT == TM * BK || tid + l * NT < TM * BK) A_ELEM(l, q) \
    } \
    { \
        B_PRE(q) \
        _Pragma("unroll") \
        for (int l = 0; l < NB; ++l) \
            if (NB * NT == BK * TN || tid + l * NT < BK * TN) B_ELEM(l, q) \
    }
    // registers -> local tile half h
#define STORE(h) \
    _Pragma("unroll") \
    for (int l = 0; l < NA; ++l) { \
        const int e = tid + l * NT; \
        if (NA * NT == TM * BK || e < TM * BK) As[h][e % BK][e / BK] = ra[l]; \
    } \
    _Pragma("unroll") \
    for (int l = 0; l < NB; ++l) { \
        const int e = tid + l * NT; \
        if (NB * NT == BK * TN || e < BK * TN) { \
            B_RC(e) \
            Bs[h][r][c] = rb[l]; \
        } \
    }

    T ra[NA], rb[NB];
#if VEC
    T4 accv[8][2];                        // columns COL_OF(0..3) and COL_OF(4..7) of row i
    for (int i = 0; i < 8; ++i) accv[i][0] = accv[i][1] = (T4)(0);
#else
    T acc[WM][WN];
    for (int i = 0; i < WM; ++i)
        for (int j = 0; j < WN; ++j)
            acc[i][j] = 0;
#endif
    // Software pipeline, one barrier per BK step t: the tiles of step t + 1 are read into
    // registers before step t's MACs and stored to the other local half after them; the row
    // tables of step t + 2 are filled meanwhile (row tables of step t: half t % 2).
    ROWS(0, 0)
    ROWS(BK, 1)
    barrier(CLK_LOCAL_MEM_FENCE);
#if B_FIXED_COLUMN
    const int bc0 = c0[tid % TN], bc1 = c1[tid % TN], bc2 = c2[tid % TN];
#endif
    LOAD(0)
    STORE(0)
    barrier(CLK_LOCAL_MEM_FENCE);
    int h = 0;
    for (int k0 = 0; k0 < klen; k0 += BK) {
        const bool more = k0 + BK < klen;
        if (more) {
            LOAD(h ^ 1)
            ROWS(k0 + 2 * BK, h)
        }
        #pragma unroll
        for (int k = 0; k < BK; ++k) {
#if VEC
            const T4 a0 = *(__local const T4*)&As[h][k][ty * 4];
            const T4 a1 = *(__local const T4*)&As[h][k][TM / 2 + ty * 4];
            const T4 b0 = *(__local const T4*)&Bs[h][k][tx * 4];
            const T4 b1 = *(__local const T4*)&Bs[h][k][TN / 2 + tx * 4];
            const T a[8] = {a0.x, a0.y, a0.z, a0.w, a1.x, a1.y, a1.z, a1.w};
            #pragma unroll
            for (int i = 0; i < 8; ++i) {
                accv[i][0] = fma((T4)(a[i]), b0, accv[i][0]);
                accv[i][1] = fma((T4)(a[i]), b1, accv[i][1]);
            }
#else
            T a[WM], b[WN];
            for (int i = 0; i < WM; ++i) a[i] = As[h][k][ROW_OF(i)];
            for (int j = 0; j < WN; ++j) b[j] = Bs[h][k][COL_OF(j)];
            for (int i = 0; i < WM; ++i)
                for (int j = 0; j < WN; ++j)
                    MAC(acc[i][j], a[i], b[j]);
#endif
        }
        if (more) { STORE(h ^ 1) }
        h ^= 1;
        barrier(CLK_LOCAL_MEM_FENCE);
    }
#if VEC
    T acc[8][8];
    for (int i = 0; i < 8; ++i) {
        vstore4(accv[i][0], 0, &acc[i][0]);
        vstore4(accv[i][1], 0, &acc[i][4]);
    }
#endif
    for (int i = 0; i < WM; ++i) {
        const int gm = m0 + ROW_OF(i);
        if (gm >= M) continue;
#if MODE == 0 && HAS_BIAS
        const T bm = bias[offbias + gm];
#endif
        for (int j = 0; j < WN; ++j) {
            const int cc = COL_OF(j), gn = n0 + cc;
            if (gn >= N) continue;
#if MODE == 0
#if HAS_BIAS
            out[c3[cc] + gm * HoWo] = acc[i][j] + bm;
#else
            out[c3[cc] + gm * HoWo] = acc[i][j];
#endif
#elif MODE == 1
            out[c3[cc] + gm * HW] = acc[i][j];
#else
            out[gm * N + gn] = acc[i][j];
#endif
        }
    }
}
