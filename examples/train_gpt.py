"""Train a small character-level GPT (nanoGPT-like) on the bundled tiny Shakespeare corpus.

    python examples/train_gpt.py                      # 4 layers, 4 heads, 128 wide, block 64
    python examples/train_gpt.py --quick              # a tiny model for under a minute
    python examples/train_gpt.py --device gpu --steps 5000
    mpiexec -n 2 python examples/train_gpt.py --quick # data-parallel: batch_size / 2 per rank

The model is GPT-2's shape in miniature: token and position embeddings, pre-norm blocks of causal
self-attention (F.scaled_dot_product_attention with is_causal=True) and a GELU MLP, a final
LayerNorm and a language-model head tied to the token embedding (--no-tie unties it). Trained
with AdamW (weight decay on matrices only), a linear warmup then a cosine decay of the learning
rate, and gradient clipping. The first 90% of the text trains, the last 10% validates: every
--eval-interval steps a progress bar line ends with the train and val loss. At the end prints
`val loss: N.NNNN` and samples text from the model (temperature and top-k).

Under mpiexec (or torchrun) the run is data-parallel: every rank draws the same global batch and
trains on its 1/world share of it, DistributedDataParallel averages the gradients, so the steps
are those of one process on the whole batch; only rank 0 prints and samples. The default run
(800 steps, 0.81M parameters) reaches val loss 1.8954 in about 2.5 minutes on 2 idle CPU cores;
--quick (150 steps of a 2-layer, 32-wide model) runs in seconds.

Written as a PyTorch user would write it: `import autograd as torch` is the only change from a
PyTorch script.
"""

import argparse
import math
import os
import sys
import time

import autograd as torch
import autograd.distributed as dist
import autograd.nn as nn
import autograd.nn.functional as F
from autograd.datasets import load_text
from autograd.nn.parallel import DistributedDataParallel


class CausalSelfAttention(nn.Module):
    """Multi-head self-attention where each position sees only itself and earlier positions."""

    def __init__(self, n_embd, n_head, dropout):
        super().__init__()
        self.n_head = n_head
        self.c_attn = nn.Linear(n_embd, 3 * n_embd)    # query, key, value in one product
        self.c_proj = nn.Linear(n_embd, n_embd)
        self.dropout = dropout
        self.resid_dropout = nn.Dropout(dropout)

    def forward(self, x):
        B, T, C = x.shape
        q, k, v = self.c_attn(x).split(C, dim=2)
        # (B, T, C) -> (B, n_head, T, head size)
        q = q.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        k = k.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        v = v.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True,
                                           dropout_p=self.dropout if self.training else 0.0)
        y = y.transpose(1, 2).contiguous().view(B, T, C)
        return self.resid_dropout(self.c_proj(y))


class MLP(nn.Module):
    """Position-wise feed-forward: Linear to 4x wider, GELU, Linear back."""

    def __init__(self, n_embd, dropout):
        super().__init__()
        self.c_fc = nn.Linear(n_embd, 4 * n_embd)
        self.gelu = nn.GELU()
        self.c_proj = nn.Linear(4 * n_embd, n_embd)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x):
        return self.dropout(self.c_proj(self.gelu(self.c_fc(x))))


class Block(nn.Module):
    """A pre-norm transformer block: x + attn(ln(x)), then x + mlp(ln(x))."""

    def __init__(self, n_embd, n_head, dropout):
        super().__init__()
        self.ln_1 = nn.LayerNorm(n_embd)
        self.attn = CausalSelfAttention(n_embd, n_head, dropout)
        self.ln_2 = nn.LayerNorm(n_embd)
        self.mlp = MLP(n_embd, dropout)

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        return x + self.mlp(self.ln_2(x))


class GPT(nn.Module):
    """A GPT language model over vocab_size tokens with a context of block_size tokens."""

    def __init__(self, vocab_size, block_size, n_layer, n_head, n_embd, dropout=0.0, tie=True):
        super().__init__()
        self.block_size = block_size
        self.transformer = nn.ModuleDict(dict(
            wte=nn.Embedding(vocab_size, n_embd),
            wpe=nn.Embedding(block_size, n_embd),
            drop=nn.Dropout(dropout),
            h=nn.ModuleList([Block(n_embd, n_head, dropout) for _ in range(n_layer)]),
            ln_f=nn.LayerNorm(n_embd),
        ))
        self.lm_head = nn.Linear(n_embd, vocab_size, bias=False)
        if tie:
            self.transformer.wte.weight = self.lm_head.weight
        self.apply(self._init_weights)
        # GPT-2's scaled init of the projections that feed the residual stream
        for name, p in self.named_parameters():
            if name.endswith("c_proj.weight"):
                nn.init.normal_(p, mean=0.0, std=0.02 / math.sqrt(2 * n_layer))

    def _init_weights(self, module):
        if isinstance(module, nn.Linear):
            nn.init.normal_(module.weight, mean=0.0, std=0.02)
            if module.bias is not None:
                nn.init.zeros_(module.bias)
        elif isinstance(module, nn.Embedding):
            nn.init.normal_(module.weight, mean=0.0, std=0.02)

    def forward(self, idx, targets=None):
        """Logits (B, T, vocab) for token ids idx (B, T), and the cross-entropy loss against
        targets (B, T) when given (else None)."""
        B, T = idx.shape
        if T > self.block_size:
            raise ValueError(f"GPT.forward(): sequence of length {T} is longer than the block "
                             f"size {self.block_size}")
        pos = torch.arange(0, T, dtype=torch.long, device=idx.device)
        x = self.transformer.drop(self.transformer.wte(idx) + self.transformer.wpe(pos))
        for block in self.transformer.h:
            x = block(x)
        logits = self.lm_head(self.transformer.ln_f(x))
        loss = None
        if targets is not None:
            loss = F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1))
        return logits, loss

    def configure_optimizer(self, weight_decay, lr, betas=(0.9, 0.95)):
        """AdamW with weight decay on the matrices (embeddings, Linear weights) only."""
        params = [p for p in self.parameters() if p.requires_grad]
        groups = [{"params": [p for p in params if p.dim() >= 2], "weight_decay": weight_decay},
                  {"params": [p for p in params if p.dim() < 2], "weight_decay": 0.0}]
        return torch.optim.AdamW(groups, lr=lr, betas=betas)

    @torch.no_grad()
    def generate(self, idx, max_new_tokens, temperature=1.0, top_k=None, generator=None):
        """Extend idx (B, T) by max_new_tokens tokens sampled one at a time from the model."""
        for _ in range(max_new_tokens):
            idx_cond = idx if idx.size(1) <= self.block_size else idx[:, -self.block_size:]
            logits, _ = self(idx_cond)
            logits = logits[:, -1, :] / temperature
            if top_k is not None:
                v, _ = torch.topk(logits, min(top_k, logits.size(-1)))
                logits[logits < v[:, [-1]]] = -float("Inf")
            probs = F.softmax(logits, dim=-1)
            idx_next = torch.multinomial(probs, num_samples=1, generator=generator)
            idx = torch.cat((idx, idx_next), dim=1)
        return idx


class CharTokenizer:
    """Characters <-> integer ids, the vocabulary being the sorted set of the text's characters."""

    def __init__(self, text):
        self.chars = sorted(set(text))
        self.stoi = {c: i for i, c in enumerate(self.chars)}

    def encode(self, s):
        return [self.stoi[c] for c in s]

    def decode(self, ids):
        return "".join(self.chars[i] for i in ids)


class ProgressBar:
    """A one-line progress bar: [#####.....] step/total and the given stats."""

    def __init__(self, total, prefix, stream=None, width=24):
        stream = sys.stdout if stream is None else stream     # (rank > 0 silences sys.stdout)
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


def get_batch(data, block_size, batch_size, device, generator):
    """A random batch (x, y) of batch_size windows of data, y being x shifted by one token."""
    ix = torch.randint(len(data) - block_size, (batch_size,), generator=generator)
    x = torch.stack([data[i:i + block_size] for i in ix])
    y = torch.stack([data[i + 1:i + 1 + block_size] for i in ix])
    return x.to(device), y.to(device)


@torch.no_grad()
def estimate_loss(model, splits, args, generator):
    """The mean loss over args.eval_iters random batches of each split (a dict name -> loss)."""
    model.eval()
    out = {}
    for name, data in splits.items():
        losses = [model(*get_batch(data, args.block_size, args.batch_size, args.device,
                                   generator))[1].item()
                  for _ in range(args.eval_iters)]
        out[name] = sum(losses) / len(losses)
    model.train()
    return out


def lr_at(step, args):
    """Linear warmup over args.warmup steps, then cosine decay to args.min_lr at args.steps."""
    if step < args.warmup:
        return args.lr * (step + 1) / args.warmup
    progress = min(1.0, (step - args.warmup) / max(1, args.steps - args.warmup))
    return args.min_lr + 0.5 * (1.0 + math.cos(math.pi * progress)) * (args.lr - args.min_lr)


# environment variables that set the number of processes: torchrun's, MPICH's, Open MPI's
_WORLD_VARS = ("WORLD_SIZE", "PMI_SIZE", "OMPI_COMM_WORLD_SIZE")


def start_distributed(batch_size):
    """(rank, world size): under a launcher with several processes, start the process group
    (MPI under mpiexec, else gloo as torchrun wants) and silence the other ranks' output."""
    sizes = [int(os.environ[v]) for v in _WORLD_VARS if os.environ.get(v, "").isdigit()]
    if not sizes or sizes[0] < 2:
        return 0, 1
    dist.init_process_group("gloo" if "WORLD_SIZE" in os.environ else "mpi")
    rank, world = dist.get_rank(), dist.get_world_size()
    if batch_size % world:
        raise SystemExit(f"--batch-size ({batch_size}) must be a multiple of the number of "
                         f"processes ({world})")
    if rank != 0:
        sys.stdout = open(os.devnull, "w")  # noqa: SIM115  (for the rest of the run)
    return rank, world


def train(args):
    """Train as args say; print progress, the final `val loss: ...` and a sample. Returns a dict
    with the train/val loss history (one entry per evaluation) and the final val loss."""
    rank, world = start_distributed(args.batch_size)
    torch.manual_seed(args.seed)
    data_gen = torch.Generator().manual_seed(args.seed)
    text = load_text("tinyshakespeare")
    if args.chars:
        text = text[:args.chars]
    tok = CharTokenizer(text)
    data = torch.tensor(tok.encode(text), dtype=torch.long)
    n = int(0.9 * len(data))
    splits = {"train": data[:n], "val": data[n:]}

    model = GPT(len(tok.chars), args.block_size, args.n_layer, args.n_head, args.n_embd,
                dropout=args.dropout, tie=not args.no_tie).to(args.device)
    n_params = sum(p.numel() for p in model.parameters())
    print(f"{n_params / 1e6:.2f}M parameters, vocab {len(tok.chars)}, {len(data):,} tokens "
          f"({n:,} train), device {args.device}")
    optimizer = model.configure_optimizer(args.weight_decay, args.lr)
    net = model                 # the model itself, for evaluation and sampling
    share = args.batch_size // world
    if world > 1:
        model = DistributedDataParallel(model)
    # LambdaLR multiplies the base lr; lr_at gives the absolute value
    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda s: lr_at(s, args) / args.lr)

    history = {"step": [], "train": [], "val": []}
    start = time.perf_counter()
    step = 0
    while step < args.steps:
        chunk = min(args.eval_interval, args.steps - step)
        bar = ProgressBar(chunk, f"step {step + chunk:5d}/{args.steps}")
        t0 = time.perf_counter()
        for i in range(1, chunk + 1):
            # every rank draws the same global batch and takes its share
            x, y = get_batch(splits["train"], args.block_size, args.batch_size, args.device,
                             data_gen)
            _, loss = model(x[rank * share:(rank + 1) * share], y[rank * share:(rank + 1) * share])
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            nn.utils.clip_grad_norm_(net.parameters(), args.grad_clip)
            optimizer.step()
            scheduler.step()
            step += 1
            if world > 1:       # the global batch's loss, for the progress line
                loss = loss.detach().clone()
                dist.all_reduce(loss)
                loss /= world
            stats = {"loss": f"{loss.item():.4f}", "lr": f"{scheduler.get_last_lr()[0]:.2e}",
                     "speed": f"{1000 * (time.perf_counter() - t0) / i:.0f} ms/step"}
            if i == chunk:
                # every rank evaluates (so that data_gen stays the same on all of them)
                losses = estimate_loss(net, splits, args, data_gen)
                for k in ("train", "val"):
                    history[k].append(losses[k])
                history["step"].append(step)
                stats.update(train=f"{losses['train']:.4f}", val=f"{losses['val']:.4f}")
            bar.update(i, **stats)
    elapsed = time.perf_counter() - start
    history["final_val"] = history["val"][-1]
    print(f"trained {args.steps} steps in {elapsed:.1f} s on {args.device}")
    print(f"val loss: {history['final_val']:.4f}")

    if rank != 0:
        dist.destroy_process_group()
        return history
    context = torch.tensor([tok.encode("\n")], dtype=torch.long, device=args.device)
    sample = net.generate(context, args.sample_chars, temperature=args.temperature,
                            top_k=args.top_k, generator=torch.Generator().manual_seed(args.seed))
    print("--- sample ---")
    print(tok.decode(sample[0].tolist()))
    if world > 1:
        dist.destroy_process_group()
    return history


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--device", choices=["cpu", "gpu", "cuda"], default="cpu",
                   help="cuda is autograd's name for the OpenCL device, as in PyTorch scripts")
    p.add_argument("--steps", type=int, default=800, help="optimizer steps (default 800)")
    p.add_argument("--batch-size", type=int, default=32)
    p.add_argument("--block-size", type=int, default=64, help="context length in characters")
    p.add_argument("--n-layer", type=int, default=4)
    p.add_argument("--n-head", type=int, default=4)
    p.add_argument("--n-embd", type=int, default=128)
    p.add_argument("--dropout", type=float, default=0.0)
    p.add_argument("--no-tie", action="store_true", help="do not tie lm_head to the embedding")
    p.add_argument("--lr", type=float, default=2e-3, help="peak learning rate")
    p.add_argument("--min-lr", type=float, default=2e-4, help="learning rate at the end")
    p.add_argument("--warmup", type=int, default=100, help="linear warmup steps")
    p.add_argument("--weight-decay", type=float, default=0.1)
    p.add_argument("--grad-clip", type=float, default=1.0, help="max global gradient norm")
    p.add_argument("--eval-interval", type=int, default=200, help="steps between evaluations")
    p.add_argument("--eval-iters", type=int, default=20, help="batches per evaluation")
    p.add_argument("--sample-chars", type=int, default=500, help="characters to generate")
    p.add_argument("--temperature", type=float, default=0.8)
    p.add_argument("--top-k", type=int, default=10)
    p.add_argument("--chars", type=int, default=0,
                   help="use only the first N characters of the corpus (0: all)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--quick", action="store_true",
                   help="a tiny model and short run (under a minute) for smoke tests")
    args = p.parse_args(argv)
    if args.quick:
        args.steps, args.n_layer, args.n_head, args.n_embd, args.block_size = 150, 2, 2, 32, 32
        args.batch_size, args.eval_interval, args.eval_iters = 16, 50, 5
        args.warmup, args.sample_chars, args.lr = 10, 100, 1e-2
    if min(args.steps, args.batch_size, args.block_size, args.n_layer, args.n_head,
           args.n_embd, args.eval_interval, args.eval_iters, args.warmup) < 1:
        p.error("--steps, --batch-size, --block-size, --n-layer, --n-head, --n-embd, "
                "--eval-interval, --eval-iters and --warmup must be positive")
    if args.n_embd % args.n_head:
        p.error(f"--n-embd ({args.n_embd}) must be a multiple of --n-head ({args.n_head})")
    if args.temperature <= 0:
        p.error("--temperature must be positive")
    return args


if __name__ == "__main__":
    train(parse_args())
