/* Which SIMD level this x86-64 CPU runs: 2 = AVX-512 (F, VL, BW, DQ), 1 = AVX2 + FMA, 0 = other. */
#ifndef CARRAY_CPU_H
#define CARRAY_CPU_H
static int carray_simd_level(void) {
#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl") &&
      __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512dq"))
    return 2;
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
    return 1;
#endif
  return 0;
}
#endif
