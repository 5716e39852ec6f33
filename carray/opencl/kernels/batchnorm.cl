// Batch normalisation in training mode over x (N, C, S) C-contiguous from offset xo (S: the
// product of the spatial dims). The statistics kernels run `parts` work groups per channel
// (group = c parts + p), so that a few wide channels still fill the device; part p takes the
// images p rows + row, stepping rows parts. A group's work items form rows x sw columns (sw: a
// power of two, at least S or the group's width): a row walks images, its columns the S values
// of channel c in each, so reads are coalesced and no index is divided per element. With
// parts > 1 each group writes its partial result and a second kernel (one work item per
// channel) merges the parts in order (deterministic); with parts = 1 the group finishes itself.
//   bn_stats:  mean, biased var and invstd = 1 / sqrt(var + eps) in one pass (per work item sums
//              of x - K and its square, K the channel's first value, so no division per element
//              and no cancellation for a large mean; merged pairwise: Chan et al.), and the
//              running statistics r = (1 - momentum) r + momentum s (s = mean, and var
//              M / (M - 1), M = N S) when asked
//   bn_apply:  y = (x - mean) invstd w + b, elementwise
//   bn_grad_sums: sum(g) and sum(g xhat) per channel, xhat recomputed from x
//   bn_grad_input: gx = (g - sum_g / M - xhat sum_gx / M) invstd w, elementwise
// Products are rounded one by one (no contraction), as the CPU's composition of the same ops.

#define T $t
#define WG $wg

#pragma OPENCL FP_CONTRACT OFF

// Merge the statistics (nb, mub, m2b) of some values into (*na, *mua, *m2a) (Chan et al.).
inline void chan_merge(T* na, T* mua, T* m2a, const T nb, const T mub, const T m2b)
{
    if (nb > 0) {
        const T nn = *na + nb, delta = mub - *mua, f = nb / nn;
        *m2a = *m2a + m2b + delta * delta * *na * f;
        *mua = *mua + delta * f;
        *na = nn;
    }
}

// Channel c's outputs from its statistics: mean, var, invstd, and the running statistics.
inline void stats_finish(const long c, const T n, const T mu, const T m2,
                         __global T* restrict mean, __global T* restrict var,
                         __global T* restrict invstd, __global T* rmean, const long rmo,
                         __global T* rvar, const long rvo, const int update, const T eps,
                         const T keep, const T momentum, const T unbias)
{
    const T v = n > 0 ? m2 / n : (T)NAN;
    const T m = n > 0 ? mu : (T)NAN;
    mean[c] = m;
    var[c] = v;
    invstd[c] = (T)1 / sqrt(v + eps);
    if (update) {
        rmean[rmo + c] = rmean[rmo + c] * keep + m * momentum;
        rvar[rvo + c] = rvar[rvo + c] * keep + (v * unbias) * momentum;
    }
}

__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void bn_stats(__global const T* x, const long xo, __global T* restrict mean,
              __global T* restrict var, __global T* restrict invstd,
              __global T* rmean, const long rmo, __global T* rvar, const long rvo,
              const int update,
              const long C, const long S, const long total, const T eps, const T keep,
              const T momentum, const T unbias, const int sw, const int parts,
              __global T* restrict partial)
{
    __local T ln[WG], lmu[WG], lm2[WG];
    const long grp = get_group_id(0), c = grp / parts;
    const int p = grp % parts;
    const int lid = get_local_id(0);
    const int col = lid & (sw - 1), row = lid / sw, rows = WG / sw;
    const long N = S > 0 ? total / S : 0;
    const T K = total > 0 ? x[xo + c * S] : (T)0;
    T n = 0, s1 = 0, s2 = 0;
    for (long r = (long)p * rows + row; r < N; r += (long)rows * parts) {
        __global const T* xr = x + xo + (r * C + c) * S;
        for (long j = col; j < S; j += sw) {
            T d = xr[j] - K;
            n += 1;
            s1 += d;
            s2 += d * d;
        }
    }
    T mu = 0, m2 = 0;
    if (n > 0) {
        T dm = s1 / n;
        mu = K + dm;
        m2 = max(s2 - s1 * dm, (T)0);
    }
    ln[lid] = n; lmu[lid] = mu; lm2[lid] = m2;
    for (int step = WG / 2; step > 0; step >>= 1) {
        barrier(CLK_LOCAL_MEM_FENCE);
        if (lid < step) {
            T na = ln[lid], ma = lmu[lid], qa = lm2[lid];
            chan_merge(&na, &ma, &qa, ln[lid + step], lmu[lid + step], lm2[lid + step]);
            ln[lid] = na; lmu[lid] = ma; lm2[lid] = qa;
        }
    }
    if (lid != 0) return;
    if (parts > 1) {
        partial[3 * grp] = ln[0];
        partial[3 * grp + 1] = lmu[0];
        partial[3 * grp + 2] = lm2[0];
        return;
    }
    stats_finish(c, ln[0], lmu[0], lm2[0], mean, var, invstd, rmean, rmo, rvar, rvo, update, eps,
                 keep, momentum, unbias);
}

// bn_stats' second step when parts > 1: one work item per channel merges its parts in order.
__kernel void bn_stats_merge(__global const T* restrict partial, __global T* restrict mean,
                             __global T* restrict var, __global T* restrict invstd,
                             __global T* rmean, const long rmo, __global T* rvar,
                             const long rvo, const int update, const long C, const T eps,
                             const T keep, const T momentum, const T unbias, const int parts)
{
    const long c = get_global_id(0);
    if (c >= C) return;
    __global const T* q = partial + 3 * c * parts;
    T n = q[0], mu = q[1], m2 = q[2];
    for (int p = 1; p < parts; ++p)
        chan_merge(&n, &mu, &m2, q[3 * p], q[3 * p + 1], q[3 * p + 2]);
    stats_finish(c, n, mu, m2, mean, var, invstd, rmean, rmo, rvar, rvo, update, eps, keep,
                 momentum, unbias);
}

__kernel void bn_apply(__global T* restrict y, __global const T* x, const long xo,
                       __global const T* mean, __global const T* invstd,
                       __global const T* w, const long wo, const int has_w,
                       __global const T* b, const long bo, const int has_b,
                       const long C, const long S, const long n)
{
    long i = get_global_id(0);
    if (i >= n) return;
    long c = (i / S) % C;
    T v = (x[xo + i] - mean[c]) * invstd[c];
    if (has_w) v = v * w[wo + c];
    if (has_b) v = v + b[bo + c];
    y[i] = v;
}

__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void bn_grad_sums(__global T* restrict sum_g, __global T* restrict sum_gx,
                  __global const T* g, const long go, __global const T* x, const long xo,
                  __global const T* mean, __global const T* invstd, const long C, const long S,
                  const long total, const int sw, const int parts, __global T* restrict partial)
{
    __local T lg[WG], lgx[WG];
    const long grp = get_group_id(0), c = grp / parts;
    const int p = grp % parts;
    const int lid = get_local_id(0);
    const int col = lid & (sw - 1), row = lid / sw, rows = WG / sw;
    const long N = S > 0 ? total / S : 0;
    const T mu = mean[c], is = invstd[c];
    T sg = 0, sgx = 0;
    for (long r = (long)p * rows + row; r < N; r += (long)rows * parts) {
        const long k0 = (r * C + c) * S;
        for (long j = col; j < S; j += sw) {
            T gv = g[go + k0 + j];
            sg += gv;
            sgx += gv * ((x[xo + k0 + j] - mu) * is);
        }
    }
    lg[lid] = sg; lgx[lid] = sgx;
    for (int step = WG / 2; step > 0; step >>= 1) {
        barrier(CLK_LOCAL_MEM_FENCE);
        if (lid < step) {
            lg[lid] += lg[lid + step];
            lgx[lid] += lgx[lid + step];
        }
    }
    if (lid != 0) return;
    if (parts > 1) {
        partial[2 * grp] = lg[0];
        partial[2 * grp + 1] = lgx[0];
        return;
    }
    sum_g[c] = lg[0];
    sum_gx[c] = lgx[0];
}

// bn_grad_sums' second step when parts > 1: one work item per channel adds its parts in order.
__kernel void bn_grad_sums_merge(__global const T* restrict partial, __global T* restrict sum_g,
                                 __global T* restrict sum_gx, const long C, const int parts)
{
    const long c = get_global_id(0);
    if (c >= C) return;
    __global const T* q = partial + 2 * c * parts;
    T sg = q[0], sgx = q[1];
    for (int p = 1; p < parts; ++p) {
        sg += q[2 * p];
        sgx += q[2 * p + 1];
    }
    sum_g[c] = sg;
    sum_gx[c] = sgx;
}

__kernel void bn_grad_input(__global T* restrict gx, __global const T* g, const long go,
                            __global const T* x, const long xo, __global const T* mean,
                            __global const T* invstd, __global const T* sum_g,
                            __global const T* sum_gx, __global const T* w, const long wo,
                            const int has_w, const T inv_m, const long C, const long S,
                            const long n)
{
    long i = get_global_id(0);
    if (i >= n) return;
    long c = (i / S) % C;
    T xhat = (x[xo + i] - mean[c]) * invstd[c];
    T v = g[go + i] - sum_g[c] * inv_m;
    v = v - xhat * (sum_gx[c] * inv_m);
    T scale = has_w ? invstd[c] * w[wo + c] : invstd[c];
    gx[i] = v * scale;
}
