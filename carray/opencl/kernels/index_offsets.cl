// Integer-array indexing on the device: the element offset of each index combination, worked
// out from index arrays that stay on the device (carray/opencl/_index.py, device_offsets).
// One launch per index array:  offs[e] (+)= wrap(idx at e) * stride,  e over the broadcast
// index shape B; the layout L gives the index array's element for e (stride 0 = broadcast).
// An index outside [-n, n) sets *bad = code (unless an earlier error set it) (the host raises IndexError at its next read from
// the device) and marks the combination BAD_OFFSET, which the gather/add kernels skip.
// $i: the index arrays' type (int or long).

#define I $i
#define BAD_OFFSET LONG_MIN

typedef struct { IDX shape[$rank]; IDX st[1][$rank]; IDX off[1]; } layout_t;

__kernel void index_offsets(__global long* restrict offs, __global const I* restrict idx,
                            const layout_t L, const IDX total, const long n, const long stride,
                            const long base, const int accumulate, __global int* restrict bad,
                            const int code)
{
    IDX e = get_global_id(0);
    if (e >= total) return;
    IDX p[1];
    STRIDED_OFFSETS($rank, 1, L, e, p);
    long v = (long)idx[p[0]];
    long prev = accumulate ? offs[e] : base;
    if (v < -n || v >= n || prev == BAD_OFFSET) {
        if (v < -n || v >= n) atomic_cmpxchg(bad, 0, code);  // the first error wins
        offs[e] = BAD_OFFSET;
        return;
    }
    offs[e] = prev + (v < 0 ? v + n : v) * stride;
}
