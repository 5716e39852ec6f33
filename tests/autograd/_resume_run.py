"""A small training run for tests/autograd/test_resume.py, run in a fresh process:

    python _resume_run.py DEVICE STEPS OUT [--save-at K CHECKPOINT] [--resume CHECKPOINT]

trains a dropout MLP with Adam, a StepLR schedule and a shuffling DataLoader for STEPS batches
(several epochs, so a checkpoint falls mid-epoch), optionally writes a checkpoint after batch K
(and goes on), or starts from one, and writes the final model and optimizer state to OUT.

The recipe for an exact mid-epoch resume: the loader shuffles with its own generator, whose
state is saved at the start of each epoch; on resume it is restored, the epoch's permutation
is drawn again and the batches already trained on are skipped.
"""

import itertools
import sys

import autograd
from autograd import nn
from autograd.utils.data import DataLoader, TensorDataset


def main(argv):
    device, steps, out = argv[0], int(argv[1]), argv[2]
    save_at, save_to, resume_from = None, None, None
    if "--save-at" in argv:
        i = argv.index("--save-at")
        save_at, save_to = int(argv[i + 1]), argv[i + 2]
    if "--resume" in argv:
        resume_from = argv[argv.index("--resume") + 1]

    autograd.manual_seed(0)
    x = autograd.randn(40, 6, device=device)
    y = autograd.randint(0, 3, (40,), device=device)
    model = nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Dropout(0.3),
                          nn.Linear(16, 3)).to(device)
    opt = autograd.optim.Adam(model.parameters(), lr=0.05, amsgrad=True)
    sched = autograd.optim.lr_scheduler.StepLR(opt, step_size=3, gamma=0.5)
    shuffling = autograd.Generator().manual_seed(1)
    loader = DataLoader(TensorDataset(x, y), batch_size=8, shuffle=True, generator=shuffling)
    loss_fn = nn.CrossEntropyLoss()

    step, epoch, skip = 0, 0, 0
    if resume_from:
        ck = autograd.load(resume_from, map_location=device)
        model.load_state_dict(ck["model"])
        opt.load_state_dict(ck["opt"])
        sched.load_state_dict(ck["sched"])
        autograd.set_rng_state(ck["rng"])
        shuffling.set_state(ck["epoch_start_shuffling"])
        step, epoch, skip = ck["step"], ck["epoch"], ck["batch"]
    while step < steps:
        epoch_start = shuffling.get_state()
        for batch, (xb, yb) in enumerate(itertools.islice(loader, skip, None), skip):
            loss = loss_fn(model(xb), yb)
            opt.zero_grad()
            loss.backward()
            opt.step()
            sched.step()
            step += 1
            if step == save_at:
                autograd.save({"model": model.state_dict(), "opt": opt.state_dict(),
                               "sched": sched.state_dict(), "rng": autograd.get_rng_state(),
                               "epoch_start_shuffling": epoch_start, "step": step,
                               "epoch": epoch, "batch": batch + 1}, save_to)
            if step == steps:
                break
        epoch, skip = epoch + 1, 0
    autograd.save({"model": model.state_dict(), "opt": opt.state_dict(), "lr": sched.get_last_lr(),
                   "rng": autograd.get_rng_state()}, out)


if __name__ == "__main__":
    main(sys.argv[1:])
