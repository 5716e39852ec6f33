// Softmax cross entropy over the rows of logits x (M x C, contiguous from xoff) at int64 class
// targets t (M,), matching carray/cpu/_nn.pyx: softmax_nll and its gradient. The host fills $t
// and $wg (the work-group size) and passes W (the lanes of one row: a power of two dividing WG;
// an argument, so one program serves every row length), so a group holds WG / W rows: long rows get a whole group, short ones share it, and the M rows
// spread over M W / WG groups. A row whose target is `ignore` counts for nothing; a target
// outside [0, C) (and not `ignore`) sets *bad (reported by the host at its next read) and counts
// for nothing.

#define T $t
#define WG $wg

// A tree over the W lanes of each row's segment of red (lane = lid % W).
#define SEG_TREE(red, lid, lane, OP)                                     \
    barrier(CLK_LOCAL_MEM_FENCE);                                        \
    for (int h_ = W / 2; h_ > 0; h_ >>= 1) {                             \
        if ((lane) < h_) { OP((red)[lid], (red)[(lid) + h_]); }          \
        barrier(CLK_LOCAL_MEM_FENCE);                                    \
    }

#define ADD_TO(a, b) a += b
#define MAX_TO(a, b) { T b_ = b; if (b_ > a || b_ != b_) a = b_; }

// Row i: p[i, :] = softmax(x[i, :]), loss_i = log(sum(exp(x[i, :] - m))) - (x[i, t_i] - m), m
// the row's max (the difference first, so huge logits keep the loss); 0 for rows not counted.
// loss[i] = loss_i; with_count (reductions): also loss[M + i] = 1 for counted rows, else 0.
__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void softmax_nll_rows(__global T* restrict loss, __global T* restrict p,
                      __global const T* restrict x, const long xoff,
                      __global const long* restrict t, const long toff, const long M,
                      const long C, const long ignore, const int with_count,
                      __global int* restrict bad, const int W)
{
    __local T red[WG];
    const int lid = get_local_id(0), lane = lid % W;
    const long i = get_group_id(0) * (WG / W) + lid / W;
    const int live = i < M;                 // a group's last rows may lie past M (no return:
    __global const T* row = x + xoff + (live ? i : 0) * C;     // every item meets the barriers)
    __global T* prow = p + i * C;
    T m = -INFINITY;
    if (live)
        for (long c = lane; c < C; c += W)
            MAX_TO(m, row[c])
    red[lid] = m;
    SEG_TREE(red, lid, lane, MAX_TO)
    m = red[lid - lane];
    barrier(CLK_LOCAL_MEM_FENCE);
    T s = 0;
    if (live)
        for (long c = lane; c < C; c += W)
            s += exp(row[c] - m);
    red[lid] = s;
    SEG_TREE(red, lid, lane, ADD_TO)
    s = red[lid - lane];
    if (!live)
        return;                             // (no barrier follows)
    for (long c = lane; c < C; c += W)
        prow[c] = exp(row[c] - m) / s;
    if (lane)
        return;
    long ti = t[toff + i];
    T li = 0, n = 0;
    if (ti != ignore) {
        if (ti < 0 || ti >= C) {
            *bad = 2;
        } else {
            li = log(s) - (row[ti] - m);     // x_t - m first: + m would absorb log(s)
            n = 1;
        }
    }
    loss[i] = li;
    if (with_count)
        loss[M + i] = n;
}

// One group of WG items: loss[0] = the sum of rows[0 .. M) (mode 1) or that sum over the sum
// of rows[M .. 2M) (the count, mode 2: NaN when 0); count[0] = that count.
__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void nll_total(__global T* restrict loss, __global T* restrict count,
               __global const T* restrict rows, const long M, const int mode)
{
    __local T part_loss[WG];
    __local T part_count[WG];
    const int lid = get_local_id(0);
    T a = 0, n = 0;
    for (long i = lid; i < M; i += WG) {
        a += rows[i];
        n += rows[M + i];
    }
    part_loss[lid] = a;
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
// divide, else 1. Rows as in softmax_nll_rows: W lanes per row, WG / W rows per group.
__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void softmax_nll_grad(__global T* restrict gx, __global const T* restrict p,
                      __global const long* restrict t, const long toff, const long M,
                      const long C, const long ignore, __global const T* restrict g,
                      const long goff, const long gstep, __global const T* restrict count,
                      const int divide, const int W)
{
    const int lid = get_local_id(0), lane = lid % W;
    const long i = get_group_id(0) * (WG / W) + lid / W;
    if (i >= M) return;
    long ti = t[toff + i];
    T s = 0;
    if (ti != ignore && ti >= 0 && ti < C) {
        s = g[goff + i * gstep];
        if (divide)
            s /= count[0];
    }
    for (long c = lane; c < C; c += W) {
        long e = i * C + c;
        gx[e] = (p[e] - (c == ti ? (T)1 : (T)0)) * s;
    }
}
