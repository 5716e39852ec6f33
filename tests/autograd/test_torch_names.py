"""torch.* top-level names, torch.linalg and torch.special (h12 item 6): each against PyTorch
(values and gradients, cpu and gpu), float64 gradchecks of the compositions."""

import math

import numpy as np
import pytest

import autograd

from _torch_compare import compare

R = np.random.default_rng(0)


def _x(*shape):
    return R.standard_normal(shape)


CASES = [  # (name, autograd fn, torch fn given the torch module, inputs)
    ("dist", lambda a, b: autograd.dist(a, b, 3), lambda t: lambda a, b: t.dist(a, b, 3),
     [_x(3, 4), _x(4)]),
    ("exp2", autograd.exp2, lambda t: t.exp2, [_x(5)]),
    ("erfc", autograd.erfc, lambda t: t.erfc, [_x(6)]),
    ("logit", lambda a: autograd.logit(a.sigmoid(), 1e-3),
     lambda t: lambda a: t.logit(a.sigmoid(), 1e-3), [_x(6)]),
    ("kron", autograd.kron, lambda t: t.kron, [_x(2, 3), _x(3, 1, 2)]),
    ("cross", autograd.cross, lambda t: lambda a, b: t.cross(a, b, dim=1), [_x(2, 3), _x(2, 3)]),
    ("cross_dim", lambda a, b: autograd.cross(a, b, -1),
     lambda t: lambda a, b: t.cross(a, b, dim=-1), [_x(4, 3), _x(1, 3)]),
    ("pdist", autograd.pdist, lambda t: t.nn.functional.pdist, [_x(5, 3)]),
    ("pdist_p1", lambda a: autograd.pdist(a, 1), lambda t: lambda a: t.nn.functional.pdist(a, 1),
     [_x(4, 2)]),
    ("vector_norm", lambda a: autograd.linalg.vector_norm(a, 3, (0, 2)),
     lambda t: lambda a: t.linalg.vector_norm(a, 3, (0, 2)), [_x(2, 3, 4)]),
    ("matrix_norm_fro", autograd.linalg.matrix_norm, lambda t: t.linalg.matrix_norm,
     [_x(2, 3, 4)]),
    ("matrix_norm_1", lambda a: autograd.linalg.matrix_norm(a, 1),
     lambda t: lambda a: t.linalg.matrix_norm(a, 1), [_x(2, 3, 4)]),
    ("matrix_norm_inf", lambda a: autograd.linalg.matrix_norm(a, -math.inf, keepdim=True),
     lambda t: lambda a: t.linalg.matrix_norm(a, -math.inf, keepdim=True), [_x(3, 4)]),
    ("linalg_norm", autograd.linalg.norm, lambda t: t.linalg.norm, [_x(2, 3, 4)]),
    ("linalg_norm_dim", lambda a: autograd.linalg.norm(a, 1, 1),
     lambda t: lambda a: t.linalg.norm(a, 1, 1), [_x(2, 3)]),
    ("linalg_norm_2d", lambda a: autograd.linalg.norm(a, math.inf),
     lambda t: lambda a: t.linalg.norm(a, math.inf), [_x(3, 3)]),
    ("linalg_matmul", autograd.linalg.matmul, lambda t: t.linalg.matmul, [_x(2, 3), _x(3, 4)]),
    ("special_expit", autograd.special.expit, lambda t: t.special.expit, [_x(5)]),
    ("special_erfc", autograd.special.erfc, lambda t: t.special.erfc, [_x(5)]),
    ("special_softmax", lambda a: autograd.special.softmax(a, 1),
     lambda t: lambda a: t.special.softmax(a, 1), [_x(2, 5)]),
    ("special_log_softmax", lambda a: autograd.special.log_softmax(a, 0),
     lambda t: lambda a: t.special.log_softmax(a, 0), [_x(2, 5)]),
    ("special_logsumexp", lambda a: autograd.special.logsumexp(a, 1),
     lambda t: lambda a: t.special.logsumexp(a, 1), [_x(2, 5)]),
    ("layer_norm", lambda a, w: autograd.layer_norm(a, (4,), w),
     lambda t: lambda a, w: t.layer_norm(a, (4,), w), [_x(3, 4), _x(4)]),
    ("group_norm", lambda a: autograd.group_norm(a, 2), lambda t: lambda a: t.group_norm(a, 2),
     [_x(2, 4, 3)]),
    ("batch_norm", lambda a, w, b: autograd.batch_norm(a, w, b, None, None, True, 0.1, 1e-5, False),
     lambda t: lambda a, w, b: t.batch_norm(a, w, b, None, None, True, 0.1, 1e-5, False),
     [_x(4, 3), _x(3), _x(3)]),
    ("instance_norm", lambda a: autograd.instance_norm(a, None, None, None, None, True, 0.1, 1e-5,
                                                       False),
     lambda t: lambda a: t.instance_norm(a, None, None, None, None, True, 0.1, 1e-5, False),
     [_x(2, 3, 5)]),
    ("conv1d", autograd.conv1d, lambda t: t.conv1d, [_x(1, 2, 7), _x(3, 2, 3)]),
    ("conv2d", lambda a, w: autograd.conv2d(a, w, None, 1, 1),
     lambda t: lambda a, w: t.conv2d(a, w, None, 1, 1), [_x(1, 2, 5, 5), _x(3, 2, 3, 3)]),
    ("conv_transpose2d", autograd.conv_transpose2d, lambda t: t.conv_transpose2d,
     [_x(1, 2, 3, 3), _x(2, 3, 2, 2)]),
    ("pixel_shuffle", lambda a: autograd.pixel_shuffle(a, 2),
     lambda t: lambda a: t.pixel_shuffle(a, 2), [_x(1, 8, 2, 3)]),
    ("cosine_similarity", autograd.cosine_similarity, lambda t: t.cosine_similarity,
     [_x(3, 4), _x(3, 4)]),
    ("pairwise_distance", autograd.pairwise_distance, lambda t: t.pairwise_distance,
     [_x(3, 4), _x(3, 4)]),
]


@pytest.mark.parametrize("name,ours,theirs,arrays", CASES, ids=[c[0] for c in CASES])
def test_matches_torch(device, name, ours, theirs, arrays):
    torch = pytest.importorskip("torch")
    compare(ours, theirs(torch), arrays, device, torch, rtol=1e-9, atol=1e-11)


def test_embedding_and_dropout_top_level(device):
    torch = pytest.importorskip("torch")
    w = _x(5, 3)
    idx = [[0, 4], [2, 2]]
    compare(lambda a: autograd.embedding(a, autograd.tensor(idx, device=device)),
            lambda a: torch.embedding(a, torch.tensor(idx)), [w], device, torch)
    x = autograd.ones(100, device=device)
    assert autograd.dropout(x, 0.5, False) is x
    kept = autograd.dropout(x, 0.5, True)
    assert set(kept.tolist()) <= {0.0, 2.0}
    y = autograd.tensor([-1.0, 2.0], device=device)
    assert autograd.relu_(y) is y and y.tolist() == [0.0, 2.0]


@pytest.mark.parametrize("fn", [autograd.exp2, autograd.erfc, lambda a: autograd.kron(a, a),
                                lambda a: autograd.cross(a, a.flip(1), 1), autograd.pdist,
                                lambda a: autograd.linalg.matrix_norm(a, 1)])
def test_compositions_gradcheck_float64(device, fn):
    x = autograd.tensor(_x(4, 3), device=device, requires_grad=True)
    assert autograd.gradcheck(fn, (x,))


def test_errors_match_torch():
    torch = pytest.importorskip("torch")
    from _torch_compare import same_error
    same_error(lambda: autograd.linalg.matrix_norm(autograd.ones(3)),
               lambda: torch.linalg.matrix_norm(torch.ones(3)))
    same_error(lambda: autograd.cross(autograd.ones(2, 4), autograd.ones(2, 4), 1),
               lambda: torch.cross(torch.ones(2, 4), torch.ones(2, 4), 1))
    same_error(lambda: autograd.pdist(autograd.ones(3)), lambda: torch.pdist(torch.ones(3)))
    same_error(lambda: autograd.linalg.norm(autograd.ones(2, 2, 2), 2),
               lambda: torch.linalg.norm(torch.ones(2, 2, 2), 2))
