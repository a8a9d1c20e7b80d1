"""Train a small transformer language model (GPT-style, causal mask) on a bundled text.

Characters of ``examples/data/river.txt`` (a short story written for this project and
dedicated to the public domain) are the tokens. A ``Dataset`` serves windows of
``context`` characters with their next-character targets through a ``DataLoader``.
The model adds learned position embeddings to token embeddings and runs a pre-norm
``nn.TransformerEncoder`` under a causal mask (``nn.Transformer.generate_square_subsequent_mask``),
so each position sees only the characters before it, then a ``nn.Linear`` head.
It trains with ``optim.AdamW``, saves a checkpoint in PyTorch's format after every
epoch (``torch.load`` reads it: model and optimizer state dicts, the epoch, the
vocabulary and the model's shape), resumes from one with ``--resume``, and prints a
sample generated one character at a time::

    python examples/transformer_lm.py                          # train 10 epochs, save transformer_lm.pt
    python examples/transformer_lm.py --resume transformer_lm.pt --epochs 4
    python examples/transformer_lm.py --tiny                   # a few seconds, for a smoke test

Progress goes through ``tqdm`` when it is installed, else through printed lines.
"""

import argparse
import math
import os
import time

import ferrotorch as torch
from ferrotorch import nn
from ferrotorch.utils.data import DataLoader, Dataset

try:
    from tqdm import tqdm
except ImportError:  # progress falls back to printed lines
    tqdm = None

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "river.txt")


class CharWindows(Dataset):
    """Windows of ``seq_len + 1`` character ids taken every ``stride`` characters;
    item ``i`` is ``(window[:-1], window[1:])``."""

    def __init__(self, ids, seq_len, stride):
        self.ids, self.seq_len = ids, seq_len
        self.starts = list(range(0, len(ids) - seq_len - 1, stride))

    def __len__(self):
        return len(self.starts)

    def __getitem__(self, i):
        s = self.starts[i]
        window = self.ids[s:s + self.seq_len + 1]
        return window[:-1], window[1:]


class TinyGPT(nn.Module):
    """Token + position embeddings, a causal pre-norm transformer encoder, a linear head."""

    def __init__(self, vocab_size, d_model=64, nhead=4, num_layers=2, context=64, dropout=0.1):
        super().__init__()
        self.context = context
        self.tok = nn.Embedding(vocab_size, d_model)
        self.pos = nn.Embedding(context, d_model)
        layer = nn.TransformerEncoderLayer(d_model, nhead, dim_feedforward=4 * d_model, dropout=dropout,
                                           activation="gelu", batch_first=True, norm_first=True)
        # enable_nested_tensor only matters for padding masks, which a language model has none of.
        self.blocks = nn.TransformerEncoder(layer, num_layers, norm=nn.LayerNorm(d_model),
                                            enable_nested_tensor=False)
        self.head = nn.Linear(d_model, vocab_size)
        # Not persistent: the mask is derived from `context`, so it stays out of the state dict.
        self.register_buffer("causal_mask", nn.Transformer.generate_square_subsequent_mask(context),
                             persistent=False)

    def forward(self, x):
        t = x.shape[1]
        h = self.tok(x) + self.pos(torch.arange(t))
        h = self.blocks(h, mask=self.causal_mask[:t, :t], is_causal=True)
        return self.head(h)


class Progress:
    """A ``tqdm`` bar over all training steps, or printed lines where tqdm is missing."""

    def __init__(self, total, enabled=True):
        self.total, self.n = total, 0
        self.bar = tqdm(total=total, unit="step", leave=False) if (tqdm is not None and enabled) else None
        self.every = max(1, total // 10) if enabled else 0

    def update(self, **postfix):
        self.n += 1
        if self.bar is not None:
            self.bar.set_postfix(postfix, refresh=False)
            self.bar.update(1)
        elif self.every and (self.n % self.every == 0 or self.n == self.total):
            shown = "  ".join(f"{k} {v:.4f}" if isinstance(v, float) else f"{k} {v}" for k, v in postfix.items())
            print(f"  [{self.n:4d}/{self.total}] {100 * self.n // self.total:3d}%  {shown}", flush=True)

    def write(self, line):
        # Keeps the bar at the bottom: tqdm clears it, writes the line, redraws.
        if self.bar is not None:
            self.bar.write(line)
        else:
            print(line, flush=True)

    def close(self):
        if self.bar is not None:
            self.bar.close()


def evaluate(model, loader):
    """Mean cross-entropy (nats per character) over ``loader``."""
    model.eval()
    total = count = 0.0
    with torch.no_grad():
        for x, y in loader:
            logits = model(x)
            total += float(nn.functional.cross_entropy(logits.flatten(0, 1), y.flatten(), reduction="sum"))
            count += y.numel()
    model.train()
    return total / count


@torch.no_grad()
def generate(model, vocab, prompt, length, temperature=0.8, seed=0):
    """Sample ``length`` characters after ``prompt``; the model sees the last ``context`` of them."""
    model.eval()
    stoi = {c: i for i, c in enumerate(vocab)}
    g = torch.Generator().manual_seed(seed)
    ids = torch.tensor([[stoi[c] for c in prompt]])
    for _ in range(length):
        logits = model(ids[:, -model.context:])
        probs = torch.softmax(logits[0, -1] / temperature, dim=-1)
        ids = torch.cat([ids, torch.multinomial(probs, 1, generator=g).view(1, 1)], dim=1)
    model.train()
    return "".join(vocab[i] for i in ids[0].tolist())


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--epochs", type=int, default=10, help="epochs to train (after the resumed one)")
    ap.add_argument("--batch-size", type=int, default=32)
    ap.add_argument("--lr", type=float, default=6e-3)
    ap.add_argument("--workers", type=int, default=0, help="DataLoader worker processes")
    ap.add_argument("--checkpoint", default="transformer_lm.pt")
    ap.add_argument("--resume", default=None, help="checkpoint to continue from")
    ap.add_argument("--sample-len", type=int, default=300)
    ap.add_argument("--tiny", action="store_true", help="a small model and 3 epochs: a smoke test of seconds")
    ap.add_argument("--no-progress", action="store_true")
    args = ap.parse_args(argv)
    if args.tiny:
        args.epochs = min(args.epochs, 3)
        args.sample_len = min(args.sample_len, 60)

    with open(DATA, encoding="utf-8") as fh:
        text = fh.read()
    torch.manual_seed(0)
    state = torch.load(args.resume) if args.resume else None
    # Vocabulary and model shape travel in the checkpoint, so a resumed run rebuilds the same model.
    vocab = state["vocab"] if state else "".join(sorted(set(text)))
    config = state["config"] if state else (
        {"d_model": 32, "nhead": 4, "num_layers": 1, "context": 32} if args.tiny else
        {"d_model": 64, "nhead": 4, "num_layers": 2, "context": 64})
    stoi = {c: i for i, c in enumerate(vocab)}
    ids = torch.tensor([stoi[c] for c in text], dtype=torch.long)
    split = int(0.9 * len(ids))
    context = config["context"]
    train_set = CharWindows(ids[:split], context, stride=context // 8)
    val_set = CharWindows(ids[split:], context, stride=context)
    train = DataLoader(train_set, batch_size=args.batch_size, shuffle=True, drop_last=True,
                       num_workers=args.workers, generator=torch.Generator().manual_seed(1))
    val = DataLoader(val_set, batch_size=64)

    model = TinyGPT(len(vocab), **config)
    opt = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=0.01)
    start = 0
    if state:
        model.load_state_dict(state["model"])
        opt.load_state_dict(state["optimizer"])
        start = state["epoch"]
        print(f"resumed from {args.resume} at epoch {start} (val loss {evaluate(model, val):.4f})", flush=True)
    else:
        n_params = sum(p.numel() for p in model.parameters())
        print(f"{len(text)} characters, vocabulary {len(vocab)}, {n_params} parameters, {len(train)} batches per "
              f"epoch; chance loss {math.log(len(vocab)):.4f}", flush=True)

    progress = Progress(args.epochs * len(train), enabled=not args.no_progress)
    t_start = time.time()
    for epoch in range(start, start + args.epochs):
        t0, running = time.time(), 0.0
        for x, y in train:
            loss = nn.functional.cross_entropy(model(x).flatten(0, 1), y.flatten())
            opt.zero_grad()
            loss.backward()
            nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            opt.step()
            running += loss.item()
            progress.update(epoch=epoch, loss=loss.item())
        progress.write(f"epoch {epoch}: train loss {running / len(train):.4f}  val loss {evaluate(model, val):.4f}  "
                       f"({time.time() - t0:.1f} s)")
        # Saved every epoch so that an interrupted run can resume from the last one.
        torch.save({"model": model.state_dict(), "optimizer": opt.state_dict(), "epoch": epoch + 1,
                    "vocab": vocab, "config": config}, args.checkpoint)
    progress.close()
    print(f"saved {args.checkpoint} (epoch {start + args.epochs}); trained {time.time() - t_start:.1f} s", flush=True)
    print("sample:\n" + generate(model, vocab, "The river", args.sample_len), flush=True)


if __name__ == "__main__":
    main()
