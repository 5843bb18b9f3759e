"""``jungleseg evaluate``: an unseen test class is scored with a warning, ``--quiet`` hides
progress only, the benchmark comes from the model or the folder, and ``--data`` takes what
``train --data`` takes."""
import json

import numpy as np
from PIL import Image

from jungleseg.imageio import write_labels

from .test_commands import one_line_error, run
from .test_workflows import TINY, own_folders


def test_a_test_class_unseen_in_training_is_scored_not_refused(tmp_path):
    data = own_folders(tmp_path / "mine", n=4)
    for path in (data / "labels").glob("*.png"):  # no hair in training
        labels = np.asarray(Image.open(path))
        write_labels(path, np.where(labels == 2, 1, labels))
    model = tmp_path / "m.h5"
    run("train", "stanford", "--data", data, "--out", model, *TINY)
    test = own_folders(tmp_path / "test", n=4)  # with hair
    proc = run("evaluate", model, "--data", test, "--json", tmp_path / "s.json")
    result = json.loads((tmp_path / "s.json").read_text())
    assert result["unseen_classes"] == [2] and result["per_class_jaccard"]["2"] == 0
    warnings = [ln for ln in proc.stderr.splitlines() if ln.startswith("jungleseg: warning:")]
    assert len(warnings) == 1 and "class 2" in warnings[0] and "never seen" in warnings[0]
    assert "2  0.000" in proc.stdout


def test_quiet_hides_progress_only(trained, tmp_path):
    _, data, model = trained
    quiet = run("evaluate", model, "--dataset", "faces", "--data", data, "--json",
                tmp_path / "q.json", "--confusion", tmp_path / "cm.png")
    assert "mean Jaccard" in quiet.stdout and "skin" in quiet.stdout
    assert quiet.stderr == "" and (tmp_path / "q.json").is_file()
    loud = run("evaluate", model, "--dataset", "faces", "--data", data, "--confusion",
               tmp_path / "cm.png", quiet=False)
    assert "evaluating" in loud.stderr and "confusion matrix:" in loud.stdout
    assert "confusion matrix:" not in quiet.stdout


def test_the_benchmark_comes_from_the_model(trained, tmp_path):
    _, data, model = trained
    proc = run("evaluate", model, "--data", data, "--confusion", tmp_path / "cm.png")
    assert "mean Jaccard" in proc.stdout
    line = one_line_error(run("evaluate", model, "--data", tmp_path / "nothing", ok=False))
    assert "nothing: not a folder written by" in line


def test_a_generated_folder_needs_no_dataset_name(tmp_path):
    """An older model without the benchmark in its metadata, on a folder from
    ``generate``: the folder says which benchmark it is."""
    from jungleseg import load_model, save_model

    data = tmp_path / "k"
    run("generate", "kinect", "--n", 2, "--size", "60x80", "--out", data)
    model = tmp_path / "k.h5"
    run("train", "kinect", "--data", data, "--out", model, *TINY)
    jungle = load_model(model)
    del jungle.metadata["dataset"]
    save_model(jungle, model)
    proc = run("evaluate", model, "--data", data, "--confusion", tmp_path / "cm.png")
    assert "left_upper_head" in proc.stdout and "background" not in proc.stdout
