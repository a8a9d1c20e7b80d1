"""The language-model examples (examples/char_lstm.py, examples/transformer_lm.py) run
end to end: they learn (the loss falls), save a checkpoint that PyTorch reads with
``weights_only=True`` into the same model built with ``torch.nn`` (same keys, shapes
and outputs; the optimizer state loads into ``torch.optim``), and resume from it at
the saved epoch."""

import importlib.util
import os
import re
import subprocess
import sys

import numpy as np
import pytest

import ferrotorch

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
EXAMPLES = {
    # script, model class, optimizer class, model call -> logits
    "char_lstm": ("CharLSTM", "Adam", lambda model, x: model(x)[0]),
    "transformer_lm": ("TinyGPT", "AdamW", lambda model, x: model(x)),
}


def _script(name):
    return os.path.join(ROOT, "examples", name + ".py")


def _run(name, args, cwd, hide_tqdm=False):
    env = dict(os.environ, PYTHONPATH=os.path.dirname(os.path.dirname(ferrotorch.__file__)))
    argv = [_script(name), "--tiny", *args]
    if hide_tqdm:
        # As on a machine without tqdm: the import fails and progress falls back to printed lines.
        cmd = [sys.executable, "-c", "import runpy, sys; sys.modules['tqdm'] = None; "
               f"sys.argv = {argv!r}; runpy.run_path(sys.argv[0], run_name='__main__')"]
    else:
        cmd = [sys.executable, *argv]
    out = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    return out.stdout


@pytest.fixture(scope="module", params=sorted(EXAMPLES))
def first_run(request, tmp_path_factory):
    """One --tiny run of each example (3 epochs): (name, stdout, checkpoint path)."""
    name = request.param
    cwd = tmp_path_factory.mktemp(name)
    return name, _run(name, [], cwd, hide_tqdm=True), cwd / f"{name}.pt"


def _epochs(stdout):
    """[(epoch, train loss, val loss)] from the per-epoch lines."""
    return [(int(m[1]), float(m[2]), float(m[3]))
            for m in re.finditer(r"^epoch (\d+): train loss ([\d.]+)  val loss ([\d.]+)", stdout, re.M)]


def _chance(stdout):
    return float(re.search(r"chance loss ([\d.]+)", stdout)[1])


def _load_example(name, lib):
    """The example as a module; with ``lib="torch"`` the same source runs on PyTorch,
    which is what a PyTorch user would get from the script."""
    path = _script(name)
    with open(path, encoding="utf-8") as fh:
        src = fh.read()
    if lib == "torch":
        src = src.replace("import ferrotorch as torch", "import torch").replace("from ferrotorch", "from torch")
        assert "ferrotorch" not in src.replace("ferrotorch.", "")  # nothing else names our library
    mod = type(sys)(f"_example_{name}_{lib}")
    mod.__file__ = path
    exec(compile(src, path, "exec"), mod.__dict__)
    return mod


def test_example_learns_with_printed_progress(first_run):
    name, out, _ = first_run
    epochs = _epochs(out)
    assert [e for e, _, _ in epochs] == [0, 1, 2], out
    train = [t for _, t, _ in epochs]
    val = [v for _, _, v in epochs]
    assert train == sorted(train, reverse=True) and train[-1] < train[0] - 0.3, out
    assert val[-1] < val[0] and val[-1] < _chance(out) - 1.0, out
    # Without tqdm the loop reports progress on stdout, ending at 100%.
    steps = 3 * int(re.search(r"(\d+) batches per epoch", out)[1])
    assert re.search(rf"^  \[\s*{steps}/{steps}\] 100%  epoch 2  loss [\d.]+$", out, re.M), out
    sample = out.split("sample:\n", 1)[1]
    assert sample.startswith("The river") and len(sample.rstrip("\n")) >= len("The river") + 60


def test_example_resumes_from_saved_epoch(first_run, tmp_path):
    name, out, saved = first_run
    first = _epochs(out)
    ckpt = tmp_path / saved.name
    ckpt.write_bytes(saved.read_bytes())
    assert ferrotorch.load(ckpt)["epoch"] == 3
    # The default progress path (a tqdm bar where tqdm is installed) writes only to stderr.
    second = _run(name, ["--resume", ckpt.name, "--epochs", "2"], tmp_path)
    m = re.search(rf"resumed from {ckpt.name} at epoch (\d+) \(val loss ([\d.]+)\)", second)
    assert m and int(m[1]) == 3, second
    # The restored model is the saved one: same validation loss as at the end of the first run.
    assert abs(float(m[2]) - first[-1][2]) < 1e-3, (m[0], first)
    resumed = _epochs(second)
    assert [e for e, _, _ in resumed] == [3, 4], second
    # Training continues from where it stopped, not from a fresh model.
    assert resumed[0][1] < first[0][1] - 0.3 and resumed[-1][2] < first[-1][2] + 0.05, (first, resumed)
    state = ferrotorch.load(ckpt)
    assert state["epoch"] == 5
    # The optimizer state came along: Adam's step counts continue past the first run's.
    per_epoch = int(re.search(r"(\d+) batches per epoch", out)[1])
    steps = [float(s["step"]) for s in state["optimizer"]["state"].values()]
    assert steps and all(s == 5 * per_epoch for s in steps), (steps, per_epoch)


def test_example_checkpoint_loads_in_pytorch(first_run):
    torch = pytest.importorskip("torch", reason="PyTorch reference wheel not installed")
    name, _, path = first_run
    state = torch.load(path, weights_only=True)  # only PyTorch's allow-list of globals
    assert set(state) == {"model", "optimizer", "epoch", "vocab", "config"} and state["epoch"] == 3
    cls_name, opt_name, logits_of = EXAMPLES[name]

    ours_mod, theirs_mod = _load_example(name, "ferrotorch"), _load_example(name, "torch")
    ours = getattr(ours_mod, cls_name)(len(state["vocab"]), **state["config"])
    theirs = getattr(theirs_mod, cls_name)(len(state["vocab"]), **state["config"])
    # Keys and shapes: the checkpoint, our model's state dict and PyTorch's agree.
    expected = {k: tuple(v.shape) for k, v in theirs.state_dict().items()}
    assert {k: tuple(v.shape) for k, v in state["model"].items()} == expected
    assert {k: tuple(v.shape) for k, v in ours.state_dict().items()} == expected
    theirs.load_state_dict(state["model"])  # strict
    ours.load_state_dict(ferrotorch.load(path)["model"])
    topt = getattr(torch.optim, opt_name)(theirs.parameters())
    topt.load_state_dict(state["optimizer"])
    assert topt.param_groups[0]["lr"] == ferrotorch.load(path)["optimizer"]["param_groups"][0]["lr"]
    for p in theirs.parameters():
        assert topt.state[p]["exp_avg"].shape == p.shape

    # Same weights, same outputs: the trained model means the same thing in PyTorch.
    ours.eval(), theirs.eval()
    x = np.random.default_rng(0).integers(0, len(state["vocab"]), (2, 16))
    with torch.no_grad(), ferrotorch.no_grad():
        a = logits_of(ours, ferrotorch.from_numpy(x)).numpy()
        b = logits_of(theirs, torch.from_numpy(x)).numpy()
    np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-4)

    # The sample generated from the checkpoint is the same text on both libraries'
    # models only if their samplers agree, which is not promised; it must be text over the vocabulary.
    text = ours_mod.generate(ours, state["vocab"], "The river", 20)
    assert text.startswith("The river") and set(text) <= set(state["vocab"])
