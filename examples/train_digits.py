"""Train an MLP or a small CNN on the bundled 8x8 handwritten digits (UCI, 1,797 images).

    python examples/train_digits.py                      # the CNN on the CPU
    python examples/train_digits.py --model mlp --epochs 20
    python examples/train_digits.py --device gpu --plot curves.png
    python examples/train_digits.py --checkpoint ck.safetensors     # a checkpoint every epoch
    python examples/train_digits.py --resume ck.safetensors         # go on where it stopped
    mpiexec -n 2 python examples/train_digits.py         # data-parallel over 2 MPI ranks

Trains on the fixed train split, reports loss, accuracy and samples/s per epoch, prints
`test accuracy: NN.N%` for the test split, saves the model with autograd.save (safetensors),
loads it into a fresh model and checks that it scores the same.

--checkpoint PATH saves, after every epoch, everything the run depends on: the model, the
optimizer (moments and step counts), the epoch, the global random state and the loader's
shuffling generator (and the history). --resume PATH restores them and runs the remaining
epochs (up to --epochs, counted from the start), giving bitwise the parameters of the
uninterrupted run.
"""

import argparse
import os
import sys
import tempfile
import time

import autograd
from autograd import nn
from autograd.datasets import load_digits
from autograd.nn.parallel import DistributedDataParallel
from autograd.utils.data import DataLoader, DistributedSampler, TensorDataset


def make_model(kind):
    """The network for 1x8x8 digit images: 'mlp' (64-128-10) or 'cnn' (two conv blocks)."""
    if kind == "mlp":
        return nn.Sequential(
            nn.Flatten(),
            nn.Linear(64, 128), nn.ReLU(),
            nn.Linear(128, 10),
        )
    return nn.Sequential(
        nn.Conv2d(1, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),    # 16 x 4 x 4
        nn.Conv2d(16, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),   # 32 x 2 x 2
        nn.Flatten(),
        nn.Linear(32 * 2 * 2, 10),
    )


def evaluate(model, images, labels, batch_size=512):
    """Accuracy (0..1) of model on the given images."""
    model.eval()
    correct = 0
    with autograd.no_grad():
        for start in range(0, images.shape[0], batch_size):
            logits = model(images[start:start + batch_size])
            pred = logits.argmax(dim=1)
            correct += int((pred == labels[start:start + batch_size]).sum().item())
    model.train()
    return correct / images.shape[0]


class ProgressBar:
    """A one-line progress bar: [#####.....] step/total and the given stats."""

    def __init__(self, total, prefix, stream=sys.stdout, width=24):
        self.total, self.prefix, self.stream, self.width = total, prefix, stream, width
        self.tty = stream.isatty()

    def update(self, done, **stats):
        if not self.tty and done < self.total:
            return  # in a log file, print only the finished line
        filled = self.width * done // max(self.total, 1)
        bar = "#" * filled + "." * (self.width - filled)
        text = "  ".join(f"{k} {v}" for k, v in stats.items())
        end = "\n" if done >= self.total else ""
        self.stream.write(f"\r{self.prefix} [{bar}] {done}/{self.total}  {text}{end}")
        self.stream.flush()


def train(args):
    autograd.manual_seed(args.seed)
    device = args.device
    train_x, train_y = load_digits("train")
    test_x, test_y = load_digits("test")
    train_x, train_y = train_x.to(device), train_y.to(device)
    test_x, test_y = test_x.to(device), test_y.to(device)
    if args.model == "mlp":
        train_x, test_x = train_x.reshape(-1, 64), test_x.reshape(-1, 64)

    model = net = make_model(args.model).to(device)
    optimizer = autograd.optim.Adam(model.parameters(), lr=args.lr)
    loss_fn = nn.CrossEntropyLoss()
    # --amp: mixed precision as PyTorch programs write it (float16 matmul/conv on the GPU,
    # bfloat16 on the CPU; the loss scaled so small float16 gradients survive)
    scaler = autograd.amp.GradScaler(device, enabled=args.amp)
    shuffling = autograd.Generator().manual_seed(args.seed)
    loader = DataLoader(TensorDataset(train_x, train_y), batch_size=args.batch_size, shuffle=True,
                        generator=shuffling)
    # -- data parallel under mpiexec: each rank takes batch_size / world of every global batch
    # (the same global batch), gradients are averaged by DDP; only rank 0 prints and saves
    sampler = None
    rank = 0
    if autograd.distributed.launched_by_mpiexec():
        autograd.distributed.init_process_group("mpi")
        rank, world = autograd.distributed.get_rank(), autograd.distributed.get_world_size()
        model = DistributedDataParallel(net)
        sampler = DistributedSampler(loader.dataset, seed=args.seed)
        loader = DataLoader(loader.dataset, batch_size=max(1, args.batch_size // world),
                            sampler=sampler)
        if rank != 0:
            sys.stdout = open(os.devnull, "w")  # noqa: SIM115  (for the rest of the run)

    history = {"loss": [], "train_acc": [], "test_acc": []}
    first = 1
    if args.resume:
        first = resume(args, net, optimizer, shuffling, history) + 1
    start_all = time.perf_counter()
    for epoch in range(first, args.epochs + 1):
        if sampler is not None:
            sampler.set_epoch(epoch)
        bar = ProgressBar(len(loader), f"epoch {epoch:2d}/{args.epochs}")
        total_loss = correct = seen = 0
        start = time.perf_counter()
        for step, (x, y) in enumerate(loader, 1):
            with autograd.autocast(device, enabled=args.amp):
                logits = model(x)
                loss = loss_fn(logits, y)
            optimizer.zero_grad()
            scaler.scale(loss).backward()
            scaler.step(optimizer)
            scaler.update()
            n = y.shape[0]
            total_loss += loss.item() * n
            correct += int((logits.argmax(dim=1) == y).sum().item())
            seen += n
            rate = seen / (time.perf_counter() - start)
            bar.update(step, loss=f"{total_loss / seen:.4f}", acc=f"{100 * correct / seen:5.1f}%",
                       speed=f"{rate:,.0f} samples/s")
        history["loss"].append(total_loss / seen)
        history["train_acc"].append(correct / seen)
        history["test_acc"].append(evaluate(net, test_x, test_y))
        if args.checkpoint and rank == 0:
            save_checkpoint(args, epoch, net, optimizer, shuffling, history)
    elapsed = time.perf_counter() - start_all

    accuracy = evaluate(net, test_x, test_y)
    print(f"trained in {elapsed:.1f} s on {device}")
    print(f"test accuracy: {100 * accuracy:.1f}%")
    if rank == 0:
        check_save_load(net, args, test_x, test_y, accuracy)
    if args.plot and rank == 0:
        plot(history, args.plot)
    return accuracy


def save_checkpoint(args, epoch, model, optimizer, shuffling, history):
    """Write the state after `epoch` to args.checkpoint (atomically: an interrupted save
    keeps the previous checkpoint)."""
    autograd.save({"model_kind": args.model, "epoch": epoch, "model": model.state_dict(),
                   "optimizer": optimizer.state_dict(), "rng": autograd.get_rng_state(),
                   "shuffling": shuffling.get_state(), "history": history}, args.checkpoint)


def resume(args, model, optimizer, shuffling, history):
    """Restore the state saved in args.resume; returns the epoch it was saved after.
    SystemExit when it is a checkpoint of another model kind."""
    ck = autograd.load(args.resume, map_location=args.device)
    if ck["model_kind"] != args.model:
        raise SystemExit(f"--resume {args.resume}: a checkpoint of the {ck['model_kind']} "
                         f"model, not of --model {args.model}")
    model.load_state_dict(ck["model"])
    optimizer.load_state_dict(ck["optimizer"])
    autograd.set_rng_state(ck["rng"])
    shuffling.set_state(ck["shuffling"])
    for key, values in ck["history"].items():
        history[key].extend(values)
    print(f"resumed from {args.resume} after epoch {ck['epoch']}")
    return ck["epoch"]


def check_save_load(model, args, test_x, test_y, accuracy):
    """Save with autograd.save, load into a fresh model, and check it scores the same."""
    path = args.save or os.path.join(tempfile.mkdtemp(), f"digits_{args.model}.safetensors")
    autograd.save(model.state_dict(), path)
    fresh = make_model(args.model).to(args.device)
    fresh.load_state_dict(autograd.load(path, device=args.device))
    again = evaluate(fresh, test_x, test_y)
    if again != accuracy:
        raise SystemExit(f"reloaded model scores {100 * again:.1f}%, expected "
                         f"{100 * accuracy:.1f}%")
    print(f"saved to {path} and reloaded: same accuracy")


def plot(history, path):
    """Write the loss and accuracy curves to path (needs matplotlib)."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print(f"--plot {path}: matplotlib is not installed (pip install matplotlib); "
              f"no plot written", file=sys.stderr)
        return
    epochs = range(1, len(history["loss"]) + 1)
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(10, 4))
    ax1.plot(epochs, history["loss"], marker="o")
    ax1.set(xlabel="epoch", ylabel="training loss", title="loss")
    ax2.plot(epochs, [100 * a for a in history["train_acc"]], marker="o", label="train")
    ax2.plot(epochs, [100 * a for a in history["test_acc"]], marker="o", label="test")
    ax2.set(xlabel="epoch", ylabel="accuracy (%)", title="accuracy")
    ax2.legend()
    fig.tight_layout()
    fig.savefig(path)
    print(f"curves written to {path}")


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--model", choices=["mlp", "cnn"], default="cnn")
    p.add_argument("--device", choices=["cpu", "gpu"], default="cpu")
    p.add_argument("--epochs", type=int, default=None,
                   help="passes over the training set (default: 15 for the cnn, 20 for the mlp)")
    p.add_argument("--batch-size", type=int, default=32)
    p.add_argument("--lr", type=float, default=None,
                   help="Adam learning rate (default: 0.01 for the cnn, 0.005 for the mlp)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--amp", action="store_true",
                   help="mixed precision: autocast + GradScaler (float16 on the GPU)")
    p.add_argument("--save", default=None, help="where to save the model (default: a temp file)")
    p.add_argument("--checkpoint", default=None, metavar="PATH",
                   help="save a checkpoint to PATH after every epoch")
    p.add_argument("--resume", default=None, metavar="PATH",
                   help="restore the checkpoint PATH and train the remaining epochs")
    p.add_argument("--plot", default=None, metavar="FILE.png",
                   help="write loss/accuracy curves (needs matplotlib)")
    args = p.parse_args(argv)
    if args.epochs is None:
        args.epochs = 15 if args.model == "cnn" else 20
    if args.lr is None:
        args.lr = 0.01 if args.model == "cnn" else 0.005
    if args.epochs < 1 or args.batch_size < 1:
        p.error("--epochs and --batch-size must be positive")
    return args


if __name__ == "__main__":
    train(parse_args())
