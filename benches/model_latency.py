"""PyTorch (eager, Python) inference latency of the models in the `models`
group of `cargo bench -p ferrotorch --bench ops`: the example CNN of
examples/serve_cnn.rs and a pre-norm transformer block (d=128, 4 heads,
seq 32), at batch 1 and 32, under no_grad, for a side-by-side with the Rust
rows. Threads follow --threads (default: torch's own setting)."""

import argparse
import time

import torch
from torch import nn


def example_cnn():
    return nn.Sequential(
        nn.Conv2d(1, 8, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(8, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Flatten(), nn.Linear(256, 4),
    )


class Block(nn.Module):
    def __init__(self, d=128, heads=4):
        super().__init__()
        self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.attn = nn.MultiheadAttention(d, heads, batch_first=True)
        self.mlp = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d))

    def forward(self, x):
        h = self.ln1(x)
        x = x + self.attn(h, h, h, need_weights=False)[0]
        return x + self.mlp(self.ln2(x))


def median_us(f, reps):
    for _ in range(10):
        f()
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        f()
        times.append(time.perf_counter() - t0)
    times.sort()
    return times[len(times) // 2] * 1e6


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--threads", type=int, default=None)
    ap.add_argument("--reps", type=int, default=200)
    args = ap.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    cnn, block = example_cnn().eval(), Block().eval()
    print(f"torch {torch.__version__}, {torch.get_num_threads()} threads")
    with torch.no_grad():
        for batch in (1, 32):
            x = torch.randn(batch, 1, 16, 16)
            print(f"example CNN 1x16x16 / batch {batch}: {median_us(lambda: cnn(x), args.reps):.1f} us")
        for batch in (1, 32):
            x = torch.randn(batch, 32, 128)
            print(f"transformer block d128 h4 seq32 / batch {batch}: {median_us(lambda: block(x), args.reps):.1f} us")


if __name__ == "__main__":
    main()
