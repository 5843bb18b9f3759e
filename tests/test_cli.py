"""The jungleseg command, called as a user would (subprocesses), error paths included."""
import json
import subprocess
import sys
from pathlib import Path

import cv2
import numpy as np
import pytest

REPO = Path(__file__).resolve().parents[1]
FAST = ["--set", "jungle.max_depth=6", "--set", "jungle.n_candidate_features=10",
        "--set", "jungle.max_width=16", "--set", "sampling.samples_per_image=300",
        "--set", "sampling.images_per_dag=null"]


def run(*args, ok=True):
    quiet = ["--quiet"] if args else []
    proc = subprocess.run([sys.executable, "-m", "jungleseg.cli", *map(str, args), *quiet],
                          capture_output=True, text=True, cwd=REPO)
    if ok:
        assert proc.returncode == 0, proc.stderr
    return proc


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    folder = tmp_path_factory.mktemp("cli")
    data = folder / "faces"
    run("generate", "faces", "--n", 6, "--size", "48x64", "--out", data, "--seed", 3)
    model = folder / "model.h5"
    run("train", REPO / "configs/faces.yaml", "--data", data, "--out", model, *FAST)
    return folder, data, model


def test_train_info_segment_evaluate(trained):
    folder, data, model = trained
    info = json.loads(run("info", model, "--json").stdout)
    assert info["dags"] == 3 and info["depth"] <= 6 and info["nodes"] > 3
    assert info["classes"]["1"] == "skin"
    assert info["training"]["max_width"] == 16
    assert len(info["metadata"]["data_fingerprint"]) == 16
    out = folder / "segmented"
    run("segment", model, data / "images", "--out", out, "--probabilities")
    written = sorted(out.glob("*.png"))
    assert len(written) == 6
    labels = cv2.imread(str(written[0]), cv2.IMREAD_UNCHANGED)
    assert labels.shape == (48, 64) and set(np.unique(labels)) <= set(range(8))
    proba = np.load(out / f"{written[0].stem}_proba.npy")
    assert proba.shape[:2] == (48, 64) and np.allclose(proba.sum(axis=2), 1, atol=1e-5)
    scores = folder / "scores.json"
    run("evaluate", model, "--dataset", "faces", "--data", data, "--json", scores,
        "--confusion", folder / "cm.png")
    result = json.loads(scores.read_text())
    for key in ("mean_jaccard", "per_class_jaccard", "pixel_accuracy", "nodes", "bytes"):
        assert key in result
    assert 0 < result["pixel_accuracy"] <= 1 and result["nodes"] == info["nodes"]
    assert (folder / "cm.png").stat().st_size > 1000


@pytest.mark.parametrize("setting", [("jungle.search=clustersearch-alternating",),
                                     ("jungle.growth=priority", "jungle.max_nodes=41")])
def test_train_with_clustersearch_or_a_baseline(trained, tmp_path, setting):
    _, data, _ = trained
    model = tmp_path / "m.h5"
    run("train", REPO / "configs/faces.yaml", "--data", data, "--out", model, *FAST,
        *[arg for pair in setting for arg in ("--set", pair)])
    info = json.loads(run("info", model, "--json").stdout)
    for pair in setting:
        key, value = pair.split("=")
        assert str(info["training"][key.split(".")[1]]) == value
    assert info["nodes"] <= 3 * 41 or "max_nodes" not in setting[-1]  # 3 trees of <= 41


def test_generate_kinect(tmp_path):
    run("generate", "kinect", "--n", 2, "--size", "60x80", "--out", tmp_path / "k")
    depth = cv2.imread(str(tmp_path / "k/depth/000000.png"), cv2.IMREAD_UNCHANGED)
    assert depth.dtype == np.uint16 and depth.shape == (60, 80)


@pytest.mark.parametrize("args, message", [
    (("info", "missing.h5"), "no such model file"),
    (("train", "configs/nope.yaml", "--out", "x.h5"), "nope.yaml"),
    (("train", "configs/faces.yaml", "--out", "x.h5", "--set", "jungle.width=3"),
     "jungle.width"),
    (("train", "configs/faces.yaml", "--out", "x.h5", "--set", "nokeyvalue"), "KEY=VALUE"),
    (("train", "configs/uci.yaml", "--out", "x.h5"), "images"),
])
def test_errors_are_one_line_and_non_zero(args, message):
    proc = run(*args, ok=False)
    assert proc.returncode == 1
    assert proc.stderr.startswith("jungleseg: error:") and message in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1


def test_model_and_image_errors(trained, tmp_path):
    _, data, model = trained
    not_hdf5 = tmp_path / "bad.h5"
    not_hdf5.write_text("hello")
    grey = tmp_path / "grey.png"
    cv2.imwrite(str(grey), np.zeros((8, 8), np.uint8))
    broken = tmp_path / "broken.png"
    broken.write_bytes(b"\x89PNG not really")
    cases = [
        (("info", not_hdf5), "unreadable"),
        (("segment", model, grey, "--out", tmp_path / "o"), "RGB"),
        (("segment", model, broken, "--out", tmp_path / "o"), "cannot read"),
        (("segment", model, tmp_path / "nothing", "--out", tmp_path / "o"), "no such file"),
        (("evaluate", model, "--dataset", "imagenet"), "unknown dataset"),
    ]
    for args, message in cases:
        proc = run(*args, ok=False)
        assert proc.returncode == 1 and message in proc.stderr, (args, proc.stderr)


def test_usage_error_exits_2():
    assert run("segment", ok=False).returncode == 2
    assert run(ok=False).returncode == 2
