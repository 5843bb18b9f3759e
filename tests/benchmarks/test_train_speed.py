"""benchmarks/train_speed.py on small depth models: frame timing runs both ways, prints
their rates and keeps none of the results it times; an image workload fits twice and
compares both fits with the peer."""
import importlib.util
import re
import sys
import weakref
from pathlib import Path

import numpy as np

from jungleseg import DepthFeatures, JungleSegmenter
from jungleseg.datasets.kinect import render_frames

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "train_speed.py"


def load_script(monkeypatch):
    monkeypatch.setattr(sys, "path", list(sys.path))  # the script puts benchmarks/ first
    spec = importlib.util.spec_from_file_location("train_speed", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_drain_takes_every_result_and_keeps_none(monkeypatch):
    speed = load_script(monkeypatch)
    made, held = [], []

    def results():
        for _ in range(5):
            held.append(sum(ref() is not None for ref in made))  # earlier results alive
            result = np.zeros(3)
            made.append(weakref.ref(result))
            yield result
            del result

    assert speed.drain(results()) is None
    assert len(made) == 5 and held == [0] * 5


def test_frames_per_second_times_both_ways_with_and_without_probabilities(capsys,
                                                                         monkeypatch):
    speed = load_script(monkeypatch)
    depth, parts = render_frames(5, seed=1, size=(60, 80))
    jungle = JungleSegmenter(DepthFeatures(max_offset=0.3, focal_length=71.4), n_estimators=1,
                             max_width=8, max_depth=4, samples_per_image=100,
                             ignore=(0, 255), random_state=0
                             ).fit(list(depth[:3]), list(parts[:3])).jungle_
    speed.frames_per_second(jungle, depth[3:])
    lines = capsys.readouterr().out.strip().splitlines()
    assert [("labels only" in line, "with probabilities" in line) for line in lines] == [
        (True, False), (False, True)]
    for line in lines:
        rates = re.findall(r"(\d+) frames/s (one at a time|as a stream)", line)
        assert [way for _, way in rates] == ["one at a time", "as a stream"]
        assert all(int(rate) > 0 for rate, _ in rates)


def test_image_workload_fits_twice_and_compares_both_fits_with_the_peer(capsys, monkeypatch):
    speed = load_script(monkeypatch)
    depth, parts = render_frames(4, seed=2, size=(60, 80))
    config = speed.load_config(speed.CONFIGS / "kinect.yaml").with_overrides({
        "jungle.n_estimators": 1, "jungle.max_width": 8, "jungle.max_depth": 4,
        "jungle.n_candidate_features": 10, "sampling.samples_per_image": 50,
        "sampling.images_per_dag": None})
    model = speed.image_workload("kinect", config, list(depth), list(parts), 1)
    out = capsys.readouterr().out
    fits = re.findall(r"(jungle \(1 thr\)|again, on memory used before) +([\d.]+) s", out)
    assert [label for label, _ in fits] == ["jungle (1 thr)", "again, on memory used before"]
    ratios = re.search(r"jungle / peer time: ([\d.]+) \(again: ([\d.]+)\)", out)
    assert ratios is not None and all(float(r) > 0 for r in ratios.groups())
    assert model.node_count_ > 1
    assert re.findall(r"nodes (\d+)", out) == [str(model.node_count_)] * 2  # the same model
