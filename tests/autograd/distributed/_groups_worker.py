"""mpiexec -n 3 worker: new_group([2, 0]) and `group=` in every collective, get_rank and
get_world_size (-1 outside), the object collectives (in the world and in the group), DDP with
process_group=, mismatches inside a group, and a group's own timeout on tensor and object
collectives. Prints 'OK <rank>' at the end."""

import datetime
import warnings

import numpy as np

import autograd
import autograd.distributed as dist
from autograd import nn
from autograd.nn.parallel import DistributedDataParallel as DDP

dist.init_process_group("mpi")
rank, world = dist.get_rank(), dist.get_world_size()
assert world == 3, "run with mpiexec -n 3"
W = dist.group.WORLD
assert isinstance(W, dist.ProcessGroup) and W is dist.group.WORLD is dist.GroupMember.WORLD
assert (W.rank(), W.size(), dist.get_rank(W), dist.get_world_size(W)) == (rank, 3, rank, 3)
assert dist.get_process_group_ranks(W) == [0, 1, 2]


def raises(exc, text, fn, *args, **kwargs):
    try:
        fn(*args, **kwargs)
    except exc as e:
        assert text in str(e), (text, str(e))
    else:
        raise AssertionError(f"no {exc.__name__} from {fn.__name__}")


def array(t):
    return np.asarray(t.cpu().numpy())


# --- the object collectives over the world -----------------------------------------------------
got = [None] * 3
dist.gather_object({"r": rank}, got if rank == 1 else None, dst=1)
if rank == 1:
    assert got == [{"r": 0}, {"r": 1}, {"r": 2}], got
out = [None]
dist.scatter_object_list(out, [("x", r) for r in range(3)] if rank == 2 else None, src=2)
assert out == [("x", rank)], out
if rank == 0:
    dist.send_object_list([1, "two", {3: 4}], dst=2)
elif rank == 2:
    lst = [None] * 3
    assert dist.recv_object_list(lst) == 0 and lst == [1, "two", {3: 4}], lst
raises(ValueError, "Expected argument scatter_object_output_list", dist.scatter_object_list, 5)
if rank == 0:
    raises(ValueError, "must be specified on destination rank", dist.gather_object, 1, None,
           dst=0)

# --- a group of ranks 0 and 2 ------------------------------------------------------------------
g = dist.new_group([2, 0])
member = rank in (0, 2)
me = {0: 0, 2: 1}.get(rank, -1)
if not member:
    assert g == dist.GroupMember.NON_GROUP_MEMBER
    assert dist.get_rank(g) == -1 and dist.get_world_size(g) == -1
    t = autograd.ones(3)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert dist.all_reduce(t, group=g) is None
        assert dist.broadcast_object_list([1], src=0, group=g) is None
    assert len(caught) == 2 and "does not belong to the given group" in str(caught[0].message)
    assert array(t).tolist() == [1, 1, 1]
    raises(ValueError, "not a member of process_group", DDP, nn.Linear(2, 2), process_group=g)
else:
    assert isinstance(g, dist.ProcessGroup)
    assert (g.rank(), g.size(), dist.get_rank(g), dist.get_world_size(g)) == (me, 2, me, 2)
    assert dist.get_process_group_ranks(g) == [0, 2]
    assert dist.get_group_rank(g, 2) == 1 and dist.get_global_rank(g, 1) == 2
    raises(ValueError, "not part of group", dist.get_group_rank, g, 1)
    for device in ["cpu"] + (["gpu"] if autograd.gpu.is_available() else []):
        t = autograd.full((2, 3), float(rank + 1), device=device)
        dist.all_reduce(t, group=g)
        assert (array(t) == 4).all(), array(t)               # 1 + 3
        t = autograd.full((2,), float(rank), device=device)
        dist.broadcast(t, src=2, group=g)
        assert (array(t) == 2).all()
        t = autograd.full((2,), float(rank), device=device)
        dist.broadcast(t, group=g, group_src=0)
        assert (array(t) == 0).all()
        t = autograd.full((2,), float(rank + 1), device=device)
        dist.reduce(t, dst=2, group=g)
        assert (array(t) == (4 if rank == 2 else 1)).all()
        outs = [autograd.zeros(2, device=device) for _ in range(2)]
        dist.all_gather(outs, autograd.full((2,), float(rank), device=device), group=g)
        assert [array(o).tolist() for o in outs] == [[0, 0], [2, 2]]
        out = autograd.zeros(4, device=device)
        dist.all_gather_into_tensor(out, autograd.full((2,), float(rank), device=device),
                                    group=g)
        assert array(out).tolist() == [0, 0, 2, 2]
        out = autograd.zeros(2, device=device)
        dist.reduce_scatter_tensor(out, autograd.arange(4.0, device=device) * (rank + 1),
                                   group=g)
        assert array(out).tolist() == ([0, 4] if rank == 0 else [8, 12]), array(out)
        gl = [autograd.zeros(1, device=device) for _ in range(2)] if rank == 2 else None
        dist.gather(autograd.full((1,), float(rank), device=device), gl, dst=2, group=g)
        if rank == 2:
            assert [array(x).tolist() for x in gl] == [[0], [2]]
        t = autograd.zeros(1, device=device)
        sl = [autograd.full((1,), 7.0 + r, device=device) for r in range(2)] \
            if rank == 0 else None
        dist.scatter(t, sl, src=0, group=g)
        assert array(t).tolist() == [7.0 + me]
        t = autograd.zeros(2, device=device)
        if rank == 0:
            dist.send(autograd.full((2,), 5.0, device=device), dst=2, group=g)
            dist.send(autograd.full((2,), 6.0, device=device), group=g, group_dst=1)
        else:
            assert dist.recv(t, group=g) == 0 and array(t).tolist() == [5, 5]
            assert dist.recv(t, src=0, group=g) == 0 and array(t).tolist() == [6, 6]
        dist.barrier(group=g)
    raises(ValueError, "global rank of the group [0, 2], got 1", dist.broadcast,
           autograd.ones(1), src=1, group=g)
    raises(ValueError, "Can't specify both", dist.broadcast, autograd.ones(1), src=0, group=g,
           group_src=0)
    raises(TypeError, "group must be a ProcessGroup", dist.all_reduce, autograd.ones(1),
           group="g")
    # the objects in the group
    objs = ["a", {"b": 2}] if rank == 2 else [None, None]
    dist.broadcast_object_list(objs, src=2, group=g)
    assert objs == ["a", {"b": 2}], objs
    got = [None, None]
    dist.all_gather_object(got, rank * 10, group=g)
    assert got == [0, 20], got
    got = [None, None] if rank == 0 else None
    dist.gather_object(rank, got, dst=0, group=g)
    assert rank != 0 or got == [0, 2], got
    out = [None]
    dist.scatter_object_list(out, ["p", "q"] if rank == 2 else None, group=g, group_src=1)
    assert out == [["p", "q"][me]], out
    if rank == 2:
        dist.send_object_list(["hi"], dst=0, group=g)
    else:
        lst = [None]
        assert dist.recv_object_list(lst, src=2, group=g) == 2 and lst == ["hi"]
    # ranks of the group that disagree raise on both
    raises(ValueError, "different shapes or dtypes", dist.all_reduce, autograd.ones(2 + rank),
           group=g)
    call = dist.all_reduce if rank == 0 else (lambda t, group: dist.broadcast(t, 0, group))
    raises(ValueError, "called different collectives", call, autograd.ones(2), group=g)
    # DDP within the group averages over its two ranks only
    autograd.manual_seed(rank)                      # rank 2 starts elsewhere: DDP copies rank 0's
    model = DDP(nn.Linear(4, 3), process_group=g)
    autograd.manual_seed(0)
    ref = nn.Linear(4, 3)
    assert np.allclose(array(model.module.weight.detach()), array(ref.weight.detach()))
    xs = [autograd.randn(5, 4) for _ in range(2)]
    model(xs[me]).pow(2).mean().backward()
    sum(ref(x).pow(2).mean() for x in xs).div(2).backward()
    np.testing.assert_allclose(array(model.module.weight.grad), array(ref.weight.grad),
                               rtol=1e-5, atol=1e-6)
    dist.destroy_process_group(g)
    raises(ValueError, "has been destroyed", dist.get_rank, g)

# --- a group's own timeout, on tensor and object collectives: rank 1 never joins ---------------
h = dist.new_group([0, 1], timeout=datetime.timedelta(seconds=1))
if rank == 0:
    for what, call in (
            ("all_reduce", lambda: dist.all_reduce(autograd.ones(2), group=h)),
            ("all_gather_object", lambda: dist.all_gather_object([None, None], 1, group=h)),
            ("gather_object", lambda: dist.gather_object(1, [None, None], dst=0, group=h)),
            ("scatter_object_list", lambda: dist.scatter_object_list([None], None, src=1,
                                                                     group=h)),
            ("recv_object_list", lambda: dist.recv_object_list([None], src=1, group=h))):
        try:
            call()
        except RuntimeError as e:
            assert "timeout of 1 s" in str(e), (what, e)
        else:
            raise AssertionError(f"{what} did not time out")
dist.barrier()
print(f"OK {rank}", flush=True)   # one write: ranks' lines interleave in the output
