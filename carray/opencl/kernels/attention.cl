// Memory-efficient (flash) attention for carray.nn.attention and attention_grad: the L x S
// score matrix is never stored. For query row i of batch-head n, with s_ij = scale q_i . k_j
// over the keys j it may see (all, or j <= i when causal):
//   forward:  out_i = sum_j p_ij v_j,  p_ij = exp(s_ij - lse_i),  lse_i = log sum_j exp(s_ij)
//             (a running max and sum per row, as the key tiles stream through local memory)
//   backward: D_i = g_i . out_i,  dp_ij = g_i . v_j,  ds_ij = p_ij (dp_ij - D_i)
//             dq_i = scale sum_j ds_ij k_j          (attn_dq: one work item per query row)
//             dk_j = scale sum_i ds_ij q_i,  dv_j = sum_i p_ij g_i   (attn_dkv: per key row)
// A row with no visible key (S == 0) gives out 0 and lse -inf, as the composed CPU path.
// Operands are read through (offset, batch stride, head stride, row stride) with unit stride
// along E: n = b * H + h. out, lse, dq, dk, dv and D are C-contiguous. The host fills
// $t (element type), $d (E of q and k), $dv (E of v and out), $bq (rows per work group: the
// work-group size) and $bk (key or query rows per tile in local memory).

#define T $t
#define E $d
#define EV $dv
#define BQ $bq
#define BK $bk

#define ROW(p, o, sb, sh, sr, b, h, r) ((p) + (o) + (b) * (sb) + (h) * (sh) + (r) * (sr))

__kernel __attribute__((reqd_work_group_size(BQ, 1, 1)))
void attn_fwd(__global T* restrict out, __global T* restrict lse,
              __global const T* q, const long qo, const long qsb, const long qsh, const long qsr,
              __global const T* k, const long ko, const long ksb, const long ksh, const long ksr,
              __global const T* v, const long vo, const long vsb, const long vsh, const long vsr,
              const long H, const long L, const long S, const long nqb, const T scale,
              const int causal)
{
    __local T ks[BK][E];
    __local T vs[BK][EV];
    const long grp = get_group_id(0);
    const long n = grp / nqb, qb = grp - n * nqb;
    const long b = n / H, h = n - b * H;
    const int t = get_local_id(0);
    const long i = qb * BQ + t;
    const bool active = i < L;
    T qr[E], acc[EV];
    T m = -INFINITY, l = 0;
    __global const T* qrow = ROW(q, qo, qsb, qsh, qsr, b, h, active ? i : 0);
    #pragma unroll
    for (int d = 0; d < E; ++d) qr[d] = active ? qrow[d] * scale : 0;
    #pragma unroll
    for (int d = 0; d < EV; ++d) acc[d] = 0;
    const long kend = causal ? min(S, (qb + 1) * BQ) : S;
    for (long j0 = 0; j0 < kend; j0 += BK) {
        barrier(CLK_LOCAL_MEM_FENCE);
        for (int e = t; e < BK * E; e += BQ) {
            int jj = e / E, d = e - jj * E;
            long j = j0 + jj;
            ks[jj][d] = j < S ? ROW(k, ko, ksb, ksh, ksr, b, h, j)[d] : 0;
        }
        for (int e = t; e < BK * EV; e += BQ) {
            int jj = e / EV, d = e - jj * EV;
            long j = j0 + jj;
            vs[jj][d] = j < S ? ROW(v, vo, vsb, vsh, vsr, b, h, j)[d] : 0;
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        long lim = S - j0;                      // keys of this tile row i may see
        if (causal) lim = min(lim, i - j0 + 1);
        T s[BK];
        T smax = -INFINITY;
        #pragma unroll
        for (int jj = 0; jj < BK; ++jj) {
            T dot = 0;
            #pragma unroll
            for (int d = 0; d < E; ++d) dot = fma(qr[d], ks[jj][d], dot);
            s[jj] = jj < lim ? dot : -INFINITY;
            smax = fmax(smax, s[jj]);
        }
        if (smax == -INFINITY) continue;        // nothing visible in this tile
        T mnew = fmax(m, smax);
        T corr = exp(m - mnew);
        l *= corr;
        #pragma unroll
        for (int d = 0; d < EV; ++d) acc[d] *= corr;
        #pragma unroll
        for (int jj = 0; jj < BK; ++jj) {
            T p = exp(s[jj] - mnew);
            l += p;
            #pragma unroll
            for (int d = 0; d < EV; ++d) acc[d] = fma(p, vs[jj][d], acc[d]);
        }
        m = mnew;
    }
    if (!active) return;
    T inv = l > 0 ? 1 / l : 0;
    __global T* orow = out + (n * L + i) * EV;
    #pragma unroll
    for (int d = 0; d < EV; ++d) orow[d] = acc[d] * inv;
    lse[n * L + i] = l > 0 ? m + log(l) : -INFINITY;
}

// dq (and D_i, which attn_dkv reads): one work item per query row, key tiles in local memory.
__kernel __attribute__((reqd_work_group_size(BQ, 1, 1)))
void attn_dq(__global T* restrict dq, __global T* restrict Dout,
             __global const T* q, const long qo, const long qsb, const long qsh, const long qsr,
             __global const T* k, const long ko, const long ksb, const long ksh, const long ksr,
             __global const T* v, const long vo, const long vsb, const long vsh, const long vsr,
             __global const T* g, const long go, const long gsb, const long gsh, const long gsr,
             __global const T* out, __global const T* lse,
             const long H, const long L, const long S, const long nqb, const T scale,
             const int causal)
{
    __local T ks[BK][E];
    __local T vs[BK][EV];
    const long grp = get_group_id(0);
    const long n = grp / nqb, qb = grp - n * nqb;
    const long b = n / H, h = n - b * H;
    const int t = get_local_id(0);
    const long i = qb * BQ + t;
    const bool active = i < L;
    const long r = active ? i : 0;
    T qr[E], gr[EV], acc[E];
    __global const T* qrow = ROW(q, qo, qsb, qsh, qsr, b, h, r);
    __global const T* grow = ROW(g, go, gsb, gsh, gsr, b, h, r);
    __global const T* orow = out + (n * L + r) * EV;
    T Di = 0;
    #pragma unroll
    for (int d = 0; d < E; ++d) { qr[d] = active ? qrow[d] * scale : 0; acc[d] = 0; }
    #pragma unroll
    for (int d = 0; d < EV; ++d) {
        gr[d] = active ? grow[d] : 0;
        Di = fma(gr[d], active ? orow[d] : 0, Di);
    }
    const T li = active ? lse[n * L + i] : -INFINITY;
    const long kend = causal ? min(S, (qb + 1) * BQ) : S;
    for (long j0 = 0; j0 < kend; j0 += BK) {
        barrier(CLK_LOCAL_MEM_FENCE);
        for (int e = t; e < BK * E; e += BQ) {
            int jj = e / E, d = e - jj * E;
            long j = j0 + jj;
            ks[jj][d] = j < S ? ROW(k, ko, ksb, ksh, ksr, b, h, j)[d] : 0;
        }
        for (int e = t; e < BK * EV; e += BQ) {
            int jj = e / EV, d = e - jj * EV;
            long j = j0 + jj;
            vs[jj][d] = j < S ? ROW(v, vo, vsb, vsh, vsr, b, h, j)[d] : 0;
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        long lim = S - j0;
        if (causal) lim = min(lim, i - j0 + 1);
        if (li == -INFINITY) continue;
        for (int jj = 0; jj < BK; ++jj) {
            if (jj >= lim) break;
            T s = 0, dp = 0;
            #pragma unroll
            for (int d = 0; d < E; ++d) s = fma(qr[d], ks[jj][d], s);
            #pragma unroll
            for (int d = 0; d < EV; ++d) dp = fma(gr[d], vs[jj][d], dp);
            T ds = exp(s - li) * (dp - Di);
            #pragma unroll
            for (int d = 0; d < E; ++d) acc[d] = fma(ds, ks[jj][d], acc[d]);
        }
    }
    if (!active) return;
    __global T* drow = dq + (n * L + i) * E;
    #pragma unroll
    for (int d = 0; d < E; ++d) drow[d] = acc[d] * scale;
    Dout[n * L + i] = Di;
}

// dk and dv: one work item per key row j, query tiles (q, g, lse, D) in local memory.
__kernel __attribute__((reqd_work_group_size(BQ, 1, 1)))
void attn_dkv(__global T* restrict dk, __global T* restrict dv,
              __global const T* q, const long qo, const long qsb, const long qsh, const long qsr,
              __global const T* k, const long ko, const long ksb, const long ksh, const long ksr,
              __global const T* v, const long vo, const long vsb, const long vsh, const long vsr,
              __global const T* g, const long go, const long gsb, const long gsh, const long gsr,
              __global const T* lse, __global const T* Din,
              const long H, const long L, const long S, const long nkb, const T scale,
              const int causal)
{
    __local T qs[BK][E];
    __local T gs[BK][EV];
    __local T ls[BK], Ds[BK];
    const long grp = get_group_id(0);
    const long n = grp / nkb, kb = grp - n * nkb;
    const long b = n / H, h = n - b * H;
    const int t = get_local_id(0);
    const long j = kb * BQ + t;
    const bool active = j < S;
    const long r = active ? j : 0;
    T kr[E], vr[EV], ak[E], av[EV];
    __global const T* krow = ROW(k, ko, ksb, ksh, ksr, b, h, r);
    __global const T* vrow = ROW(v, vo, vsb, vsh, vsr, b, h, r);
    #pragma unroll
    for (int d = 0; d < E; ++d) { kr[d] = active ? krow[d] * scale : 0; ak[d] = 0; }
    #pragma unroll
    for (int d = 0; d < EV; ++d) { vr[d] = active ? vrow[d] : 0; av[d] = 0; }
    const long istart = causal ? kb * BQ : 0;   // queries before the block's first key see none
    for (long i0 = istart; i0 < L; i0 += BK) {
        barrier(CLK_LOCAL_MEM_FENCE);
        for (int e = t; e < BK * E; e += BQ) {
            int ii = e / E, d = e - ii * E;
            long i = i0 + ii;
            qs[ii][d] = i < L ? ROW(q, qo, qsb, qsh, qsr, b, h, i)[d] : 0;
        }
        for (int e = t; e < BK * EV; e += BQ) {
            int ii = e / EV, d = e - ii * EV;
            long i = i0 + ii;
            gs[ii][d] = i < L ? ROW(g, go, gsb, gsh, gsr, b, h, i)[d] : 0;
        }
        for (int ii = t; ii < BK; ii += BQ) {
            long i = i0 + ii;
            ls[ii] = i < L ? lse[n * L + i] : -INFINITY;
            Ds[ii] = i < L ? Din[n * L + i] : 0;
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        for (int ii = 0; ii < BK; ++ii) {
            long i = i0 + ii;
            if (i >= L) break;
            if ((causal && j > i) || ls[ii] == -INFINITY) continue;
            T s = 0, dp = 0;
            #pragma unroll
            for (int d = 0; d < E; ++d) s = fma(kr[d], qs[ii][d], s);
            #pragma unroll
            for (int d = 0; d < EV; ++d) dp = fma(vr[d], gs[ii][d], dp);
            T p = exp(s - ls[ii]);
            T ds = p * (dp - Ds[ii]);
            #pragma unroll
            for (int d = 0; d < EV; ++d) av[d] = fma(p, gs[ii][d], av[d]);
            #pragma unroll
            for (int d = 0; d < E; ++d) ak[d] = fma(ds, qs[ii][d], ak[d]);
        }
    }
    if (!active) return;
    __global T* krow_out = dk + (n * S + j) * E;
    __global T* vrow_out = dv + (n * S + j) * EV;
    #pragma unroll
    for (int d = 0; d < E; ++d) krow_out[d] = ak[d] * scale;
    #pragma unroll
    for (int d = 0; d < EV; ++d) vrow_out[d] = av[d];
}
