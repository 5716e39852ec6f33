"""Which host waits and transfers one training step makes on the gpu, and from where: a small
GPT step (examples/train_gpt.py's loop body: get_batch, forward, backward, clip_grad_norm_,
AdamW, LambdaLR, loss.item()) and a small CNN step (bench's CNN, SGD, loss.item()), each run
once to warm up and once under autograd.profiler.profile(with_stack=True).

    PYTHONPATH=. python bench/count_blocking_reads.py
"""
import collections
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "examples"))
import train_gpt  # noqa: E402

import autograd  # noqa: E402
from autograd import nn  # noqa: E402

from test_bench_training import _cnn  # noqa: E402

WATCHED = ("clEnqueueReadBuffer (blocking)", "clEnqueueReadBuffer", "clEnqueueWriteBuffer",
           "clFinish", "clWaitForEvents (queue bound)")


def _site(stack, n=3):
    """The innermost carray frame (Python frames only: Cython's are not on the stack) and the
    innermost n frames outside carray, as folder/file:line function."""
    out = []
    inner = None
    for frame in stack:
        path, rest = frame.split("(", 1)
        line, func = rest.split("): ")
        where = f"{'/'.join(path.split('/')[-2:])}:{line} {func}"
        if "/carray/" in path:
            inner = inner or where
            continue
        out.append(where)
        if len(out) == n:
            break
    return f"[{inner}] " + " < ".join(out) if inner else " < ".join(out)


def report(name, step):
    step()
    with autograd.profiler.profile(with_stack=True) as prof:
        step()
    counts = collections.Counter()
    for e in prof.events():
        if e.name in WATCHED:
            counts[(e.name, _site(e.stack or []))] += 1
    print(f"== {name}: host waits and transfers in one step")
    for (what, site), n in sorted(counts.items()):
        print(f"  {n:3d} x {what:32s} {site}")


def gpt_step():
    autograd.manual_seed(0)
    args = train_gpt.parse_args(["--device", "gpu", "--n-layer", "2", "--n-embd", "64",
                                 "--block-size", "32", "--batch-size", "8"])
    data = autograd.randint(0, 60, (5000,))
    model = train_gpt.GPT(60, args.block_size, args.n_layer, args.n_head, args.n_embd).to("gpu")
    opt = model.configure_optimizer(args.weight_decay, args.lr)
    sched = autograd.optim.lr_scheduler.LambdaLR(opt, lambda s: 1.0)
    gen = autograd.Generator().manual_seed(0)

    def step():
        x, y = train_gpt.get_batch(data, args.block_size, args.batch_size, "gpu", gen)
        _, loss = model(x, y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), args.grad_clip)
        opt.step()
        sched.step()
        loss.item()
    return step


def cnn_step():
    autograd.manual_seed(0)
    model = _cnn(nn).to("gpu")
    x = autograd.randn(32, 1, 28, 28).to("gpu")
    y = autograd.randint(0, 10, (32,)).to("gpu")
    opt = autograd.optim.SGD(model.parameters(), lr=0.01)
    loss_fn = nn.CrossEntropyLoss()

    def step():
        opt.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        opt.step()
        loss.item()
    return step


if __name__ == "__main__":
    report("GPT (2 layers, 64 wide, batch 8 x 32, AdamW, clip_grad_norm_)", gpt_step())
    report("CNN (2 conv, batch 32, SGD)", cnn_step())
