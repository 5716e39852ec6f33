// Winograd F(2x2, 3x3) convolution (Lavin and Gray, 2015) in three steps around one batched GEMM:
// each 2 x 2 block of output pixels ("tile") of a 3x3, stride-1 convolution is computed from the
// 4 x 4 input patch under it with 16 products per channel pair instead of 36:
//   Y = A^T [ (G g G^T) (.) (B^T d B) ] A      ((.): elementwise over the 4 x 4 entries)
// for the filter g (3 x 3) and the patch d (4 x 4), with
//   B^T = [1 0 -1 0; 0 1 1 0; 0 -1 1 0; 0 1 0 -1],  G = [1 0 0; .5 .5 .5; .5 -.5 .5; 0 0 1],
//   A^T = [1 1 1 0; 0 1 -1 -1].
// Summing over the input channels turns the 16 elementwise products into 16 matrix products:
// M[k] = U[k] @ V[k] (k = 4 xi + nu), U[k] (R x S) from the filters, V[k] (S x P) from the
// patches of the P tiles (P = images x tile rows x tile columns); the host runs them as one
// batched matmul. Index arithmetic is 32-bit (the host checks the sizes).

// U[k][r][s] = (G g G^T)[k] for the filter g = w[r][s] (w: R x S x 3 x 3), or with $flip the
// filter w[s][r] turned by 180 degrees (w: S x R x 3 x 3): the input gradient's filters.
__kernel void wino_weight(__global float* restrict U, __global const float* restrict w,
                          const int R, const int S, const int woff)
{
    const int e = get_global_id(0);
    if (e >= R * S)
        return;
    const int r = e / S, s = e % S;
    float g[3][3];
#if $flip
    __global const float* src = w + woff + (s * R + r) * 9;
    for (int u = 0; u < 3; ++u)
        for (int v = 0; v < 3; ++v)
            g[u][v] = src[(2 - u) * 3 + (2 - v)];
#else
    __global const float* src = w + woff + (r * S + s) * 9;
    for (int u = 0; u < 3; ++u)
        for (int v = 0; v < 3; ++v)
            g[u][v] = src[u * 3 + v];
#endif
    float t[4][3];                     // G g
    for (int v = 0; v < 3; ++v) {
        t[0][v] = g[0][v];
        t[1][v] = 0.5f * (g[0][v] + g[1][v] + g[2][v]);
        t[2][v] = 0.5f * (g[0][v] - g[1][v] + g[2][v]);
        t[3][v] = g[2][v];
    }
    const int plane = R * S;
    for (int a = 0; a < 4; ++a) {      // (G g) G^T
        __global float* out = U + (a * 4) * plane + e;
        out[0] = t[a][0];
        out[plane] = 0.5f * (t[a][0] + t[a][1] + t[a][2]);
        out[2 * plane] = 0.5f * (t[a][0] - t[a][1] + t[a][2]);
        out[3 * plane] = t[a][2];
    }
}

// V[k][c][p] = (B^T d B)[k] for the patch d of channel c under tile p: tile (n, i, j) reads
// x[n][c][2i - ph + u][2j - pw + v], u, v < 4, zero outside the image (x: N x C x H x W).
// Work item (p, c).
__kernel void wino_input(__global float* restrict V, __global const float* restrict x,
                         const int C, const int H, const int W, const int TH, const int TW,
                         const int ph, const int pw, const int P, const int xoff)
{
    const int p = get_global_id(0), c = get_global_id(1);
    if (p >= P)
        return;
    const int n = p / (TH * TW), t = p % (TH * TW);
    const int h0 = 2 * (t / TW) - ph, w0 = 2 * (t % TW) - pw;
    __global const float* src = x + xoff + (n * C + c) * H * W;
    float d[4][4];
    for (int u = 0; u < 4; ++u) {
        const int h = h0 + u;
        for (int v = 0; v < 4; ++v) {
            const int w = w0 + v;
            d[u][v] = (h >= 0 && h < H && w >= 0 && w < W) ? src[h * W + w] : 0.0f;
        }
    }
    float b[4][4];                     // B^T d
    for (int v = 0; v < 4; ++v) {
        b[0][v] = d[0][v] - d[2][v];
        b[1][v] = d[1][v] + d[2][v];
        b[2][v] = d[2][v] - d[1][v];
        b[3][v] = d[1][v] - d[3][v];
    }
    const int plane = C * P;
    __global float* out = V + c * P + p;
    for (int a = 0; a < 4; ++a) {      // (B^T d) B
        out[(a * 4) * plane] = b[a][0] - b[a][2];
        out[(a * 4 + 1) * plane] = b[a][1] + b[a][2];
        out[(a * 4 + 2) * plane] = b[a][2] - b[a][1];
        out[(a * 4 + 3) * plane] = b[a][1] - b[a][3];
    }
}

// y[n][o][2i + a][2j + b] = (A^T m A)[a][b] (+ bias[o] with $bias) for the 16 values m[k] =
// M[k][o][p] of tile p = (n, i, j); pixels past the output's edge (odd Ho or Wo) are not
// written (y: N x O x Ho x Wo). Work item (p, o).
__kernel void wino_output(__global float* restrict y, __global const float* restrict M,
                          __global const float* restrict bias, const int O, const int Ho,
                          const int Wo, const int TH, const int TW, const int P, const int boff)
{
    const int p = get_global_id(0), o = get_global_id(1);
    if (p >= P)
        return;
    const int plane = O * P;
    __global const float* src = M + o * P + p;
    float m[4][4];
    for (int k = 0; k < 16; ++k)
        m[k / 4][k % 4] = src[k * plane];
    float t[2][4];                     // A^T m
    for (int v = 0; v < 4; ++v) {
        t[0][v] = m[0][v] + m[1][v] + m[2][v];
        t[1][v] = m[1][v] - m[2][v] - m[3][v];
    }
#if $bias
    const float add = bias[boff + o];
#else
    const float add = 0.0f;
#endif
    const int n = p / (TH * TW), s = p % (TH * TW);
    const int h = 2 * (s / TW), w = 2 * (s % TW);
    __global float* dst = y + ((n * O + o) * Ho + h) * Wo + w;
    for (int a = 0; a < 2 && h + a < Ho; ++a) {    // (A^T m) A
        dst[a * Wo] = t[a][0] + t[a][1] + t[a][2] + add;
        if (w + 1 < Wo)
            dst[a * Wo + 1] = t[a][1] - t[a][2] - t[a][3] + add;
    }
}
