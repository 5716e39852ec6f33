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
