// out = in for a copy whose input walks its rows with stride 1 and its columns with stride isc
// (a transposed view): out (batch x R x C, row-major, batch step osb) from in (element (b, r, c)
// at b isb + r + c isc). 32 x 32 tiles through local memory, so both the reads (along r) and the
// writes (along c) are coalesced; the padded tile row (33) keeps the column reads free of bank
// conflicts. Any element type: values are only moved.

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
    in += ioff + b * isb;
    out += ooff + b * osb;
    for (int j = y; j < 32; j += 8)
        if (r0 + x < R && c0 + j < C)
            tile[j][x] = in[(r0 + x) + (c0 + j) * isc];
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int j = y; j < 32; j += 8)
        if (r0 + j < R && c0 + x < C)
            out[(r0 + j) * C + c0 + x] = tile[x][j];
}
