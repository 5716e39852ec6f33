// The sum of squares of up to $n arrays of type $t in one launch, as partial sums: each of the
// launch's work groups adds up its work items' share of every array (a grid-stride loop over
// each array in turn, so reads stay coalesced), reduces them in local memory, and writes one
// partial sum to out[out_off + group]. The caller sums the partials (deterministic: the
// grouping depends only on the sizes).

#define T $t
#define GROUP $group

__kernel void $kname($params, __global T* restrict out, const long out_off)
{
    const long gid = get_global_id(0);
    const long stride = get_global_size(0);
    T s = 0;
$body
    __local T acc[GROUP];
    const int l = get_local_id(0);
    acc[l] = s;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int h = GROUP / 2; h > 0; h >>= 1) {
        if (l < h)
            acc[l] += acc[l + h];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (l == 0)
        out[out_off + get_group_id(0)] = acc[0];
}
