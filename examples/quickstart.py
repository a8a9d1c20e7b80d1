"""Quickstart: train a small two-layer network with ferrotorch, end to end.

Forward pass with ``nn`` modules, loss, ``loss.backward()`` through the Rust
autograd engine, and a plain SGD update under ``no_grad``.
"""

import ferrotorch as torch
from ferrotorch import nn

torch.manual_seed(0)

# Data: a smooth nonlinear target, y = sin-like bump computed with tanh.
n = 256
x = torch.randn(n, 2)
y = (x[:, 0:1] * 1.5).tanh() - 0.5 * x[:, 1:2]

model = nn.Sequential(nn.Linear(2, 32), nn.ReLU(), nn.Linear(32, 1))
lr = 0.1

for step in range(301):
    pred = model(x)
    loss = ((pred - y) ** 2).mean()
    model.zero_grad()
    loss.backward()
    with torch.no_grad():
        for p in model.parameters():
            p -= lr * p.grad
    if step % 50 == 0:
        print(f"step {step:3d}  loss {loss.item():.5f}  grad_fn {loss.grad_fn.name()}")

print(f"final loss {loss.item():.5f}")
print("first prediction vs target:", pred[:3].detach().reshape(-1).tolist(), y[:3].reshape(-1).tolist())
assert loss.item() < 0.01, "training did not converge"
