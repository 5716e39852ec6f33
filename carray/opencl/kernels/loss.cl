// Softmax cross entropy over the rows of logits x (M x C, contiguous from xoff) at int64 class
// targets t (M,), matching carray/cpu/_nn.pyx: softmax_nll and its gradient. The host fills $t and
// $wg (the work-group size, a power of two). A row whose target is `ignore` counts for nothing;
// a target outside [0, C) (and not `ignore`) sets *bad (reported by the host at its next read)
// and counts for nothing.

#define T $t
#define WG $wg

// Row i: p[i, :] = softmax(x[i, :]), loss_i = log(sum(exp(x[i, :] - m))) - (x[i, t_i] - m), m
// the row's max (the difference first, so huge logits keep the loss).
// mode 0: loss[i] = loss_i (0 for ignored rows), any number of work groups.
// mode 1 / 2: one work group of WG items; loss[0] = the sum of loss_i (mode 1) or that sum over
// the count of counted rows (mode 2: NaN when none); count[0] = that count.
__kernel void softmax_nll(__global T* restrict loss, __global T* restrict count,
                          __global T* restrict p, __global const T* restrict x, const long xoff,
                          __global const long* restrict t, const long toff, const long M,
                          const long C, const long ignore, const int mode,
                          __global int* restrict bad)
{
    __local T part_loss[WG];
    __local T part_count[WG];
    T acc = 0, n = 0;
    for (long i = get_global_id(0); i < M; i += get_global_size(0)) {
        __global const T* row = x + xoff + i * C;
        __global T* prow = p + i * C;
        T m = row[0];
        for (long c = 1; c < C; ++c)
            m = fmax(m, row[c]);
        T s = 0;
        for (long c = 0; c < C; ++c) {
            T e = exp(row[c] - m);
            prow[c] = e;
            s += e;
        }
        for (long c = 0; c < C; ++c)
            prow[c] /= s;
        long ti = t[toff + i];
        T li = 0;
        if (ti != ignore) {
            if (ti < 0 || ti >= C) {
                *bad = 2;
            } else {
                li = log(s) - (row[ti] - m);   // x_t - m first: + m would absorb log(s)
                n += 1;
            }
        }
        if (mode == 0)
            loss[i] = li;
        acc += li;
    }
    if (mode == 0)
        return;
    int lid = get_local_id(0);
    part_loss[lid] = acc;
    part_count[lid] = n;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int h = WG / 2; h > 0; h >>= 1) {
        if (lid < h) {
            part_loss[lid] += part_loss[lid + h];
            part_count[lid] += part_count[lid + h];
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (lid == 0) {
        loss[0] = mode == 2 ? part_loss[0] / part_count[0] : part_loss[0];
        count[0] = part_count[0];
    }
}

// gx[i, c] = (p[i, c] - [c == t_i]) g_i / d for counted rows, 0 for the others; g_i =
// g[goff + i * gstep] (gstep 0: one upstream gradient for all rows), d = count[0] when
// divide, else 1.
__kernel void softmax_nll_grad(__global T* restrict gx, __global const T* restrict p,
                               __global const long* restrict t, const long toff, const long M,
                               const long C, const long ignore, __global const T* restrict g,
                               const long goff, const long gstep,
                               __global const T* restrict count, const int divide)
{
    long e = get_global_id(0);
    if (e >= M * C) return;
    long i = e / C, c = e - i * C;
    long ti = t[toff + i];
    T s = 0;
    if (ti != ignore && ti >= 0 && ti < C) {
        s = g[goff + i * gstep];
        if (divide)
            s /= count[0];
    }
    gx[e] = (p[e] - (c == ti ? (T)1 : (T)0)) * s;
}
