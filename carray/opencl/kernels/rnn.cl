// One recurrent cell step per launch (carray.nn.lstm_cell / gru_cell and their gradients), one
// work item per (row b, unit j) of the (B, H) state, matching the CPU path's formulas:
//   LSTM: gates a = gi + gh (B, 4H) = [i f g o];  i, f, o = sigmoid, g = tanh;
//         c' = f c + i g;  h' = o tanh(c')
//   GRU:  r = s(gi_r + gh_r), z = s(gi_z + gh_z), n = tanh(gi_n + r gh_n), h' = n + z (h - n)
// Every array is C-contiguous from the offset passed with it; the host fills $t.

#define T $t
#define SIG(v) carray_sigmoid_$t(v)

__kernel void lstm_cell(__global T* restrict h, __global T* restrict c_new,
                        __global T* restrict act, __global T* restrict tc,
                        __global const T* gi, const long gio, __global const T* gh,
                        const long gho, __global const T* c, const long co, const long H,
                        const long n)
{
    long e = get_global_id(0);
    if (e >= n) return;
    long b = e / H, j = e - b * H;
    long r = b * 4 * H + j;
    T i = SIG(gi[gio + r] + gh[gho + r]);
    T f = SIG(gi[gio + r + H] + gh[gho + r + H]);
    T g = tanh(gi[gio + r + 2 * H] + gh[gho + r + 2 * H]);
    T o = SIG(gi[gio + r + 3 * H] + gh[gho + r + 3 * H]);
    T cn = f * c[co + e] + i * g;
    T t = tanh(cn);
    act[r] = i; act[r + H] = f; act[r + 2 * H] = g; act[r + 3 * H] = o;
    c_new[e] = cn;
    tc[e] = t;
    h[e] = o * t;
}

// dgates (B, 4H) and dc_prev (B, H) from the saved act, tc, c and the upstream dh, dc (either
// may be absent: has_dh / has_dc 0, its buffer then unread)
__kernel void lstm_cell_grad(__global T* restrict dgates, __global T* restrict dc_prev,
                             __global const T* act, __global const T* tc,
                             __global const T* c, const long co,
                             __global const T* dh, const long dho, const int has_dh,
                             __global const T* dcu, const long dco, const int has_dc,
                             const long H, const long n)
{
    long e = get_global_id(0);
    if (e >= n) return;
    long b = e / H, j = e - b * H;
    long r = b * 4 * H + j;
    T i = act[r], f = act[r + H], g = act[r + 2 * H], o = act[r + 3 * H];
    T t = tc[e];
    T dhv = has_dh ? dh[dho + e] : (T)0;
    T dc = dhv * o * ((T)1 - t * t) + (has_dc ? dcu[dco + e] : (T)0);
    dgates[r] = dc * g * i * ((T)1 - i);
    dgates[r + H] = dc * c[co + e] * f * ((T)1 - f);
    dgates[r + 2 * H] = dc * i * ((T)1 - g * g);
    dgates[r + 3 * H] = dhv * t * o * ((T)1 - o);
    dc_prev[e] = dc * f;
}

__kernel void gru_cell(__global T* restrict h_new, __global T* restrict rz,
                       __global T* restrict nt, __global const T* gi, const long gio,
                       __global const T* gh, const long gho, __global const T* h,
                       const long ho, const long H, const long n)
{
    long e = get_global_id(0);
    if (e >= n) return;
    long b = e / H, j = e - b * H;
    long r3 = b * 3 * H + j, r2 = b * 2 * H + j;
    T rv = SIG(gi[gio + r3] + gh[gho + r3]);
    T zv = SIG(gi[gio + r3 + H] + gh[gho + r3 + H]);
    T nv = tanh(gi[gio + r3 + 2 * H] + rv * gh[gho + r3 + 2 * H]);
    rz[r2] = rv; rz[r2 + H] = zv;
    nt[e] = nv;
    h_new[e] = nv + zv * (h[ho + e] - nv);
}

__kernel void gru_cell_grad(__global T* restrict dgi, __global T* restrict dgh,
                            __global T* restrict dh_prev, __global const T* rz,
                            __global const T* nt, __global const T* gh, const long gho,
                            __global const T* h, const long ho, __global const T* dh,
                            const long dho, const long H, const long n)
{
    long e = get_global_id(0);
    if (e >= n) return;
    long b = e / H, j = e - b * H;
    long r3 = b * 3 * H + j, r2 = b * 2 * H + j;
    T rv = rz[r2], zv = rz[r2 + H], nv = nt[e], d = dh[dho + e];
    T dn = d * ((T)1 - zv) * ((T)1 - nv * nv);
    T dz = d * (h[ho + e] - nv) * zv * ((T)1 - zv);
    T dr = dn * gh[gho + r3 + 2 * H] * rv * ((T)1 - rv);
    dgi[r3] = dr; dgi[r3 + H] = dz; dgi[r3 + 2 * H] = dn;
    dgh[r3] = dr; dgh[r3 + H] = dz; dgh[r3 + 2 * H] = dn * rv;
    dh_prev[e] = d * zv;
}

// A whole LSTM layer runs one lstm_step per time step (carray.nn.lstm_layer): the hidden
// projection h_{t-1} W_hh^T is summed here, not by a separate GEMM launch, and h_t goes
// straight into the layer's output. A work group of 4 x SJ items takes batch row b and SJ
// units j: item (s, jj) sums gate s of unit j (so 4H sums run in parallel, each over H), the
// four land in local memory, and the first SJ items apply the cell. wt is W_hh^T (H, 4H),
// C-contiguous from its first element, so neighbouring items read neighbouring weights.
#define SJ $sj

__kernel __attribute__((reqd_work_group_size(4 * SJ, 1, 1)))
void lstm_step(__global T* restrict h_out, const long hoo,
               __global T* restrict c_out, const long coo,
               __global T* restrict act, const long ao,
               __global T* restrict tcb, const long tco,
               __global const T* gi, const long gio,
               __global const T* hp, const long hpo,
               __global const T* cp, const long cpo,
               __global const T* wt, const long H)
{
    __local T pre[4][SJ];
    const long nj = (H + SJ - 1) / SJ;
    const long grp = get_group_id(0);
    const long b = grp / nj, jb = grp - b * nj;
    const int lid = get_local_id(0), s = lid / SJ, jj = lid - s * SJ;
    const long j = jb * SJ + jj;
    if (j < H) {
        __global const T* hrow = hp + hpo + b * H;
        __global const T* w = wt + s * H + j;
        T a = 0;
        for (long d = 0; d < H; ++d) a = fma(hrow[d], w[d * 4 * H], a);
        pre[s][jj] = gi[gio + b * 4 * H + s * H + j] + a;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    if (s != 0 || j >= H) return;
    const long e = b * H + j, r = b * 4 * H + j;
    T i = SIG(pre[0][jj]);
    T f = SIG(pre[1][jj]);
    T g = tanh(pre[2][jj]);
    T o = SIG(pre[3][jj]);
    T cn = f * cp[cpo + e] + i * g;
    T t = tanh(cn);
    act[ao + r] = i; act[ao + r + H] = f; act[ao + r + 2 * H] = g; act[ao + r + 3 * H] = o;
    c_out[coo + e] = cn;
    tcb[tco + e] = t;
    h_out[hoo + e] = o * t;
}

// One step of the layer's backward: dh_t = dout_t + dgates_{t+1} W_hh (or + dh_n at the last
// step), then the cell's gradient; dc (B, H) carries dc_t in and dc_{t-1} out, element by
// element (has_dc 0: none yet). Work groups as lstm_step's: item (s, jj) sums quarter s of
// the 4H products of unit j. W is W_hh (4H, H), C-contiguous from its first element.
__kernel __attribute__((reqd_work_group_size(4 * SJ, 1, 1)))
void lstm_step_grad(__global T* restrict dg, const long dgo,
                    __global const T* dgn, const long dgno, const int has_next,
                    __global const T* dout, const long douto, const int has_dout,
                    __global const T* dhn, const long dhno, const int has_dhn,
                    __global T* dc, const int has_dc,
                    __global const T* act, const long ao,
                    __global const T* tcb, const long tco,
                    __global const T* cp, const long cpo,
                    __global const T* W, const long H)
{
    __local T part[4][SJ];
    const long nj = (H + SJ - 1) / SJ;
    const long grp = get_group_id(0);
    const long b = grp / nj, jb = grp - b * nj;
    const int lid = get_local_id(0), s = lid / SJ, jj = lid - s * SJ;
    const long j = jb * SJ + jj;
    T p = 0;
    if (has_next && j < H) {
        __global const T* row = dgn + dgno + b * 4 * H;
        for (long k = s * H; k < (s + 1) * H; ++k) p = fma(row[k], W[k * H + j], p);
    }
    part[s][jj] = p;
    barrier(CLK_LOCAL_MEM_FENCE);
    if (s != 0 || j >= H) return;
    const long e = b * H + j, r = b * 4 * H + j;
    T dhv = has_dout ? dout[douto + e] : (T)0;
    if (has_next) {
        dhv += ((part[0][jj] + part[1][jj]) + part[2][jj]) + part[3][jj];
    } else if (has_dhn) {
        dhv += dhn[dhno + e];
    }
    T i = act[ao + r], f = act[ao + r + H], g = act[ao + r + 2 * H], o = act[ao + r + 3 * H];
    T t = tcb[tco + e];
    T dcv = dhv * o * ((T)1 - t * t) + (has_dc ? dc[e] : (T)0);
    dg[dgo + r] = dcv * g * i * ((T)1 - i);
    dg[dgo + r + H] = dcv * cp[cpo + e] * f * ((T)1 - f);
    dg[dgo + r + 2 * H] = dcv * i * ((T)1 - g * g);
    dg[dgo + r + 3 * H] = dhv * t * o * ((T)1 - o);
    dc[e] = dcv * f;
}
