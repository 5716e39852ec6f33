"""mpiexec worker: DistributedDataParallel over the ranks gives the parameters of one process
training on the concatenated batch (MLP and CNN, with and without no_sync, cpu and gpu), plus
broadcasting, find_unused_parameters and state_dict keys. Prints 'OK <rank>' at the end."""

import numpy as np

import autograd
import autograd.distributed as dist
from autograd import nn
from autograd.nn.parallel import DistributedDataParallel as DDP

dist.init_process_group("mpi")
rank, world = dist.get_rank(), dist.get_world_size()
devices = ["cpu"] + (["gpu"] if autograd.gpu.is_available() else [])
STEPS, PER_RANK = 3, 4


def mlp():
    return nn.Sequential(nn.Linear(6, 16), nn.Tanh(), nn.Linear(16, 3))


def cnn():
    return nn.Sequential(nn.Conv2d(1, 4, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                         nn.Flatten(), nn.Linear(4 * 3 * 3, 3))


def data(kind, step, micro):
    """The global batch of a step (identical on every rank)."""
    rng = np.random.default_rng(1000 * step + micro)
    shape = (world * PER_RANK, 6) if kind == "mlp" else (world * PER_RANK, 1, 6, 6)
    return rng.standard_normal(shape).astype("float32"), rng.integers(0, 3, world * PER_RANK)


def train(model, kind, device, ddp, micro_steps):
    opt = autograd.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    loss_fn = nn.CrossEntropyLoss()
    for step in range(STEPS):
        opt.zero_grad()
        for m in range(micro_steps):
            x, y = data(kind, step, m)
            if ddp:
                x, y = x[rank * PER_RANK:(rank + 1) * PER_RANK], y[rank * PER_RANK:
                                                                   (rank + 1) * PER_RANK]
            x, y = autograd.tensor(x, device=device), autograd.tensor(y, device=device)
            last = m == micro_steps - 1
            if ddp and not last:
                with model.no_sync():
                    loss_fn(model(x), y).backward()
                    # within no_sync, gradients stay local: they differ between ranks
            else:
                loss_fn(model(x), y).backward()
        opt.step()
    return model


for device in devices:
    for kind, make in (("mlp", mlp), ("cnn", cnn)):
        for micro_steps in (1, 2):
            autograd.manual_seed(0)
            ref = train(make().to(device), kind, device, False, micro_steps)
            autograd.manual_seed(rank)          # rank 1 starts elsewhere: DDP broadcasts rank 0's
            model = DDP(make().to(device), bucket_cap_mb=0.0005)  # several buckets
            assert len(model._buckets) > 1
            train(model, kind, device, True, micro_steps)
            # rebuilt after the first backward: the same parameters, in the gradients' order
            assert model._rebuilt and model._ready_order == []
            ordered = [p for bucket in model._buckets for p in bucket.params]
            assert sorted(map(id, ordered)) == sorted(map(id, model._params))
            last = model.module[-1]
            assert {id(ordered[0]), id(ordered[1])} == {id(last.weight), id(last.bias)}
            for (name, p), q in zip(model.module.named_parameters(), ref.parameters()):
                np.testing.assert_allclose(p.detach().cpu().numpy(), q.detach().cpu().numpy(),
                                           rtol=1e-4, atol=1e-5,
                                           err_msg=f"{device} {kind} micro={micro_steps} {name}")

# state_dict keys carry the 'module.' prefix
m = DDP(nn.Sequential(nn.Linear(2, 2), nn.BatchNorm1d(2)))
assert list(m.state_dict()) == ["module." + k for k in m.module.state_dict()]

# BatchNorm buffers come from rank 0 at each forward (on the gpu packed per dtype: float
# running stats and int64 counters of two layers travel together)
for device in devices:
    bn, bn2 = nn.BatchNorm1d(3), nn.BatchNorm1d(5)
    m = DDP(nn.Sequential(bn, nn.Linear(3, 5), bn2).to(device))
    with autograd.no_grad():
        for layer in (bn, bn2):
            layer.running_mean.fill_(float(rank))
            layer.running_var.fill_(float(rank + 2))
            layer.num_batches_tracked.fill_(rank + 7)
    m.eval()
    out = m(autograd.ones(2, 3, device=device))
    for layer in (bn, bn2):
        assert np.allclose(layer.running_mean.cpu().numpy(), 0.0), (device, layer.running_mean)
        assert np.allclose(layer.running_var.cpu().numpy(), 2.0), (device, layer.running_var)
        assert int(layer.num_batches_tracked) == 7, (device, layer.num_batches_tracked)


class Branchy(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = nn.Linear(2, 2)
        self.b = nn.Linear(2, 2)

    def forward(self, x, use_b):
        return self.b(self.a(x)) if use_b else self.a(x)


# find_unused_parameters: b is used on rank 0 only, its gradient is averaged with zeros
autograd.manual_seed(0)
m = DDP(Branchy(), find_unused_parameters=True)
x = autograd.ones(1, 2)
m(x, rank == 0).sum().backward()
autograd.manual_seed(0)
solo = Branchy()
solo(x, True).sum().backward()
np.testing.assert_allclose(m.module.b.weight.grad.numpy(), solo.b.weight.grad.numpy() / world,
                           rtol=1e-6)
# unused on every rank: the gradient stays None
m.zero_grad()
m(x, False).sum().backward()
assert m.module.b.weight.grad is None and m.module.a.weight.grad is not None

# without find_unused_parameters the next forward raises, as torch's
m = DDP(Branchy())
m(x, False).sum().backward()
try:
    m(x, False)
except RuntimeError as e:
    assert "find_unused_parameters=True" in str(e)
else:
    raise AssertionError("no RuntimeError for unused parameters")

dist.barrier()
print(f"OK {rank}", flush=True)   # one write: ranks' lines interleave in the output
