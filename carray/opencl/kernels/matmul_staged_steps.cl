// The k steps of one tile, inserted by the host into both kernels of matmul_staged.cl. In scope:
// As, Bs (the stages), tx, ty, tid, A and B (the tile's first columns at its first step), lda,
// ldb, steps (how many), C and ldc (where the tile goes, rows of ldc); ISSUE is
// matmul_staged.cl's. Text, not a function, and gemm's A, B, C are its restrict parameters:
// with an inlined function, or with plain local pointers in their place, the kernel took 141
// registers instead of 127 on an H100 (one resident work group per compute unit, not two:
// 0.92x the speed).
    float4 acc[8][NCG];
    #pragma unroll
    for (int i = 0; i < 8; ++i)
        #pragma unroll
        for (int j = 0; j < NCG; ++j) acc[i][j] = (float4)(0.0f);

    #pragma unroll
    for (int s = 0; s < STAGES - 1; ++s) {
        if (s < steps) { ISSUE(s, s * BK) }
        COMMIT();                     // one group per slice, empty past the end
    }
    int s = 0;
    for (int kt = 0; kt < steps; ++kt) {
        WAIT($wait);                  // this work item's copies of slice kt have landed
        barrier(CLK_LOCAL_MEM_FENCE); // everyone's have, and everyone is done with slice kt - 1
        {
            // refill the stage slice kt - 1 used with slice kt + STAGES - 1
            const int nk = kt + STAGES - 1;
            const int ns = s == 0 ? STAGES - 1 : s - 1;
            if (nk < steps) { ISSUE(ns, nk * BK) }
            COMMIT();
        }
        __local const float* as = As[s];
        __local const float* bs = Bs[s];
        // 4 k steps at a time: the A values of all 4 first (2 float4 per step: 8 rows), then per
        // column group the 4 B float4s (the order the H100/H200 measurements favoured)
        #pragma unroll
        for (int kk = 0; kk < BK; kk += 4) {
            float4 av[8];
            #pragma unroll
            for (int q = 0; q < 4; ++q) {
                av[q * 2] = *(__local const float4*)&as[(kk + q) * TM + ty * 4];
                av[q * 2 + 1] = *(__local const float4*)&as[(kk + q) * TM + TM / 2 + ty * 4];
            }
            #pragma unroll
            for (int j = 0; j < NCG; ++j) {
                const int col = (j * (TN / 4 / NCG) + tx) * 4;
                float4 bv[4];
                #pragma unroll
                for (int q = 0; q < 4; ++q)
                    bv[q] = *(__local const float4*)&bs[(kk + q) * TN + col];
                #pragma unroll
                for (int q = 0; q < 4; ++q) {
                    const float a[8] = {av[q * 2].x, av[q * 2].y, av[q * 2].z, av[q * 2].w,
                                        av[q * 2 + 1].x, av[q * 2 + 1].y, av[q * 2 + 1].z,
                                        av[q * 2 + 1].w};
                    #pragma unroll
                    for (int i = 0; i < 8; ++i)
                        acc[i][j] = fma((float4)(a[i]), bv[q], acc[i][j]);
                }
            }
        }
        s = s == STAGES - 1 ? 0 : s + 1;
    }
    #pragma unroll
    for (int i = 0; i < 8; ++i) {
        const int r = (i < 4 ? ty * 4 + i : TM / 2 + ty * 4 + i - 4);
        #pragma unroll
        for (int j = 0; j < NCG; ++j)
            *(__global float4*)(C + r * ldc + j * (TN / NCG) + tx * 4) = acc[i][j];
    }
