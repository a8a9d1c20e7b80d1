"""Train a small CNN on synthetic images, as a PyTorch user would.

Each 1x16x16 image holds a bright 4x4 square in one of four quadrants (plus
noise); the label is the quadrant. The script uses a ``Dataset`` with a
``DataLoader`` (two worker processes), ``nn.Conv2d``/``MaxPool2d``/``Linear``,
``optim.Adam`` with a ``StepLR`` schedule, saves a checkpoint in PyTorch's
format (``torch.load`` reads it), and resumes from it::

    python examples/train_cnn.py                 # train 3 epochs, save cnn.pt
    python examples/train_cnn.py --resume cnn.pt --epochs 1
"""

import argparse
import time

import ferrotorch as torch
from ferrotorch import nn
from ferrotorch.utils.data import DataLoader, Dataset


class Quadrants(Dataset):
    """Noisy 16x16 images with a bright square in the quadrant named by the label."""

    def __init__(self, n, seed):
        g = torch.Generator().manual_seed(seed)
        self.labels = torch.randint(0, 4, (n,), generator=g)
        images = torch.randn(n, 1, 16, 16, generator=g)
        for q in range(4):
            rows = (self.labels == q).nonzero().reshape(-1)
            r, c = 8 * (q // 2) + 2, 8 * (q % 2) + 2
            images[rows, :, r:r + 4, c:c + 4] += 0.5
        self.images = images

    def __len__(self):
        return len(self.labels)

    def __getitem__(self, i):
        return self.images[i], self.labels[i]


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(1, 8, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(8, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        )
        self.head = nn.Linear(16 * 4 * 4, 4)

    def forward(self, x):
        return self.head(self.features(x).flatten(1))


def evaluate(model, loader):
    model.eval()
    correct = total = 0
    with torch.no_grad():
        for x, y in loader:
            correct += int((model(x).argmax(1) == y).sum())
            total += len(y)
    model.train()
    return correct / total


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--epochs", type=int, default=3)
    ap.add_argument("--train-size", type=int, default=2048)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--checkpoint", default="cnn.pt")
    ap.add_argument("--resume", default=None)
    args = ap.parse_args()

    torch.manual_seed(0)
    train = DataLoader(Quadrants(args.train_size, seed=1), batch_size=64, shuffle=True,
                       num_workers=args.workers, persistent_workers=args.workers > 0)
    test = DataLoader(Quadrants(512, seed=2), batch_size=256)
    model = Net()
    opt = torch.optim.Adam(model.parameters(), lr=3e-3)
    sched = torch.optim.lr_scheduler.StepLR(opt, step_size=2, gamma=0.5)
    start = 0
    if args.resume:
        state = torch.load(args.resume)
        model.load_state_dict(state["model"])
        opt.load_state_dict(state["optimizer"])
        sched.load_state_dict(state["scheduler"])
        start = state["epoch"]
        print(f"resumed from {args.resume} at epoch {start} (test accuracy {evaluate(model, test):.3f})")

    loss_fn = nn.CrossEntropyLoss()
    for epoch in range(start, start + args.epochs):
        t0 = time.time()
        running = 0.0
        for i, (x, y) in enumerate(train):
            loss = loss_fn(model(x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
            running += loss.item()
            if i % 10 == 0:
                print(f"  epoch {epoch} batch {i:3d}/{len(train)}  loss {loss.item():.4f}", flush=True)
        sched.step()
        acc = evaluate(model, test)
        print(f"epoch {epoch}: mean loss {running / len(train):.4f}  test accuracy {acc:.3f}  "
              f"lr {sched.get_last_lr()[0]:.4g}  ({time.time() - t0:.1f} s)", flush=True)

    torch.save({"model": model.state_dict(), "optimizer": opt.state_dict(), "scheduler": sched.state_dict(),
                "epoch": start + args.epochs}, args.checkpoint)
    print(f"saved {args.checkpoint}")
    return acc


if __name__ == "__main__":
    main()
