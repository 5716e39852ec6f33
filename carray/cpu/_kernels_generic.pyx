# The elementwise kernels compiled for the generic SIMD level (setup.py sets its compiler flags).
include "_kernels.pxi"
