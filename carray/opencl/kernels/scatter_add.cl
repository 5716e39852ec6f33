// add.at on the device: view[p(e) + offs[b(e)]] += res[e], repeated offsets adding up (NumPy's
// add.at, carray.add_at). res is C-contiguous with dims (before, B, after); the layout gives
// the view's offset for each element of res (B flattened, stride 0), as index.cl's gather.
// Combinations marked BAD_OFFSET (an index out of bounds, reported by index_offsets) add
// nothing. Two kernels:
//   add_atomic  one work item per element of res, atomic adds ($atomic: 1 atomic_add on 32-bit
//               ints, 2 compare-and-swap on float, 3 atom_add on 64-bit ints, 4 compare-and-swap
//               on double; 3 and 4 need cl_khr_int64_base_atomics). The order of the additions
//               to one element varies from run to run (floats may differ in the last bits).
//   add_serial  one work item per element of the (before, after) dims, adding its B blocks in
//               order: deterministic, for types without atomics (bool: logical or).
// $t: the data type.

#define T $t
#define ATOMIC $atomic
#define BAD_OFFSET LONG_MIN

#if ATOMIC >= 3
#pragma OPENCL EXTENSION cl_khr_int64_base_atomics : enable
#endif

typedef struct { IDX shape[$rank]; IDX st[1][$rank]; IDX off[1]; } layout_t;

#if ATOMIC
inline void add_to(__global T* dst, T v)
{
#if ATOMIC == 1
    atomic_add((volatile __global T*)dst, v);
#elif ATOMIC == 2
    volatile __global int* d = (volatile __global int*)dst;
    int old = *d, seen;
    do {
        seen = old;
        old = atomic_cmpxchg(d, seen, as_int(as_float(seen) + v));
    } while (old != seen);
#elif ATOMIC == 3
    atom_add((volatile __global long*)dst, v);
#else
    volatile __global long* d = (volatile __global long*)dst;
    long old = *d, seen;
    do {
        seen = old;
        old = atom_cmpxchg(d, seen, as_long(as_double(seen) + v));
    } while (old != seen);
#endif
}

__kernel void add_atomic(__global T* view, __global const T* restrict res,
                         __global const long* restrict offs, const layout_t L, const IDX n,
                         const IDX bstep, const IDX nb)
{
    IDX e = get_global_id(0);
    if (e >= n) return;
    long o = offs[(e / bstep) % nb];
    if (o == BAD_OFFSET) return;
    IDX p[1];
    STRIDED_OFFSETS($rank, 1, L, e, p);
    add_to(view + p[0] + o, res[e]);
}
#endif

// L here: the view's layout over the (before, after) dims only; nrest their element count.
__kernel void add_serial(__global T* view, __global const T* restrict res,
                         __global const long* restrict offs, const layout_t L, const IDX nrest,
                         const IDX bstep, const IDX nb)
{
    IDX r = get_global_id(0);
    if (r >= nrest) return;
    IDX p[1];
    STRIDED_OFFSETS($rank, 1, L, r, p);
    IDX before = r / bstep, after = r - before * bstep;
    __global const T* src = res + before * nb * bstep + after;
    for (IDX b = 0; b < nb; ++b) {
        long o = offs[b];
        if (o == BAD_OFFSET) continue;
        __global T* d = view + p[0] + o;
#ifdef ADD_IS_OR
        *d = (T)(*d || src[b * bstep]);
#else
        *d = *d + src[b * bstep];
#endif
    }
}
