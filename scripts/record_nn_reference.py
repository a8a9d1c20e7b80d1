"""Records PyTorch's outputs for the Rust `nn` reference tests.

Run with the installed PyTorch (2.13) from the repository root:

    python scripts/record_nn_reference.py

It writes, under crates/ferrotorch/tests/fixtures/:

- nn_reference.safetensors: for each case ``<case>``, the module's state
  dict as ``<case>.state.<name>``, its inputs as ``<case>.in.<name>`` and
  PyTorch's outputs as ``<case>.out.<name>`` (the layer configurations are
  repeated in crates/ferrotorch/tests/nn_reference.rs);
- checkpoint.pt / checkpoint.safetensors: one model's state dict as
  ``torch.save`` and safetensors write it;
- tensors.pt / tensors.safetensors: tensors of every dtype, views and a
  tied pair as ``torch.save`` writes them, and their contiguous values;
- malicious_*.pt: checkpoints whose pickles try to run code.
"""

import io
import os
import pickle
import zipfile

import torch
import torch.nn as nn
import torch.nn.functional as F
from safetensors.torch import save_file

OUT = os.path.join(os.path.dirname(__file__), "..", "crates", "ferrotorch", "tests", "fixtures")

cases = {}


def record(case, module=None, inputs=None, outputs=None):
    inputs = inputs or {}
    outputs = outputs or {}
    if module is not None:
        for k, v in module.state_dict().items():
            cases[f"{case}.state.{k}"] = v
    for k, v in inputs.items():
        cases[f"{case}.in.{k}"] = v
    for k, v in outputs.items():
        cases[f"{case}.out.{k}"] = v


def randomize(module):
    """Every float parameter and buffer drawn afresh, so that norms' ones and zeros are not all the test sees."""
    with torch.no_grad():
        for name, t in list(module.named_parameters()) + list(module.named_buffers()):
            if t.is_floating_point():
                t.copy_(torch.randn_like(t) * 0.5 + (1.0 if "var" in name else 0.0)).abs_() if "var" in name else t.copy_(torch.randn_like(t) * 0.5)
    return module


def layer(case, module, x):
    module.eval()
    with torch.no_grad():
        y = module(x)
    record(case, module, {"x": x}, {"y": y})


def main():
    torch.manual_seed(0)
    layer("linear", nn.Linear(5, 3), torch.randn(2, 5))
    layer("linear_nobias", nn.Linear(5, 3, bias=False), torch.randn(2, 4, 5))
    layer("conv1d", nn.Conv1d(4, 6, 3, stride=2, padding=1, groups=2), torch.randn(2, 4, 9))
    layer("conv2d", nn.Conv2d(4, 6, (3, 2), stride=(2, 1), padding=(1, 0), dilation=(1, 2), groups=2), torch.randn(2, 4, 7, 8))
    layer("conv2d_unbatched", nn.Conv2d(3, 2, 3, padding=1, bias=False), torch.randn(3, 5, 5))
    layer("conv_transpose2d", nn.ConvTranspose2d(4, 6, 3, stride=2, padding=1, output_padding=1, groups=2), torch.randn(1, 4, 5, 5))
    layer("embedding", nn.Embedding(10, 4), torch.tensor([[1, 3, 9], [0, 3, 2]]))
    layer("layer_norm", randomize(nn.LayerNorm([4, 5])), torch.randn(2, 3, 4, 5))
    layer("rms_norm", randomize(nn.RMSNorm(6)), torch.randn(3, 6))
    layer("rms_norm_eps", nn.RMSNorm([2, 3], eps=1e-3, elementwise_affine=False), torch.randn(4, 2, 3) * 0.01)
    layer("batch_norm1d", randomize(nn.BatchNorm1d(4)), torch.randn(3, 4, 5))
    layer("batch_norm2d", randomize(nn.BatchNorm2d(3)), torch.randn(2, 3, 4, 4))
    layer("group_norm", randomize(nn.GroupNorm(2, 6)), torch.randn(2, 6, 3, 3))
    x = torch.randn(3, 7) * 3
    for name, m in [("relu", nn.ReLU()), ("gelu", nn.GELU()), ("gelu_tanh", nn.GELU("tanh")), ("silu", nn.SiLU()),
                    ("tanh", nn.Tanh()), ("sigmoid", nn.Sigmoid()), ("softmax", nn.Softmax(dim=1)), ("dropout", nn.Dropout(0.5))]:
        layer(name, m, x)
    layer("max_pool2d", nn.MaxPool2d(3, stride=2, padding=1), torch.randn(1, 2, 7, 7))
    layer("avg_pool2d", nn.AvgPool2d(3, stride=2, padding=1), torch.randn(1, 2, 7, 7))
    layer("adaptive_avg_pool2d", nn.AdaptiveAvgPool2d((3, 2)), torch.randn(1, 2, 7, 5))
    layer("flatten", nn.Flatten(), torch.randn(2, 3, 4, 5))

    # MultiheadAttention, batch first, float attn_mask and boolean key padding.
    mha = randomize(nn.MultiheadAttention(8, 2, batch_first=True)).eval()
    q, k, v = torch.randn(2, 4, 8), torch.randn(2, 5, 8), torch.randn(2, 5, 8)
    kpm = torch.tensor([[False, False, False, True, True], [False, False, False, False, False]])
    am = torch.randn(4, 5)
    with torch.no_grad():
        y, w = mha(q, k, v, key_padding_mask=kpm, attn_mask=am)
    record("mha", mha, {"q": q, "k": k, "v": v, "key_padding_mask": kpm, "attn_mask": am}, {"y": y, "w": w})
    # Sequence first, boolean causal mask, per-head weights.
    mha2 = randomize(nn.MultiheadAttention(6, 3)).eval()
    x = torch.randn(4, 2, 6)
    causal = torch.triu(torch.ones(4, 4, dtype=torch.bool), 1)
    with torch.no_grad():
        y, w = mha2(x, x, x, attn_mask=causal, average_attn_weights=False)
    record("mha_seq_first", mha2, {"x": x, "attn_mask": causal}, {"y": y, "w": w})

    q, k, v = torch.randn(2, 3, 4, 8), torch.randn(2, 3, 6, 8), torch.randn(2, 3, 6, 5)
    keep = torch.rand(4, 6) > 0.3
    keep[:, 0] = True
    record("sdpa", None, {"q": q, "k": k, "v": v, "mask": keep},
           {"y": F.scaled_dot_product_attention(q, k, v, attn_mask=keep), "y_scaled": F.scaled_dot_product_attention(q, k, v, scale=0.3)})
    q = torch.randn(2, 5, 8)
    record("sdpa_causal", None, {"q": q}, {"y": F.scaled_dot_product_attention(q, q, q, is_causal=True)})

    lstm = nn.LSTM(5, 6, num_layers=2, batch_first=True).eval()
    x = torch.randn(2, 4, 5)
    with torch.no_grad():
        y, (h, c) = lstm(x)
    record("lstm", lstm, {"x": x}, {"y": y, "h": h, "c": c})
    lstm2 = nn.LSTM(5, 4, bidirectional=True).eval()
    x, h0, c0 = torch.randn(3, 2, 5), torch.randn(2, 2, 4), torch.randn(2, 2, 4)
    with torch.no_grad():
        y, (h, c) = lstm2(x, (h0, c0))
    record("lstm_bidir", lstm2, {"x": x, "h0": h0, "c0": c0}, {"y": y, "h": h, "c": c})
    gru = nn.GRU(5, 6, num_layers=2).eval()
    x, h0 = torch.randn(4, 2, 5), torch.randn(2, 2, 6)
    with torch.no_grad():
        y, h = gru(x, h0)
    record("gru", gru, {"x": x, "h0": h0}, {"y": y, "h": h})

    # Three optimizer steps on a linear least-squares loss.
    x, target = torch.randn(5, 4), torch.randn(5, 3)
    init = nn.Linear(4, 3)
    record("optim", init, {"x": x, "target": target})
    for name, make in [("sgd", lambda p: torch.optim.SGD(p, lr=0.1, momentum=0.9, weight_decay=0.01, nesterov=True)),
                       ("sgd_plain", lambda p: torch.optim.SGD(p, lr=0.1)),
                       ("adam", lambda p: torch.optim.Adam(p, lr=0.01, weight_decay=0.1)),
                       ("adamw", lambda p: torch.optim.AdamW(p, lr=0.01, weight_decay=0.1))]:
        m = nn.Linear(4, 3)
        m.load_state_dict(init.state_dict())
        opt = make(m.parameters())
        for _ in range(3):
            opt.zero_grad()
            F.mse_loss(m(x), target).backward()
            opt.step()
        for k, v in m.state_dict().items():
            cases[f"optim.out.{name}.{k}"] = v.detach()
    save_file({k: v.contiguous().clone() for k, v in cases.items()}, os.path.join(OUT, "nn_reference.safetensors"))

    # A model's checkpoint, both ways.
    model = nn.Sequential(nn.Conv2d(1, 4, 3, padding=1), nn.BatchNorm2d(4), nn.ReLU(), nn.Flatten(), nn.Linear(4 * 4 * 4, 3))
    randomize(model)
    torch.save(model.state_dict(), os.path.join(OUT, "checkpoint.pt"))
    save_file({k: v.clone() for k, v in model.state_dict().items()}, os.path.join(OUT, "checkpoint.safetensors"))

    # Every dtype, a strided view, an offset view and a tied pair.
    base = torch.randn(4, 6)
    tensors = {
        "f32": base,
        "f32_t": base.t(),
        "f32_row": base[2],
        "tied": base,
        "f64": torch.randn(3, dtype=torch.float64),
        "f16": torch.randn(5).half(),
        "bf16": torch.randn(5).bfloat16(),
        "i64": torch.arange(-3, 4),
        "i32": torch.arange(5, dtype=torch.int32),
        "i16": torch.tensor([-7, 300], dtype=torch.int16),
        "i8": torch.tensor([-7, 100], dtype=torch.int8),
        "u8": torch.tensor([0, 255], dtype=torch.uint8),
        "bool": torch.tensor([True, False, True]),
        "scalar": torch.tensor(2.5),
        "empty": torch.zeros(0, 3),
    }
    torch.save(tensors, os.path.join(OUT, "tensors.pt"))
    save_file({k: v.contiguous().clone() for k, v in tensors.items()}, os.path.join(OUT, "tensors.safetensors"))

    write_malicious()


class _System:
    def __reduce__(self):
        return (os.system, ("echo pwned",))


class _Eval:
    def __reduce__(self):
        return (eval, ("1+1",))


def _with_pickle(name, data):
    """A checkpoint laid out as torch.save lays it out, with `data` as its pickle."""
    with zipfile.ZipFile(os.path.join(OUT, name), "w", zipfile.ZIP_STORED) as z:
        z.writestr("archive/data.pkl", data)
        z.writestr("archive/byteorder", "little")
        z.writestr("archive/version", "3\n")


def write_malicious():
    # os.system through torch.save itself (REDUCE of a blocked GLOBAL).
    torch.save({"w": torch.zeros(2), "evil": _System()}, os.path.join(OUT, "malicious_system.pt"))
    _with_pickle("malicious_eval.pt", pickle.dumps({"x": _Eval()}, protocol=2))
    # STACK_GLOBAL of a non-allowed name (protocol 4).
    _with_pickle("malicious_stack_global.pt", pickle.dumps({"x": _Eval()}, protocol=4))
    # REDUCE of an allowed global that is not a callable on the list (a storage class).
    _with_pickle("malicious_reduce_storage.pt", b"\x80\x02ctorch\nFloatStorage\n)R.")
    # A persistent id that is not a storage.
    _with_pickle("malicious_persid.pt", b"\x80\x02X\x04\x00\x00\x00evilK\x01\x86Q.")


if __name__ == "__main__":
    main()
