# GEMM for other Cython modules (conv2d via im2col, linear layers): cimport these.
#
#   C := alpha * op(A) @ op(B) + beta * C      (row-major; float32 or float64; beta == 0: C is
#                                               only written, never read, as in BLAS)
#
# op(A) is M x K, op(B) is K x N, C is M x N. Run with the GIL released; OpenMP threads inside
# (one thread when called from inside another OpenMP parallel region). Raise ValueError for a
# dtype other than FLOAT32/FLOAT64 and MemoryError when the packing buffers cannot be allocated.

# BLAS-style: lda/ldb/ldc are row steps in elements; trans_a means A is stored K x M (A^T is used).
cdef int gemm(int dtype_num, bint trans_a, bint trans_b, Py_ssize_t M, Py_ssize_t N, Py_ssize_t K,
              double alpha, const char* A, Py_ssize_t lda, const char* B, Py_ssize_t ldb,
              double beta, char* C, Py_ssize_t ldc) except -1 nogil

# Any layout: element op(A)[i, k] is at A + (i * rsa + k * csa) elements, and so on for B and C
# (negative and zero steps allowed for A and B; C's elements must not overlap each other).
cdef int gemm_strided(int dtype_num, Py_ssize_t M, Py_ssize_t N, Py_ssize_t K, double alpha,
                      const char* A, Py_ssize_t rsa, Py_ssize_t csa,
                      const char* B, Py_ssize_t rsb, Py_ssize_t csb,
                      double beta, char* C, Py_ssize_t rsc, Py_ssize_t csc) except -1 nogil

# Batched products for carray.ops._matmul: C[t] = A[t] @ B[t] for t < nbatch, where
# offs[3t..3t+2] are the element offsets of A[t], B[t] and C[t]; the steps as in gemm_strided.
cdef int float_matmul(int dtype_num, Py_ssize_t nbatch, const Py_ssize_t* offs,
                      Py_ssize_t M, Py_ssize_t N, Py_ssize_t K,
                      const char* A, Py_ssize_t rsa, Py_ssize_t csa,
                      const char* B, Py_ssize_t rsb, Py_ssize_t csb,
                      char* C, Py_ssize_t rsc, Py_ssize_t csc) except -1
# integer and bool (exact, wrapping as NumPy; bool: or of ands)
cdef void int_matmul(int dtype_num, Py_ssize_t nbatch, const Py_ssize_t* offs,
                     Py_ssize_t M, Py_ssize_t N, Py_ssize_t K,
                     const char* A, Py_ssize_t rsa, Py_ssize_t csa,
                     const char* B, Py_ssize_t rsb, Py_ssize_t csb,
                     char* C, Py_ssize_t rsc, Py_ssize_t csc) noexcept nogil
