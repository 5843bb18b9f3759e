"""The jungleseg command, error paths included: in-process through ``cli.main`` (a new
interpreter costs seconds), and as a user would (subprocesses) where the process itself
matters: the round trip, Ctrl-C, a closed pipe, exit codes."""
import contextlib
import io
import json
import os
import re
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import cv2
import numpy as np
import pytest
from PIL import Image

from jungleseg import load_model, segment
from jungleseg._version import __version__
from jungleseg.imageio import read_labels

REPO = Path(__file__).resolve().parents[2]
FAST = ["--set", "jungle.max_depth=6", "--set", "jungle.n_candidate_features=10",
        "--set", "jungle.max_width=16", "--set", "sampling.samples_per_image=300",
        "--set", "sampling.images_per_dag=null"]


def run(*args, ok=True, quiet=True, cwd=REPO, process=False):
    """The command's exit code, standard output and error, run in a subprocess or (by
    default) in this one."""
    from jungleseg import cli

    argv = [*map(str, args), *(["--quiet"] if args and quiet else [])]
    if process:
        proc = subprocess.run([sys.executable, "-m", "jungleseg.cli", *argv],
                              capture_output=True, text=True, cwd=cwd)
    else:
        out, err = io.StringIO(), io.StringIO()
        previous = os.getcwd()
        os.chdir(cwd)
        try:
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
                try:
                    code = cli.main(argv)
                except SystemExit as stop:  # argparse: --version, usage errors
                    code = stop.code
        finally:
            os.chdir(previous)
        proc = subprocess.CompletedProcess(argv, code, out.getvalue(), err.getvalue())
    if ok:
        assert proc.returncode == 0, proc.stderr
    return proc


def one_line_error(proc, code=1):
    assert proc.returncode == code, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("jungleseg: error:"), proc.stderr
    return lines[0]


def test_train_info_segment_evaluate(trained):
    folder, data, model = trained
    info = json.loads(run("info", model, "--json", process=True).stdout)
    assert info["dags"] == 3 and info["depth"] <= 6 and info["nodes"] > 3
    assert info["classes"]["1"] == "skin"
    assert info["training"]["max_width"] == 16
    assert len(info["metadata"]["data_fingerprint"]) == 16
    assert info["metadata"]["input_values"]["units"] == "uint8"
    out = folder / "segmented"
    run("segment", model, data / "images", "--out", out, "--probabilities", process=True)
    written = sorted(out.glob("*.png"))
    assert len(written) == 6
    picture = Image.open(written[0])
    assert picture.mode == "P"  # palette PNG: viewers show the class colours
    labels = np.asarray(picture)
    assert labels.shape == (48, 64) and set(np.unique(labels)) <= set(range(8))
    palette = np.array(picture.getpalette()[:24]).reshape(8, 3)
    for value, colour in info["metadata"]["class_colours"].items():
        assert palette[int(value)].tolist() == colour
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
    assert oct(model.stat().st_mode & 0o777) == oct(0o666 & ~_umask())


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def test_segment_routes_softly_with_soft(trained, tmp_path):
    _, data, model = trained
    image = data / "images/000001.png"
    for name, extra in (("hard", ()), ("zero", ("--soft", 0)), ("soft", ("--soft", 0.5))):
        run("segment", model, image, "--out", tmp_path / f"{name}.png", "--probabilities",
            *extra)
    hard, zero, soft = (np.load(tmp_path / f"{n}_proba.npy") for n in ("hard", "zero", "soft"))
    assert hard.tobytes() == zero.tobytes() and hard.tobytes() != soft.tobytes()
    assert np.allclose(soft.sum(axis=2), 1, atol=1e-5)
    line = one_line_error(run("segment", model, image, "--out", tmp_path / "bad.png",
                              "--soft", -1, ok=False))
    assert "soft" in line


def test_segment_favours_rarer_classes_with_prior_power(trained, tmp_path):
    _, data, model = trained
    image = data / "images/000001.png"
    for name, extra in (("plain", ()), ("power", ("--prior-power", 1))):
        run("segment", model, image, "--out", tmp_path / f"{name}.png", "--probabilities",
            *extra)
    plain, power = (read_labels(tmp_path / f"{n}.png") for n in ("plain", "power"))
    proba = np.load(tmp_path / "power_proba.npy")
    assert proba.tobytes() == np.load(tmp_path / "plain_proba.npy").tobytes()
    jungle = load_model(model)
    weights = 1 / np.asarray(jungle.metadata["class_shares"], np.float32)
    np.testing.assert_array_equal(power, jungle.classes[np.argmax(proba * weights, axis=2)])
    assert not np.array_equal(power, plain)
    line = one_line_error(run("segment", model, image, "--out", tmp_path / "bad.png",
                              "--prior-power", 2, ok=False))
    assert "prior_power" in line


def test_auto_context_models_train_info_and_segment(trained, tmp_path):
    _, data, _ = trained
    model = tmp_path / "ac.h5"
    run("train", REPO / "configs/faces.yaml", "--data", data, "--out", model, *FAST,
        "--set", "jungle.auto_context=2", "--set", "jungle.n_estimators=1")
    info = json.loads(run("info", model, "--json").stdout)
    assert info["stages"] == 2 and info["training"]["auto_context"] == 2
    image = data / "images/000001.png"
    run("segment", model, image, "--out", tmp_path / "whole.png", "--probabilities")
    proba = np.load(tmp_path / "whole_proba.npy")
    assert proba.shape[:2] == (48, 64) and np.allclose(proba.sum(axis=2), 1, atol=1e-5)


def test_out_ending_in_png_is_one_file(trained, tmp_path):
    _, data, model = trained
    run("segment", model, data / "images/000001.png", "--out", tmp_path / "x.png")
    assert (tmp_path / "x.png").is_file()
    assert np.asarray(Image.open(tmp_path / "x.png")).shape == (48, 64)
    line = one_line_error(run("segment", model, data / "images", "--out", tmp_path / "y.png",
                              ok=False))
    assert "names one label file" in line and not (tmp_path / "y.png").exists()


def test_a_bad_file_in_a_batch_is_reported_and_the_rest_segmented(trained, tmp_path):
    _, data, model = trained
    batch = tmp_path / "batch"
    batch.mkdir()
    for i in range(4):
        shutil.copy(data / f"images/00000{i}.png", batch / f"{i}.png")
    (batch / "1.png").write_bytes((batch / "1.png").read_bytes()[:200])  # truncated
    proc = run("segment", model, batch, "--out", tmp_path / "out", ok=False)
    assert proc.returncode == 1
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 2 and str(batch / "1.png") in lines[0] and "truncated" in lines[0]
    assert "1 of 4 images failed" in lines[1]
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["0.png", "2.png", "3.png"]
    jungle = load_model(model)  # small images after the first went several at a time
    for name in ("0.png", "2.png", "3.png"):
        expected = segment(jungle, _rgb_of(batch / name), probabilities=False)[0]
        np.testing.assert_array_equal(read_labels(tmp_path / "out" / name), expected)
    fast = run("segment", model, batch, "--out", tmp_path / "fast", "--fail-fast", ok=False)
    assert "1.png" in one_line_error(fast)
    assert sorted(p.name for p in (tmp_path / "fast").iterdir()) == ["0.png"]


def _rgb(data):
    return _rgb_of(data / "images/000002.png")


def _rgb_of(path):
    return cv2.cvtColor(cv2.imread(str(path)), cv2.COLOR_BGR2RGB)


def _labels(model, path, out):
    run("segment", model, path, "--out", out)
    return np.asarray(Image.open(out))


def test_hostile_images_are_refused_or_read_alike(trained, tmp_path):
    """One batch of hostile files: each is refused on its own line naming it, and the
    others (the same picture in other dtypes) give the uint8 picture's labels."""
    _, data, model = trained
    rgb = _rgb(data)
    nan = rgb / 255.0
    nan[3, 4, 1] = np.nan
    alike = {"int64": rgb.astype(np.int64), "float32_unit": rgb.astype(np.float32) / 255,
             "float64_unit": rgb / 255.0, "uint16": rgb.astype(np.uint16) * 257,
             "uint8": rgb}
    refused = {"float32_0_255": (rgb.astype(np.float32), "must lie in [0, 1]"),
               "nan_pixels": (nan, "1 NaN or infinite"),
               "all_nan": (np.full(rgb.shape, np.nan), "NaN or infinite"),
               "inf": (np.where(rgb > 100, np.inf, 0.5), "NaN or infinite"),
               "complex": (rgb.astype(np.complex64), "complex"),
               "boolean": (rgb > 100, "boolean"),
               "int32_beyond_255": (rgb.astype(np.int32) * 4, "8-bit values")}
    batch = tmp_path / "batch"
    batch.mkdir()
    for name, array in {**alike, **{k: v for k, (v, _) in refused.items()}}.items():
        np.save(batch / f"{name}.npy", array)
    cv2.imwrite(str(tmp_path / "p.jpg"), cv2.cvtColor(rgb, cv2.COLOR_RGB2BGR))
    (batch / "cut.jpg").write_bytes((tmp_path / "p.jpg").read_bytes()[:600])
    cv2.imwrite(str(tmp_path / "p.png"), cv2.cvtColor(rgb, cv2.COLOR_RGB2BGR))
    (batch / "cut_png.png").write_bytes((tmp_path / "p.png").read_bytes()[:-30])
    refused.update({"cut": (None, "truncated"), "cut_png": (None, "truncated")})
    proc = run("segment", model, batch, "--out", tmp_path / "out", ok=False)
    assert proc.returncode == 1
    lines = proc.stderr.strip().splitlines()
    total = len(alike) + len(refused)
    assert lines[-1].startswith(f"jungleseg: error: {len(refused)} of {total} images failed")
    for name, (_, message) in refused.items():
        line = [ln for ln in lines if f"batch/{name}." in ln]
        assert len(line) == len(list(batch.glob(f"{name}.*"))), (name, lines)
        assert all(message in ln for ln in line), (name, line)
        assert not (tmp_path / "out" / f"{name}.png").exists()
    reference = np.asarray(Image.open(tmp_path / "out/uint8.png"))
    for name in alike:
        np.testing.assert_array_equal(np.asarray(Image.open(tmp_path / f"out/{name}.png")),
                                      reference, err_msg=name)


def test_evaluate_goes_on_past_an_unreadable_file(trained, tmp_path):
    _, data, model = trained
    copy = tmp_path / "faces"
    shutil.copytree(data, copy)
    bad = copy / "images/000001.png"
    bad.write_bytes(bad.read_bytes()[:200])  # truncated
    proc = run("evaluate", model, "--dataset", "faces", "--data", copy, "--json",
               tmp_path / "r.json", "--confusion", tmp_path / "cm.png", ok=False)
    assert proc.returncode == 1
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 2 and str(bad) in lines[0] and "truncated" in lines[0]
    assert "1 of 6 images could not be read or segmented" in lines[1]
    assert json.loads((tmp_path / "r.json").read_text())["n_failed"] == 1
    assert (tmp_path / "cm.png").is_file()  # the five good images are scored
    fast = run("evaluate", model, "--dataset", "faces", "--data", copy, "--confusion",
               tmp_path / "cm2.png", "--fail-fast", ok=False)
    assert str(bad) in one_line_error(fast) and not (tmp_path / "cm2.png").exists()


def test_evaluating_with_other_classes_is_refused(trained, tmp_path):
    folder, data, model = trained
    kinect = tmp_path / "k"
    run("generate", "kinect", "--n", 2, "--size", "60x80", "--out", kinect)
    line = one_line_error(run("evaluate", model, "--dataset", "kinect", "--data", kinect,
                              "--confusion", tmp_path / "cm.png", ok=False))
    assert "does not fit dataset kinect" in line and "--allow-class-mismatch" in line
    assert not (tmp_path / "cm.png").exists()
    renamed = tmp_path / "renamed.h5"
    jungle = load_model(model)
    jungle.metadata["class_names"]["1"] = "sky"
    from jungleseg import save_model

    save_model(jungle, renamed)
    line = one_line_error(run("evaluate", renamed, "--dataset", "faces", "--data", data,
                              "--confusion", tmp_path / "cm.png", ok=False))
    assert "class 1 is 'sky' in the model but 'skin' in the dataset" in line
    run("evaluate", renamed, "--dataset", "faces", "--data", data, "--confusion",
        tmp_path / "cm.png", "--allow-class-mismatch")


def test_an_output_that_cannot_be_written_is_refused_before_training(tmp_path):
    a_file = tmp_path / "file"
    a_file.write_text("")
    for out, message in ((a_file / "m.h5", "is a file; --out needs a folder there"),
                         (tmp_path, "is a folder"),
                         (tmp_path / "missing/dir/m.h5", "no-data")):  # the folder is made
        # --data names no folder: the output is checked before any data is read
        line = one_line_error(run("train", REPO / "configs/faces.yaml", "--out", out,
                                  "--data", tmp_path / "no-data", ok=False))
        assert message in line, line
    assert (tmp_path / "missing/dir").is_dir()  # the --out rule: missing folders are created
    if os.geteuid() != 0:  # permission bits do not stop root
        locked = tmp_path / "locked"
        locked.mkdir(mode=0o500)
        line = one_line_error(run("train", REPO / "configs/faces.yaml", "--out",
                                  locked / "m.h5", "--data", tmp_path / "no-data", ok=False))
        assert "cannot write" in line


def test_a_failed_save_puts_the_model_in_the_working_folder(trained, tmp_path, monkeypatch):
    from jungleseg import cli, io

    _, data, _ = trained
    target = tmp_path / "out" / "m.h5"
    target.parent.mkdir()
    real_save = io.save_model

    def full_disk(jungle, path):
        if Path(path) == target:
            raise OSError(28, "No space left on device")
        return real_save(jungle, path)

    monkeypatch.setattr(io, "save_model", full_disk)
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    code = cli.main(["train", str(REPO / "configs/faces.yaml"), "--data", str(data), "--out",
                     str(target), "--quiet", *FAST])
    assert code == 1
    rescued = list(work.glob("m.rescued-*.h5"))
    assert len(rescued) == 1 and load_model(rescued[0]).node_count > 3
    assert not target.exists()


def test_memory_budget_refusals_and_tiles(trained, tmp_path):
    """--max-memory is the whole process's budget: these calls run in this process, so the
    budgets given are what it holds already plus a few MB."""
    from jungleseg._memory import resident_memory

    _, data, model = trained
    line = one_line_error(run("train", REPO / "configs/faces.yaml", "--data", data, "--out",
                              tmp_path / "m.h5", "--max-memory", "1MB", ok=False))
    assert line.startswith("jungleseg: error: --max-memory 1MB") and "it holds" in line

    def budget(extra_mb):
        return f"{resident_memory() + extra_mb * 1e6:.0f}B"

    line = one_line_error(run("train", REPO / "configs/faces.yaml", "--data", data, "--out",
                              tmp_path / "m.h5", "--max-memory", budget(20), ok=False))
    assert "memory budget" in line and "split tables" in line
    line = one_line_error(run("train", REPO / "configs/faces.yaml", "--data", data, "--out",
                              tmp_path / "m.h5", "--set", "jungle.n_estimators=1000",
                              "--set", "jungle.max_width=1048576", "--set",
                              "jungle.n_candidate_features=5000", ok=False))
    assert "memory budget" in line and not (tmp_path / "m.h5").exists()
    big = np.tile(_rgb(data), (12, 10, 1))  # 576 x 640: about 50 MB to segment at once
    np.save(tmp_path / "big.npy", big)
    whole = _labels(model, tmp_path / "big.npy", tmp_path / "whole.png")
    run("segment", model, tmp_path / "big.npy", "--out", tmp_path / "tiled.png",
        "--max-memory", budget(30))  # too little for the whole image: tiles
    np.testing.assert_array_equal(np.asarray(Image.open(tmp_path / "tiled.png")), whole)
    line = one_line_error(run("segment", model, tmp_path / "big.npy", "--out",
                              tmp_path / "none.png", "--max-memory", budget(2), ok=False))
    assert "big.npy" in line and "memory budget" in line


def test_depth_training_budget_counts_the_bodies_not_the_frames():
    """The --max-memory check before training bounds a depth store by the boxes around the
    bodies and labelled pixels, which is what fit stores, not by whole frames."""
    from types import SimpleNamespace

    from jungleseg import DepthFeatures, JungleSegmenter
    from jungleseg._memory import training_bytes
    from jungleseg.cli._train import check_training_memory as _check_training_memory
    from jungleseg.datasets.kinect import render_frames

    depth, labels = render_frames(3, seed=4, size=(90, 120))
    labels[0][0, 0] = 255  # ignored: widens no box
    split = SimpleNamespace(images=list(depth), labels=list(labels))
    seg = JungleSegmenter(DepthFeatures(focal_length=107.1), n_estimators=1, max_width=8,
                          max_depth=4, n_candidate_features=5, samples_per_image=50)
    classes = np.setdiff1d(np.unique(labels), [0, 255])
    boxes = []
    for image in depth:
        rows, cols = (np.flatnonzero(image.any(axis=a)) for a in (1, 0))
        boxes.append((rows[-1] - rows[0] + 1, cols[-1] - cols[0] + 1))
    args = ([im.shape for im in depth], depth.dtype.itemsize, len(classes))
    bodies = training_bytes(seg, *args, store_shapes=boxes).total
    assert bodies < training_bytes(seg, *args).total
    _check_training_memory(seg, split, bodies)
    with pytest.raises(MemoryError, match="memory budget"):
        _check_training_memory(seg, split, bodies - 1)


def interrupted_when(ready, *args) -> str:
    """Run the command in a subprocess, press Ctrl-C once its standard error so far
    satisfies ``ready``, and return its last line, checking that it exited with 130 and
    no traceback."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "jungleseg.cli", *map(str, args)], cwd=REPO,
        stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    seen = ""
    while not ready(seen):
        char = proc.stderr.read(1)
        assert char, f"never ready to interrupt: {seen}"
        seen += char
    proc.send_signal(signal.SIGINT)
    rest = proc.stderr.read()
    assert proc.wait(timeout=300) == 130
    assert "Traceback" not in rest
    return rest.strip().splitlines()[-1].split("\r")[-1]


def test_ctrl_c_stops_training_cleanly(tmp_path):
    data = tmp_path / "faces"
    run("generate", "faces", "--n", 30, "--size", "120x160", "--out", data)
    target = tmp_path / "old.h5"
    shutil.copy(REPO / "tests/data/model_format1.h5", target)
    before = target.read_bytes()
    last = interrupted_when(  # the progress bar shows that training has started
        lambda seen: "training (levels)" in seen,
        "train", REPO / "configs/faces.yaml", "--data", data, "--out", target,
        "--set", "jungle.max_depth=40", "--set", "jungle.max_width=4096",
        "--set", "sampling.images_per_dag=null")
    assert last.startswith("jungleseg: error: interrupted; training stopped after level")
    assert target.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["faces", "old.h5"]


def test_ctrl_c_stops_a_batch_between_files_and_says_how_many_were_written(trained, tmp_path):
    _, data, model = trained
    batch = tmp_path / "batch"
    batch.mkdir()
    picture = cv2.imread(str(data / "images/000000.png"))
    for i in range(3000):
        cv2.imwrite(str(batch / f"{i:04d}.png"), picture)
    last = interrupted_when(  # well into the batch, by the progress bar
        lambda seen: int((re.findall(r"\| *(\d+)/3000", seen) or [0])[-1]) >= 50,
        "segment", model, batch, "--out", tmp_path / "out")
    assert last.startswith("jungleseg: error: interrupted; ")
    written = sorted(p.name for p in (tmp_path / "out").iterdir())
    assert last.endswith(f"; {len(written)} of 3000 images segmented")  # none unreported
    assert 50 <= len(written) < 3000, len(written)
    assert written == [f"{i:04d}.png" for i in range(len(written))]  # in order, none partial
    for name in written[-3:]:
        assert read_labels(tmp_path / "out" / name).shape == picture.shape[:2]


def test_a_file_that_fails_is_not_summed_up_as_segmented(trained, tmp_path):
    """One file, and it fails: the error, and no "segmented 0 images ... -> OUT" line on
    standard output that reads as if labels were written there."""
    _, _, model = trained
    np.save(tmp_path / "grey.npy", np.zeros((40, 50), np.uint8))  # an RGB model
    proc = run("segment", model, tmp_path / "grey.npy", "--out", tmp_path / "labels.zarr",
               ok=False, quiet=False)
    assert proc.returncode == 1
    assert f"jungleseg: error: {tmp_path / 'grey.npy'}: the model reads RGB" in proc.stderr
    assert proc.stdout == ""
    assert sorted(p.name for p in tmp_path.iterdir()) == ["grey.npy"]


def test_ctrl_c_stops_a_large_image_between_tiles_and_writes_no_labels(trained, tmp_path):
    """Ctrl-C in one large image (tiled, into zarr) stops at the next tile, not at the end
    of the image, and leaves no label file: neither a half-written zarr, whose unwritten
    chunks would read as label 0, nor the hidden folder it was written in."""
    import time

    import zarr

    _, data, model = trained
    picture = cv2.imread(str(data / "images/000000.png"))[..., ::-1]
    big = np.tile(picture, (48, 60, 1))  # (2304, 3840, 3): 135 tiles of 256
    source = zarr.open_array(str(tmp_path / "big.zarr"), mode="w", shape=big.shape,
                             chunks=(256, 256, 3), dtype=big.dtype)
    source[...] = big
    proc = subprocess.Popen(
        [sys.executable, "-m", "jungleseg.cli", "segment", str(model), str(tmp_path / "big.zarr"),
         "--out", str(tmp_path / "labels.zarr"), "--tile", "256"], cwd=REPO,
        stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    deadline = time.monotonic() + 300
    while not any(p.name.endswith("labels.zarr") for p in tmp_path.iterdir()):
        assert proc.poll() is None and time.monotonic() < deadline, proc.stderr.read()
        time.sleep(0.05)  # the labels are begun
    time.sleep(0.5)
    proc.send_signal(signal.SIGINT)
    pressed = time.monotonic()
    assert proc.wait(timeout=300) == 130
    assert time.monotonic() - pressed < 10  # a tile or two, not the rest of the image
    rest = proc.stderr.read()
    assert "Traceback" not in rest
    assert rest.strip().splitlines()[-1].split("\r")[-1] == \
        "jungleseg: error: interrupted; 0 of 1 images segmented"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["big.zarr"]


def test_version_usage_and_closed_pipe(trained):
    _, _, model = trained
    version = run("--version", quiet=False, process=True)
    assert version.stdout.strip() == f"jungleseg {__version__}"
    for args in (("segment",), ()):
        line = one_line_error(run(*args, ok=False, quiet=False, process=args == ()), code=2)
        assert "--help" in line
    read, write = os.pipe()
    os.close(read)  # the reader is gone, as after `| head -1`
    proc = subprocess.run([sys.executable, "-m", "jungleseg.cli", "info", str(model), "--json"],
                          stdout=write, stderr=subprocess.PIPE, text=True, cwd=REPO)
    os.close(write)
    assert proc.returncode == 0 and proc.stderr == ""


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


def test_generate_again_into_a_folder(tmp_path):
    """The same command again rewrites its files; fewer into the same folder would leave
    the old ones to be read with the new, so it is refused before anything is written."""
    out = tmp_path / "faces"
    run("generate", "faces", "--n", 3, "--size", "48x64", "--out", out)
    before = (out / "images" / "000000.png").read_bytes()
    run("generate", "faces", "--n", 3, "--size", "48x64", "--out", out)
    line = one_line_error(run("generate", "faces", "--n", 2, "--size", "32x32", "--seed", 1,
                              "--out", out, ok=False))
    assert "already holds 1 other file (000002.png)" in line and "new or empty" in line
    assert (out / "images" / "000000.png").read_bytes() == before  # nothing overwritten


@pytest.mark.parametrize("args, message", [
    (("info", "missing.h5"), "no such model file"),
    (("info", "tests"), "is a folder, not a model file"),
    (("train", "configs/faces.yaml", "--out", "x.h5", "--set", "jungle.width=3"),
     "jungle.width"),
    (("train", "configs/faces.yaml", "--out", "x.h5", "--set", "nokeyvalue"), "KEY=VALUE"),
    (("train", "configs/uci.yaml", "--out", "x.h5"), "images"),
    (("train", "configs/faces.yaml", "--out", "x.h5", "--data", "tests/data"),
     "not a folder written by 'jungleseg generate'"),
    (("train", "configs/faces.yaml", "--out", "x.h5", "--max-memory", "lots"), "memory size"),
    (("generate", "faces", "--n", "2", "--size", "big", "--out", "g"), "HEIGHTxWIDTH"),
])
def test_errors_are_one_line_and_non_zero(args, message):
    assert message in one_line_error(run(*args, ok=False))
    assert not (REPO / "x.h5").exists()


def test_model_and_image_errors(trained, tmp_path):
    _, data, model = trained
    not_hdf5 = tmp_path / "bad.h5"
    not_hdf5.write_text("hello")
    grey = tmp_path / "grey.png"
    cv2.imwrite(str(grey), np.zeros((8, 8), np.uint8))
    broken = tmp_path / "broken.png"
    broken.write_bytes(b"\x89PNG not really")
    (tmp_path / "folder").mkdir()
    empty = tmp_path / "empty"
    empty.mkdir()
    cases = [
        (("info", not_hdf5), "unreadable"),
        (("segment", model, grey, "--out", tmp_path / "o"), "RGB"),
        (("segment", model, broken, "--out", tmp_path / "o"), "broken.png"),
        (("segment", model, tmp_path / "nothing", "--out", tmp_path / "o"), "no such file"),
        (("segment", model, empty, "--out", tmp_path / "o"), "no images"),
        (("evaluate", model, "--dataset", "faces", "--data", data, "--json",
          tmp_path / "folder"), "is a folder; --json needs a file name"),
        (("train", REPO / "configs/faces.yaml", "--out", tmp_path / "m.h5", "--data", empty),
         "not a folder written by"),
    ]
    for args, message in cases:
        assert message in one_line_error(run(*args, ok=False)), args
