"""nn layers, losses and optimizers against PyTorch: same weights in, same numbers out."""

import numpy as np
import pytest

import ferrotorch as ft

torch = pytest.importorskip("torch", reason="parity tests need PyTorch from ../shared/wheels")


def to_ft(t, requires_grad=False):
    return ft.tensor(t.detach().numpy(), requires_grad=requires_grad)


def close(a, b, atol=1e-5, rtol=1e-4):
    np.testing.assert_allclose(np.asarray(a.detach().tolist()), b.detach().numpy(), atol=atol, rtol=rtol)


def copy_params(ft_mod, torch_mod):
    ft_mod.load_state_dict({k: to_ft(v) for k, v in torch_mod.state_dict().items()})


@pytest.mark.parametrize("stride,padding,dilation,groups", [(1, 0, 1, 1), (2, 1, 1, 1), (1, "same", 1, 1), (1, 2, 2, 1), (1, 1, 1, 2)])
def test_conv2d_forward_and_backward_match_torch(stride, padding, dilation, groups):
    torch.manual_seed(0)
    x = torch.randn(2, 4, 9, 8, requires_grad=True)
    conv = torch.nn.Conv2d(4, 6, 3, stride=stride, padding=padding, dilation=dilation, groups=groups)
    fconv = ft.nn.Conv2d(4, 6, 3, stride=stride, padding=padding, dilation=dilation, groups=groups)
    copy_params(fconv, conv)
    fx = to_ft(x, True)
    y, fy = conv(x), fconv(fx)
    close(fy, y)
    y.square().sum().backward()
    (fy * fy).sum().backward()
    close(fx.grad, x.grad, atol=1e-4)
    close(fconv.weight.grad, conv.weight.grad, atol=1e-3)
    close(fconv.bias.grad, conv.bias.grad, atol=1e-3)


def test_losses_match_torch():
    torch.manual_seed(1)
    logits = torch.randn(5, 4, requires_grad=True)
    target = torch.tensor([0, 3, 1, 1, 2])
    fl = to_ft(logits, True)
    ft_target = ft.tensor(target.tolist())
    for red in ("mean", "sum", "none"):
        close(ft.nn.functional.cross_entropy(fl, ft_target, reduction=red),
              torch.nn.functional.cross_entropy(logits, target, reduction=red))
    ce = torch.nn.functional.cross_entropy(logits, target, label_smoothing=0.1)
    fce = ft.nn.functional.cross_entropy(fl, ft_target, label_smoothing=0.1)
    close(fce, ce)
    ce.backward()
    fce.backward()
    close(fl.grad, logits.grad)
    a, b = torch.rand(6), torch.rand(6)
    close(ft.nn.functional.mse_loss(to_ft(a), to_ft(b)), torch.nn.functional.mse_loss(a, b))
    close(ft.nn.functional.l1_loss(to_ft(a), to_ft(b)), torch.nn.functional.l1_loss(a, b))
    close(ft.nn.functional.binary_cross_entropy(to_ft(a), to_ft(b)), torch.nn.functional.binary_cross_entropy(a, b))
    z = torch.randn(6) * 5
    close(ft.nn.functional.binary_cross_entropy_with_logits(to_ft(z), to_ft(b)),
          torch.nn.functional.binary_cross_entropy_with_logits(z, b))


def test_norm_layers_match_torch():
    torch.manual_seed(2)
    x = torch.randn(8, 3, 5)
    bn, fbn = torch.nn.BatchNorm1d(3), ft.nn.BatchNorm1d(3)
    close(fbn(to_ft(x)), bn(x))
    close(fbn.running_mean, bn.running_mean)
    close(fbn.running_var, bn.running_var)
    bn.eval(), fbn.eval()
    close(fbn(to_ft(x)), bn(x))
    ln, fln = torch.nn.LayerNorm(5), ft.nn.LayerNorm(5)
    close(fln(to_ft(x)), ln(x))


def test_pooling_and_pad_match_torch():
    torch.manual_seed(3)
    x = torch.randn(2, 3, 8, 7)
    F, G = torch.nn.functional, ft.nn.functional
    close(G.max_pool2d(to_ft(x), 2), F.max_pool2d(x, 2))
    close(G.max_pool2d(to_ft(x), 3, stride=2, padding=1), F.max_pool2d(x, 3, stride=2, padding=1))
    close(G.avg_pool2d(to_ft(x), 2), F.avg_pool2d(x, 2))
    close(G.pad(to_ft(x), (1, 2, 0, 3), value=0.5), F.pad(x, (1, 2, 0, 3), value=0.5))


def test_attention_matches_torch():
    torch.manual_seed(4)
    q, k, v = torch.randn(2, 4, 6), torch.randn(2, 5, 6), torch.randn(2, 5, 3)
    close(ft.nn.functional.scaled_dot_product_attention(to_ft(q), to_ft(k), to_ft(v)),
          torch.nn.functional.scaled_dot_product_attention(q, k, v))
    q2 = torch.randn(2, 5, 6)
    close(ft.nn.functional.scaled_dot_product_attention(to_ft(q2), to_ft(k), to_ft(v), is_causal=True),
          torch.nn.functional.scaled_dot_product_attention(q2, k, v, is_causal=True), atol=1e-5)


@pytest.mark.parametrize("make", [
    lambda m, p: m.optim.SGD(p, lr=0.1),
    lambda m, p: m.optim.SGD(p, lr=0.1, momentum=0.9, weight_decay=0.01),
    lambda m, p: m.optim.SGD(p, lr=0.1, momentum=0.9, nesterov=True),
    lambda m, p: m.optim.Adam(p, lr=0.05),
    lambda m, p: m.optim.Adam(p, lr=0.05, weight_decay=0.1, amsgrad=True),
    lambda m, p: m.optim.AdamW(p, lr=0.05),
])
def test_training_trajectory_matches_torch(make):
    torch.manual_seed(5)
    model = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.Tanh(), torch.nn.Linear(8, 3))
    fmodel = ft.nn.Sequential(ft.nn.Linear(4, 8), ft.nn.Tanh(), ft.nn.Linear(8, 3))
    copy_params(fmodel, model)
    x, y = torch.randn(16, 4), torch.randint(0, 3, (16,))
    fx, fy = to_ft(x), ft.tensor(y.tolist())
    opt, fopt = make(torch, model.parameters()), make(ft, fmodel.parameters())
    sched = torch.optim.lr_scheduler.StepLR(opt, 3, 0.5)
    fsched = ft.optim.lr_scheduler.StepLR(fopt, 3, 0.5)
    for _ in range(8):
        opt.zero_grad()
        fopt.zero_grad()
        torch.nn.functional.cross_entropy(model(x), y).backward()
        ft.nn.functional.cross_entropy(fmodel(fx), fy).backward()
        opt.step()
        fopt.step()
        sched.step()
        fsched.step()
    for (name, p), (fname, fp) in zip(model.named_parameters(), fmodel.named_parameters()):
        assert name == fname
        close(fp, p, atol=1e-4)


def test_state_dict_keys_and_module_bookkeeping_match_torch():
    def build(m):
        return m.nn.Sequential(m.nn.Conv2d(1, 2, 3), m.nn.BatchNorm2d(2), m.nn.ReLU(), m.nn.Flatten(), m.nn.Linear(8, 2))
    t, f = build(torch), build(ft)
    assert list(f.state_dict().keys()) == list(t.state_dict().keys())
    assert [n for n, _ in f.named_parameters()] == [n for n, _ in t.named_parameters()]
    assert [n for n, _ in f.named_buffers()] == [n for n, _ in t.named_buffers()]
    with pytest.raises(RuntimeError):
        f.load_state_dict({"0.weight": ft.zeros(2, 1, 3, 3)})


def test_optimizer_rejects_bad_hyperparameters_like_torch():
    p = [ft.nn.Parameter(ft.zeros(2))]
    for kwargs in ({"lr": -1.0}, {"lr": 0.1, "momentum": -0.5}):
        with pytest.raises(ValueError):
            torch.optim.SGD([torch.nn.Parameter(torch.zeros(2))], **kwargs)
        with pytest.raises(ValueError):
            ft.optim.SGD(p, **kwargs)
    with pytest.raises(ValueError):
        ft.optim.Adam(p, betas=(1.0, 0.9))
