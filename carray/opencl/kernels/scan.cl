// Cumulative sum or product along one axis, in place: r is C-contiguous with shape
// (outer, n, inner) and work item g scans lane (g / inner, g % inner):
//   r[o, k, i] = COMBINE(r[o, k - 1, i], r[o, k, i]) for k = 1 .. n - 1,
// in order, as the host loop (carray/ops/_cumulative.pyx) and NumPy do. The host fills $t (the
// element type) and $combine (integers wrap through unsigned types, bools use | and &).

#define T $t
#define COMBINE(a, b) ($combine)

__kernel void scan(__global T* restrict r, const IDX off, const IDX outer, const IDX n,
                   const IDX inner)
{
    IDX g = get_global_id(0);
    if (g >= outer * inner) return;
    IDX o = g / inner;
    __global T* p = r + off + o * n * inner + (g - o * inner);
    T acc = p[0];
    for (IDX k = 1; k < n; ++k) {
        acc = COMBINE(acc, p[k * inner]);
        p[k * inner] = acc;
    }
}
