"""Train an LSTM word-level language model on the bundled tiny Shakespeare corpus.

    python examples/word_lm.py                        # Embedding -> 2-layer LSTM 256 -> Linear
    python examples/word_lm.py --quick                # a small model on part of the text
    python examples/word_lm.py --tied --epochs 6

In the style of PyTorch's word_language_model example: the text is split into words and
punctuation (each line ends with <eos>; words outside the --max-vocab most frequent become
<unk>), the first 80% trains, the next 10% validates, the last 10% tests. Training is plain SGD
with the gradient norm clipped (nn.utils.clip_grad_norm_) and truncated backpropagation through
time: the batch's streams are cut into --bptt steps and the LSTM's state is carried from one
chunk to the next but detached, so gradients stop at the chunk boundary. The learning rate is
divided by 4 whenever the validation loss does not improve. Prints the loss and perplexity per
epoch, then `test ppl: N.NN`.
"""

import argparse
import collections
import math
import re
import sys
import time

import autograd as torch
import autograd.nn as nn
from autograd.datasets import load_text

_TOKEN = re.compile(r"[A-Za-z']+|[^\sA-Za-z']")


class Corpus:
    """The corpus as three 1-d int64 tensors of word ids (train, valid, test) and the vocabulary
    (idx2word; word2idx), keeping the max_vocab - 2 most frequent words plus <unk> and <eos>."""

    def __init__(self, text, max_vocab):
        lines = [_TOKEN.findall(line) + ["<eos>"] for line in text.splitlines() if line.strip()]
        counts = collections.Counter(w for line in lines for w in line if w != "<eos>")
        self.idx2word = ["<unk>", "<eos>"] + [w for w, _ in counts.most_common(max_vocab - 2)]
        self.word2idx = {w: i for i, w in enumerate(self.idx2word)}
        ids = [self.word2idx.get(w, 0) for line in lines for w in line]
        a, b = int(0.8 * len(ids)), int(0.9 * len(ids))
        self.train = torch.tensor(ids[:a], dtype=torch.long)
        self.valid = torch.tensor(ids[a:b], dtype=torch.long)
        self.test = torch.tensor(ids[b:], dtype=torch.long)


class RNNModel(nn.Module):
    """Embedding -> dropout -> multi-layer LSTM -> dropout -> Linear decoder to vocabulary logits.
    tie=True shares the decoder's weight with the embedding (needs nhid == ninp)."""

    def __init__(self, ntoken, ninp, nhid, nlayers, dropout=0.2, tie=False):
        super().__init__()
        self.drop = nn.Dropout(dropout)
        self.encoder = nn.Embedding(ntoken, ninp)
        self.rnn = nn.LSTM(ninp, nhid, nlayers, dropout=dropout)
        self.decoder = nn.Linear(nhid, ntoken)
        if tie:
            if nhid != ninp:
                raise ValueError(f"RNNModel(): tied weights need nhid == ninp, got nhid={nhid} "
                                 f"and ninp={ninp}")
            self.decoder.weight = self.encoder.weight
        self.nhid, self.nlayers = nhid, nlayers
        nn.init.uniform_(self.encoder.weight, -0.1, 0.1)
        nn.init.zeros_(self.decoder.bias)
        if not tie:
            nn.init.uniform_(self.decoder.weight, -0.1, 0.1)

    def forward(self, input, hidden):
        """Logits (seq, batch, ntoken) for word ids input (seq, batch), and the new state."""
        emb = self.drop(self.encoder(input))
        output, hidden = self.rnn(emb, hidden)
        return self.decoder(self.drop(output)), hidden

    def init_hidden(self, bsz, device):
        shape = (self.nlayers, bsz, self.nhid)
        return torch.zeros(shape, device=device), torch.zeros(shape, device=device)


def batchify(data, bsz, device):
    """Cut the 1-d data into bsz parallel streams: a (len // bsz, bsz) tensor, column j one
    stream (the remainder is dropped)."""
    nbatch = data.size(0) // bsz
    return data[:nbatch * bsz].view(bsz, -1).t().contiguous().to(device)


def get_batch(source, i, bptt):
    """The chunk of source starting at row i (at most bptt rows) and its next-word targets."""
    seq_len = min(bptt, len(source) - 1 - i)
    return source[i:i + seq_len], source[i + 1:i + 1 + seq_len].reshape(-1)


def repackage_hidden(h):
    """The state with its history cut off (truncated BPTT)."""
    if isinstance(h, torch.Tensor):
        return h.detach()
    return tuple(repackage_hidden(v) for v in h)


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


def evaluate(model, source, args):
    """The mean per-word cross-entropy of model on the batchified source."""
    model.eval()
    total, count = 0.0, 0
    hidden = model.init_hidden(source.size(1), args.device)
    criterion = nn.CrossEntropyLoss(reduction="sum")
    with torch.no_grad():
        for i in range(0, source.size(0) - 1, args.bptt):
            data, targets = get_batch(source, i, args.bptt)
            output, hidden = model(data, hidden)
            total += criterion(output.view(-1, output.size(-1)), targets).item()
            count += targets.numel()
    model.train()
    return total / count


def train(args):
    """Train as args say, printing per-epoch progress and `test ppl: ...`. Returns a dict with
    the per-epoch train and valid losses and the test loss."""
    torch.manual_seed(args.seed)
    text = load_text("tinyshakespeare")
    if args.chars:
        text = text[:args.chars]
    corpus = Corpus(text, args.max_vocab)
    ntokens = len(corpus.idx2word)
    train_data = batchify(corpus.train, args.batch_size, args.device)
    val_data = batchify(corpus.valid, args.eval_batch_size, args.device)
    test_data = batchify(corpus.test, args.eval_batch_size, args.device)
    print(f"vocabulary {ntokens} words, {len(corpus.train):,} train / {len(corpus.valid):,} "
          f"valid / {len(corpus.test):,} test tokens, device {args.device}")

    model = RNNModel(ntokens, args.emsize, args.nhid, args.nlayers, args.dropout,
                     args.tied).to(args.device)
    criterion = nn.CrossEntropyLoss()
    lr = args.lr
    optimizer = torch.optim.SGD(model.parameters(), lr=lr)
    history = {"train": [], "valid": []}
    best_val = None
    nbatches = (train_data.size(0) - 2) // args.bptt + 1
    start_all = time.perf_counter()
    for epoch in range(1, args.epochs + 1):
        bar = ProgressBar(nbatches, f"epoch {epoch:2d}/{args.epochs}")
        hidden = model.init_hidden(args.batch_size, args.device)
        total, count = 0.0, 0
        start = time.perf_counter()
        for step, i in enumerate(range(0, train_data.size(0) - 1, args.bptt), 1):
            data, targets = get_batch(train_data, i, args.bptt)
            hidden = repackage_hidden(hidden)
            optimizer.zero_grad()
            output, hidden = model(data, hidden)
            loss = criterion(output.view(-1, ntokens), targets)
            loss.backward()
            nn.utils.clip_grad_norm_(model.parameters(), args.clip)
            optimizer.step()
            total += loss.item() * targets.numel()
            count += targets.numel()
            mean = total / count
            rate = count / (time.perf_counter() - start)
            bar.update(step, loss=f"{mean:.3f}", ppl=f"{math.exp(mean):8.2f}",
                       lr=f"{lr:g}", speed=f"{rate:,.0f} words/s")
        val_loss = evaluate(model, val_data, args)
        history["train"].append(total / count)
        history["valid"].append(val_loss)
        print(f"epoch {epoch:2d}: valid loss {val_loss:.3f}, valid ppl {math.exp(val_loss):.2f}")
        if best_val is None or val_loss < best_val:
            best_val = val_loss
        else:
            lr /= 4.0
            for group in optimizer.param_groups:
                group["lr"] = lr
    test_loss = evaluate(model, test_data, args)
    history["test"] = test_loss
    print(f"trained {args.epochs} epochs in {time.perf_counter() - start_all:.1f} s on "
          f"{args.device}")
    print(f"test loss: {test_loss:.3f}")
    print(f"test ppl: {math.exp(test_loss):.2f}")
    return history


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--device", choices=["cpu", "gpu", "cuda"], default="cpu",
                   help="cuda is autograd's name for the OpenCL device, as in PyTorch scripts")
    p.add_argument("--emsize", type=int, default=256, help="word embedding size")
    p.add_argument("--nhid", type=int, default=256, help="LSTM units per layer")
    p.add_argument("--nlayers", type=int, default=2)
    p.add_argument("--max-vocab", type=int, default=10000,
                   help="keep this many words (the rest become <unk>)")
    p.add_argument("--lr", type=float, default=20.0, help="initial SGD learning rate")
    p.add_argument("--clip", type=float, default=0.25, help="max global gradient norm")
    p.add_argument("--epochs", type=int, default=4)
    p.add_argument("--batch-size", type=int, default=20)
    p.add_argument("--eval-batch-size", type=int, default=10)
    p.add_argument("--bptt", type=int, default=35, help="truncated BPTT length")
    p.add_argument("--dropout", type=float, default=0.2)
    p.add_argument("--tied", action="store_true", help="tie the decoder to the embedding")
    p.add_argument("--chars", type=int, default=0,
                   help="use only the first N characters of the corpus (0: all)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--quick", action="store_true",
                   help="a small model on part of the text (under a minute) for smoke tests")
    args = p.parse_args(argv)
    if args.quick:
        args.chars, args.max_vocab, args.emsize, args.nhid = 120_000, 1000, 64, 64
        args.epochs, args.bptt, args.dropout = 3, 20, 0.0
    if min(args.emsize, args.nhid, args.nlayers, args.epochs, args.batch_size,
           args.eval_batch_size, args.bptt) < 1 or args.max_vocab < 3:
        p.error("--emsize, --nhid, --nlayers, --epochs, --batch-size, --eval-batch-size and "
                "--bptt must be positive, --max-vocab at least 3")
    if args.tied and args.emsize != args.nhid:
        p.error(f"--tied needs --emsize == --nhid, got {args.emsize} and {args.nhid}")
    return args


if __name__ == "__main__":
    train(parse_args())
