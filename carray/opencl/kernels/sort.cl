// Stable sort of each row of a C-contiguous (M, n) array in place, one work item per row:
// insertion sort of runs of RUN, then bottom-up merges back and forth between the row and its
// scratch row (tk). With WITH_IDX the row's original positions move along in ix (scratch ti),
// which is argsort. NaNs sort last; the left element wins ties. The host fills $t and $with_idx.

#define T $t
#define WITH_IDX $with_idx
#define RUN 16
// a sorts before b: a < b, and every number before NaN (a != a is false for integers)
#define LT(a, b) ((a) < (b) || ((b) != (b) && (a) == (a)))

__kernel void sort_lanes(__global T* restrict keys, __global T* restrict tkeys,
#if WITH_IDX
                         __global long* restrict idx, __global long* restrict tidx,
#endif
                         const IDX n, const IDX M)
{
    IDX m = get_global_id(0);
    if (m >= M) return;
    __global T* k = keys + m * n;
    __global T* src = k;
    __global T* dst = tkeys + m * n;
    __global T* tmp;
#if WITH_IDX
    __global long* ix = idx + m * n;
    __global long* isrc = ix;
    __global long* idst = tidx + m * n;
    __global long* itmp;
    for (IDX j = 0; j < n; ++j) ix[j] = j;
#endif
    for (IDX lo = 0; lo < n; lo += RUN) {
        IDX hi = min(lo + RUN, n);
        for (IDX i = lo + 1; i < hi; ++i) {
            T v = k[i];
#if WITH_IDX
            long vi = ix[i];
#endif
            IDX j = i;
            while (j > lo && LT(v, k[j - 1])) {
                k[j] = k[j - 1];
#if WITH_IDX
                ix[j] = ix[j - 1];
#endif
                --j;
            }
            k[j] = v;
#if WITH_IDX
            ix[j] = vi;
#endif
        }
    }
    for (IDX w = RUN; w < n; w *= 2) {
        for (IDX lo = 0; lo < n; lo += 2 * w) {
            IDX mid = min(lo + w, n), hi = min(lo + 2 * w, n);
            IDX a = lo, b = mid, o = lo;
            while (a < mid || b < hi) {
                IDX s = (a < mid && (b >= hi || !LT(src[b], src[a]))) ? a++ : b++;
                dst[o] = src[s];
#if WITH_IDX
                idst[o] = isrc[s];
#endif
                ++o;
            }
        }
        tmp = src; src = dst; dst = tmp;
#if WITH_IDX
        itmp = isrc; isrc = idst; idst = itmp;
#endif
    }
    if (src != k) {
        for (IDX j = 0; j < n; ++j) {
            k[j] = src[j];
#if WITH_IDX
            ix[j] = isrc[j];
#endif
        }
    }
}
