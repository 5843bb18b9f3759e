"""The napari plugin's samples: mean Jaccard and time of one press of *Train and segment*.

For each sample, does what the widget does on one press, without Qt (the session in
``napari_plugin._session``): the sample's layers, its preset (``napari``, or
``napari_volume`` for the 3-D samples) and image type, training on the strokes, then the
segmentation of the whole image or volume from the channels computed for training. Prints
the mean Jaccard against the sample's ground truth, and the CPU time (every thread) and wall
time of the press, best of ``--repeats``, after a first press that compiles or loads the
kernels: *first*, on an image the widget has not seen (channels computed), and *again*, a
second press on the same image (its channels kept, as after painting a stroke). Writes
``benchmarks/results/napari_samples.json`` (``napari_samples_detail<k>.json`` with
``--detail k``, the speed/detail slider's position other than the middle). ::

    python benchmarks/napari_samples.py [cells face ...] [--repeats 3] [--detail 1]
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path[:0] = [str(Path(__file__).resolve().parent), str(Path(__file__).resolve().parents[1])]
from _common import write_results  # noqa: E402

SAMPLES = ("cells", "face", "depth_body", "cells_volume", "cells_volume_channels")


def sample_input(name: str):
    """The sample's image (channels last for the three stains), truth, strokes, image
    type, voxel spacing (None for 2-D) and preset, as the widget reads them."""
    from napari_plugin import _sample_data, _session

    (image, image_kwargs, _), (truth, _, _), (strokes, _, _) = getattr(_sample_data, name)()
    spacing = image_kwargs.get("scale")
    kind = ("channels" if "channel_axis" in image_kwargs
            else _session.guess_kind(image, image_kwargs.get("rgb", False)))
    preset = _session.VOLUME_PRESET if spacing else _session.DEFAULT_PRESET
    return image, truth, strokes, kind, spacing, preset


def press(image, strokes, kind: str, spacing, preset_name: str, channels: dict,
          detail: int | None = None):
    """One press of Train and segment: the labels of the whole image or volume, with the
    speed/detail slider at ``detail`` (default: the middle, the preset's DAGs and depth)."""
    from jungleseg.config import load_preset
    from napari_plugin import _session
    from napari_plugin._panel import DETAIL_STEPS

    preset = load_preset(preset_name)
    knobs = preset.jungle_params
    features = preset.feature_params
    n_channels = image.shape[-1] if kind == "channels" else 1
    times, deeper = DETAIL_STEPS[(detail or (len(DETAIL_STEPS) + 1) // 2) - 1]
    size = (max(1, round(knobs["n_estimators"] * times)), knobs["max_width"],
            max(1, knobs["max_depth"] + deeper))
    if spacing:
        model = _session.volume_estimator(preset, n_channels, spacing, *size,
                                          features["max_offset"])
        prepared = _session.train_volumes(model, image, strokes, kind, channels=channels)
        parts = _session.segment_volumes(model.jungle_, image, prepared=prepared)
        return next(parts)[2]
    offset = 0.45 if kind == "depth" else features["max_offset"]  # the widget's defaults
    model = _session.estimator(preset, kind, n_channels, *size, offset)
    prepared = _session.train(model, image, strokes, kind, channels=channels)
    return next(_session.segment_stack(model.jungle_, image, prepared=prepared))[1]


def measure(name: str, repeats: int, detail: int | None = None) -> dict:
    from jungleseg import evaluate

    image, truth, strokes, kind, spacing, preset = sample_input(name)
    press(image, strokes, kind, spacing, preset, {}, detail)  # compiles or loads the kernels
    figures = {"preset": preset}
    for case in ("first", "again"):
        best = None
        for _ in range(repeats):
            kept = {}
            if case == "again":
                press(image, strokes, kind, spacing, preset, kept, detail)
            start, start_cpu = time.perf_counter(), time.process_time()
            labels = press(image, strokes, kind, spacing, preset, kept, detail)
            timing = (time.process_time() - start_cpu, time.perf_counter() - start)
            best = timing if best is None or timing < best else best
        figures[f"{case}_cpu_s"], figures[f"{case}_wall_s"] = (round(t, 3) for t in best)
    classes = [c for c in np.unique(truth) if c]
    figures["mean_jaccard"] = round(float(evaluate([truth], [labels], classes).mean_jaccard),
                                    3)
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("samples", nargs="*", default=list(SAMPLES),
                        help=f"samples (default: {' '.join(SAMPLES)})")
    parser.add_argument("--repeats", type=int, default=3, help="presses timed (best kept)")
    parser.add_argument("--detail", type=int, choices=range(1, 6), default=None,
                        help="the speed/detail slider's position, 1 (fastest) to 5 (default: "
                             "3, the preset's DAGs and depth)")
    args = parser.parse_args()
    for name in set(args.samples) - set(SAMPLES):
        parser.error(f"no sample {name!r}; samples: {', '.join(SAMPLES)}")
    results = {}
    for name in args.samples:
        results[name] = figures = measure(name, args.repeats, args.detail)
        print(f"{name:22s} mean Jaccard {figures['mean_jaccard']:.3f}  first press "
              f"{figures['first_cpu_s']:.2f} CPU-s ({figures['first_wall_s']:.2f} s wall)  "
              f"again {figures['again_cpu_s']:.2f} CPU-s ({figures['again_wall_s']:.2f} s)",
              flush=True)
    middle = args.detail in (None, 3)
    write_results("napari_samples" if middle else f"napari_samples_detail{args.detail}",
                  results)


if __name__ == "__main__":
    main()
