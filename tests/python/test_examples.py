"""The training examples run end to end: a CNN trained with a DataLoader
(worker processes) learns, saves a checkpoint PyTorch reads, and resumes."""

import os
import subprocess
import sys

import pytest

import ferrotorch

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")


def _run(args, cwd):
    env = dict(os.environ, PYTHONPATH=os.path.dirname(os.path.dirname(ferrotorch.__file__)))
    out = subprocess.run([sys.executable, os.path.join(ROOT, "examples", "train_cnn.py"), *args], cwd=cwd, env=env,
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    return out.stdout


def _accuracies(stdout):
    return [float(line.split("test accuracy ")[1].split()[0]) for line in stdout.splitlines() if "test accuracy" in line]


def test_train_cnn_learns_saves_and_resumes(tmp_path):
    first = _run(["--epochs", "2", "--train-size", "1024"], tmp_path)
    acc = _accuracies(first)
    assert len(acc) == 2 and acc[-1] > 0.5, first  # 4 classes: chance is 0.25
    ckpt = tmp_path / "cnn.pt"
    assert ckpt.exists()
    state = ferrotorch.load(ckpt)
    assert state["epoch"] == 2 and state["model"]["head.weight"].shape == (4, 256)
    second = _run(["--resume", "cnn.pt", "--epochs", "1", "--train-size", "1024"], tmp_path)
    assert "resumed from cnn.pt at epoch 2" in second
    # The resumed model starts where the first run ended.
    assert f"test accuracy {acc[-1]:.3f}" in second.splitlines()[0]


def test_cnn_checkpoint_loads_in_pytorch(tmp_path):
    torch = pytest.importorskip("torch", reason="PyTorch reference wheel not installed")
    _run(["--epochs", "1", "--train-size", "256"], tmp_path)
    state = torch.load(tmp_path / "cnn.pt")  # weights_only=True: only PyTorch's allow-list
    ours = ferrotorch.load(tmp_path / "cnn.pt")
    for k, v in state["model"].items():
        assert v.tolist() == ours["model"][k].tolist()
    assert state["optimizer"]["param_groups"][0]["lr"] == ours["optimizer"]["param_groups"][0]["lr"]
