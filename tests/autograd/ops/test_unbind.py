"""unbind is one node whose backward stacks the gradients (h12 item 5): against PyTorch on every
dim, with only some outputs used, create_graph, views and the in-place rule."""

import numpy as np
import pytest

import autograd

from _torch_compare import compare


@pytest.mark.parametrize("dim", [0, 1, -1])
def test_unbind_matches_torch(device, dim):
    torch = pytest.importorskip("torch")
    x = np.random.default_rng(0).standard_normal((3, 4, 2))
    compare(lambda t: autograd.stack([u * (i + 1) for i, u in enumerate(t.unbind(dim))], 0),
            lambda t: torch.stack([u * (i + 1) for i, u in enumerate(t.unbind(dim))], 0),
            [x], device, torch, noncontiguous=True)


def test_unbind_only_some_outputs_used(device):
    torch = pytest.importorskip("torch")
    x = np.random.default_rng(1).standard_normal((5, 3))
    compare(lambda t: autograd.unbind(t, 0)[1].exp() + autograd.unbind(t, 0)[3],
            lambda t: torch.unbind(t, 0)[1].exp() + torch.unbind(t, 0)[3], [x], device, torch)


def test_unbind_is_one_node_of_views(device):
    x = autograd.randn(4, 3, device=device, requires_grad=True)
    parts = x.unbind(1)
    assert len(parts) == 3 and {p.grad_fn for p in parts} == {parts[0].grad_fn}
    assert parts[0].grad_fn.name() == "UnbindBackward0"
    assert parts[1]._base is x
    with pytest.raises(RuntimeError, match="Output 1 of Unbind is a view"):
        parts[1].mul_(2)


def test_unbind_gradcheck_float64(device):
    x = autograd.randn(3, 4, dtype=autograd.float64, device=device, requires_grad=True)
    fn = lambda t: tuple(u * u for u in t.unbind(1))  # noqa: E731
    assert autograd.gradcheck(fn, (x,))
    assert autograd.gradgradcheck(fn, (x,))


def test_unbind_empty_and_errors():
    torch = pytest.importorskip("torch")
    from _torch_compare import same_error
    assert autograd.unbind(autograd.zeros(0, 3)) == ()
    assert [tuple(p.shape) for p in autograd.unbind(autograd.zeros(2, 0), 1)] == []
    same_error(lambda: autograd.unbind(autograd.zeros(2, 3), 2),
               lambda: torch.unbind(torch.zeros(2, 3), 2))
