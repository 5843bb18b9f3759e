"""Peak memory of segmentation and training against the estimates of ``jungleseg._memory``.

Each measurement runs in a fresh process: it loads its images and warms the kernels up,
then reads its resident memory, runs one ``segment`` or ``fit`` and reads the peak
resident memory (``ru_maxrss``); the difference, plus the images it was given, is what
the step needed, and the estimate should lie within 25 % of it. Training cases fit the
shipped presets on real data (Stanford Background, the microscopy volumes; the data
folder from ``JUNGLESEG_DATA``, default ../shared/data) and on rendered faces and depth
frames. The estimates of the full data sets (all 572 Stanford images) are printed beside
them, with the store as it is (8-bit codes) and as the float32 store before quantisation
would be. The Stanford cases take the first ``--images`` images of fold 0's training part
(457 images) and then of its test part, so ``--images 572`` fits on every image and
measures those full-size estimates; ``--out`` names the results file of such a run
(``benchmarks/results/<out>.json``), so that it does not replace the default cases' file.

``--zarr SIZE`` measures instead what a user runs on a cluster: ``jungleseg segment
big.zarr --out labels.zarr --workers 2`` on a SIZE x SIZE RGB zarr mosaic of Stanford
photos (chunks of 1024), in its own process; the peak of the resident memory summed over
that process and all its descendants (scheduler, nannies and workers), sampled every
50 ms, and each process's own peak (:class:`TreeRSS`). Its model has the stanford
preset's channels (what a window's working set depends on) and a smaller jungle (4 DAGs
of depth 14, trained on ``--images`` Stanford images), so that the run takes minutes.

    python benchmarks/memory.py [--size 2000] [--quick] [--images 40] [--train-only]
                                [--presets stanford,volume] [--pads] [--out memory]
    python benchmarks/memory.py --train-only --images 572 --presets stanford_context \
                                --out memory_full
    python benchmarks/memory.py --zarr 20480 [--images 20] [--folder DIR]
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import TreeRSS, mosaic_zarr, write_results  # noqa: E402

REPO = Path(__file__).resolve().parents[1]

_CHILD = r"""
import json, resource, sys
import numpy as np
from jungleseg import ColourFeatures, DepthFeatures, JungleSegmenter, segment
from jungleseg.config import load_preset
from jungleseg import _memory
from jungleseg.datasets import load_benchmark
from jungleseg.datasets.faces import render_faces
from jungleseg.datasets.kinect import render_frames

spec = json.loads(sys.argv[1])

def rss():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * resource.getpagesize()

def peak():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024

def ovule(data):
    from jungleseg.datasets._paths import data_root
    folder = data_root(data) / "microscopy" / "ovule_nuclei_1137"
    volume = np.load(folder / "volume.npy")
    labels = np.load(folder / "labels.npy").astype(np.uint8) + 1  # 1 background, 2 nuclei
    return [volume[:50], volume[50:]], [labels[:50], labels[50:]]

def training(name, n, data):
    if name in ("stanford", "stanford_context"):
        split = load_benchmark("stanford", "train", data, n)
        images, labels = split.images, split.labels
        if n is not None and n > len(images):  # past fold 0's training part: its test part
            rest = load_benchmark("stanford", "test", data, n - len(images))
            images, labels = images + rest.images, labels + rest.labels
        return load_preset(name).estimator(), images, labels
    if name == "volume":
        images, labels = ovule(data)
        return load_preset("volume").estimator(), images, labels
    if name == "kinect":
        split = load_benchmark("kinect", "train", None, n)
        return load_preset("kinect").estimator(), split.images, split.labels
    split = load_benchmark("faces", "train", None, n)
    return load_preset("faces").estimator(), split.images, split.labels

def rendered(name, n=6):
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

if spec["what"] == "segment":
    seg, images, labels = rendered(spec["model"])
    seg.fit(images, labels)
    jungle = seg.jungle_
    size = spec["size"]
    reps = (size // images[0].shape[0] + 1, size // images[0].shape[1] + 1)
    image = np.tile(images[0], reps + ((1,) if images[0].ndim == 3 else ()))
    image = np.ascontiguousarray(image[:size, :size])
    segment(jungle, image[:64, :64], tile=spec.get("tile"))  # warm up
    margin = jungle.family.margin(image) + 2 * jungle.params.get("smoothing", 0)
    estimate = _memory.segmentation_bytes(jungle, image.shape, image.dtype.itemsize,
                                          spec.get("tile"), margin=margin)
    before = rss() - image.nbytes
    segment(jungle, image, tile=spec.get("tile"))
    out = {"estimate": estimate}
else:
    seg, images, labels = training(spec["model"], spec.get("n_images"), spec.get("data"))
    seg.set_params(**spec.get("params", {}))
    small = JungleSegmenter(**{**seg.get_params(deep=False), "max_depth": 4, "max_width": 2,
                               "auto_context": 1})
    small.fit(images[:2], labels[:2])  # compile the kernels (LSearch too) first
    estimate = _memory.check_training_memory(seg, images, labels)
    before = rss() - sum(np.asarray(im).nbytes for im in images)
    seg.fit(images, labels)
    out = {"estimate": estimate.total, "largest": estimate.largest}
print(json.dumps({**out, "measured": peak() - before}))
"""


def measure(spec: dict) -> dict:
    proc = subprocess.run([sys.executable, "-c", _CHILD, json.dumps(spec)], capture_output=True,
                          text=True, cwd=REPO)
    if proc.returncode:
        raise RuntimeError(proc.stderr[-2000:])
    return json.loads(proc.stdout.splitlines()[-1])


def full_size_estimates(data) -> dict:
    """Estimated peaks of the Stanford presets on all 572 images, as the store is (8-bit
    codes) and with the float32 values and float64 integral images of the store before
    quantisation."""
    from jungleseg import _memory
    from jungleseg.config import load_preset
    from jungleseg.datasets.stanford import load_stanford

    rows = load_stanford(data)
    images, labels = [r[1] for r in rows], [r[2] for r in rows]
    figures = {}
    for name in ("stanford", "stanford_context"):
        estimator = load_preset(name).estimator()
        today = _memory.check_training_memory(estimator, images, labels, 1 << 62)
        original = _memory.store_value_bytes
        _memory.store_value_bytes = lambda family: (4, 8)
        try:
            floats = _memory.check_training_memory(estimator, images, labels, 1 << 62)
        finally:
            _memory.store_value_bytes = original
        figures[f"{name} on all {len(images)} images"] = {
            "estimate_mb": today.total / 1e6, "largest": today.largest,
            "estimate_float32_store_mb": floats.total / 1e6}
    return figures


def pad_figures(data, n_images: int) -> dict:
    """What the training store's border costs: per preset, the store as training holds
    it (``cheap_pad``: a border only where it adds at most a quarter), with no border,
    and with a border of the whole probe reach (what reading every probe unclamped
    needs); and the time of reading probes clamped instead, on ``n_images`` Stanford
    images with the stanford preset's probes (CPU seconds of growth on one thread, store
    padded by the reach against no border; the models are equal)."""
    import time

    import numpy as np

    from jungleseg import _memory
    from jungleseg._workers import threads
    from jungleseg.config import load_preset
    from jungleseg.datasets import load_benchmark
    from jungleseg.datasets._paths import data_root
    from jungleseg.segmentation._input import training_values

    def volume_slabs():
        folder = data_root(data) / "microscopy"
        volume = np.load(folder / "ovule_nuclei_1137" / "volume.npy")
        return [volume[:50].shape, volume[50:].shape, (32, 128, 128)]

    from jungleseg.datasets.stanford import load_stanford

    every = [row[1].shape for row in load_stanford(data)]  # all 572 images
    stanford = load_benchmark("stanford", "train", data, n_images)
    shapes = {"stanford": every, "stanford_context": every,
              "napari": [(512, 512)] * 10, "microscopy": [(512, 512)] * 10,
              "volume": volume_slabs(), "napari_volume": volume_slabs()}
    figures = {}
    for name, found in shapes.items():
        family = load_preset(name).estimator()._family()
        ndim = family.spatial_ndim
        reach = family.reach if ndim == 3 else (0, family.point_reach or 0)
        pad, pad_z = _memory.training_pad(family, found)
        per_pixel = _memory.store_bytes_per_pixel(family)
        size = {key: sum(_memory.padded_pixels(found, ndim, p, q)) * per_pixel / 1e6
                for key, (p, q) in {"today": (pad, pad_z), "no_border": (0, 0),
                                    "full_reach": (max(reach[1:]), reach[0])}.items()}
        figures[name] = {"images": len(found), "pad_today": [pad_z, pad],
                         "store_mb_today": size["today"], "store_mb_no_border": size["no_border"],
                         "store_mb_full_reach": size["full_reach"],
                         "border_share_today": size["today"] / size["no_border"] - 1}
    estimator = load_preset("stanford").estimator()
    family = estimator._family()
    values = training_values(stanford.images[:n_images], family)[0]
    seconds = {}
    models = {}
    for pad in (family.point_reach, 0, family.point_reach, 0):  # twice, alternating
        store = family.prepare(values, pad=pad)
        with threads(1):
            start = time.process_time()
            models[pad] = estimator.fit(stanford.images[:n_images],
                                        stanford.labels[:n_images], store=store).jungle_
            seconds.setdefault(pad, []).append(time.process_time() - start)
    padded, clamped = min(seconds[family.point_reach]), min(seconds[0])
    same = all(np.array_equal(a.feature_params, b.feature_params)
               for a, b in zip(models[0].dags, models[family.point_reach].dags))
    figures["clamping_stanford"] = {
        "images": n_images, "cpu_seconds_padded": padded, "cpu_seconds_clamped": clamped,
        "clamped_over_padded": clamped / padded, "same_model": bool(same)}
    return figures


def zarr_on_workers(size: int, n_images: int, data, folder: Path) -> dict:
    """``jungleseg segment`` of a size x size zarr on 2 workers (module docstring); the
    model and the mosaic are made in ``folder`` unless they are there already."""
    from jungleseg import save_model
    from jungleseg.config import load_config
    from jungleseg.datasets import load_benchmark

    model, big = folder / "model.h5", folder / f"big{size}.zarr"
    if not model.exists():
        config = load_config(REPO / "configs" / "stanford.yaml").with_overrides(
            {"jungle.n_estimators": 4, "jungle.max_depth": 14, "jungle.max_width": 64,
             "jungle.n_candidate_features": 40, "sampling.samples_per_image": 500})
        train = load_benchmark("stanford", "train", data, n_images)
        save_model(config.estimator().fit(train.images, train.labels).jungle_, model)
    if not big.exists():
        mosaic_zarr(big, load_benchmark("stanford", "test", data, 40).images, size, 1024)
    out = folder / "labels.zarr"
    command = [sys.executable, "-m", "jungleseg.cli", "segment", str(model), str(big),
               "--out", str(out), "--workers", "2", "--quiet"]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    process = subprocess.Popen(command, cwd=REPO)
    with TreeRSS(process.pid) as rss:
        code = process.wait()
    seconds = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
    return {"size": size, "chunk": 1024, "chunks": (-(-size // 1024)) ** 2, "exit_code": code,
            "command": " ".join(["jungleseg", *command[3:]]),
            "peak_all_processes_mb": rss.peak / 1e6,
            "peak_each_process_mb": {k: v / 1e6 for k, v in sorted(rss.own.items())},
            "sum_every_30_s_mb": [[t, round(v / 1e6)] for t, v in rss.trace],
            "wall_seconds": seconds, "cpu_seconds": cpu, "load_average": os.getloadavg()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=2000, help="side of the segmented image")
    parser.add_argument("--images", type=int, default=40,
                        help="Stanford images of the training cases")
    parser.add_argument("--data", default=None, help="real data folder (default: "
                        "$JUNGLESEG_DATA, else ../shared/data)")
    parser.add_argument("--quick", action="store_true", help="fewer cases")
    parser.add_argument("--train-only", action="store_true", help="training cases only")
    parser.add_argument("--presets", default=None,
                        help="training cases of these presets only, comma-separated")
    parser.add_argument("--out", default="memory", metavar="NAME",
                        help="results file benchmarks/results/NAME.json (default: memory)")
    parser.add_argument("--pads", action="store_true",
                        help="only what the training store's border costs (pad_figures)")
    parser.add_argument("--zarr", type=int, metavar="SIZE", default=None,
                        help="only `jungleseg segment --workers 2` of a SIZE x SIZE zarr "
                             "(zarr_on_workers)")
    parser.add_argument("--folder", default=None,
                        help="with --zarr: where the model and the mosaic are made, or found "
                             "from an earlier run (default: a temporary folder)")
    args = parser.parse_args()
    if args.zarr:
        with tempfile.TemporaryDirectory() as temporary:
            figures = zarr_on_workers(args.zarr, args.images, args.data,
                                      Path(args.folder or temporary))
        print(json.dumps(figures, indent=1))
        write_results("memory_zarr", figures)
        return
    if args.pads:
        figures = pad_figures(args.data, args.images)
        print(json.dumps(figures, indent=1))
        write_results("memory_pads", figures)
        return
    models = ["faces", "stanford"] if args.quick else ["faces", "stanford", "napari", "depth"]
    print(f"{'case':56s} {'measured':>10s} {'estimate':>10s} {'ratio':>6s}")
    cases = []
    for model in models if not args.train_only else ():
        cases.append((f"segment {model} {args.size}^2", {"what": "segment", "model": model,
                                                        "size": args.size}))
        cases.append((f"segment {model} {args.size}^2, tiles of 512",
                      {"what": "segment", "model": model, "size": args.size, "tile": 512}))
    n = args.images
    train = [("faces preset, 60 rendered faces", "faces", 60),
             (f"stanford preset, {n} Stanford images", "stanford", n),
             (f"stanford_context preset, {n} Stanford images", "stanford_context", n),
             ("volume preset, ovule nuclei (2 x 50 x 100 x 100)", "volume", None)]
    if not args.quick:
        train.append(("kinect preset, 100 rendered depth frames", "kinect", 100))
    if args.presets:
        train = [case for case in train if case[1] in args.presets.split(",")]
    for name, model, count in train:
        cases.append((f"train {name}", {"what": "train", "model": model, "n_images": count,
                                        "data": args.data}))
    figures = {}
    for name, spec in cases:
        result = measure(spec)
        ratio = result["estimate"] / max(result["measured"], 1)
        print(f"{name:56s} {result['measured'] / 1e6:8.0f}MB {result['estimate'] / 1e6:8.0f}MB "
              f"{ratio:6.2f}", flush=True)
        figures[name] = {"measured_mb": result["measured"] / 1e6,
                         "estimate_mb": result["estimate"] / 1e6,
                         "estimate_over_measured": ratio}
    full = full_size_estimates(args.data)
    for name, row in full.items():
        print(f"estimate, {name}: {row['estimate_mb']:.0f} MB (largest: {row['largest']}); "
              f"with the float32 store {row['estimate_float32_store_mb']:.0f} MB")
    write_results(args.out, {"cases": figures, "full_size_estimates": full})


if __name__ == "__main__":
    main()
