// Advanced indexing: res (C-contiguous, dims (before, B, after)) and the view it gathers from
// (or scatters to). The view's element for result element e is
//   p = off + sum over the before/after dims of coord * stride  +  offs[b],
// b = e's coordinate along the flattened index dims B (stride 0 in the layout). $t: the type.
// An offset of BAD_OFFSET (an index out of bounds found on the device by index_offsets.cl,
// reported by the host at its next read) gathers 0 and scatters nothing.

#define T $t
#define BAD_OFFSET LONG_MIN

typedef struct { IDX shape[$rank]; IDX st[1][$rank]; IDX off[1]; } layout_t;

__kernel void gather(__global T* restrict res, __global const T* restrict view,
                     __global const long* restrict offs, const layout_t L, const IDX n,
                     const IDX bstep, const IDX nb)
{
    IDX e = get_global_id(0);
    if (e >= n) return;
    long o = offs[(e / bstep) % nb];
    if (o == BAD_OFFSET) {
        res[e] = (T)0;
        return;
    }
    IDX p[1];
    STRIDED_OFFSETS($rank, 1, L, e, p);
    res[e] = view[p[0] + o];
}

// keep (read when use_keep): 0 for a block whose offset a later block repeats, so the
// last of repeated indices wins, as on the host, whatever order the work items run in
__kernel void scatter(__global const T* restrict res, __global T* restrict view,
                      __global const long* restrict offs, const layout_t L, const IDX n,
                      const IDX bstep, const IDX nb, __global const uchar* restrict keep,
                      const int use_keep)
{
    IDX e = get_global_id(0);
    if (e >= n) return;
    IDX b = (e / bstep) % nb;
    if ((use_keep && !keep[b]) || offs[b] == BAD_OFFSET) return;
    IDX p[1];
    STRIDED_OFFSETS($rank, 1, L, e, p);
    view[p[0] + offs[b]] = res[e];
}
