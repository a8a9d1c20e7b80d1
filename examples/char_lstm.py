"""Train a character-level LSTM language model on a bundled text, as a PyTorch user would.

The text (``examples/data/river.txt``, a short story written for this project and
dedicated to the public domain) is cut into overlapping windows of characters; a
``Dataset`` serves (input, next-character target) pairs through a ``DataLoader``.
The model is ``nn.Embedding`` -> 2-layer ``nn.LSTM`` -> ``nn.Linear``, trained with
``optim.Adam`` and ``nn.utils.clip_grad_norm_``. After every epoch it saves a
checkpoint in PyTorch's format (``torch.load`` reads it: model and optimizer state
dicts, the epoch and the vocabulary), and ``--resume`` continues from one. At the end
it prints a sample generated from the model::

    python examples/char_lstm.py                          # train 8 epochs, save char_lstm.pt
    python examples/char_lstm.py --resume char_lstm.pt --epochs 4
    python examples/char_lstm.py --tiny                   # a few seconds, for a smoke test

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


class CharLSTM(nn.Module):
    def __init__(self, vocab_size, embed_dim=48, hidden_size=128, num_layers=2, dropout=0.1):
        super().__init__()
        self.embed = nn.Embedding(vocab_size, embed_dim)
        self.lstm = nn.LSTM(embed_dim, hidden_size, num_layers, batch_first=True, dropout=dropout)
        self.head = nn.Linear(hidden_size, vocab_size)

    def forward(self, x, state=None):
        out, state = self.lstm(self.embed(x), state)
        return self.head(out), state


class Progress:
    """A ``tqdm`` bar over all training steps, or printed lines where tqdm is missing."""

    def __init__(self, total, enabled=True):
        self.total, self.n, self.postfix = total, 0, ""
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
            logits, _ = model(x)
            total += float(nn.functional.cross_entropy(logits.flatten(0, 1), y.flatten(), reduction="sum"))
            count += y.numel()
    model.train()
    return total / count


@torch.no_grad()
def generate(model, vocab, prompt, length, temperature=0.8, seed=0):
    """Sample ``length`` characters after ``prompt``, carrying the LSTM state one character at a time."""
    model.eval()
    stoi = {c: i for i, c in enumerate(vocab)}
    g = torch.Generator().manual_seed(seed)
    logits, state = model(torch.tensor([[stoi[c] for c in prompt]]))
    out = []
    for _ in range(length):
        probs = torch.softmax(logits[0, -1] / temperature, dim=-1)
        nxt = torch.multinomial(probs, 1, generator=g)
        out.append(vocab[int(nxt)])
        logits, state = model(nxt.view(1, 1), state)
    model.train()
    return prompt + "".join(out)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--epochs", type=int, default=8, help="epochs to train (after the resumed one)")
    ap.add_argument("--seq-len", type=int, default=64)
    ap.add_argument("--batch-size", type=int, default=32)
    ap.add_argument("--lr", type=float, default=1e-2)
    ap.add_argument("--workers", type=int, default=0, help="DataLoader worker processes")
    ap.add_argument("--checkpoint", default="char_lstm.pt")
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
    # The vocabulary travels in the checkpoint so that ids mean the same after a resume.
    vocab = state["vocab"] if state else "".join(sorted(set(text)))
    stoi = {c: i for i, c in enumerate(vocab)}
    ids = torch.tensor([stoi[c] for c in text], dtype=torch.long)
    split = int(0.9 * len(ids))
    train_set = CharWindows(ids[:split], args.seq_len, stride=args.seq_len // 4)
    val_set = CharWindows(ids[split:], args.seq_len, stride=args.seq_len)
    train = DataLoader(train_set, batch_size=args.batch_size, shuffle=True, drop_last=True,
                       num_workers=args.workers, generator=torch.Generator().manual_seed(1))
    val = DataLoader(val_set, batch_size=64)

    # The model's shape travels in the checkpoint too, so a --tiny run resumes as tiny.
    config = state["config"] if state else {"embed_dim": 48, "hidden_size": 64 if args.tiny else 128, "num_layers": 2}
    model = CharLSTM(len(vocab), **config)
    opt = torch.optim.Adam(model.parameters(), lr=args.lr)
    start = 0
    if state:
        model.load_state_dict(state["model"])
        opt.load_state_dict(state["optimizer"])
        start = state["epoch"]
        print(f"resumed from {args.resume} at epoch {start} (val loss {evaluate(model, val):.4f})", flush=True)
    else:
        print(f"{len(text)} characters, vocabulary {len(vocab)}, {len(train)} batches per epoch; "
              f"chance loss {math.log(len(vocab)):.4f}", flush=True)

    progress = Progress(args.epochs * len(train), enabled=not args.no_progress)
    t_start = time.time()
    for epoch in range(start, start + args.epochs):
        t0, running = time.time(), 0.0
        for x, y in train:
            logits, _ = model(x)
            loss = nn.functional.cross_entropy(logits.flatten(0, 1), y.flatten())
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
