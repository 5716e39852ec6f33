// Reductions over any set of axes: out[m] = fold of in[m, k] over k < K, where m walks the kept
// dims (layout LO, rank $orank) and k the reduced ones (layout LI, rank $irank). The host fills
// $t (result type), $ti (input element type; LOAD converts one to T: a widening sum reads the
// narrow input, no converted copy), $acc (the type partial results are kept in: T, or double
// for float products, whose float roundings of near-1 factors are biased), $combine
// (COMBINE(a, b)), $identity. arg_groups reads T.

#define T $t
#define TI $ti
#define LOAD(x) ($load)
#define ACC $acc
#define COMBINE(a, b) ($combine)
#define WG $wg

typedef struct { IDX shape[$orank]; IDX st[1][$orank]; IDX off[1]; } outer_t;
typedef struct { IDX shape[$irank]; IDX st[1][$irank]; IDX off[1]; } inner_t;

// Work group g of output m folds k in [chunk * (g % G), chunk * (g % G + 1)) and writes
// out[g] (so out is M x G partial results; G = 1 gives the final result in one pass).
__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void reduce_groups(__global T* restrict out, __global const TI* restrict in, const outer_t LO,
                   const inner_t LI, const IDX K, const IDX G, const IDX chunk)
{
    __local ACC part[WG];
    IDX grp = get_group_id(0);
    IDX m = grp / G;
    IDX lo = (grp % G) * chunk;
    IDX hi = min(lo + chunk, K);
    int lid = get_local_id(0);
    IDX po[1], pi[1];
    STRIDED_OFFSETS($orank, 1, LO, m, po);
    ACC acc = $identity;
    for (IDX k = lo + lid; k < hi; k += WG) {
        STRIDED_OFFSETS($irank, 1, LI, k, pi);
        acc = COMBINE(acc, LOAD(in[po[0] + pi[0]]));
    }
    part[lid] = acc;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int s = WG / 2; s > 0; s >>= 1) {
        if (lid < s) part[lid] = COMBINE(part[lid], part[lid + s]);
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (lid == 0) out[grp] = (T)part[0];
}

// One work item per output: for short reductions over many outputs.
__kernel void reduce_items(__global T* restrict out, __global const TI* restrict in,
                           const outer_t LO, const inner_t LI, const IDX K, const IDX M)
{
    IDX m = get_global_id(0);
    if (m >= M) return;
    IDX po[1], pi[1];
    STRIDED_OFFSETS($orank, 1, LO, m, po);
    ACC acc = $identity;
    for (IDX k = 0; k < K; ++k) {
        STRIDED_OFFSETS($irank, 1, LI, k, pi);
        acc = COMBINE(acc, LOAD(in[po[0] + pi[0]]));
    }
    out[m] = (T)acc;
}

// W lanes per output and WG / W outputs per work group (W a power of two dividing WG, given at
// run time): for reductions whose reduced elements lie next to each other (rows), so
// neighbouring lanes read neighbouring elements and short rows share a group. A local-memory
// tree over each output's W lanes.
__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void reduce_lanes(__global T* restrict out, __global const TI* restrict in, const outer_t LO,
                  const inner_t LI, const IDX K, const IDX M, const int W)
{
    __local ACC part[WG];
    const int lid = get_local_id(0), lane = lid % W;
    const IDX m = get_group_id(0) * (WG / W) + lid / W;
    ACC acc = $identity;
    if (m < M) {                // (items past M still meet every barrier)
        IDX po[1], pi[1];
        STRIDED_OFFSETS($orank, 1, LO, m, po);
        for (IDX k = lane; k < K; k += W) {
            STRIDED_OFFSETS($irank, 1, LI, k, pi);
            acc = COMBINE(acc, LOAD(in[po[0] + pi[0]]));
        }
    }
    part[lid] = acc;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int h = W / 2; h > 0; h >>= 1) {
        if (lane < h) part[lid] = COMBINE(part[lid], part[lid + h]);
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (m < M && lane == 0) out[m] = (T)part[lid];
}

// One work item per (chunk g, output m), m fastest: for reductions whose outputs lie next to
// each other (columns), so neighbouring items read neighbouring elements. Item (g, m) folds k
// in [chunk g, chunk (g + 1)) and writes out[g M + m]: G x M partial results (G = 1: the
// result).
__kernel void reduce_cols(__global T* restrict out, __global const TI* restrict in,
                          const outer_t LO, const inner_t LI, const IDX K, const IDX M,
                          const IDX G, const IDX chunk)
{
    const IDX e = get_global_id(0);
    if (e >= M * G) return;
    const IDX g = e / M, m = e - g * M;
    const IDX hi = min((g + 1) * chunk, K);
    IDX po[1], pi[1];
    STRIDED_OFFSETS($orank, 1, LO, m, po);
    ACC acc = $identity;
    for (IDX k = g * chunk; k < hi; ++k) {
        STRIDED_OFFSETS($irank, 1, LI, k, pi);
        acc = COMBINE(acc, LOAD(in[po[0] + pi[0]]));
    }
    out[e] = (T)acc;
}

// argmax / argmin over the reduced dims (one work group per output): the first index of the
// extreme on ties, the first NaN when there is one (NaN counts as the extreme, as NumPy).
#define BETTER(v1, i1, v2, i2) ((v1) != (v1) ? ((v2) != (v2) ? (i1) < (i2) : 1) : \
    ((v2) != (v2) ? 0 : ((v1) $cmp (v2) || ((v1) == (v2) && (i1) < (i2)))))

__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void arg_groups(__global long* restrict out, __global const T* restrict in, const outer_t LO,
                const inner_t LI, const IDX K)
{
    __local T pv[WG];
    __local long pk[WG];
    IDX m = get_group_id(0);
    int lid = get_local_id(0);
    IDX po[1], pi[1];
    STRIDED_OFFSETS($orank, 1, LO, m, po);
    T best = 0;
    long bi = -1;
    for (IDX k = lid; k < K; k += WG) {
        STRIDED_OFFSETS($irank, 1, LI, k, pi);
        T v = in[po[0] + pi[0]];
        if (bi < 0 || BETTER(v, (long)k, best, bi)) { best = v; bi = k; }
    }
    pv[lid] = best;
    pk[lid] = bi;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int s = WG / 2; s > 0; s >>= 1) {
        if (lid < s && pk[lid + s] >= 0 &&
                (pk[lid] < 0 || BETTER(pv[lid + s], pk[lid + s], pv[lid], pk[lid]))) {
            pv[lid] = pv[lid + s];
            pk[lid] = pk[lid + s];
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (lid == 0) out[m] = pk[0];
}
