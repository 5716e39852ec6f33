"""carray.matmul against numpy.matmul, and the cdef GEMM entry point through its test hook.

Floats are checked against the product computed in float64 by NumPy, with an error bound scaled
by |a| @ |b| (1e-4 for float32, 1e-12 for float64); integers and bools must match exactly. Every
micro-kernel variant the CPU can run (AVX-512, AVX2, baseline) is exercised.
"""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import carray as ca
from carray.cpu import _gemm

from conftest import (
    ALL_DTYPES,
    DTYPES,
    SMALL_INTS,
    assert_raises_like,
    gpu_examples,
    random_values,
    seeds,
)

SETTINGS = settings(max_examples=150, deadline=None)
KERNELS = _gemm._gemm_kernels()
SIG = "(n?,k),(k,m?)->(n?,m?)"


@pytest.fixture(params=KERNELS)
def kernel(request):
    """Run the test with each micro-kernel variant this CPU supports."""
    prev = _gemm._set_gemm_kernel(request.param)
    yield request.param
    _gemm._set_gemm_kernel(prev)


def check(r, a, b, out_dtype=None):
    """r (carray) equals np.matmul(a, b): dtype, shape, and values (exact for ints/bools; within
    the float tolerance scaled by |a| @ |b| for floats)."""
    expect = np.matmul(a, b)
    dtype = np.dtype(out_dtype) if out_dtype is not None else expect.dtype
    assert isinstance(r, ca.Array)
    assert r.shape == expect.shape, f"shape {r.shape} != NumPy's {expect.shape}"
    assert r.dtype.name == dtype.name, f"dtype {r.dtype.name} != NumPy's {dtype.name}"
    got = np.asarray(r.to("cpu"))
    if dtype.kind in "biu":
        np.testing.assert_array_equal(got, expect.astype(dtype))
        return
    a64, b64 = np.asarray(a, np.float64), np.asarray(b, np.float64)
    ref = np.matmul(a64, b64)
    scale = np.matmul(np.abs(a64), np.abs(b64))
    rtol = 1e-4 if dtype == np.float32 else 1e-12
    finite = np.isfinite(ref)
    err = np.abs(got.astype(np.float64) - ref)
    bad = finite & ~(err <= rtol * scale + 1e-30)
    assert not bad.any(), (f"max error {err[finite].max()} at {np.argwhere(bad)[:3].tolist()} "
                           f"(scale {scale[bad][:3]}); shapes {np.shape(a)} @ {np.shape(b)}")
    # nan / inf where the float64 product has them
    np.testing.assert_array_equal(np.isnan(got), np.isnan(ref))


def pair(dtype, shape, seed=0, device="cpu"):
    """(carray array on `device`, NumPy array) with equal contents; floats uniform in [-1, 1)."""
    rng = np.random.default_rng(seed)
    if np.dtype(dtype).kind == "f":
        n = (rng.random(shape) * 2 - 1).astype(dtype)
    else:
        n = random_values(dtype, shape, seed)
    return ca.array(n).to(device), n


# ---------------------------------------------------------------------------------------------
# operands with any layout: contiguous, transposed, strided with negative steps, broadcast
# ---------------------------------------------------------------------------------------------

LAYOUTS = ("c", "t", "step", "neg", "bcast", "t+neg")


def operand(dtype, shape, layout, seed=0, device="cpu"):
    """A (carray view on `device`, NumPy view) pair of `shape` whose memory layout is `layout`: "c"
    contiguous, "t" the last two dims transposed, "step" every dim with step 2, "neg" every dim
    reversed, "t+neg" transposed with steps -1 and -2, "bcast" the first and size-1 dims with
    stride 0."""
    shape = tuple(shape)
    nd = len(shape)
    if layout == "t" and nd >= 2:
        a, n = pair(dtype, shape[:-2] + (shape[-1], shape[-2]), seed, device)
        return a.swapaxes(-1, -2), n.swapaxes(-1, -2)
    if layout == "t+neg" and nd >= 2:
        a, n = pair(dtype, shape[:-2] + (2 * shape[-1], shape[-2]), seed, device)
        key = (Ellipsis, slice(None, None, -1), slice(None, None, -2))
        return a.swapaxes(-1, -2)[key], n.swapaxes(-1, -2)[key]
    if layout == "step" and nd >= 1:
        a, n = pair(dtype, tuple(2 * s for s in shape), seed, device)
        key = (slice(None, None, 2),) * nd
        return a[key], n[key]
    if layout == "neg" and nd >= 1:
        a, n = pair(dtype, shape, seed, device)
        key = (slice(None, None, -1),) * nd
        return a[key], n[key]
    if layout == "bcast" and nd >= 1:
        small = tuple(1 if i == 0 or s == 1 else s for i, s in enumerate(shape))
        a, n = pair(dtype, small, seed, device)
        return ca.broadcast_to(a, shape), np.broadcast_to(n, shape)
    return pair(dtype, shape, seed, device)


@st.composite
def matmul_shapes(draw, max_side=9, max_batch=3):
    """Shapes (sa, sb) that numpy.matmul accepts: 1-d or n-d, broadcast batch dims."""
    m, k, n = (draw(st.integers(0, max_side)) for _ in range(3))
    nbatch = draw(st.integers(0, max_batch))
    batch = [draw(st.integers(0, 3)) for _ in range(nbatch)]

    def side(core):
        nb = draw(st.integers(0, nbatch))
        b = [1 if draw(st.integers(0, 3)) == 0 else s for s in batch[nbatch - nb:]]
        return tuple(b) + core

    a_vec = draw(st.integers(0, 4)) == 0
    b_vec = draw(st.integers(0, 4)) == 0
    sa = (k,) if a_vec else side((m, k))
    sb = (k,) if b_vec else side((k, n))
    return sa, sb


@gpu_examples(20)
@SETTINGS
@given(shapes=matmul_shapes(), da=st.sampled_from(ALL_DTYPES), db=st.sampled_from(ALL_DTYPES),
       la=st.sampled_from(LAYOUTS), lb=st.sampled_from(LAYOUTS), seed=seeds)
def test_random_shapes_dtypes_layouts(device, shapes, da, db, la, lb, seed):
    sa, sb = shapes
    a, an = operand(da, sa, la, seed, device)
    b, bn = operand(db, sb, lb, seed + 1, device)
    r = ca.matmul(a, b)
    assert r.device == device
    check(r, an, bn)


@settings(max_examples=40, deadline=None)
@given(shapes=matmul_shapes(max_side=40, max_batch=2),
       dtype=st.sampled_from(["float32", "float64"]), la=st.sampled_from(LAYOUTS),
       lb=st.sampled_from(LAYOUTS), seed=seeds)
def test_random_float_all_kernels(shapes, dtype, la, lb, seed):
    sa, sb = shapes
    a, an = operand(dtype, sa, la, seed)
    b, bn = operand(dtype, sb, lb, seed + 1)
    for name in KERNELS:
        prev = _gemm._set_gemm_kernel(name)
        try:
            check(ca.matmul(a, b), an, bn)
        finally:
            _gemm._set_gemm_kernel(prev)


# ---------------------------------------------------------------------------------------------
# sizes around the register tile and cache block edges
# ---------------------------------------------------------------------------------------------

SIZES = (1, 7, 17, 65, 129)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("m", SIZES)
@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("k", (1, 17, 129))
def test_sizes_not_multiples_of_blocks(kernel, dtype, m, n, k):
    a, an = pair(dtype, (m, k), seed=m * 1000 + k)
    b, bn = pair(dtype, (k, n), seed=n * 1000 + k + 1)
    check(ca.matmul(a, b), an, bn)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("m, k, n", [
    (13, 1000, 31),      # K crosses the K block (kc = 480 / 512 / 256...)
    (37, 70, 1100),      # N crosses the per-thread column block
    (6200, 3, 33),       # M crosses the A panel (mc = 6144 / 4002 / 3072)
    (300, 300, 300),
    (5, 2000, 5),
    (2000, 100, 32),     # one column of tiles: threads split the rows instead
    (3000, 50, 7),       # few columns: computed as C^T = B^T @ A^T
])
def test_block_edges(kernel, dtype, m, k, n):
    a, an = pair(dtype, (m, k), seed=1)
    b, bn = pair(dtype, (k, n), seed=2)
    check(ca.matmul(a, b), an, bn)


@pytest.mark.parametrize("ta", [False, True])
@pytest.mark.parametrize("tb", [False, True])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_transposed_large(kernel, ta, tb, dtype):
    m, k, n = 150, 530, 97
    a, an = operand(dtype, (m, k), "t" if ta else "c", 3)
    b, bn = operand(dtype, (k, n), "t" if tb else "c", 4)
    check(ca.matmul(a, b), an, bn)


@pytest.mark.parametrize("la", LAYOUTS)
@pytest.mark.parametrize("lb", LAYOUTS)
def test_layouts_medium(la, lb, device):
    a, an = operand("float32", (3, 70, 45), la, 5, device)
    b, bn = operand("float32", (3, 45, 66), lb, 6, device)
    check(ca.matmul(a, b), an, bn)


@pytest.mark.parametrize("ta", [False, True])
@pytest.mark.parametrize("tb", [False, True])
@pytest.mark.parametrize("m, n, k", [(64, 64, 8), (128, 64, 40), (64, 128, 2048)])
def test_tile_multiples_with_transposed_views(ta, tb, m, n, k, device):
    """Sizes that the device's fast GEMM tiles divide, with either operand a transposed view (a
    linear layer's x @ W.T and its g.T @ x), a view at an offset, and K long enough to split."""
    rng = np.random.default_rng(m + n + k)
    a = rng.standard_normal((k + 4, m) if ta else (m, k + 4)).astype(np.float32)
    b = rng.standard_normal((n, k) if tb else (k, n)).astype(np.float32)
    A = ca.asarray(a).to(device)
    A = A[4:].T if ta else A[:, 4:]             # an offset of 4 (or 4 rows) into the buffer
    an = a[4:].T if ta else a[:, 4:]
    B = ca.asarray(b).to(device)
    B, bn = (B.T, b.T) if tb else (B, b)
    check(ca.matmul(A, B), an, bn)


@pytest.mark.parametrize("pad", [0, 3, 4])
@pytest.mark.parametrize("ta", [False, True])
@pytest.mark.parametrize("tb", [False, True])
@pytest.mark.parametrize("m, n, k", [(64, 64, 8), (128, 64, 40), (37, 20, 13)])
def test_slices_of_wider_matrices(pad, ta, tb, m, n, k, device):
    """Operands that are column slices of wider matrices, or transposes of such slices
    (x[:, :k], x[:, :k].T: rows further apart than their length); on the device they are read
    in place (row steps that are not whole float4s take the general kernel)."""
    rng = np.random.default_rng(m + n + k + pad)
    a = rng.standard_normal((k, m + pad) if ta else (m, k + pad)).astype(np.float32)
    b = rng.standard_normal((n, k + pad) if tb else (k, n + pad)).astype(np.float32)
    A = ca.asarray(a).to(device)
    A, an = (A[:, :m].T, a[:, :m].T) if ta else (A[:, :k], a[:, :k])
    B = ca.asarray(b).to(device)
    B, bn = (B[:, :k].T, b[:, :k].T) if tb else (B[:, :n], b[:, :n])
    check(ca.matmul(A, B), an, bn)
    if device == "gpu":
        from carray.opencl import _matmul
        for x, rows, cols in ((A, m, k), (B, k, n)):
            assert _matmul._plain(x, rows, cols)[0] is x._cl()[0]       # no copy


@pytest.mark.parametrize("form", ["row@mat", "mat@col", "vec@mat", "mat@vec", "vec@vec",
                                  "row@col"])
@pytest.mark.parametrize("k", [1, 100, 1031])
@pytest.mark.parametrize("la", ["c", "t", "step", "bcast"])
@pytest.mark.parametrize("lb", ["c", "t", "neg", "bcast"])
def test_matrix_vector(form, k, la, lb):
    """M == 1 or N == 1 run as matrix-vector products (no packing) for every layout."""
    n = 600
    sa, sb = {"row@mat": ((1, k), (k, n)), "mat@col": ((n, k), (k, 1)),
              "vec@mat": ((k,), (k, n)), "mat@vec": ((n, k), (k,)),
              "vec@vec": ((k,), (k,)), "row@col": ((1, k), (k, 1))}[form]
    for dtype in ("float32", "float64"):
        a, an = operand(dtype, sa, la, k)
        b, bn = operand(dtype, sb, lb, k + 1)
        for name in KERNELS:
            prev = _gemm._set_gemm_kernel(name)
            try:
                check(ca.matmul(a, b), an, bn)
            finally:
                _gemm._set_gemm_kernel(prev)


def test_threads_do_not_change_results():
    """Blocking along K is the same for any thread count, so results are bit-identical."""
    a, _ = pair("float32", (333, 1200), 7)
    b, _ = pair("float32", (1200, 555), 8)
    prev = ca.get_num_threads()
    try:
        ca.set_num_threads(1)
        r1 = np.asarray(ca.matmul(a, b)).copy()
        ca.set_num_threads(max(2, prev))
        r2 = np.asarray(ca.matmul(a, b)).copy()
    finally:
        ca.set_num_threads(prev)
    assert r1.tobytes() == r2.tobytes()


# ---------------------------------------------------------------------------------------------
# batches: broadcasting, the merged (batch*M) path, the parallel-over-batch path
# ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("sa, sb", [
    ((4, 5, 7), (7, 3)),             # b broadcast: merges into one (20, 7) @ (7, 3) GEMM
    ((2, 3, 5, 7), (7, 3)),
    ((7,), (4, 7, 3)),               # vector @ stack
    ((4, 5, 7), (7,)),               # stack @ vector
    ((2, 1, 5, 7), (3, 7, 2)),       # batch broadcast both ways
    ((1, 5, 7), (6, 7, 2)),
    ((2000, 8, 8), (2000, 8, 8)),    # many small matrices: parallel over the batch
    ((64, 33, 17), (64, 17, 65)),
    ((0, 5, 7), (7, 3)),             # empty batch
    ((3, 0, 4), (3, 4, 5)),
])
@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "int64", "bool"])
def test_batches(sa, sb, dtype, device):
    a, an = pair(dtype, sa, 11, device)
    b, bn = pair(dtype, sb, 12, device)
    check(ca.matmul(a, b), an, bn)


def test_batch_of_views(device):
    """Batch dims with arbitrary strides (sliced, transposed, reversed) do not merge."""
    a, an = operand("float64", (6, 5, 9, 7), "neg", 1, device)
    b, bn = operand("float64", (7, 4), "t", 2, device)
    check(ca.matmul(a, b), an, bn)
    a2, a2n = a.transpose(1, 0, 2, 3), an.transpose(1, 0, 2, 3)
    check(ca.matmul(a2, b), a2n, bn)
    check(ca.matmul(a2[::-2], b), a2n[::-2], bn)


# ---------------------------------------------------------------------------------------------
# 1-d operands, empty dims, dtypes
# ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_vectors(dtype, device):
    a, an = pair(dtype, (9,), 1, device)
    b, bn = pair(dtype, (9,), 2, device)
    r = ca.matmul(a, b)
    assert r.ndim == 0
    check(r, an, bn)
    m, mn = pair(dtype, (9, 4), 3, device)
    check(ca.matmul(a, m), an, mn)
    check(ca.matmul(m.T, b), mn.T, bn)


@pytest.mark.parametrize("sa, sb", [((2, 0), (0, 3)), ((0,), (0,)), ((0, 3), (3, 4)),
                                    ((3, 4), (4, 0)), ((0, 5), (5, 0)), ((4, 0), (0,)),
                                    ((2, 3, 0), (2, 0, 5))])
@pytest.mark.parametrize("dtype", DTYPES)
def test_empty(sa, sb, dtype, device):
    a, an = pair(dtype, sa, device=device)
    b, bn = pair(dtype, sb, device=device)
    r = ca.matmul(a, b)
    check(r, an, bn)
    if np.prod(sa) == 0 and r.size:
        assert not np.asarray(r.to("cpu")).any()      # K = 0: zeros


@pytest.mark.parametrize("da", ALL_DTYPES)
@pytest.mark.parametrize("db", ALL_DTYPES)
def test_dtype_promotion(da, db, device):
    a, an = pair(da, (5, 6), 1, device)
    b, bn = pair(db, (6, 4), 2, device)
    r = ca.matmul(a, b)
    assert r.dtype == ca.promote_types(da, db)
    check(r, an, bn)


def test_bool_is_or_of_ands(device):
    an = np.array([[True, False], [False, False], [True, True]])
    bn = np.array([[False, True, True], [False, True, False]])
    r = ca.matmul(ca.array(an, device=device), ca.array(bn, device=device))
    assert r.dtype == ca.bool
    np.testing.assert_array_equal(np.asarray(r.to("cpu")), np.matmul(an, bn))


@pytest.mark.parametrize("dtype", ("int32", "int64") + SMALL_INTS)
def test_integer_overflow_wraps_like_numpy(dtype, device):
    info = np.iinfo(dtype)
    an = np.array([[info.max, info.max, 3], [info.min, 2, info.max // 2]], dtype=dtype)
    bn = np.array([[info.max], [7], [info.min]], dtype=dtype)
    with np.errstate(over="ignore"):
        check(ca.matmul(ca.array(an, device=device), ca.array(bn, device=device)), an, bn)


def test_nan_inf_propagate(device):
    an = np.ones((20, 30), np.float32)
    an[3, 5] = np.nan
    an[7, 2] = np.inf
    bn = np.ones((30, 40), np.float32)
    r = np.asarray(ca.matmul(ca.array(an, device=device), ca.array(bn, device=device)).to("cpu"))
    with np.errstate(invalid="ignore"):
        e = an @ bn
    np.testing.assert_array_equal(np.isnan(r), np.isnan(e))
    np.testing.assert_array_equal(np.isinf(r), np.isinf(e))


def test_python_sequences_and_numpy_inputs():
    r = ca.matmul([[1, 2], [3, 4]], [[5], [6]])
    assert r.dtype == ca.int64 and r.tolist() == [[17], [39]]
    an = np.arange(6.0).reshape(2, 3)
    check(ca.matmul(an, an.T), an, an.T)
    r = ca.matmul([[1.0, 2.0]], [[3.0], [4.0]])
    assert r.dtype == ca.float32 and r.tolist() == [[11.0]]


# ---------------------------------------------------------------------------------------------
# out=
# ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", ["float32", "float64", "int64"])
def test_out(dtype, device):
    a, an = pair(dtype, (4, 6, 5), 1, device)
    b, bn = pair(dtype, (5, 3), 2, device)
    out = ca.zeros((4, 6, 3), dtype=dtype, device=device)
    r = ca.matmul(a, b, out=out)
    assert r is out
    check(out, an, bn)


def test_out_strided_view(device):
    a, an = pair("float64", (40, 50), 1, device)
    b, bn = pair("float64", (50, 60), 2, device)
    big = ca.zeros((120, 90), dtype="float64", device=device)
    view = big[::-2, 70:10:-1]                     # odd rows, bottom up; columns reversed
    r = ca.matmul(a, b, out=view[:40])
    assert r.base is big
    check(r, an, bn)
    m = np.asarray(big.to("cpu"))
    assert not m[0::2].any() and not m[:, :11].any()   # nothing outside the view was written


def test_out_same_kind_cast_and_broadcast_batch():
    a, an = pair("float64", (3, 4), 1)
    b, bn = pair("float64", (4, 2), 2)
    out = ca.zeros((3, 2), dtype="float32")        # float64 -> float32 is 'same_kind'
    ca.matmul(a, b, out=out)
    np.testing.assert_allclose(np.asarray(out), an @ bn, rtol=1e-6)
    out3 = ca.zeros((5, 3, 2), dtype="float64")    # extra batch dims in out: inputs broadcast
    ca.matmul(a, b, out=out3)
    np.testing.assert_allclose(np.asarray(out3), np.matmul(an, bn, out=np.zeros((5, 3, 2))))
    i, inn = pair("int32", (3, 4), 3)
    j, jn = pair("int32", (4, 2), 4)
    out = ca.zeros((3, 2), dtype="float64")        # int -> float is allowed
    ca.matmul(i, j, out=out)
    np.testing.assert_array_equal(np.asarray(out), (inn @ jn).astype(np.float64))


def test_out_overlapping_input(device):
    a, an = pair("float32", (30, 30), 1, device)
    b, bn = pair("float32", (30, 30), 2, device)
    expect = np.asarray(ca.matmul(a, b).to("cpu")).copy()
    r = ca.matmul(a, b, out=a)                     # a @= b
    assert r is a
    np.testing.assert_array_equal(np.asarray(a.to("cpu")), expect)


def test_out_sharing_memory_through_another_storage():
    """out and an operand made separately from one NumPy array: same memory, other objects."""
    xn = np.random.default_rng(0).random((600, 600))   # K > the K block: A is read twice
    bn = np.random.default_rng(1).random((600, 600))
    expect = xn @ bn
    r = ca.matmul(ca.asarray(xn), ca.asarray(bn), out=ca.asarray(xn))
    np.testing.assert_allclose(np.asarray(r), expect, rtol=1e-12)
    np.testing.assert_allclose(xn, expect, rtol=1e-12)


def test_out_errors():
    a, an = pair("float64", (3, 4), 1)
    b, bn = pair("float64", (4, 2), 2)
    for shape in [(3, 3), (2, 3), (3,), (3, 2, 1)]:
        with pytest.raises(ValueError, match="out"):
            ca.matmul(a, b, out=ca.zeros(shape, dtype="float64"))
        assert_raises_like(lambda: ca.matmul(a, b, out=ca.zeros(shape, dtype="float64")),
                           lambda: np.matmul(an, bn, out=np.zeros(shape)))
    with pytest.raises(TypeError, match="same_kind"):
        ca.matmul(a, b, out=ca.zeros((3, 2), dtype="int64"))
    i, _ = pair("int64", (3, 4), 1)
    with pytest.raises(TypeError, match="same_kind"):
        ca.matmul(i, i.T, out=ca.zeros((3, 3), dtype="bool"))
    with pytest.raises(ValueError, match="read-only"):
        ca.matmul(a, b, out=ca.broadcast_to(ca.zeros((1, 2), dtype="float64"), (3, 2)))
    with pytest.raises(TypeError, match="out"):
        ca.matmul(a, b, out=np.zeros((3, 2)))
    # matmul(vector, vector) gives 0-d: out must be 0-d
    v, vn = pair("float64", (4,), 1)
    out = ca.zeros((), dtype="float64")
    assert ca.matmul(v, v, out=out) is out
    np.testing.assert_allclose(out.item(), vn @ vn)


# ---------------------------------------------------------------------------------------------
# errors: NumPy's exception types, messages naming the shapes
# ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("sa, sb", [((2, 3), (4, 5)), ((3,), (4,)), ((2, 3), (4,)),
                                    ((3,), (4, 2)), ((5, 2, 3), (5, 2, 3))])
def test_core_mismatch(sa, sb):
    a, an = pair("float32", sa)
    b, bn = pair("float32", sb)
    e = assert_raises_like(lambda: ca.matmul(a, b), lambda: np.matmul(an, bn))
    assert isinstance(e, ValueError)
    msg = str(e)
    kb = sb[0] if len(sb) == 1 else sb[-2]
    assert msg.startswith("matmul: Input operand 1 has a mismatch in its core dimension 0, "
                          f"with gufunc signature {SIG} (size {kb} is different from {sa[-1]})")
    assert str(sa) in msg and str(sb) in msg


def test_batch_mismatch():
    a, an = pair("float32", (2, 2, 3))
    b, bn = pair("float32", (3, 3, 4))
    e = assert_raises_like(lambda: ca.matmul(a, b), lambda: np.matmul(an, bn))
    assert "could not be broadcast" in str(e) and "(2, 2, 3)" in str(e) and "(3, 3, 4)" in str(e)


@pytest.mark.parametrize("which", [0, 1])
def test_zero_d_operands(which):
    x, xn = pair("float64", ())
    m, mn = pair("float64", (3, 3))
    args, nargs = ((x, m), (xn, mn)) if which == 0 else ((m, x), (mn, xn))
    e = assert_raises_like(lambda: ca.matmul(*args), lambda: np.matmul(*nargs))
    assert str(e) == (f"matmul: Input operand {which} does not have enough dimensions (has 0, "
                      f"gufunc core with signature {SIG} requires 1)")
    with pytest.raises(ValueError):
        ca.matmul(3, m)


# ---------------------------------------------------------------------------------------------
# the cdef gemm entry point (through the _gemm test hook)
# ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("ta", [False, True])
@pytest.mark.parametrize("tb", [False, True])
@pytest.mark.parametrize("alpha, beta", [(1.0, 0.0), (2.5, 0.0), (1.0, 1.0), (-0.5, 3.0),
                                         (0.0, 2.0)])
@pytest.mark.parametrize("m, n, k", [(1, 1, 1), (13, 35, 7), (70, 40, 600), (5, 3, 0)])
def test_gemm_hook(kernel, dtype, ta, tb, alpha, beta, m, n, k):
    rng = np.random.default_rng(m * n + k)
    pad = 3                                          # leading dimensions larger than the rows
    A = rng.standard_normal((k, m + pad) if ta else (m, k + pad)).astype(dtype)
    B = rng.standard_normal((n, k + pad) if tb else (k, n + pad)).astype(dtype)
    C = rng.standard_normal((m, n + pad)).astype(dtype)
    if beta == 0:
        C[:, :n] = np.nan                            # beta == 0: C is never read
    opA = (A[:, :m].T if ta else A[:, :k]).astype(np.float64)
    opB = (B[:, :k].T if tb else B[:, :n]).astype(np.float64)
    expect = alpha * (opA @ opB) + (beta * C[:, :n].astype(np.float64) if beta else 0)
    Cc = ca.array(C)
    _gemm._gemm(ta, tb, m, n, k, alpha, ca.array(A), A.shape[1], ca.array(B), B.shape[1],
                  beta, Cc, C.shape[1])
    got = np.asarray(Cc)
    scale = abs(alpha) * (np.abs(opA) @ np.abs(opB)) + abs(beta) * np.abs(np.nan_to_num(C[:, :n]))
    tol = (1e-4 if dtype == "float32" else 1e-12) * scale + 1e-30
    assert np.all(np.abs(got[:, :n] - expect) <= tol)
    np.testing.assert_array_equal(got[:, n:], C[:, n:])     # padding columns untouched


def test_gemm_hook_validates():
    a = ca.zeros((4, 4), dtype="float32")
    with pytest.raises(ValueError, match="elements"):
        _gemm._gemm(False, False, 5, 4, 4, 1.0, a, 4, a, 4, 0.0, a, 4)
    with pytest.raises(ValueError, match="lda"):
        _gemm._gemm(False, False, 2, 2, 4, 1.0, a, 2, a, 4, 0.0, a, 4)
    with pytest.raises(ValueError, match="one dtype"):
        d = ca.zeros((4, 4), dtype="float64")
        _gemm._gemm(False, False, 2, 2, 2, 1.0, a, 4, d, 4, 0.0, a, 4)
    with pytest.raises(ValueError, match="float32 or float64"):
        i = ca.zeros((4, 4), dtype="int32")
        _gemm._gemm(False, False, 2, 2, 2, 1.0, i, 4, i, 4, 0.0, i, 4)


def test_kernel_switch():
    assert KERNELS[0] == "plain"
    with pytest.raises(ValueError, match="not available"):
        _gemm._set_gemm_kernel("sse9")
    info = _gemm._gemm_info()
    assert info["kernel"] == KERNELS[-1]


def test_matmul_operators():
    """a @ b, ndarray @ Array (NumPy defers: Array sets __array_ufunc__ = None) and a @= b."""
    rng = np.random.default_rng(7)
    x = rng.standard_normal((3, 4)).astype(np.float32)
    y = rng.standard_normal((4, 4)).astype(np.float32)
    a, b = ca.asarray(x), ca.asarray(y)
    np.testing.assert_allclose(np.asarray(a @ b), x @ y, rtol=1e-5, atol=1e-6)
    r = x @ b
    assert isinstance(r, ca.Array)
    np.testing.assert_allclose(np.asarray(r), x @ y, rtol=1e-5, atol=1e-6)
    c = ca.asarray(x.copy())
    c @= b
    np.testing.assert_allclose(np.asarray(c), x @ y, rtol=1e-5, atol=1e-6)
    with pytest.raises(ValueError):
        a @ a
