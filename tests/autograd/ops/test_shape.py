"""View and shape ops, joining and splitting: values against NumPy, gradients with gradcheck on
contiguous, transposed and sliced float64 inputs, view semantics (shared memory)."""

import numpy as np
import pytest

import autograd

from _check import check_op, make_input

# name -> (input shape, autograd fn, NumPy reference)
CASES = {
    "view": ((2, 6), lambda x: x.contiguous().view(3, 4), lambda x: x.reshape(3, 4)),
    "view_tuple": ((2, 6), lambda x: x.contiguous().view((4, -1)), lambda x: x.reshape(4, -1)),
    "reshape": ((2, 3, 2), lambda x: x.reshape(3, 4), lambda x: x.reshape(3, 4)),
    "reshape_fn": ((2, 3, 2), lambda x: autograd.reshape(x, (-1,)), lambda x: x.reshape(-1)),
    "reshape_scalar": ((1, 1), lambda x: x.reshape(()), lambda x: x.reshape(())),
    "permute": ((2, 3, 4), lambda x: x.permute(2, 0, 1), lambda x: x.transpose(2, 0, 1)),
    "permute_tuple": ((2, 3, 4), lambda x: x.permute((1, -1, 0)), lambda x: x.transpose(1, 2, 0)),
    "permute_fn": ((2, 3, 4), lambda x: autograd.permute(x, (2, 1, 0)), lambda x: x.T),
    "transpose": ((2, 3, 4), lambda x: x.transpose(0, 2), lambda x: x.swapaxes(0, 2)),
    "transpose_neg": ((2, 3, 4), lambda x: autograd.transpose(x, -1, -2),
                      lambda x: x.swapaxes(-1, -2)),
    "t": ((2, 3), lambda x: x.t(), lambda x: x.T),
    "t_1d": ((3,), lambda x: x.t(), lambda x: x),
    "T": ((2, 3, 4), lambda x: x.T, lambda x: x.T),
    "mT": ((2, 3, 4), lambda x: x.mT, lambda x: x.swapaxes(-1, -2)),
    "expand": ((3, 1), lambda x: x.expand(2, 3, 4), lambda x: np.broadcast_to(x, (2, 3, 4))),
    "expand_minus1": ((3, 1), lambda x: x.expand(-1, 5), lambda x: np.broadcast_to(x, (3, 5))),
    "expand_as": ((1, 4), lambda x: x.expand_as(autograd.zeros(3, 4)),
                  lambda x: np.broadcast_to(x, (3, 4))),
    "unsqueeze0": ((2, 3), lambda x: x.unsqueeze(0), lambda x: x[None]),
    "unsqueeze_neg": ((2, 3), lambda x: autograd.unsqueeze(x, -1), lambda x: x[..., None]),
    "unsqueeze_mid": ((2, 3), lambda x: x.unsqueeze(1), lambda x: x[:, None]),
    "squeeze_all": ((1, 3, 1), lambda x: x.squeeze(), lambda x: x.squeeze()),
    "squeeze_dim": ((1, 3, 1), lambda x: x.squeeze(-1), lambda x: x.squeeze(-1)),
    "squeeze_noop": ((2, 3), lambda x: autograd.squeeze(x, 0), lambda x: x),
    "flatten": ((2, 3, 2), lambda x: x.flatten(), lambda x: x.reshape(-1)),
    "flatten_range": ((2, 3, 2, 2), lambda x: x.flatten(1, 2), lambda x: x.reshape(2, 6, 2)),
    "flatten_fn": ((2, 3, 2), lambda x: autograd.flatten(x, start_dim=1),
                   lambda x: x.reshape(2, 6)),
    "repeat": ((2, 3), lambda x: x.repeat(2, 1), lambda x: np.tile(x, (2, 1))),
    "repeat_more_dims": ((2, 3), lambda x: x.repeat(2, 3, 2), lambda x: np.tile(x, (2, 3, 2))),
    "flip": ((2, 3, 2), lambda x: x.flip(0), lambda x: np.flip(x, 0)),
    "flip_dims": ((2, 3, 2), lambda x: autograd.flip(x, (0, 2)), lambda x: np.flip(x, (0, 2))),
    "narrow": ((4, 5), lambda x: x.narrow(1, 1, 3), lambda x: x[:, 1:4]),
    "narrow_fn": ((4, 5), lambda x: autograd.narrow(x, 0, 2, 2), lambda x: x[2:4]),
    "contiguous": ((3, 4), lambda x: x.contiguous(), lambda x: x),
    "clone": ((3, 4), lambda x: x.clone(), lambda x: x.copy()),
    "clone_fn": ((3, 4), autograd.clone, lambda x: x.copy()),
    "view_as": ((2, 6), lambda x: x.contiguous().view_as(autograd.zeros(3, 4)),
                lambda x: x.reshape(3, 4)),
    "chain": ((2, 3, 4), lambda x: x.permute(1, 2, 0).reshape(3, 8)[1:].t().unsqueeze(0) * 2,
              lambda x: x.transpose(1, 2, 0).reshape(3, 8)[1:].T[None] * 2),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_shape_op(name):
    shape, fn, ref = CASES[name]
    check_op(fn, ref, shape)


@pytest.mark.parametrize("size,dim", [(2, 0), (3, 1), ([1, 3], 1), ((2, 1, 1), 1), (1, -1)])
def test_split(size, dim):
    def ref(x):
        n = x.shape[dim]
        sizes = size if isinstance(size, (list, tuple)) else \
            [size] * (n // size) + ([n % size] if n % size else [])
        return tuple(np.split(x, np.cumsum(sizes)[:-1], axis=dim))
    check_op(lambda x: x.split(size, dim), ref, (3, 4))
    check_op(lambda x: autograd.split(x, size, dim=dim), ref, (3, 4), seed=1)


@pytest.mark.parametrize("chunks,dim,n", [(2, 0, 4), (3, 0, 5), (2, 1, 3), (4, -1, 6)])
def test_chunk(chunks, dim, n):
    def ref(x):
        size = -(-x.shape[dim] // chunks)
        return tuple(np.split(x, list(range(size, x.shape[dim], size)), axis=dim))
    shape = (n, 2) if dim == 0 else (2, n)
    check_op(lambda x: x.chunk(chunks, dim), ref, shape)
    check_op(lambda x: autograd.chunk(x, chunks, dim), ref, shape, seed=2)


def test_chunk_against_torch():
    torch = pytest.importorskip("torch")
    for n in range(1, 9):
        for chunks in range(1, 6):
            ours = [c.shape for c in autograd.zeros(n).chunk(chunks)]
            theirs = [tuple(c.shape) for c in torch.zeros(n).chunk(chunks)]
            assert ours == theirs, (n, chunks)


@pytest.mark.parametrize("dim", [0, 1, -1])
def test_unbind(dim):
    check_op(lambda x: x.unbind(dim), lambda x: tuple(np.moveaxis(x, dim, 0)), (2, 3))
    check_op(lambda x: autograd.unbind(x, dim), lambda x: tuple(np.moveaxis(x, dim, 0)), (3, 2))


def test_split_pieces_used_partly():
    x = autograd.randn(4, 3, dtype=autograd.float64, requires_grad=True)
    a, b = x.split(2)
    (a * 3).sum().backward()
    np.testing.assert_array_equal(np.asarray(x.grad.array),
                                  np.concatenate([np.full((2, 3), 3.0), np.zeros((2, 3))]))


@pytest.mark.parametrize("dim", [0, 1, -1])
def test_cat(dim):
    shapes = [(2, 3), (2, 3), (2, 3)]
    shapes = [tuple(n + i if d == dim % 2 else n for d, n in enumerate(s))
              for i, s in enumerate(shapes)]
    check_op(lambda *xs: autograd.cat(xs, dim), lambda *xs: np.concatenate(xs, dim), *shapes)
    check_op(lambda *xs: autograd.cat(list(xs), dim=dim),
             lambda *xs: np.concatenate(xs, dim), *shapes[:2], seed=1)


def test_cat_with_constant_and_single():
    c = np.arange(6.0).reshape(2, 3)
    check_op(lambda x: autograd.cat([x, autograd.tensor(c)], 0),
             lambda x: np.concatenate([x, c]), (1, 3))
    check_op(lambda x: autograd.cat([x]), lambda x: x.copy(), (2, 2))
    check_op(lambda x: autograd.cat([x, x * 2], 1), lambda x: np.concatenate([x, 2 * x], 1), (2, 2))


@pytest.mark.parametrize("dim", [0, 1, 2, -1])
def test_stack(dim):
    check_op(lambda *xs: autograd.stack(xs, dim), lambda *xs: np.stack(xs, dim),
             (2, 3), (2, 3), (2, 3))
    check_op(lambda x: autograd.stack([x, x * x], dim=dim),
             lambda x: np.stack([x, x * x], dim), (3, 2))


def test_cat_stack_errors():
    with pytest.raises(RuntimeError):
        autograd.cat([autograd.ones(2, 3), autograd.ones(3, 2)], 0)
    with pytest.raises(RuntimeError):
        autograd.stack([autograd.ones(2), autograd.ones(3)])
    with pytest.raises(RuntimeError):
        autograd.cat([])


def test_views_share_memory():
    x = autograd.zeros(2, 3)
    for v in (x.view(6), x.reshape(3, 2), x.t(), x.transpose(0, 1), x.permute(1, 0),
              x.unsqueeze(0), x[0], x[:, 1:], x.narrow(1, 0, 2), x.split(1)[1], x.unbind(1)[2],
              x.flatten(), x.expand(4, 2, 3), x.T, x.mT, x.view(2, 1, 3).squeeze(1)):
        assert np.shares_memory(np.asarray(v.array), np.asarray(x.array)), v.shape
    assert not np.shares_memory(np.asarray(x.clone().array), np.asarray(x.array))
    assert not np.shares_memory(np.asarray(x.flip(0).array), np.asarray(x.array))
    assert not np.shares_memory(np.asarray(x.repeat(1, 2).array), np.asarray(x.array))
    y = x.t()
    x.array[0, 1] = 7
    assert y[1, 0].item() == 7


def test_view_errors():
    x = autograd.zeros(2, 3)
    with pytest.raises(RuntimeError):
        x.t().view(6)  # not contiguous: view is impossible, reshape copies
    assert x.t().reshape(6).shape == (6,)
    with pytest.raises(RuntimeError):
        x.view(4)
    with pytest.raises(RuntimeError):
        x.reshape(5)
    with pytest.raises(RuntimeError):
        x.expand(3, 3)
    with pytest.raises(RuntimeError):
        x.permute(0, 0)
    with pytest.raises(IndexError):
        x.transpose(0, 2)
    with pytest.raises(IndexError):
        x.unsqueeze(3)
    with pytest.raises(RuntimeError):
        x.flatten(1, 0)
    with pytest.raises(RuntimeError):
        x.repeat(2)
    with pytest.raises(RuntimeError):
        autograd.zeros(2, 3, 4).t()


def test_contiguous_is_self_when_contiguous():
    x = autograd.randn(2, 3, requires_grad=True)
    assert x.contiguous() is x
    y = x.t().contiguous()
    assert y.is_contiguous() and y.grad_fn is not None


def test_size_and_metadata_of_views():
    x = autograd.zeros(2, 3, 4)
    assert x.permute(2, 0, 1).shape == (4, 2, 3)
    assert x.T.shape == (4, 3, 2)
    assert x.mT.shape == (2, 4, 3)
    assert x.stride() == (12, 4, 1)
    assert x.transpose(0, 2).stride() == (1, 4, 12)
    assert x.expand(5, 2, 3, 4).stride(0) == 0
    assert not x.transpose(0, 1).is_contiguous()


def test_shape_ops_against_torch():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(2)
    a = rng.standard_normal((2, 3, 4))

    def f(lib, x):
        y = lib.cat([x.permute(2, 0, 1).reshape(4, 6), x.flatten(1).t().mT.reshape(4, 6)], 0)
        z = lib.stack(x.unbind(1), -1).flip(0).repeat(1, 2, 1)
        w = x.transpose(0, 1).unsqueeze(1).expand(3, 5, 2, 4).narrow(1, 1, 2)
        parts = x.split([1, 3], dim=2)
        return (y * y).sum() + (z * z.sin()).sum() + w.sum() * 0.5 + parts[1].exp().sum() \
            + x.chunk(2, 0)[1].squeeze().pow(3).sum()

    x = autograd.tensor(a, requires_grad=True)
    tx = torch.tensor(a, requires_grad=True)
    out, tout = f(autograd, x), f(torch, tx)
    out.backward()
    tout.backward()
    np.testing.assert_allclose(out.item(), tout.item(), rtol=1e-12)
    np.testing.assert_allclose(np.asarray(x.grad.array), tx.grad.numpy(), rtol=1e-10)


def test_make_input_layouts():
    # the helper itself: the layouts really are non-contiguous views
    v = np.arange(6.0).reshape(2, 3)
    assert make_input(v, "contiguous").is_contiguous()
    assert not make_input(v, "transposed").is_contiguous()
    assert not make_input(v, "sliced").is_contiguous()
    for layout in ("contiguous", "transposed", "sliced"):
        assert make_input(v, layout).tolist() == v.tolist()


@pytest.mark.parametrize("dtypes, want", [
    (("int64", "float32"), "float32"),            # the float category wins, at its own width
    (("float32", "float64"), "float64"),
    (("int32", "int64"), "int64"),
    (("bool", "int32"), "int32"),
    (("int64", "float32", "float64"), "float64"),
])
def test_cat_and_stack_promote_mixed_dtypes_as_pytorch(dtypes, want):
    parts = [autograd.ones(2, dtype=getattr(autograd, d)) for d in dtypes]
    assert autograd.cat(parts).dtype.name == want
    assert autograd.stack(parts).dtype.name == want
    x = autograd.tensor([1.5, 2.5], requires_grad=True)
    y = autograd.cat([autograd.tensor([1, 2]), x, autograd.ones(1, dtype=autograd.float64)])
    (y * autograd.arange(5, dtype=autograd.float64)).sum().backward()
    assert x.grad.dtype == autograd.float32
    assert x.grad.tolist() == [2.0, 3.0]


# -- ops and checks found missing by the torch comparison audit -------------------------------

def test_mm_bmm_dot_outer():
    check_op(lambda a, b: autograd.mm(a, b), np.matmul, (3, 4), (4, 2))
    check_op(lambda a, b: a.bmm(b), np.matmul, (2, 3, 4), (2, 4, 5))
    check_op(lambda a, b: autograd.dot(a, b), np.dot, (4,), (4,))
    check_op(lambda a, b: a.outer(b), np.outer, (3,), (2,))
    with pytest.raises(RuntimeError):
        autograd.mm(autograd.ones(2, 2, 2), autograd.ones(2, 2))
    with pytest.raises(RuntimeError):
        autograd.bmm(autograd.ones(2, 2, 2), autograd.ones(3, 2, 2))


def test_unflatten_and_narrow_negative_start():
    check_op(lambda x: x.unflatten(1, (2, -1)), lambda x: x.reshape(3, 2, 2), (3, 4))
    check_op(lambda x: x.narrow(-1, -3, 2), lambda x: x[:, 1:3], (3, 4))
    with pytest.raises(RuntimeError, match="exceeds dimension size"):
        autograd.ones(3, 4).narrow(1, 3, 2)


def test_cat_zero_dim_raises():
    with pytest.raises(RuntimeError, match="zero-dimensional"):
        autograd.cat([autograd.tensor(1.0), autograd.tensor(2.0)])


@pytest.mark.parametrize("make", [
    lambda d: autograd.ones(1, 1, 4, device=d).expand(2**31, 2**31, 4),
    lambda d: autograd.ones(1, device=d).expand(2**62, 2**62),
    lambda d: autograd.ones(1, 1, device=d).expand_as(autograd.ones(1, device=d).expand(2**40, 1))
    .expand(2**40, 2**40),
    lambda d: autograd.ones(2, device=d).repeat(2**62, 2**62),
    lambda d: autograd.zeros(2**62, 2**62, device=d),
    lambda d: autograd.ones((2**31, 2**31, 4), device=d),
    lambda d: autograd.empty(2**40, 2**40, 0, device=d),
    lambda d: autograd.ones(0, device=d).reshape(2**32, 2**32),
], ids=["expand", "expand_wraps", "expand_of_expand", "repeat", "zeros", "ones", "empty_with_0",
        "reshape_of_empty"])
def test_overflowing_sizes_raise_runtime_error(make, device):
    """Sizes whose element count (or bytes) overflows: RuntimeError, as PyTorch's."""
    with pytest.raises(RuntimeError, match="overflow|too big|invalid"):
        make(device)


def test_expand_mismatch_message_unchanged():
    with pytest.raises(RuntimeError, match="must match the existing size"):
        autograd.ones(3).expand(2, 4)
