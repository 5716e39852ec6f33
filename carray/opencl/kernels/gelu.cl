// Exact GELU and its gradient in one pass each, matching carray.nn.gelu on the CPU: y = x Phi(x),
// Phi(x) = (1 + erf(x / sqrt 2)) / 2; gx = g (Phi(x) + x phi(x)), phi(x) = exp(-x^2 / 2) /
// sqrt(2 pi). x and g are contiguous from their offsets; the host fills $t and $erf (the
// carray_erf_float polynomial for float32, the device's erf for float64).

#define T $t
#define ERF(v) $erf(v)

inline T gelu_cdf(T v) { return (ERF(v * (T)0.70710678118654752440) + (T)1) * (T)0.5; }

__kernel void gelu(__global T* restrict y, __global const T* restrict x, const long xoff,
                   const long n)
{
    long e = get_global_id(0);
    if (e >= n) return;
    T v = x[xoff + e];
    y[e] = v * gelu_cdf(v);
}

__kernel void gelu_grad(__global T* restrict gx, __global const T* restrict g, const long goff,
                        __global const T* restrict x, const long xoff, const long n)
{
    long e = get_global_id(0);
    if (e >= n) return;
    T v = x[xoff + e];
    T pdf = exp(v * v * (T)-0.5) * (T)0.39894228040143267794;
    gx[e] = g[goff + e] * (gelu_cdf(v) + v * pdf);
}
