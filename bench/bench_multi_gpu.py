"""Issue 16: data-parallel training on several GPUs, autograd (DDP over MPI, one OpenCL GPU per
rank) beside PyTorch (DDP over NCCL, one CUDA GPU per rank), on the same machine and models.

    python bench/bench_multi_gpu.py --lib autograd --model gpt               # one GPU
    mpiexec -n 2 python bench/bench_multi_gpu.py --lib autograd --model gpt  # DDP, 2 GPUs
    torchrun --nproc_per_node 2 bench/bench_multi_gpu.py --lib torch --model gpt
    mpiexec -n 2 python bench/bench_multi_gpu.py --lib autograd --model resnet --check

Models (issue 14's): "gpt" is examples/train_gpt.py's GPT with 2 layers, 8 heads, width 512,
block 128, vocab 8192, batch 32 per rank; "resnet" is a ResNet-ish CNN (a 3x3 stem of 64
channels, 3 stages of 2 basic blocks with BatchNorm at 64/128/256 channels, average pool,
linear to 10) on 32x32x3 images, batch 128 per rank. A step: zero_grad, forward, cross-entropy,
backward, SGD(lr 0.01, momentum 0.9); float32, TF32 off; every timed step ends by reading the
loss (the queues drain). Weak scaling: each rank keeps its batch, so the efficiency is the
one-GPU step time over the N-GPU step time.

Rank 0 prints one JSON line: lib, model, world, batch per rank, median step time, samples/s
and (autograd) where a DDP step's time goes: forward, backward until its end-of-backward
callback, the callback (waiting for the all-reduces and writing the averages back), the
optimizer step; and the bytes of gradient crossing to the host per step.

--profile FILE: rank 0 runs 3 more steps under autograd.profiler and writes the table there.

--check: 3 steps of DDP over the ranks, each on its slice of one global batch, then rank 0
trains a fresh copy of the model (same seed) on the whole batch in one process and prints the
largest difference between the two sets of parameters (the ResNet runs its BatchNorm in eval
mode there: batch statistics over a slice differ from those over the whole batch, in PyTorch's
DDP too).
"""

import argparse
import json
import os
import pathlib
import statistics
import sys
import time
import types

EXAMPLES = pathlib.Path(__file__).resolve().parents[1] / "examples"
GPT = dict(vocab_size=8192, block_size=128, n_layer=2, n_head=8, n_embd=512)


def load_lib(name):
    """(lib, nn, F, dist, DDP) for "autograd" or "torch"."""
    if name == "torch":
        import torch
        import torch.distributed as dist
        import torch.nn.functional as F
        from torch import nn
        from torch.nn.parallel import DistributedDataParallel as DDP
        torch.backends.cuda.matmul.allow_tf32 = False
        torch.backends.cudnn.allow_tf32 = False
        return torch, nn, F, dist, DDP
    import autograd
    import autograd.distributed as dist
    import autograd.nn.functional as F
    from autograd import nn
    from autograd.nn.parallel import DistributedDataParallel as DDP
    return autograd, nn, F, dist, DDP


def gpt_class(lib_name):
    """examples/train_gpt.py's GPT class, its imports pointed at lib_name."""
    source = (EXAMPLES / "train_gpt.py").read_text()
    if lib_name == "torch":
        for sub in ("", ".nn", ".nn.functional"):
            source = source.replace(f"import autograd{sub} as ", f"import torch{sub} as ")
    module = types.ModuleType(f"train_gpt_{lib_name}")
    module.__file__ = str(EXAMPLES / "train_gpt.py")
    exec(compile(source, module.__file__, "exec"), module.__dict__)
    return module.GPT


def resnet(nn, F):
    """The ResNet-ish CNN (see the module docstring)."""

    class Block(nn.Module):
        def __init__(self, cin, cout, stride):
            super().__init__()
            self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
            self.bn1 = nn.BatchNorm2d(cout)
            self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
            self.bn2 = nn.BatchNorm2d(cout)
            self.short = None
            if stride != 1 or cin != cout:
                self.short = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False),
                                           nn.BatchNorm2d(cout))

        def forward(self, x):
            y = F.relu(self.bn1(self.conv1(x)))
            y = self.bn2(self.conv2(y))
            return F.relu(y + (x if self.short is None else self.short(x)))

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.stem = nn.Sequential(nn.Conv2d(3, 64, 3, 1, 1, bias=False), nn.BatchNorm2d(64),
                                      nn.ReLU())
            blocks, cin = [], 64
            for cout, stride in ((64, 1), (128, 2), (256, 2)):
                blocks += [Block(cin, cout, stride), Block(cout, cout, 1)]
                cin = cout
            self.blocks = nn.Sequential(*blocks)
            self.fc = nn.Linear(256, 10)

        def forward(self, x):
            x = self.blocks(self.stem(x))
            return self.fc(F.adaptive_avg_pool2d(x, 1).flatten(1))

    return Net()


def make(lib_name, model_name, lib, nn, F):
    """(model on the CPU, loss function of (model, batch), per-rank batch size, batch maker)."""
    lib.manual_seed(0)
    if model_name == "gpt":
        model = gpt_class(lib_name)(**GPT)

        def loss(m, batch):
            return m(batch[0], batch[1])[1]

        def batch(n, gen):
            ids = lib.randint(0, GPT["vocab_size"], (n, GPT["block_size"] + 1), generator=gen)
            return ids[:, :-1], ids[:, 1:]
        return model, loss, 32, batch
    model = resnet(nn, F)

    def loss(m, batch):
        return F.cross_entropy(m(batch[0]), batch[1])

    def batch(n, gen):
        return lib.randn(n, 3, 32, 32, generator=gen), lib.randint(0, 10, (n,), generator=gen)
    return model, loss, 128, batch


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--lib", choices=["autograd", "torch"], default="autograd")
    ap.add_argument("--model", choices=["gpt", "resnet"], default="gpt")
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--check", action="store_true")
    ap.add_argument("--tiny", action="store_true", help="small shapes: a quick smoke test")
    ap.add_argument("--bucket-mb", type=float, default=25.0, help="DDP's bucket_cap_mb")
    ap.add_argument("--profile", metavar="FILE",
                    help="(autograd) rank 0 profiles 3 more steps and writes the table to FILE")
    ap.add_argument("--profile-sort", default="self_cpu_time_total",
                    help="the profile table's sort_by (e.g. self_device_time_total)")
    args = ap.parse_args()
    lib, nn, F, dist, DDP = load_lib(args.lib)
    distributed = int(os.environ.get("WORLD_SIZE", os.environ.get("PMI_SIZE", "1"))) > 1
    if distributed:
        dist.init_process_group("nccl" if args.lib == "torch" else "mpi")
        rank, world = dist.get_rank(), dist.get_world_size()
    else:
        rank, world = 0, 1
    local = int(os.environ.get("LOCAL_RANK", "0")) % lib.cuda.device_count()
    lib.cuda.set_device(local)
    device = f"cuda:{local}"
    if args.tiny:
        GPT.update(vocab_size=64, block_size=16, n_embd=32, n_head=2)
    model, loss_fn, per_rank, make_batch = make(args.lib, args.model, lib, nn, F)
    if args.tiny:
        per_rank = 4
    if args.check:
        return check(args, lib, dist, DDP, model, loss_fn, per_rank, make_batch, rank, world,
                     device, distributed)
    model = model.to(device)
    net = DDP(model, bucket_cap_mb=args.bucket_mb) if distributed else model
    opt = lib.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    gen = lib.Generator().manual_seed(1 + rank)
    x, y = (t.to(device) for t in make_batch(per_rank, gen))
    parts = {"forward": [], "backward": [], "step": []}
    sync_times = []
    if distributed and args.lib == "autograd":
        finish = net._finish_backward

        def timed_finish():
            t = time.perf_counter()
            finish()
            sync_times.append(time.perf_counter() - t)
        net._finish_backward = timed_finish

    def step(record):
        t0 = time.perf_counter()
        opt.zero_grad()
        loss = loss_fn(net, (x, y))
        t1 = time.perf_counter()
        loss.backward()
        t2 = time.perf_counter()
        opt.step()
        value = loss.item()
        t3 = time.perf_counter()
        if record:
            parts["forward"].append(t1 - t0)
            parts["backward"].append(t2 - t1)
            parts["step"].append(t3 - t2)
        return value, t3 - t0
    for _ in range(3):
        step(False)
    sync_times.clear()
    times = [step(True)[1] for _ in range(args.steps)]
    if args.profile and args.lib == "autograd":
        with lib.profiler.profile(use_device="cuda") as prof:
            for _ in range(3):
                step(False)
        if rank == 0:
            table = prof.key_averages().table(sort_by=args.profile_sort, row_limit=40)
            pathlib.Path(args.profile).write_text(table + "\n")
    if distributed:
        dist.barrier()
    if rank == 0:
        med = statistics.median(times)
        out = dict(lib=args.lib, model=args.model, world=world, batch_per_rank=per_rank,
                   bucket_mb=args.bucket_mb,
                   step_ms=round(med * 1e3, 3), samples_per_s=round(world * per_rank / med, 1),
                   device=lib.cuda.get_device_name(local))
        out["parts_ms"] = {k: round(statistics.median(v) * 1e3, 3) for k, v in parts.items()}
        if sync_times:
            out["parts_ms"]["grad_sync_in_backward"] = round(statistics.median(sync_times)
                                                             * 1e3, 3)
            out["grad_bytes_to_host"] = sum(p.numel() * 4 for p in model.parameters())
        print(json.dumps(out), flush=True)
    if distributed:
        dist.destroy_process_group()


def check(args, lib, dist, DDP, model, loss_fn, per_rank, make_batch, rank, world, device,
          distributed):
    """DDP over the ranks on slices of one global batch against one process on the whole."""
    fresh = [p.detach().clone() for p in model.parameters()]
    gen = lib.Generator().manual_seed(1)
    batches = [make_batch(per_rank * world, gen) for _ in range(3)]

    def train(m, wrap, lo, hi):
        m = m.to(device)
        if args.model == "resnet":
            m.eval()
        net = DDP(m) if wrap else m
        opt = lib.optim.SGD(m.parameters(), lr=0.01, momentum=0.9)
        for b in batches:
            opt.zero_grad()
            loss_fn(net, tuple(t[lo:hi].to(device) for t in b)).backward()
            opt.step()
        return [p.detach().to("cpu") for p in m.parameters()]

    ddp = train(model, distributed, rank * per_rank, (rank + 1) * per_rank)
    if rank == 0:
        single = make(args.lib, args.model, lib, *load_lib(args.lib)[1:3])[0]
        with lib.no_grad():
            for p, v in zip(single.parameters(), fresh):
                p.copy_(v)
        whole = train(single, False, 0, per_rank * world)
        diff = max(float((a - b).abs().max()) for a, b in zip(ddp, whole))
        scale = max(float(b.abs().max()) for b in whole)
        print(json.dumps(dict(lib=args.lib, model=args.model, world=world, check="params",
                              max_abs_diff=diff, max_abs_param=scale)), flush=True)
    if distributed:
        dist.barrier()
        dist.destroy_process_group()


if __name__ == "__main__":
    sys.exit(main())
