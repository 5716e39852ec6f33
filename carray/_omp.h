/* OpenMP thread count, or 1 when the extension was built without OpenMP. */
#ifndef CARRAY_OMP_H
#define CARRAY_OMP_H
#ifdef _OPENMP
#include <omp.h>
static int carray_max_threads(void) { return omp_get_max_threads(); }
static void carray_set_threads(int n) { omp_set_num_threads(n); }
#else
static int carray_max_threads(void) { return 1; }
static void carray_set_threads(int n) { (void)n; }
#endif
#endif
