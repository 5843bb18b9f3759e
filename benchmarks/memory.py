"""Peak memory of segmentation and training against the estimates of ``jungleseg._memory``.

Each measurement runs in a fresh subprocess: it builds its inputs and warms the kernels
up, then reads its resident memory, runs one ``segment`` or ``fit`` and reads the peak
resident memory (``ru_maxrss``); the difference is what the step needed. An estimate
should lie above the measurement, and not far above it.

    python benchmarks/memory.py [--size 2000] [--quick]
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import write_results  # noqa: E402

REPO = Path(__file__).resolve().parents[1]

_CHILD = r"""
import json, resource, sys
import numpy as np
from jungleseg import ColourFeatures, DepthFeatures, JungleSegmenter, segment
from jungleseg.config import load_preset
from jungleseg import _memory
from jungleseg.datasets.faces import render_faces
from jungleseg.datasets.kinect import render_frames

spec = json.loads(sys.argv[1])

def rss():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * resource.getpagesize()

def peak():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024

def estimator(name, n=6):
    if name == "depth":
        depth, labels = render_frames(n, seed=0, size=(120, 160))
        seg = JungleSegmenter(DepthFeatures(0.3, 142.8), n_estimators=3, max_width=64,
                              max_depth=10, samples_per_image=500, random_state=0)
        return seg, list(depth), list(labels)
    images, labels = render_faces(n, seed=0, size=(96, 128))
    images, labels = list(images), list(labels)
    if name == "stanford":
        seg = load_preset("stanford").estimator().set_params(max_depth=10)
    elif name == "faces":
        seg = load_preset("faces").estimator().set_params(max_depth=10, images_per_dag=None)
    else:  # napari preset on grey images
        seg = load_preset("napari").estimator()
        images = [im.mean(axis=2).astype(np.uint8) for im in images]
    return seg, images, labels

seg, images, labels = estimator(spec["model"], spec.get("n_images", 6))
if spec["what"] == "segment":
    seg.fit(images, labels)
    jungle = seg.jungle_
    size = spec["size"]
    if spec["model"] == "depth":
        image = np.tile(images[0], (size // images[0].shape[0] + 1, size // images[0].shape[1] + 1))
    else:
        image = np.tile(images[0], (size // images[0].shape[0] + 1, size // images[0].shape[1] + 1)
                        + ((1,) if images[0].ndim == 3 else ()))
    image = np.ascontiguousarray(image[:size, :size])
    segment(jungle, image[:64, :64], tile=spec.get("tile"))  # warm up
    margin = jungle.family.margin(image) + 2 * jungle.params.get("smoothing", 0)
    estimate = _memory.segmentation_bytes(jungle, image.shape, image.dtype.itemsize,
                                          spec.get("tile"), margin=margin)
    before = rss() - image.nbytes
    segment(jungle, image, tile=spec.get("tile"))
else:
    seg.set_params(**spec.get("params", {}))
    JungleSegmenter(**{**seg.get_params(deep=False), "max_depth": 4,
                        "max_width": 2}).fit(images[:2], labels[:2])  # warm up LSearch too
    classes = len(np.unique(np.concatenate([np.unique(l) for l in labels])))
    result = _memory.training_bytes(seg, [im.shape for im in images],
                                    images[0].dtype.itemsize, classes)
    estimate = result.total
    before = rss() - sum(im.nbytes for im in images)
    seg.fit(images, labels)
print(json.dumps({"measured": peak() - before, "estimate": estimate}))
"""


def measure(spec: dict) -> dict:
    proc = subprocess.run([sys.executable, "-c", _CHILD, json.dumps(spec)], capture_output=True,
                          text=True, cwd=REPO)
    if proc.returncode:
        raise RuntimeError(proc.stderr[-2000:])
    return json.loads(proc.stdout.splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=2000, help="side of the segmented image")
    parser.add_argument("--quick", action="store_true", help="fewer cases")
    args = parser.parse_args()
    models = ["faces", "stanford"] if args.quick else ["faces", "stanford", "napari", "depth"]
    print(f"{'case':52s} {'measured':>10s} {'estimate':>10s} {'ratio':>6s}")
    cases = []
    for model in models:
        cases.append((f"segment {model} {args.size}^2", {"what": "segment", "model": model,
                                                        "size": args.size}))
        cases.append((f"segment {model} {args.size}^2, tiles of 512",
                      {"what": "segment", "model": model, "size": args.size, "tile": 512}))
    for model in models:
        cases.append((f"train {model} on 40 images",
                      {"what": "train", "model": model, "n_images": 40}))
    cases.append(("train stanford on 40 images, 30 DAGs",
                  {"what": "train", "model": "stanford", "n_images": 40,
                   "params": {"n_estimators": 30}}))
    figures = {}
    for name, spec in cases:
        result = measure(spec)
        print(f"{name:52s} {result['measured'] / 1e6:8.0f}MB {result['estimate'] / 1e6:8.0f}MB "
              f"{result['estimate'] / max(result['measured'], 1):6.2f}", flush=True)
        figures[name] = {"measured_mb": result["measured"] / 1e6,
                         "estimate_mb": result["estimate"] / 1e6,
                         "estimate_over_measured": result["estimate"] / max(result["measured"], 1)}
    write_results("memory", {"cases": figures})


if __name__ == "__main__":
    main()
