"""Train a small CNN with ferrotorch and export it for a Rust service.

Each 1x16x16 image holds a bright 4x4 square in one of four quadrants (plus
noise); the label is the quadrant. The model is an ``nn.Sequential``, so its
state-dict names (``0.weight``, ``3.bias``, ``7.weight`` ...) are the ones
``examples/serve_cnn.rs`` builds in Rust. The script saves the state dict
twice, with ``ferrotorch.save`` (PyTorch's zip format) and as safetensors,
writes one request line for the server, and prints the class the model
predicts for it::

    python examples/train_cnn_export.py --out-dir /tmp/cnn
    cargo run -p ferrotorch --example serve_cnn -- /tmp/cnn/cnn.pt < /tmp/cnn/request.jsonl
"""

import argparse
import json
import os

import ferrotorch as torch
from ferrotorch import nn
from ferrotorch.utils import safetensors


def make_model():
    return nn.Sequential(
        nn.Conv2d(1, 8, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(8, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Flatten(), nn.Linear(16 * 4 * 4, 4),
    )


def quadrants(n, seed):
    """Noisy images with a bright square in the quadrant named by the label."""
    g = torch.Generator().manual_seed(seed)
    labels = torch.randint(0, 4, (n,), generator=g)
    images = torch.randn(n, 1, 16, 16, generator=g) * 0.5
    for q in range(4):
        rows = (labels == q).nonzero().reshape(-1)
        r, c = 8 * (q // 2) + 2, 8 * (q % 2) + 2
        images[rows, :, r:r + 4, c:c + 4] += 1.0
    return images, labels


def fixed_input():
    """A clean square in quadrant 2 (bottom left): the request the server answers."""
    x = torch.zeros(1, 1, 16, 16)
    x[0, 0, 10:14, 2:6] = 1.0
    return x


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out-dir", default=".")
    ap.add_argument("--steps", type=int, default=60)
    args = ap.parse_args()
    os.makedirs(args.out_dir, exist_ok=True)

    torch.manual_seed(0)
    images, labels = quadrants(512, seed=1)
    model = make_model()
    opt = torch.optim.Adam(model.parameters(), lr=3e-3)
    loss_fn = nn.CrossEntropyLoss()
    for step in range(args.steps):
        i = (step * 64) % len(labels)
        loss = loss_fn(model(images[i:i + 64]), labels[i:i + 64])
        opt.zero_grad()
        loss.backward()
        opt.step()
    model.eval()
    test_x, test_y = quadrants(256, seed=2)
    with torch.no_grad():
        acc = float((model(test_x).argmax(1) == test_y).float().mean())
        logits = model(fixed_input())
    print(f"trained {args.steps} steps: final loss {loss.item():.4f}, test accuracy {acc:.3f}")

    state = model.state_dict()
    torch.save(state, os.path.join(args.out_dir, "cnn.pt"))
    safetensors.save_file(state, os.path.join(args.out_dir, "cnn.safetensors"))
    with open(os.path.join(args.out_dir, "request.jsonl"), "w") as f:
        f.write(json.dumps({"id": 1, "pixels": fixed_input().reshape(-1).tolist()}) + "\n")
    print(json.dumps({"class": int(logits.argmax(1)), "logits": logits.reshape(-1).tolist()}))


if __name__ == "__main__":
    main()
