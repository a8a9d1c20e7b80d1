"""Quickstart: fit a small linear model with ferrotorch, end to end.

Gradients are written out by hand here: the autograd engine lands with the
autograd issue, after which this example will switch to ``loss.backward()``.
"""

import ferrotorch as torch

torch.manual_seed(0)

# Data: y = x @ w_true + b_true + noise
n, d = 256, 4
w_true = torch.tensor([[2.0], [-3.0], [0.5], [1.0]])
b_true = 0.25
x = torch.randn(n, d)
y = x @ w_true + b_true + 0.01 * torch.randn(n, 1)

model = torch.nn.Linear(d, 1)
w, b = model.weight.detach(), model.bias.detach()  # views: updates go to the model
lr = 0.1
with torch.no_grad():
    for step in range(200):
        pred = x @ w.t() + b
        err = pred - y
        loss = (err * err).mean()
        grad_w = (err.t() @ x) * (2.0 / n)
        grad_b = err.sum(0) * (2.0 / n)
        w.sub_(lr * grad_w)
        b.sub_(lr * grad_b)
        if step % 50 == 0:
            print(f"step {step:3d}  loss {loss.item():.6f}")

print(f"final loss {loss.item():.6f}")
print("learned weight", model.weight.detach())
print("learned bias  ", model.bias.detach())
assert loss.item() < 1e-3, "training did not converge"
