"""The embedding example end to end: examples/train_cnn_export.py trains a CNN with
ferrotorch and saves it (ferrotorch.save and safetensors); the Rust binary
examples/serve_cnn.rs loads each file and answers JSON-line requests from a
thread pool. The answers are checked against the Python model's prediction and
against PyTorch running the same checkpoint (torch.load(weights_only=True))."""

import json
import os
import shutil
import subprocess
import sys

import pytest

torch = pytest.importorskip("torch", reason="PyTorch reference wheel not installed")

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
pytestmark = pytest.mark.skipif(shutil.which("cargo") is None, reason="needs cargo to build the Rust example")


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    out = tmp_path_factory.mktemp("cnn")
    run = subprocess.run([sys.executable, os.path.join(ROOT, "examples", "train_cnn_export.py"), "--out-dir", str(out)],
                         capture_output=True, text=True, check=True, timeout=600)
    python_answer = json.loads(run.stdout.strip().splitlines()[-1])
    # Build once, so that the serving calls below only run the binary.
    subprocess.run(["cargo", "build", "-q", "-p", "ferrotorch", "--example", "serve_cnn"], cwd=ROOT, check=True, timeout=1200)
    return out, python_answer


def serve(checkpoint, lines, workers=4):
    run = subprocess.run(["cargo", "run", "-q", "-p", "ferrotorch", "--example", "serve_cnn", "--", str(checkpoint),
                          "--workers", str(workers)],
                         cwd=ROOT, input="".join(line + "\n" for line in lines), capture_output=True, text=True,
                         timeout=600)
    assert run.returncode == 0, run.stderr
    return [json.loads(line) for line in run.stdout.splitlines()]


def torch_model(checkpoint):
    nn = torch.nn
    model = nn.Sequential(
        nn.Conv2d(1, 8, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(8, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Flatten(), nn.Linear(16 * 4 * 4, 4),
    )
    model.load_state_dict(torch.load(checkpoint, weights_only=True))
    return model.eval()


@pytest.mark.parametrize("name", ["cnn.pt", "cnn.safetensors"])
def test_served_class_equals_the_python_models(exported, name):
    out, python_answer = exported
    request = (out / "request.jsonl").read_text().strip()
    (answer,) = serve(out / name, [request])
    assert answer["id"] == 1
    assert answer["class"] == python_answer["class"]
    for got, want in zip(answer["logits"], python_answer["logits"], strict=True):
        assert abs(got - want) <= 1e-4 * (1 + abs(want))
    # PyTorch running the same checkpoint agrees.
    pixels = json.loads(request)["pixels"]
    with torch.no_grad():
        ref = torch_model(out / "cnn.pt")(torch.tensor(pixels).reshape(1, 1, 16, 16))
    assert answer["class"] == int(ref.argmax(1))
    for got, want in zip(answer["logits"], ref.reshape(-1).tolist(), strict=True):
        assert abs(got - want) <= 1e-4 * (1 + abs(want))


def test_concurrent_requests_each_get_their_answer(exported):
    out, _ = exported
    g = torch.Generator().manual_seed(3)
    images = torch.randn(24, 1, 16, 16, generator=g)
    for i in range(24):
        q = i % 4
        r, c = 8 * (q // 2) + 2, 8 * (q % 2) + 2
        images[i, :, r:r + 4, c:c + 4] += 1.5
    lines = [json.dumps({"id": 100 + i, "pixels": images[i].reshape(-1).tolist()}) for i in range(24)]
    lines.insert(5, '{"id": 7, "pixels": [1, 2]}')
    answers = {a["id"]: a for a in serve(out / "cnn.pt", lines, workers=8)}
    assert sorted(answers) == [7] + [100 + i for i in range(24)]
    assert "expected 256 pixels, got 2" in answers[7]["error"]
    with torch.no_grad():
        ref = torch_model(out / "cnn.pt")(images)
    for i in range(24):
        assert answers[100 + i]["class"] == int(ref[i].argmax())
