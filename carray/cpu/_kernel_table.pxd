# The CPU loops of the op table's elementwise ops and reductions: each kernel build
# (_kernels_generic/_avx2/_avx512, one source compiled for three SIMD levels) fills a KernelTable
# with one loop per (op, dtype); carray.ops._ufunc picks the build the CPU supports. The op enums
# are the op table's (carray/ops/_optable.pxd); a missing loop stays NULL (the coverage test
# checks there is none).

from carray.core._dtype cimport NTYPES
from carray.core._strided cimport loop1d_t
from carray.ops._optable cimport NBINARY, NCOMPARE, NPREDICATE, NREDUCE, NUNARY

ctypedef struct KernelTable:
    loop1d_t unary[<int>NUNARY][<int>NTYPES]
    loop1d_t binary[<int>NBINARY][<int>NTYPES]
    loop1d_t compare[<int>NCOMPARE][<int>NTYPES]
    loop1d_t predicate[<int>NPREDICATE][<int>NTYPES]
    loop1d_t reduce[<int>NREDUCE][<int>NTYPES]
    loop1d_t where[<int>NTYPES]            # data: out T, cond bool, x T, y T
