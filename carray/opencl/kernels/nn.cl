// NCHW network primitives on contiguous planes, matching carray/cpu/_nn.pyx: im2col / col2im for
// convolution (the products run as GEMMs), max and average pooling and their gradients.
// The host fills $t. Geometry: input planes H x W, output Ho x Wo, kernel kh x kw, stride sh sw,
// padding ph pw, dilation dh dw; P = N * C planes.

#define T $t

typedef struct { long N, C, H, W, Ho, Wo, kh, kw, sh, sw, ph, pw, dh, dw; } geom_t;

// col[(c, u, v), (n, i, j)] = x[n, c, i sh - ph + u dh, j sw - pw + v dw] (0 outside)
__kernel void im2col(__global T* restrict col, __global const T* restrict x, const geom_t g,
                     const long xoff)
{
    long e = get_global_id(0);
    long L = g.N * g.Ho * g.Wo;
    if (e >= g.C * g.kh * g.kw * L) return;
    long q = e % L, k = e / L;
    long j = q % g.Wo, i = (q / g.Wo) % g.Ho, n = q / (g.Wo * g.Ho);
    long v = k % g.kw, u = (k / g.kw) % g.kh, c = k / (g.kw * g.kh);
    long y = i * g.sh - g.ph + u * g.dh, xx = j * g.sw - g.pw + v * g.dw;
    col[e] = (y >= 0 && y < g.H && xx >= 0 && xx < g.W) ?
        x[xoff + ((n * g.C + c) * g.H + y) * g.W + xx] : (T)0;
}

// The adjoint of im2col: x[n, c, y, xx] = sum of the col entries that read it.
__kernel void col2im(__global T* restrict x, __global const T* restrict col, const geom_t g)
{
    long e = get_global_id(0);
    if (e >= g.N * g.C * g.H * g.W) return;
    long xx = e % g.W, y = (e / g.W) % g.H, c = (e / (g.W * g.H)) % g.C;
    long n = e / (g.W * g.H * g.C);
    long L = g.N * g.Ho * g.Wo;
    T s = 0;
    for (long u = 0; u < g.kh; ++u) {
        long ti = y + g.ph - u * g.dh;
        if (ti < 0 || ti % g.sh) continue;
        long i = ti / g.sh;
        if (i >= g.Ho) continue;
        for (long v = 0; v < g.kw; ++v) {
            long tj = xx + g.pw - v * g.dw;
            if (tj < 0 || tj % g.sw) continue;
            long j = tj / g.sw;
            if (j >= g.Wo) continue;
            s += col[((c * g.kh + u) * g.kw + v) * L + (n * g.Ho + i) * g.Wo + j];
        }
    }
    x[e] = s;
}

// Max pooling, PyTorch's rule: the first maximum wins, or the last NaN; a window without input
// elements gives -inf and index -1.
__kernel void max_pool(__global T* restrict out, __global long* restrict idx,
                       __global const T* restrict x, const geom_t g, const long xoff,
                       const int with_idx)
{
    long e = get_global_id(0);
    if (e >= g.N * g.C * g.Ho * g.Wo) return;
    long ox = e % g.Wo, oy = (e / g.Wo) % g.Ho, p = e / (g.Wo * g.Ho);
    __global const T* plane = x + xoff + p * g.H * g.W;
    long y0 = oy * g.sh - g.ph, y1 = min(y0 + (g.kh - 1) * g.dh + 1, g.H);
    if (y0 < 0) y0 += ((g.dh - 1 - y0) / g.dh) * g.dh;
    long x0 = ox * g.sw - g.pw, x1 = min(x0 + (g.kw - 1) * g.dw + 1, g.W);
    if (x0 < 0) x0 += ((g.dw - 1 - x0) / g.dw) * g.dw;
    T m = -INFINITY;
    long best = -1;
    int nan = 0;
    for (long y = y0; y < y1; y += g.dh)
        for (long xx = x0; xx < x1; xx += g.dw) {
            long j = y * g.W + xx;
            T v = plane[j];
            if (v != v) { nan = 1; best = j; m = v; }
            else if (!nan && (v > m || best < 0 && v == m)) { m = v; best = j; }
        }
    out[e] = m;
    if (with_idx) idx[e] = best;
}

// gin[p].flat[idx[p, i]] += gout[p, i]: one work item per plane, in order (no atomics).
__kernel void max_grad(__global T* restrict gin, __global const T* restrict gout,
                       __global const long* restrict idx, const geom_t g)
{
    long p = get_global_id(0);
    if (p >= g.N * g.C) return;
    long HW = g.H * g.W, L = g.Ho * g.Wo;
    __global T* plane = gin + p * HW;
    for (long i = 0; i < HW; ++i) plane[i] = 0;
    for (long i = 0; i < L; ++i) {
        long k = idx[p * L + i];
        if (k >= 0) plane[k] += gout[p * L + i];
    }
}

inline long avg_window(const geom_t g, long oy, long ox, int count_pad, long divisor,
                       long* y0, long* y1, long* x0, long* x1)
{
    *y0 = oy * g.sh - g.ph;
    *x0 = ox * g.sw - g.pw;
    *y1 = min(*y0 + g.kh, g.H + g.ph);
    *x1 = min(*x0 + g.kw, g.W + g.pw);
    long n = (*y1 - *y0) * (*x1 - *x0);
    *y0 = max(*y0, 0L);
    *x0 = max(*x0, 0L);
    *y1 = min(*y1, g.H);
    *x1 = min(*x1, g.W);
    if (divisor > 0) n = divisor;
    else if (!count_pad) n = (*y1 - *y0) * (*x1 - *x0);
    return n;
}

__kernel void avg_pool(__global T* restrict out, __global const T* restrict x, const geom_t g,
                       const long xoff, const int count_pad, const long divisor)
{
    long e = get_global_id(0);
    if (e >= g.N * g.C * g.Ho * g.Wo) return;
    long ox = e % g.Wo, oy = (e / g.Wo) % g.Ho, p = e / (g.Wo * g.Ho);
    __global const T* plane = x + xoff + p * g.H * g.W;
    long y0, y1, x0, x1;
    long n = avg_window(g, oy, ox, count_pad, divisor, &y0, &y1, &x0, &x1);
    if (y0 >= y1 || x0 >= x1) { out[e] = 0; return; }
    T s = 0;
    for (long y = y0; y < y1; ++y)
        for (long xx = x0; xx < x1; ++xx)
            s = s + plane[y * g.W + xx];
    out[e] = s / (T)n;
}

// The adjoint of avg_pool: one work item per input element, gathering the windows that cover
// it in the CPU loop's order (row-major over the outputs), so the sums match it exactly.
__kernel void avg_grad(__global T* restrict gin, __global const T* restrict gout,
                       const geom_t g, const int count_pad, const long divisor)
{
    long e = get_global_id(0);
    if (e >= g.N * g.C * g.H * g.W) return;
    long xx = e % g.W, y = (e / g.W) % g.H, p = e / (g.W * g.H);
    // outputs oy whose window rows [oy sh - ph, oy sh - ph + kh) hold y (same for x)
    long ty = y + g.ph - g.kh + 1, tx = xx + g.pw - g.kw + 1;
    long oy0 = ty > 0 ? (ty + g.sh - 1) / g.sh : 0, oy1 = min((y + g.ph) / g.sh + 1, g.Ho);
    long ox0 = tx > 0 ? (tx + g.sw - 1) / g.sw : 0, ox1 = min((xx + g.pw) / g.sw + 1, g.Wo);
    T s = 0;
    for (long oy = oy0; oy < oy1; ++oy)
        for (long ox = ox0; ox < ox1; ++ox) {
            long y0, y1, x0, x1;
            long n = avg_window(g, oy, ox, count_pad, divisor, &y0, &y1, &x0, &x1);
            if (y0 >= y1 || x0 >= x1) continue;
            s += gout[(p * g.Ho + oy) * g.Wo + ox] / (T)n;
        }
    gin[e] = s;
}

// max_grad in parallel, for types with a 32-bit atomic add (float through compare-and-swap):
// gin (zeroed first) gets gout[e] added at its plane's idx[e], one work item per output element.
// Without overlapping windows every input element receives at most one addend, so the result
// is exact; with overlaps the addends' order (and so the rounding) may vary, as in PyTorch's
// CUDA kernel. An index outside its plane adds nowhere and sets *bad (reported by the host).
#if $atomic32
__kernel void max_scatter(__global T* restrict gin, __global const T* restrict gout,
                          __global const long* restrict idx, const geom_t g,
                          __global int* restrict bad)
{
    long e = get_global_id(0);
    long L = g.Ho * g.Wo, HW = g.H * g.W;
    if (e >= g.N * g.C * L) return;
    long k = idx[e];
    if (k < -1 || k >= HW) { *bad = 1; return; }
    if (k < 0) return;
    volatile __global T* dst = gin + (e / L) * HW + k;
    T v = gout[e];
#if $atomic32 == 2
    volatile __global int* d = (volatile __global int*)dst;
    int old = *d, seen;
    do {
        seen = old;
        old = atomic_cmpxchg(d, seen, as_int(as_float(seen) + v));
    } while (old != seen);
#else
    atomic_add(dst, v);
#endif
}
#endif
