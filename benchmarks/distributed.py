"""jungleseg.distributed on this machine: bit-identical training, 1 against 2 worker
processes (1 thread each) for training a reduced Stanford config and for segmenting test
images, a large RGB zarr image segmented by ``jungleseg segment --workers 2`` in its own
process, as a user runs it (peak RSS over its processes, throughput against 320x240 images
one by one), data-parallel training against local
training (bit identity, time, the bytes of count tables each level sums), and what the
table reduction would move per level for the Kinect config on 100 workers, on paper.

    python benchmarks/distributed.py [--data DIR] [--train 60] [--images 40] [--size 4096]

Local runs use one Numba thread, like each worker, so that the overhead of the cluster is
measured against the same compute. The machine is shared: the load average is printed.
"""
from __future__ import annotations

import argparse
import copy
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

# this file's folder must not be on the path: its name would hide the distributed package
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from jungleseg import distributed as jd  # noqa: E402
from jungleseg import save_model, segment  # noqa: E402
from jungleseg._workers import threads  # noqa: E402
from jungleseg.config import load_config  # noqa: E402
from jungleseg.datasets import load_benchmark  # noqa: E402


def _common():
    """The module ``_common``, imported by path (this folder is not on sys.path)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location(
        "_common", Path(__file__).resolve().parent / "_common.py")
    common = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(common)
    return common


def _write_results(name: str, figures: dict) -> None:
    _common().write_results(name, figures)

CONFIG = Path(__file__).resolve().parents[1] / "configs" / "stanford.yaml"
REDUCED = {"jungle.n_estimators": 4, "jungle.max_depth": 14, "jungle.max_width": 64,
           "jungle.n_candidate_features": 40, "sampling.samples_per_image": 500}


def same_model(a, b) -> bool:
    return all(np.array_equal(getattr(x, f), getattr(y, f))
               for x, y in zip(a.dags, b.dags) for f in x.__dataclass_fields__) \
        and len(a.dags) == len(b.dags) and a.metadata == b.metadata


def timed(run) -> tuple[float, object]:
    start = time.perf_counter()
    result = run()
    return time.perf_counter() - start, result


def _sent(dask_worker) -> int:
    return int(dask_worker.transfer_outgoing_bytes_total)


def data_parallel(estimator, train, local_fit: float, local) -> dict:
    """Data-parallel training (2 shards) on 2 worker processes against local training: bit
    identity, time, the bytes of count tables each level's reduction summed (every
    shard's part, measured as the arrays' sizes) and dask's worker-to-worker transfers."""
    with jd.connect(workers=2) as client:
        jd.fit(copy.deepcopy(estimator), train.images[:2], train.labels[:2], client,
               data_parallel=True)  # warm-up
        before = sum(client.run(_sent).values())
        fit_s, model = timed(lambda: jd.fit(copy.deepcopy(estimator), train.images,
                                            train.labels, client, data_parallel=True))
        sent = sum(client.run(_sent).values()) - before
    tables = model.grow_stats_.table_bytes
    print(f"data-parallel, 2 shards on 2 workers: train {fit_s:.1f} s "
          f"({fit_s / local_fit:.2f}x local), bit-identical: "
          f"{same_model(model.jungle_, local.jungle_)}")
    print(f"  count tables summed per level (both shards' parts), levels 0..{len(tables) - 1}: "
          + ", ".join(f"{b / 1e6:.2f}" for b in tables) + " MB")
    print(f"  in all {sum(tables) / 1e6:.1f} MB of tables; bytes the workers sent (dask's "
          f"count: to each other and to the driver, everything) {sent / 1e6:.1f} MB")
    return {"train_seconds": fit_s, "train_against_local": fit_s / local_fit,
            "bit_identical": bool(same_model(model.jungle_, local.jungle_)),
            "table_megabytes_per_level": [b / 1e6 for b in tables],
            "table_megabytes": sum(tables) / 1e6, "workers_sent_megabytes": sent / 1e6}


def table_reduction_on_paper() -> dict:
    """Bytes moved per level by data-parallel training of the Kinect config, on paper, for
    100 workers: the (node, candidate, threshold, class) int32 tables through a tree
    reduction, the threshold subsamples gathered, the thresholds broadcast."""
    config = load_config(CONFIG.parent / "kinect.yaml")
    jungle = dict(config.jungle_params)
    dags, width, cand, thr = (jungle["n_estimators"], jungle["max_width"],
                              jungle["n_candidate_features"], jungle["n_thresholds"])
    classes, workers, rounds, link = 31, 100, 7, 1.25e9  # 2^7 >= 100; 10 Gbit/s
    print(f"per-level reduction on paper (Kinect config: {dags} DAGs, width {width}, {cand} "
          f"candidates, {thr} thresholds, {classes} classes, int32 counts; {workers} "
          f"workers, 10 Gbit/s links):")
    figures = {"dags": dags, "width": width, "candidates": cand, "thresholds": thr,
               "classes": classes, "workers": workers, "rounds": rounds, "levels": []}
    for nodes in (1, 16, 128, width):
        table = dags * nodes * cand * thr * classes * 4
        subsamples = dags * nodes * cand * 256 * 8  # response + draw code, at most
        thresholds = dags * nodes * cand * thr * 4
        print(f"  {nodes:4d} nodes per DAG: table {table / 1e6:7.1f} MB per worker, "
              f"{(workers - 1) * table / 1e9:6.2f} GB summed over {rounds} rounds "
              f"({rounds * table / link:5.2f} s critical path); subsamples to the driver "
              f"{subsamples / 1e6:6.1f} MB; thresholds to every worker "
              f"{workers * thresholds / 1e9:5.2f} GB")
        figures["levels"].append({
            "nodes_per_dag": nodes, "table_megabytes_per_worker": table / 1e6,
            "summed_gigabytes": (workers - 1) * table / 1e9,
            "critical_path_seconds": rounds * table / link,
            "subsamples_to_driver_megabytes": subsamples / 1e6,
            "thresholds_to_workers_gigabytes": workers * thresholds / 1e9})
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default=os.environ.get("JUNGLESEG_DATA"))
    parser.add_argument("--train", type=int, default=60)
    parser.add_argument("--images", type=int, default=40)
    parser.add_argument("--size", type=int, default=4096)
    parser.add_argument("--chunk", type=int, default=1024)
    parser.add_argument("--skip-scaling", action="store_true",
                        help="only the large image (trained on --train images locally)")
    parser.add_argument("--only-data-parallel", action="store_true",
                        help="only local against data-parallel training, and the figures "
                             "on paper")
    args = parser.parse_args()
    print(f"load average at start: {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores")
    config = load_config(CONFIG).with_overrides(REDUCED)
    train = load_benchmark("stanford", "train", args.data, args.train)
    test = load_benchmark("stanford", "test", args.data, args.images)
    estimator = config.estimator()
    with threads(1):
        local_fit, local = timed(lambda: copy.deepcopy(estimator).fit(train.images,
                                                                       train.labels))
        local_fit, local = timed(lambda: copy.deepcopy(estimator).fit(train.images,
                                                                       train.labels))
        local_seg, _ = timed(lambda: [segment(local.jungle_, im, probabilities=False)
                                      for im in test.images])
    print(f"local (1 process, 1 thread): train {local_fit:.1f} s on {args.train} images, "
          f"segment {args.images} images {local_seg:.2f} s")
    figures = {"load_average_at_start": os.getloadavg()[0], "train_images": args.train,
               "test_images": args.images,
               "local": {"train_seconds": local_fit, "segment_seconds": local_seg}}
    if args.only_data_parallel:
        figures["data_parallel"] = data_parallel(estimator, train, local_fit, local)
        figures["table_reduction_on_paper"] = table_reduction_on_paper()
        figures["load_average_at_end"] = os.getloadavg()[0]
        _write_results("distributed_data_parallel", figures)
        return
    results = {}
    for n in () if args.skip_scaling else (1, 2):
        with jd.connect(workers=n) as client:
            jd.fit(copy.deepcopy(estimator), train.images[:2], train.labels[:2], client)  # warm
            fit_s, model = timed(lambda: jd.fit(copy.deepcopy(estimator), train.images,
                                                train.labels, client))
            jd.segment_images(client, local.jungle_, test.images[:2])
            seg_s, labels = timed(lambda: jd.segment_images(client, local.jungle_,
                                                            test.images))
            same_seg = all(np.array_equal(a, segment(local.jungle_, im, probabilities=False)[0])
                           for a, im in zip(labels[:5], test.images[:5]))
            results[n] = (fit_s, seg_s)
            print(f"{n} worker(s): train {fit_s:.1f} s (bit-identical: "
                  f"{same_model(model.jungle_, local.jungle_)}; overhead against local "
                  f"{100 * (fit_s / local_fit - 1):+.0f} %), segment {args.images} images "
                  f"{seg_s:.2f} s (equal labels: {same_seg})")
            figures[f"workers_{n}"] = {
                "train_seconds": fit_s, "segment_seconds": seg_s,
                "bit_identical": bool(same_model(model.jungle_, local.jungle_)),
                "overhead_against_local_percent": 100 * (fit_s / local_fit - 1),
                "equal_labels": bool(same_seg)}
    if results:
        print(f"speed-up 2 workers over 1: train {results[1][0] / results[2][0]:.2f}x, "
              f"segment {results[1][1] / results[2][1]:.2f}x")
        figures["speed_up_2_over_1"] = {"train": results[1][0] / results[2][0],
                                        "segment": results[1][1] / results[2][1]}
    small_px = sum(im.shape[0] * im.shape[1] for im in test.images)
    with tempfile.TemporaryDirectory() as folder:
        big = Path(folder) / "big.zarr"
        _common().mosaic_zarr(big, test.images, args.size, args.chunk)
        if not results:  # the small images one by one on 2 workers, for the ratio
            with jd.connect(workers=2) as client:
                jd.segment_images(client, local.jungle_, test.images[:2])
                results[2] = (None, timed(lambda: jd.segment_images(client, local.jungle_,
                                                                    test.images))[0])
        model = save_model(local.jungle_, Path(folder) / "model.h5")
        # as a user runs it: the CLI in its own process, starting its own 2 workers
        command = [sys.executable, "-m", "jungleseg.cli", "segment", str(model),
                   str(big), "--out", str(Path(folder) / "labels.zarr"),
                   "--workers", "2", "--quiet"]
        start = time.perf_counter()
        process = subprocess.Popen(command)
        with _common().TreeRSS(process.pid) as rss:
            code = process.wait()
        big_s = time.perf_counter() - start
        import zarr

        labels = zarr.open_array(str(Path(folder) / "labels.zarr"), mode="r")
        print(f"{args.size}x{args.size} RGB zarr, chunks {args.chunk}: `jungleseg segment "
              f"--workers 2` (exit {code}) {big_s:.1f} s including the cluster's start, "
              f"{args.size ** 2 / big_s / 1e6:.2f} Mpx/s; peak RSS of its processes "
              f"{rss.peak / 2**30:.2f} GB; labels {labels.shape}")
        print(f"320x240 images one by one on 2 workers: "
              f"{small_px / results[2][1] / 1e6:.2f} Mpx/s; large image at "
              f"{(args.size ** 2 / big_s) / (small_px / results[2][1]):.2f}x of that")
        figures["large_image"] = {
            "size": args.size, "chunk": args.chunk, "exit_code": code, "seconds": big_s,
            "megapixels_per_second": args.size ** 2 / big_s / 1e6,
            "peak_rss_gigabytes": rss.peak / 2**30, "labels_shape": list(labels.shape),
            "small_images_megapixels_per_second": small_px / results[2][1] / 1e6,
            "against_small_images": (args.size ** 2 / big_s) / (small_px / results[2][1])}
    figures["data_parallel"] = data_parallel(estimator, train, local_fit, local)
    figures["table_reduction_on_paper"] = table_reduction_on_paper()
    print(f"load average at end: {os.getloadavg()[0]:.2f}")
    figures["load_average_at_end"] = os.getloadavg()[0]
    _write_results("distributed", figures)


if __name__ == "__main__":
    main()
