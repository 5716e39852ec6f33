// Embedding's lookup: out[r, c] = w[idx[r], c] for a 2-d weight (any strides) and contiguous
// indices (carray.nn.embedding). An index outside [0, nrows) writes 0 and sets *bad = code
// unless an earlier error set it (IndexError at the host's next read from the device). $t: the data type, $i: the index type.

#define T $t
#define I $i

__kernel void take_rows(__global T* restrict out, __global const T* restrict w,
                        __global const I* restrict idx, const long total, const long dim,
                        const long nrows, const long ws0, const long ws1, const long woff,
                        const long ioff, __global int* restrict bad, const int code)
{
    long e = get_global_id(0);
    if (e >= total) return;
    long r = e / dim, c = e - r * dim;
    long v = (long)idx[ioff + r];
    if (v < 0 || v >= nrows) {
        atomic_cmpxchg(bad, 0, code);  // the first error wins
        out[e] = (T)0;
        return;
    }
    out[e] = w[woff + v * ws0 + c * ws1];
}
