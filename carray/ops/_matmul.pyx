# cython: boundscheck=False, wraparound=False, cdivision=True
"""carray.matmul: NumPy's matmul (1-d operands, broadcast batch dimensions, out=), checked and
laid out here, computed by carray.cpu._gemm (float32/float64 GEMM, exact integer loops) or by the
OpenCL backend.
"""

from libc.stdlib cimport free, malloc

from carray.core._array import DeviceMismatchError
from carray.core._array cimport (Array, as_array, check_same_device, copy_into, gpu_backend,
                                 new_array, new_array_on, on_gpu)
from carray.core._dtype cimport (BOOL, FLOAT32, FLOAT64, INT32, INT64, dtype_of, itemsize_of,
                                 kind_rank, promote_nums)
from carray.core._strided cimport MAXDIMS
from carray.core._dtype cimport is_complex_num
from carray.core._dtype cimport is_half_num
from carray.ops._half import narrow, widen
from carray.cpu._gemm cimport float_matmul, int_matmul

# ---------------------------------------------------------------------------------------------
# carray.matmul
# ---------------------------------------------------------------------------------------------

cdef str _SIG = "(n?,k),(k,m?)->(n?,m?)"


cdef inline int _kind(int num) noexcept:
    return kind_rank(num)


cdef bint _overlap(Array x, Array y) noexcept:
    """True when the byte ranges x's and y's elements span intersect (the same memory may sit
    behind different Storage objects: two asarray() views of one NumPy array, say)."""
    cdef char* lo[2]
    cdef char* hi[2]
    cdef int i, d
    cdef Array z
    for i in range(2):
        z = x if i == 0 else y
        lo[i] = hi[i] = z.data
        for d in range(z.ndim):
            if z.shape_[d] == 0:
                return False
            if z.strides_[d] < 0:
                lo[i] += (z.shape_[d] - 1) * z.strides_[d] * z.itemsize
            else:
                hi[i] += (z.shape_[d] - 1) * z.strides_[d] * z.itemsize
        hi[i] += z.itemsize
    return lo[0] < hi[1] and lo[1] < hi[0]


cdef bint _merge_rows(int nd, const Py_ssize_t* shape, const Py_ssize_t* strides,
                      Py_ssize_t* stride) noexcept:
    """True when dims 0..nd-1 (the batch dims and the row dim) walk one arithmetic sequence of
    rows; `stride` gets its step. Lets a (batch..., M, K) @ (K, N) product run as one GEMM."""
    cdef Py_ssize_t step = strides[nd - 1], expect
    cdef int d
    expect = step * shape[nd - 1]
    for d in range(nd - 2, -1, -1):
        if shape[d] == 1:
            continue
        if strides[d] != expect:
            return False
        expect *= shape[d]
    stride[0] = step
    return True


def matmul(x1, x2, /, out=None):
    """Matrix product of two arrays, as numpy.matmul (the `@` operator).

    1-d operands are vectors (a leading / trailing 1 is inserted, then removed from the result);
    n-d operands are stacks of matrices in the last two dims, and the batch dims broadcast.
    The result dtype is NumPy 2's promotion of the operands' dtypes; bool @ bool is the logical
    or of ands. `out` (optional) must have the result's shape and a dtype the result casts to
    under NumPy's 'same_kind' rule.

    Raises ValueError for 0-d operands, mismatched core dims (k) or batch dims that do not
    broadcast, naming the shapes; ValueError/TypeError for an unsuitable `out`.
    """
    cdef Array a = as_array(x1, -1)
    cdef Array b = as_array(x2, -1)
    cdef Array c, o = None
    if is_half_num(promote_nums(a.dtype_num, b.dtype_num)):
        # in float32 (the float32 GEMM accumulates), rounded back once
        r = narrow(matmul(widen(a), widen(b)), dtype_of(promote_nums(a.dtype_num, b.dtype_num)))
        if out is None:
            return r
        if not isinstance(out, Array):
            raise TypeError(f"matmul: out must be a carray.Array, got {type(out).__name__}")
        check_same_device("matmul", <Array>r, <Array>out)
        if (<Array>out).shape != (<Array>r).shape:
            raise ValueError(f"matmul: Output operand 0 has shape {(<Array>out).shape}, "
                             f"expected {(<Array>r).shape}")
        copy_into(<Array>out, <Array>r)
        return out
    cdef int res, i, d, k, nd, ond, na, nb_, ncore
    cdef bint a1, b1
    cdef Py_ssize_t M, N, K, Kb, nbatch, t
    cdef Py_ssize_t bshape[MAXDIMS]
    cdef Py_ssize_t cshape[MAXDIMS]
    cdef Py_ssize_t rshape[MAXDIMS]
    cdef Py_ssize_t ast[MAXDIMS]
    cdef Py_ssize_t bst[MAXDIMS]
    cdef Py_ssize_t cst[MAXDIMS]
    cdef Py_ssize_t idx[MAXDIMS]
    cdef Py_ssize_t rsa, csa, rsb, csb, rsc, csc, s, sa = 0, sc = 0
    cdef Py_ssize_t* offs
    cdef Py_ssize_t off3[3]

    for i, x in enumerate((a, b)):
        if (<Array>x).ndim == 0:
            raise ValueError(f"matmul: Input operand {i} does not have enough dimensions (has 0, "
                             f"gufunc core with signature {_SIG} requires 1)")
    if is_complex_num(a.dtype_num) or is_complex_num(b.dtype_num):
        import carray._complex as cx
        r = cx.matmul(a, b)
        if out is None:
            return r
        copy_into(<Array?>out, r)
        return out
    cdef bint gpu = on_gpu(a) or on_gpu(b)
    if gpu or out is not None and isinstance(out, Array) and on_gpu(<Array>out):
        check_same_device("matmul", a, b)
        if not (on_gpu(a) and on_gpu(b)):
            raise DeviceMismatchError(f"matmul: expected both operands on one device, got "
                                      f"{a.device!r} and {b.device!r}; move one with .to()")
        if out is not None:
            check_same_device("matmul", a, <Array>out)
    a1 = a.ndim == 1
    b1 = b.ndim == 1
    M = 1 if a1 else a.shape_[a.ndim - 2]
    K = a.shape_[a.ndim - 1]
    Kb = b.shape_[0] if b1 else b.shape_[b.ndim - 2]
    N = 1 if b1 else b.shape_[b.ndim - 1]
    if Kb != K:
        raise ValueError(f"matmul: Input operand 1 has a mismatch in its core dimension 0, with "
                         f"gufunc signature {_SIG} (size {Kb} is different from {K}): shapes "
                         f"{a.shape} and {b.shape}")

    # batch shape: a's and b's batch dims (and out's) broadcast together
    na = 0 if a1 else a.ndim - 2
    nb_ = 0 if b1 else b.ndim - 2
    ncore = (0 if a1 else 1) + (0 if b1 else 1)
    nd = na if na > nb_ else nb_
    ond = 0
    if out is not None:
        if not isinstance(out, Array):
            raise TypeError(f"matmul: out must be a carray.Array, got {type(out).__name__}")
        o = <Array>out
        if o.ndim < ncore:
            raise ValueError(f"matmul: Output operand 0 does not have enough dimensions (has "
                             f"{o.ndim}, gufunc core with signature {_SIG} requires {ncore}): "
                             f"out shape {o.shape} for operands of shapes {a.shape} and "
                             f"{b.shape}")
        ond = o.ndim - ncore
        if ond > nd:
            nd = ond
    for d in range(nd):
        bshape[d] = 1
    for x, n in ((a, na), (b, nb_)):
        for d in range(n):
            k = nd - n + d
            s = (<Array>x).shape_[d]
            if bshape[k] == 1:
                bshape[k] = s
            elif s != 1 and s != bshape[k]:
                raise ValueError(
                    f"matmul: operands could not be broadcast together: batch dimensions "
                    f"{a.shape[:na]} of shape {a.shape} and {b.shape[:nb_]} of shape {b.shape} "
                    f"do not broadcast")
    if o is not None:
        for d in range(ond):        # out's batch dims may add to the broadcast, never shrink it
            k = nd - ond + d
            if bshape[k] == 1:
                bshape[k] = o.shape_[d]
    nbatch = 1
    for d in range(nd):
        cshape[d] = bshape[d]
        nbatch *= bshape[d]
    k = nd
    if not a1:
        cshape[k] = M
        k += 1
    if not b1:
        cshape[k] = N
        k += 1

    res = promote_nums(a.dtype_num, b.dtype_num)
    if o is not None:
        if o.ndim != k or any(o.shape_[d] != cshape[d] for d in range(k)):
            want = tuple(cshape[d] for d in range(k))
            raise ValueError(f"matmul: out has shape {o.shape}, expected {want} for operands of "
                             f"shapes {a.shape} and {b.shape}")
        if _kind(res) > _kind(o.dtype_num):
            raise TypeError(f"Cannot cast ufunc 'matmul' output from dtype('"
                            f"{dtype_of(res).name}') to dtype('{dtype_of(o.dtype_num).name}') "
                            f"with casting rule 'same_kind'")
        if not o.writeable:
            raise ValueError("matmul: output array is read-only")

    # compute into c: out itself when it has the result dtype and does not share memory with
    # an operand, else a new array (copied to out at the end)
    if o is not None and o.dtype_num == res and not _overlap(o, a) and not _overlap(o, b) \
            and not (gpu and (o.storage is a.storage or o.storage is b.storage)):
        c = o
    else:
        c = new_array_on(k, cshape, res, a)
    if a.dtype_num != res:
        a = as_array(a, res)
    if b.dtype_num != res:
        b = as_array(b, res)
    if gpu:
        gpu_backend().matmul(a, b, c, a1, b1, tuple(bshape[d] for d in range(nd)))
        if o is not None and c is not o:
            copy_into(o, c)
        return o if o is not None else c

    # core steps (in elements) of each operand, and batch steps aligned with bshape
    rsa = 0 if a1 else a.strides_[a.ndim - 2]
    csa = a.strides_[a.ndim - 1]
    rsb = b.strides_[0] if b1 else b.strides_[b.ndim - 2]
    csb = 0 if b1 else b.strides_[b.ndim - 1]
    if a1 and b1:
        rsc = csc = 0
    elif a1:
        rsc, csc = 0, c.strides_[c.ndim - 1]
    elif b1:
        rsc, csc = c.strides_[c.ndim - 1], 0
    else:
        rsc, csc = c.strides_[c.ndim - 2], c.strides_[c.ndim - 1]
    for d in range(nd):
        ast[d] = bst[d] = 0
        cst[d] = c.strides_[d]
    for d in range(na):
        if a.shape_[d] != 1:
            ast[nd - na + d] = a.strides_[d]
    for d in range(nb_):
        if b.shape_[d] != 1:
            bst[nd - nb_ + d] = b.strides_[d]

    # (batch..., M, K) @ (K, N): one tall GEMM when a's and c's rows merge across the batch
    if nbatch > 1 and not a1 and M > 0 and all(bst[d] == 0 for d in range(nd)):
        for d in range(nd):
            rshape[d] = bshape[d]
            idx[d] = ast[d]
        rshape[nd] = M
        idx[nd] = rsa
        if _merge_rows(nd + 1, rshape, idx, &sa):
            for d in range(nd):
                idx[d] = cst[d]
            idx[nd] = rsc
            if _merge_rows(nd + 1, rshape, idx, &sc):
                M *= nbatch
                nbatch = 1
                rsa, rsc = sa, sc
                nd = 0

    offs = <Py_ssize_t*>malloc(3 * (nbatch if nbatch > 0 else 1) * sizeof(Py_ssize_t))
    if offs == NULL:
        raise MemoryError(f"matmul: cannot allocate the batch table for {nbatch} matrices")
    try:
        # walk the batch dims as an odometer, recording each matrix's element offsets
        for d in range(nd):
            idx[d] = 0
        off3[0] = off3[1] = off3[2] = 0
        for t in range(nbatch):
            offs[3 * t] = off3[0]
            offs[3 * t + 1] = off3[1]
            offs[3 * t + 2] = off3[2]
            d = nd - 1
            while d >= 0:
                idx[d] += 1
                off3[0] += ast[d]
                off3[1] += bst[d]
                off3[2] += cst[d]
                if idx[d] < bshape[d]:
                    break
                off3[0] -= ast[d] * idx[d]
                off3[1] -= bst[d] * idx[d]
                off3[2] -= cst[d] * idx[d]
                idx[d] = 0
                d -= 1
        if res == FLOAT32 or res == FLOAT64:
            float_matmul(res, nbatch, offs, M, N, K, a.data, rsa, csa, b.data, rsb, csb,
                          c.data, rsc, csc)
        else:
            with nogil:
                int_matmul(res, nbatch, offs, M, N, K, a.data, rsa, csa, b.data, rsb, csb,
                            c.data, rsc, csc)
    finally:
        free(offs)
    if o is not None and c is not o:
        copy_into(o, c)
        return o
    return c


