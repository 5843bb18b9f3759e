"""Every documented workflow end to end through the real command line, at a tiny size: for
each benchmark (kinect, faces, fasseg, stanford; uci through its benchmark script) and for
a user's own folders, get the data, train on the shipped preset (by name, made tiny with
``--set``), segment, evaluate."""
import json
import subprocess
import sys
from pathlib import Path

import cv2
import numpy as np
import pytest
from PIL import Image

from jungleseg.imageio import write_labels

from .test_commands import one_line_error, run

REPO = Path(__file__).resolve().parents[2]
TINY = ["--set", "jungle.n_estimators=1", "jungle.max_depth=5", "jungle.max_width=16",
        "jungle.n_candidate_features=10", "sampling.samples_per_image=150",
        "sampling.images_per_dag=null"]


def segment_and_evaluate(model, images, tmp_path, *evaluate_args):
    """Segment ``images`` (a file or folder) and evaluate; the scores as a dict."""
    out = tmp_path / "segmented"
    run("segment", model, images, "--out", out)
    written = sorted(out.glob("*.png"))
    assert written and Image.open(written[0]).mode == "P"
    scores = tmp_path / "scores.json"
    proc = run("evaluate", model, *evaluate_args, "--json", scores, "--confusion",
               tmp_path / "cm.png")
    assert "mean Jaccard" in proc.stdout  # printed even with --quiet
    result = json.loads(scores.read_text())
    assert 0 <= result["mean_jaccard"] <= 1 and result["n_images"] >= 1
    return result


@pytest.mark.parametrize("what", ["kinect", "faces"])
def test_synthetic_benchmark(what, tmp_path):
    data = tmp_path / what
    run("generate", what, "--n", 4, "--size", "60x80", "--out", data)
    model = tmp_path / f"{what}.h5"
    run("train", what, "--data", data, "--out", model, *TINY)
    images = data / ("depth" if what == "kinect" else "images")
    result = segment_and_evaluate(model, images, tmp_path, "--dataset", what, "--data", data)
    if what == "kinect":  # background 0 is not a class of a Kinect model, and is not scored
        assert "background" not in result["per_class_jaccard"]
    inferred = tmp_path / "inferred.json"  # the benchmark from the model: no --dataset
    run("evaluate", model, "--data", data, "--json", inferred, "--confusion", tmp_path / "c.png")
    assert json.loads(inferred.read_text())["mean_jaccard"] == result["mean_jaccard"]


@pytest.mark.parametrize("what", ["fasseg", "stanford"])
def test_real_benchmark(what, tmp_path, data_root):
    model = tmp_path / f"{what}.h5"
    run("train", what, "--data", data_root, "--n", 3, "--out", model, *TINY)
    folder = "fasseg/V2/Test_RGB" if what == "fasseg" else "stanford_background/images"
    photo = sorted((data_root / folder).iterdir())[0]
    segment_and_evaluate(model, photo, tmp_path, "--dataset", what, "--data", data_root,
                         "--n", 2)


def test_uci_through_its_benchmark_script(tmp_path, data_root):
    line = one_line_error(run("train", "uci", "--out", tmp_path / "u.h5", ok=False))
    assert "benchmarks/uci.py" in line
    proc = subprocess.run([sys.executable, "benchmarks/uci.py", "--data", str(data_root),
                           "--sets", "dna", "--repeats", "1", "--dags", "1"],
                          cwd=REPO, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "dna" in proc.stdout


def own_folders(folder: Path, n: int = 6, palette=None) -> Path:
    """A user's folder: images/ with RGB PNGs, labels/ with palette PNG labels (``palette``
    their colours), or grey PNG labels (``palette="grey"``)."""
    from jungleseg.datasets.faces import render_faces

    images, labels = render_faces(n, seed=7, size=(48, 64))
    for sub in ("images", "labels"):
        (folder / sub).mkdir(parents=True)
    for i, (image, label) in enumerate(zip(images, labels)):
        cv2.imwrite(str(folder / "images" / f"img{i}.png"), image[..., ::-1])
        if palette == "grey":
            cv2.imwrite(str(folder / "labels" / f"img{i}.png"), label)
        else:
            write_labels(folder / "labels" / f"img{i}.png", label, palette)
    return folder


def test_own_folders(tmp_path):
    data = own_folders(tmp_path / "mine")
    model = tmp_path / "mine.h5"
    run("train", "stanford", "--data", data, "--out", model, *TINY)
    result = segment_and_evaluate(model, data / "images", tmp_path, "--data", data)
    assert result["unseen_classes"] == []
    with_folders = tmp_path / "f.json"
    run("evaluate", model, "--images", data / "images", "--labels", data / "labels",
        "--json", with_folders, "--confusion", tmp_path / "c2.png")
    assert json.loads(with_folders.read_text())["mean_jaccard"] == result["mean_jaccard"]
    labels = np.asarray(Image.open(sorted((tmp_path / "segmented").glob("*.png"))[0]))
    assert labels.shape == (48, 64)
