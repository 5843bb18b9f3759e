"""Real microscopy: the `microscopy` (2-D) and `volume` (3-D) presets against ilastik's filter
bank with a 100-tree random forest, and against scikit-image's trainable segmentation.

Data: every labelled set in ``$JUNGLESEG_DATA/microscopy`` (its README): two confocal ovule
volumes (nuclei; membrane boundaries), a fluorescence nuclei volume and a 2-D nuclei image.
Class 1 is background, class 2 the structure. To keep a run short on a shared machine, each
is cropped to its central ``--crop`` block (default 48 x 96 x 96; the 2-D image 96 x 96),
then cut into ``--folds`` blocks (volumes:
slabs of slices along z; the 2-D image: bands of columns); each block is held out in turn, its
labels withheld, and every method is scored by mean Jaccard on it:

- dense: the labels of the other blocks, subsampled to ``--pixels`` labelled voxels (half of
  each class where there are enough), the same voxels for every method;
- sparse: brush strokes (:func:`~jungleseg.datasets.scribbles.paint_scribbles`, 2 % of a
  slice) on three slices of the other blocks (the 2-D image: on the other bands).

Methods, each timed from the raw volume to labels of the held-out block (features included):

- ``ours 3-D``: ``configs/volume.yaml`` with the set's voxel spacing, trained on the volume;
- ``ours 2-D``: ``configs/microscopy.yaml`` trained on the labelled slices, segmenting the
  held-out slices one by one;
- ``ilastik RF100 2-D/3-D``: ilastik's default filter bank (Gaussian at 0.3, and Gaussian, LoG,
  gradient magnitude, DoG, structure-tensor and Hessian eigenvalues at 0.7, 1, 1.6, 3.5 and
  5 pixels; in 3-D with the spacing's anisotropy), computed by the same code as our channels
  (:func:`jungleseg.features._bank.filter_bank`), with scikit-learn's
  ``RandomForestClassifier(n_estimators=100)`` as ilastik uses it;
- ``fit_segmenter 2-D/3-D``: scikit-image's documented example (``multiscale_basic_features``
  sigma 1-16, a random forest of 50 trees, depth 10, ``max_samples=0.05``);
- ``napari 3-D``: the napari widget's 3-D mode, ``configs/napari_volume.yaml``, as
  ``ours 3-D`` (``--set-napari`` overrides it).

Writes ``benchmarks/results/microscopy.json`` and, with ``--figures``, a picture per dataset
in ``docs/images/microscopy_<name>.png`` (a held-out slice, the truth, both presets).

    python benchmarks/microscopy.py [--folds 3] [--pixels 5000] [--crop 48 96 96] [--figures]
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from jungleseg import evaluate  # noqa: E402
from jungleseg.config import load_preset, parse_overrides  # noqa: E402
from jungleseg.datasets._paths import data_root  # noqa: E402
from jungleseg.datasets.scribbles import paint_scribbles  # noqa: E402
from jungleseg.features._bank import FILTERS, filter_bank, n_planes  # noqa: E402

#: Sets, with their voxel size (z, y, x) in micrometres; None: a 2-D image. The nuclei
#: volume's voxel size is not known: taken as isotropic at the preset's in-plane size.
#: ``ovule_nuclei_1137``'s raw volume is spatially white noise in its source (PlantSeg's
#: ``1137_mini.h5``: correlation of neighbouring voxels 0.001, against 0.53-0.57 in its
#: siblings ``1135_mini`` and ``1136_mini``), so it is scored as a control that no method can
#: learn; the siblings are used where present (datasets/microscopy/README.md).
DATASETS = {
    "nuclei_3d": ("nuclei_3d", (0.1, 0.1, 0.1)),
    "ovule_membranes": ("ovule_cells", (0.235, 0.15, 0.15)),
    "nuclei_2d": ("nuclei_2d", None),
    "ovule_nuclei_1135": ("ovule_nuclei_1135", (0.284, 0.127, 0.127)),
    "ovule_nuclei_1136": ("ovule_nuclei_1136", (0.284, 0.127, 0.127)),
    "ovule_nuclei_1137": ("ovule_nuclei_1137", (0.284, 0.127, 0.127)),
}
ILASTIK_SCALES = (0.7, 1.0, 1.6, 3.5, 5.0)  # and the Gaussian alone at 0.3, as ilastik
CLASSES = np.array([1, 2])


def load(name: str, data: str | None = None, crop: tuple | None = None
         ) -> tuple[np.ndarray, np.ndarray, tuple | None]:
    """A set's image or volume (float32), its truth (1 background, 2 structure) and voxel
    size; with ``crop`` (D, H, W), the central block at most that large."""
    folder, spacing = DATASETS[name]
    path = data_root(data) / "microscopy" / folder
    if (path / "labels.npy").exists():
        image, truth = np.load(path / "volume.npy"), np.load(path / "labels.npy") > 0
    else:
        import tifffile

        stem = "volume" if (path / "volume.tif").exists() else "image"
        image, truth = tifffile.imread(path / f"{stem}.tif"), tifffile.imread(
            path / "instances.tif") > 0
    if crop is not None:
        sizes = crop[-image.ndim:]
        centre = tuple(slice(max((n - c) // 2, 0), max((n - c) // 2, 0) + c)
                       for n, c in zip(image.shape, sizes))
        image, truth = image[centre], truth[centre]
    return image.astype(np.float32), (1 + truth).astype(np.uint8), spacing


def blocks(truth: np.ndarray, folds: int) -> list[np.ndarray]:
    """Boolean masks of ``folds`` contiguous blocks: slabs along z, or bands of columns of
    a 2-D image."""
    axis = truth.ndim - 1 if truth.ndim == 2 else 0
    edges = np.linspace(0, truth.shape[axis], folds + 1).round().astype(int)
    masks = []
    for a, b in zip(edges[:-1], edges[1:]):
        mask = np.zeros(truth.shape, bool)
        index = [slice(None)] * truth.ndim
        index[axis] = slice(a, b)
        mask[tuple(index)] = True
        masks.append(mask)
    return masks


def training_labels(truth: np.ndarray, held: np.ndarray, sparse: bool, pixels: int,
                    seed: int) -> np.ndarray:
    """The labels every method trains on in one fold (0 = unlabelled)."""
    rng = np.random.default_rng(seed)
    known = np.where(held, 0, truth).astype(np.uint8)
    if sparse:
        painted = np.zeros_like(known)
        if truth.ndim == 2:
            painted = paint_scribbles(known, fraction=0.02, seed=seed, ignore=(0,))
        else:
            free = np.flatnonzero(~held.any(axis=(1, 2)))
            for k, z in enumerate(free[np.linspace(0, len(free) - 1, 5).round().astype(int)
                                       [1:-1]]):
                painted[z] = paint_scribbles(known[z], fraction=0.02, seed=seed + k,
                                             ignore=(0,))
        known = painted
    keep = np.zeros(known.size, bool)
    flat = known.ravel()
    for c in CLASSES:
        where = np.flatnonzero(flat == c)
        keep[rng.choice(where, min(len(where), pixels // len(CLASSES)), replace=False)] = True
    return np.where(keep.reshape(known.shape), known, 0).astype(np.uint8)


def score(truth, labels, held) -> float:
    return float(evaluate([truth[held]], [labels[held]], CLASSES).mean_jaccard)


def held_slices(held: np.ndarray) -> np.ndarray:
    return np.flatnonzero(held.any(axis=(1, 2)))


# --- methods: (image, labels to train on, held-out mask, spacing) -> labels of the image
# (only the held-out part needs to be right)

#: ``--set3d`` / ``--set2d`` overrides of the presets (dotted keys, as the CLI's ``--set``)
OVERRIDES = {"volume": {}, "microscopy": {}, "napari_volume": {}}


def preset_3d(preset: str):
    """A method training the 3-D ``preset`` (with its ``OVERRIDES``) on the volume."""
    def run(image, labels, held, spacing):
        config = load_preset(preset).with_overrides(
            {"features.spacing": list(spacing), **OVERRIDES[preset]})
        model = config.estimator()
        model.fit([image], [labels])
        return model.predict(image)
    return run


def ours_2d(image, labels, held, spacing):
    model = load_preset("microscopy").with_overrides(OVERRIDES["microscopy"]).estimator()
    if image.ndim == 2:
        return model.fit([image], [labels]).predict(image)
    painted = np.flatnonzero(labels.any(axis=(1, 2)))
    model.fit(list(image[painted]), list(labels[painted]))
    out = np.zeros(labels.shape, np.uint8)
    for z in held_slices(held):
        out[z] = model.predict(image[z])
    return out


def ilastik_bank(image: np.ndarray, spacing) -> np.ndarray:
    """ilastik's default bank, channels last."""
    sizes = (1.0,) * image.ndim if spacing is None else tuple(s / spacing[-1] for s in spacing)
    per = n_planes(FILTERS, image.ndim)
    out = np.empty((1 + per * len(ILASTIK_SCALES), *image.shape), np.float32)
    filter_bank(image, ["gaussian"], [0.3], sizes, out[:1])
    filter_bank(image, FILTERS, ILASTIK_SCALES, sizes, out[1:])
    return np.moveaxis(out, 0, -1)


def _forest_on(features_of, forest):
    def run(image, labels, held, spacing, planar):
        if planar and image.ndim == 3:
            z_held = held_slices(held)
            painted = np.flatnonzero(labels.any(axis=(1, 2)))
            wanted = np.union1d(z_held, painted)
            features = {z: features_of(image[z], None) for z in wanted}
            x = np.concatenate([features[z][labels[z] > 0] for z in painted])
            y = np.concatenate([labels[z][labels[z] > 0] for z in painted])
            forest.fit(x, y)
            out = np.zeros(labels.shape, np.uint8)
            for z in z_held:
                f = features[z]
                out[z] = forest.predict(f.reshape(-1, f.shape[-1])).reshape(f.shape[:-1])
            return out
        features = features_of(image, spacing)
        forest.fit(features[labels > 0], labels[labels > 0])
        out = np.zeros(labels.shape, np.uint8)
        out[held] = forest.predict(features[held])
        return out
    return run


def rf100(planar: bool, seed: int):
    from sklearn.ensemble import RandomForestClassifier

    forest = RandomForestClassifier(n_estimators=100, n_jobs=-1, random_state=seed)
    run = _forest_on(ilastik_bank, forest)
    return lambda image, labels, held, spacing: run(image, labels, held, spacing, planar)


def skimage_segmenter(planar: bool, seed: int):
    from skimage import feature
    from sklearn.ensemble import RandomForestClassifier

    def features_of(image, spacing):
        return feature.multiscale_basic_features(image, intensity=True, edges=True,
                                                 texture=True, sigma_min=1, sigma_max=16)

    forest = RandomForestClassifier(n_estimators=50, n_jobs=-1, max_depth=10,
                                    max_samples=0.05, random_state=seed)
    run = _forest_on(features_of, forest)
    return lambda image, labels, held, spacing: run(image, labels, held, spacing, planar)


def methods(three_d: bool, seed: int) -> dict:
    runs = {"ours 2-D": ours_2d, "ilastik RF100 2-D": rf100(True, seed),
            "fit_segmenter 2-D": skimage_segmenter(True, seed)}
    if three_d:
        runs = {"ours 3-D": preset_3d("volume"), **runs,
                "ilastik RF100 3-D": rf100(False, seed),
                "fit_segmenter 3-D": skimage_segmenter(False, seed),
                "napari 3-D": preset_3d("napari_volume")}
    return runs


def run_dataset(name: str, args) -> tuple[dict, dict]:
    image, truth, spacing = load(name, args.data, args.crop)
    masks = blocks(truth, args.folds)
    results, pictures = {}, {}
    runs = methods(image.ndim == 3, args.seed)
    if args.methods:
        runs = {k: v for k, v in runs.items() if any(m in k for m in args.methods)}
    warm = tuple(slice(n // 2 - w // 2, n // 2 + w // 2)  # central: both classes in it
                 for n, w in zip(image.shape, [8 if n < 40 else 24 for n in image.shape]))
    warm_truth = training_labels(truth[warm], np.zeros(truth[warm].shape, bool), False,
                                 args.pixels, args.seed)
    for run in runs.values():  # compiles and caches outside the timings
        run(image[warm], warm_truth, np.ones(warm_truth.shape, bool), spacing)
    for mode in ("dense", "sparse"):
        scores = {m: [] for m in runs}
        seconds = {m: 0.0 for m in runs}
        cpu = {m: 0.0 for m in runs}
        for k, held in enumerate(masks):
            labels = training_labels(truth, held, mode == "sparse", args.pixels, args.seed + k)
            for method, run in runs.items():
                start, start_cpu = time.perf_counter(), time.process_time()
                out = run(image, labels, held, spacing)
                seconds[method] += time.perf_counter() - start
                cpu[method] += time.process_time() - start_cpu
                scores[method].append(score(truth, out, held))
                if mode == "dense" and k == len(masks) // 2:
                    pictures[method] = out
            print(f"{name} {mode} fold {k}: " + "  ".join(
                f"{m} {scores[m][-1]:.3f}" for m in runs), flush=True)
        results[mode] = {m: {"mean_jaccard": float(np.mean(scores[m])), "folds": scores[m],
                             "seconds": seconds[m], "cpu_seconds": cpu[m]} for m in runs}
        for m in runs:
            print(f"  {name:15s} {mode:6s} {m:20s} Jaccard {np.mean(scores[m]):.3f}  "
                  f"train + segment {seconds[m]:7.1f} s, CPU {cpu[m]:7.1f} s", flush=True)
    held = masks[len(masks) // 2]
    return results, {"image": image, "truth": truth, "held": held, "predictions": pictures}


def picture(name: str, shown: dict, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    image, truth, held = shown["image"], shown["truth"], shown["held"]
    keys = [k for k in ("ours 3-D", "ours 2-D", "ilastik RF100 2-D") if k in shown["predictions"]]
    if image.ndim == 3:
        z = int(np.median(held_slices(held)))
        view = (z,)
        where = f"slice {z} (held out)"
    else:
        view = (slice(None), np.flatnonzero(held.any(axis=0)))
        view = (slice(None), slice(view[1][0], view[1][-1] + 1))
        where = "held-out band"
    panels = [("image, " + where, image[view], "gray"), ("truth", truth[view], "viridis")]
    panels += [(k, shown["predictions"][k][view], "viridis") for k in keys]
    fig, axes = plt.subplots(1, len(panels), figsize=(3 * len(panels), 3.2))
    for ax, (title, values, cmap) in zip(axes, panels):
        ax.imshow(values, cmap=cmap, interpolation="nearest",
                  **({} if cmap == "gray" else {"vmin": 0, "vmax": 2}))
        ax.set_title(title, fontsize=9)
        ax.axis("off")
    fig.suptitle(name, fontsize=10)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=80)
    plt.close(fig)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default=None, help="data root (default $JUNGLESEG_DATA)")
    parser.add_argument("--datasets", nargs="*", default=list(DATASETS), choices=list(DATASETS))
    parser.add_argument("--methods", nargs="*", default=None,
                        help="run only methods whose names contain one of these")
    parser.add_argument("--folds", type=int, default=3)
    parser.add_argument("--pixels", type=int, default=5000,
                        help="labelled voxels per fold, the same for every method")
    parser.add_argument("--crop", type=int, nargs=3, default=[48, 96, 96],
                        metavar=("D", "H", "W"), help="central block of each set at most this "
                        "large (2-D: H x W); default 48 96 96")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--figures", action="store_true", help="write docs/images pictures")
    parser.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "microscopy.json"))
    parser.add_argument("--set3d", nargs="*", default=[], metavar="KEY=VALUE",
                        help="override the volume preset, as the CLI's --set")
    parser.add_argument("--set2d", nargs="*", default=[], metavar="KEY=VALUE",
                        help="override the microscopy preset, as the CLI's --set")
    parser.add_argument("--set-napari", nargs="*", default=[], metavar="KEY=VALUE",
                        help="override the napari widget's 3-D preset, as the CLI's --set")
    parser.add_argument("--update", action="store_true", help="merge into the results file: "
                        "replace only the sets and methods of this run")
    args = parser.parse_args()
    OVERRIDES["volume"].update(parse_overrides(args.set3d))
    OVERRIDES["microscopy"].update(parse_overrides(args.set2d))
    OVERRIDES["napari_volume"].update(parse_overrides(args.set_napari))
    settings = {"folds": args.folds, "pixels": args.pixels, "crop": args.crop, "seed": args.seed}
    out = Path(args.out)
    results = {**settings, "datasets": {}}
    if args.update and out.is_file():
        results = json.loads(out.read_text())
        if any(results.get(k) != v for k, v in settings.items()):
            parser.error(f"--update: {out} was written with other settings than "
                         f"{settings}")
    out.parent.mkdir(parents=True, exist_ok=True)
    for name in args.datasets:
        if not (data_root(args.data) / "microscopy" / DATASETS[name][0]).is_dir():
            print(f"{name}: not in {data_root(args.data) / 'microscopy'}, skipped")
            continue
        measured, shown = run_dataset(name, args)
        for mode, by_method in measured.items():
            for by in by_method.values():
                by["overrides"] = {k: v for k, v in OVERRIDES.items() if v}
                by["date"] = time.strftime("%Y-%m-%d")
            kept = results["datasets"].setdefault(name, {}).setdefault(mode, {})
            kept.update(by_method)
        if args.figures:
            picture(name, shown, ROOT / "docs" / "images" / f"microscopy_{name}.png")
        out.write_text(json.dumps(results, indent=1))  # after each set: a long run keeps
        print(f"wrote {out}")                            # what it measured
    print(table(results))


def table(results: dict) -> str:
    """The figures as a Markdown table: mean Jaccard (train + segment CPU seconds, or wall
    seconds where a run recorded no CPU time)."""
    names = list(results["datasets"])
    methods_seen = list(dict.fromkeys(m for d in results["datasets"].values()
                                      for mode in d.values() for m in mode))
    lines = ["| set | labels | " + " | ".join(methods_seen) + " |",
             "|---|---|" + "---|" * len(methods_seen)]
    for name in names:
        for mode, by_method in results["datasets"][name].items():
            cells = [f"{by_method[m]['mean_jaccard']:.3f} ("
                     + (f"{by_method[m]['cpu_seconds']:.1f} s CPU" if "cpu_seconds" in by_method[m]
                        else f"{by_method[m]['seconds']:.0f} s") + ")"
                     if m in by_method else "-" for m in methods_seen]
            lines.append(f"| {name} | {mode} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


if __name__ == "__main__":
    main()
