// arange on the device, with NumPy's values (carray/ops/_creation.pyx, _arange_host): value i
// is first + i * (second - first) in the dtype's own arithmetic (no fused multiply-add),
// except values 0 and 1, which are first and second themselves. $t: int, long, float, double.

#pragma OPENCL FP_CONTRACT OFF
#define T $t

__kernel void arange(__global T* restrict out, const long n, const T first, const T second)
{
    long i = get_global_id(0);
    if (i >= n) return;
    T delta = second - first;
    out[i] = i == 0 ? first : i == 1 ? second : first + (T)i * delta;
}
