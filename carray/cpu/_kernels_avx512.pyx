# The elementwise kernels compiled for the avx512 SIMD level (setup.py sets its compiler flags).
include "_kernels.pxi"
