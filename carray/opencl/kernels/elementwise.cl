// One elementwise kernel: out = F(x1, x2, ...) over any strides, broadcasting by stride 0.
// The host fills: $narr (array operands, the output first), $rank, $params (the output and input
// buffers, then scalar operands), $args (x_k: operand k read at p[k], or its scalar), $fdef (the
// op as a macro F of its inputs and STORE(i, v), the store of v at out[i]), $out_t (the output's
// type).

$fdef

typedef struct { IDX shape[$rank]; IDX st[$narr][$rank]; IDX off[$narr]; } layout_t;

__kernel void ew_strided($params, const layout_t L, const IDX n)
{
    IDX i = get_global_id(0);
    if (i >= n) return;
    IDX p[$narr];
    STRIDED_OFFSETS($rank, $narr, L, i, p);
    STORE(p[0], F($args));
}

// The flat fast path: every array operand is contiguous in one layout (p[k] = off[k] + i).
// With VEC > 1, work item i < n / VEC handles VEC elements through vector loads and stores
// (the host checks that every offset is a multiple of VEC; pool buffers are aligned); the items
// after those handle the tail one element each.
typedef struct { IDX off[$narr]; } flat_t;

__kernel void ew_flat($params, const flat_t L, const IDX n)
{
    IDX i = get_global_id(0);
    IDX p[$narr];
#if $vec > 1
    IDX nv = n / $vec;
    if (i < nv) {
$vbody
        return;
    }
    i = nv * $vec + (i - nv);
#endif
    if (i >= n) return;
    for (int k = 0; k < $narr; ++k) p[k] = L.off[k] + i;
    STORE(p[0], F($args));
}
