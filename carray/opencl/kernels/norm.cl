// Fused row kernels of carray.nn (softmax, log_softmax, layer norm, RMS norm and their
// gradients), matching carray/cpu/_nn_norm.pyx. W lanes per row (a power of two dividing WG) and
// WG / W rows per work group of WG items (carray/opencl/_rows.py): each lane walks its row W
// elements apart and the lanes combine their partial max / sums in a local-memory tree; W = 1
// gives one work item per row (short rows, or softmax rows `inner` apart, where neighbouring
// items then read neighbouring elements). The host fills $t and $wg and passes W (an argument,
// so one program serves every row length).
// Softmax rows: the row r of x viewed as (outer, n, inner) is x[o, :, i] (o = r / inner,
// i = r % inner), n elements `inner` apart. Norm rows: row r is x[r * n .. r * n + n).
// Items of rows past the last (r >= rows) take part in the barriers and write nothing.

#define T $t
#define WG $wg

#define TREE(buf, lid, OP)                                              \
    barrier(CLK_LOCAL_MEM_FENCE);                                       \
    for (int h_ = W / 2; h_ > 0; h_ >>= 1) {                            \
        if ((lid) % W < h_) { OP((buf)[lid], (buf)[(lid) + h_]); }      \
        barrier(CLK_LOCAL_MEM_FENCE);                                   \
    }

#define ADD_TO(a, b) a += b
#define MAX_TO(a, b) { T b_ = b; if (b_ > a || b_ != b_) a = b_; }

// this item's row, lane and the first slot of its row's segment of the local buffers
#define ROW_OF_ITEM                                                     \
    const int lid = get_local_id(0), lane = lid % W, seg = lid - lane;  \
    const long r = get_group_id(0) * (WG / W) + lid / W;                \
    const int live = r < rows;                                          \
    const long nl = live ? n : 0;       /* dead items walk nothing */

// y = softmax(x) (lg: log_softmax) over each row; masked: an all -inf row gives 0, not NaN.
__kernel void softmax_rows(__global T* restrict y, __global const T* restrict x, const long xoff,
                           const long n, const long inner, const int lg, const int masked,
                           const long rows, const int W)
{
    __local T red[WG];
    ROW_OF_ITEM
    const long o = r / inner, base = o * n * inner + (r - o * inner);
    __global const T* xr = x + xoff + base;
    __global T* yr = y + base;
    T m = -INFINITY;
    for (long k = lane; k < nl; k += W) {
        T v = xr[k * inner];
        if (v > m || v != v) m = v;
    }
    red[lid] = m;
    TREE(red, lid, MAX_TO)
    m = red[seg];
    if (masked && m == -INFINITY) m = 0;
    barrier(CLK_LOCAL_MEM_FENCE);
    T s = 0;
    for (long k = lane; k < nl; k += W) {
        T e = exp(xr[k * inner] - m);
        if (!lg) yr[k * inner] = e;
        s += e;
    }
    red[lid] = s;
    TREE(red, lid, ADD_TO)
    s = red[seg];
    if (lg) {
        T ls = log(s);
        for (long k = lane; k < nl; k += W)
            yr[k * inner] = (xr[k * inner] - m) - ls;
    } else {
        if (masked && s == 0) s = 1;
        for (long k = lane; k < nl; k += W)      // the elements this item wrote above
            yr[k * inner] = yr[k * inner] / s;
    }
}

// softmax: gx = y (g - sum(g y)); lg (log_softmax): gx = g - exp(y) sum(g); over each row.
__kernel void softmax_grad_rows(__global T* restrict gx, __global const T* restrict y,
                                const long yoff, __global const T* restrict g, const long goff,
                                const long n, const long inner, const int lg, const long rows,
                                const int W)
{
    __local T red[WG];
    ROW_OF_ITEM
    const long o = r / inner, base = o * n * inner + (r - o * inner);
    __global const T* yr = y + yoff + base;
    __global const T* gr = g + goff + base;
    T s = 0;
    for (long k = lane; k < nl; k += W)
        s += lg ? gr[k * inner] : gr[k * inner] * yr[k * inner];
    red[lid] = s;
    TREE(red, lid, ADD_TO)
    s = red[seg];
    for (long k = lane; k < nl; k += W) {
        long e = base + k * inner;
        gx[e] = lg ? gr[k * inner] - exp(yr[k * inner]) * s : yr[k * inner] * (gr[k * inner] - s);
    }
}

// One row of layer norm (center) or RMS norm: mean (0 for RMS), rstd = 1 / sqrt(mean((x -
// mean)^2) + eps), y = (x - mean) rstd w + b (w, b when has_w, has_b).
__kernel void norm_rows(__global T* restrict y, __global T* restrict mean,
                        __global T* restrict rstd, __global const T* restrict x, const long xoff,
                        __global const T* restrict w, const long woff,
                        __global const T* restrict b, const long boff, const long n, const T eps,
                        const int has_w, const int has_b, const int center, const long rows,
                        const int W)
{
    __local T red[WG];
    ROW_OF_ITEM
    __global const T* xr = x + xoff + r * n;
    __global T* yr = y + r * n;
    T mu = 0;
    if (center) {
        T s = 0;
        for (long k = lane; k < nl; k += W) s += xr[k];
        red[lid] = s;
        TREE(red, lid, ADD_TO)
        mu = red[seg] / n;
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    T v = 0;
    for (long k = lane; k < nl; k += W) {
        T d = xr[k] - mu;
        v += d * d;
    }
    red[lid] = v;
    TREE(red, lid, ADD_TO)
    T rs = 1 / sqrt(red[seg] / n + eps);
    for (long k = lane; k < nl; k += W) {
        T t = (xr[k] - mu) * rs;
        if (has_w) t = t * w[woff + k];
        if (has_b) t = t + b[boff + k];
        yr[k] = t;
    }
    if (live && lane == 0) {
        mean[r] = mu;
        rstd[r] = rs;
    }
}

// dx of one row: rstd (gh - mean(gh) - xhat mean(gh xhat)), gh = g w, xhat = (x - mean) rstd
// (RMS norm: no mean(gh) term and mean 0).
__kernel void norm_grad_rows(__global T* restrict gx, __global const T* restrict g,
                             const long goff, __global const T* restrict x, const long xoff,
                             __global const T* restrict mean, const long moff,
                             __global const T* restrict rstd, const long roff,
                             __global const T* restrict w, const long woff, const long n,
                             const int has_w, const int center, const long rows,
                             const int W)
{
    __local T red_a[WG];
    __local T red_c[WG];
    ROW_OF_ITEM
    __global const T* xr = x + xoff + r * n;
    __global const T* gr = g + goff + r * n;
    const T mu = center && live ? mean[moff + r] : 0, rs = live ? rstd[roff + r] : 0;
    T a = 0, c = 0;
    for (long k = lane; k < nl; k += W) {
        T gh = has_w ? gr[k] * w[woff + k] : gr[k];
        a += gh;
        c += gh * ((xr[k] - mu) * rs);
    }
    red_a[lid] = a;
    red_c[lid] = c;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int h = W / 2; h > 0; h >>= 1) {
        if (lane < h) {
            red_a[lid] += red_a[lid + h];
            red_c[lid] += red_c[lid + h];
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    const T am = center ? red_a[seg] / n : 0, cm = red_c[seg] / n;
    for (long k = lane; k < nl; k += W) {
        T gh = has_w ? gr[k] * w[woff + k] : gr[k];
        gx[r * n + k] = rs * (gh - am - (xr[k] - mu) * rs * cm);
    }
}

// Partial column sums for dweight / dbias: work item (c, j) sums rows [c * chunk, (c + 1) *
// chunk) of column j: pw[c, j] = sum g xhat, pb[c, j] = sum g (when need_b). The host sums the
// partials over c.
__kernel void norm_grad_cols(__global T* restrict pw, __global T* restrict pb,
                             __global const T* restrict g, const long goff,
                             __global const T* restrict x, const long xoff,
                             __global const T* restrict mean, const long moff,
                             __global const T* restrict rstd, const long roff, const long rows,
                             const long n, const long chunks, const long chunk, const int center,
                             const int need_b)
{
    long e = get_global_id(0);
    if (e >= chunks * n) return;
    long c = e / n, j = e - c * n;
    long i1 = min(rows, (c + 1) * chunk);
    T aw = 0, ab = 0;
    for (long i = c * chunk; i < i1; ++i) {
        T gv = g[goff + i * n + j];
        T mu = center ? mean[moff + i] : 0;
        aw += gv * ((x[xoff + i * n + j] - mu) * rstd[roff + i]);
        ab += gv;
    }
    pw[e] = aw;
    if (need_b) pb[e] = ab;
}
