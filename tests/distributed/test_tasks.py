"""jungleseg.distributed on real clusters: a LocalCluster of two worker processes
(data-parallel training with images sharded over the workers, also when a shard's worker
is killed; segment_array on zarr, NumPy and dask arrays equals whole-image segmentation,
and a halo one pixel short differs), and the command line against ``dask scheduler`` and
``dask worker`` processes. DAGs as tasks: ``test_fit.py``."""
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest
import zarr

from jungleseg import ColourFeatures, JungleSegmenter, load_model, segment
from jungleseg import distributed as jd
from jungleseg.distributed import _tasks
from tests.cli.test_commands import FAST, one_line_error, run

REPO = Path(__file__).resolve().parents[2]


def small(**kw) -> JungleSegmenter:
    params = dict(n_estimators=3, max_width=8, max_depth=8, samples_per_image=400,
                  n_candidate_features=20, random_state=0)
    return JungleSegmenter(ColourFeatures(max_offset=6), **{**params, **kw})


def same_model(a, b) -> bool:
    """Every array of every DAG, the classes, the metadata and the channel quantiser
    equal."""
    return (len(a.dags) == len(b.dags) and a.family.quantiser == b.family.quantiser
            and all(np.array_equal(getattr(x, f), getattr(y, f))
                    for x, y in zip(a.dags, b.dags) for f in x.__dataclass_fields__)
            and np.array_equal(a.classes, b.classes) and a.metadata == b.metadata)


@pytest.mark.parametrize("kw", [{}, {"max_width": None}], ids=["lsearch-jungle", "tree"])
@pytest.mark.parametrize("n_shards", [2, 3])
def test_data_parallel_fit_equals_local_fit(client, faces, kw, n_shards):
    images, labels = faces
    local = small(**kw).fit(images, labels)
    sharded = jd.fit(small(**kw), images, labels, client, data_parallel=True,
                     n_shards=n_shards)
    assert same_model(local.jungle_, sharded.jungle_)
    assert all(dag.spread is not None for dag in sharded.jungle_.dags)
    assert sharded.grow_stats_.merging == local.grow_stats_.merging
    assert len(sharded.grow_stats_.table_bytes) >= 1


def test_data_parallel_workers_read_their_own_files(client, faces, tmp_path):
    images, labels = faces
    for i, (image, label) in enumerate(zip(images, labels)):
        np.save(tmp_path / f"{i}.npy", image)
        np.save(tmp_path / f"{i}_labels.npy", label)
    kw = {"search": "clustersearch", "images_per_dag": 4}
    local = small(**kw).fit(images, labels)
    sharded = jd.fit(small(**kw), [tmp_path / f"{i}.npy" for i in range(len(images))],
                     [tmp_path / f"{i}_labels.npy" for i in range(len(images))], client,
                     data_parallel=True)
    assert same_model(local.jungle_, sharded.jungle_)


def test_a_lost_shard_worker_is_rebuilt_with_the_same_model(faces):
    """Shards live only on their workers: one killed while the DAGs grow (a level's
    tables are being summed) is prepared again on the other worker and its journal
    replayed, and the model equals local training bit for bit (on its own cluster, as
    the kill restarts a worker)."""
    images, labels = faces
    kw = dict(max_depth=14, samples_per_image=3000, n_candidate_features=60, max_width=32)
    local = small(**kw).fit(images, labels)
    with jd.connect(workers=2) as own:
        pids = own.run(os.getpid)
        result = {}

        def train():
            result["model"] = jd.fit(small(**kw), images, labels, own, data_parallel=True)

        worker = threading.Thread(target=train)
        worker.start()
        deadline = time.time() + 300  # a cold Numba cache compiles first
        killed = None
        while worker.is_alive() and killed is None and time.time() < deadline:
            for address, keys in own.processing().items():
                if any(str(k).startswith("sum_tables") for k in keys) and address in pids:
                    killed = address
                    os.kill(pids[address], signal.SIGKILL)
                    break
            time.sleep(0.02)
        worker.join(300)
        assert killed, "no table reduction was seen running"
        assert not worker.is_alive(), "the fit still waits for the lost worker"
    assert same_model(local.jungle_, result["model"].jungle_)


class _Scheduler:
    def __init__(self, workers):
        self.workers = workers

    def nthreads(self):
        return dict.fromkeys(self.workers, 1)


def test_lost_shards_go_to_the_living_worker_with_fewest_and_too_many_losses_end_the_fit():
    from jungleseg.distributed._dataparallel import (
        LOST_WORKERS_TOLERATED,
        _counted_losses,
        _replaced,
    )

    moved = _replaced(_Scheduler(["a", "c", "d"]), ["a", "b", "a", "b", "c"], ["b"])
    assert moved == ["a", "d", "a", "c", "c"]
    with pytest.raises(RuntimeError, match="no worker is left"):
        _replaced(_Scheduler(["b"]), ["a", "b"], ["b"])
    assert _counted_losses(0, ["x"]) == 1
    with pytest.raises(RuntimeError, match="fit again") as err:
        _counted_losses(LOST_WORKERS_TOLERATED, ["x"])
    assert len(str(err.value).splitlines()) == 1


def test_segment_array_on_zarr_equals_whole_image(client, faces, tmp_path):
    images, labels = faces
    seg = small(smoothing=2, max_depth=10).fit(images, labels)
    big = np.concatenate([np.concatenate(images[i:i + 3], axis=1) for i in (0, 3)], axis=0)
    source = zarr.open_array(str(tmp_path / "in.zarr"), mode="w", shape=big.shape,
                             chunks=(40, 50, 3), dtype=big.dtype)
    source[...] = big
    whole = segment(seg.jungle_, big, probabilities=False)[0]
    out = jd.segment_array(seg, source, client=client, out=tmp_path / "out.zarr")
    assert np.array_equal(out[...], whole) and out.dtype == np.uint8  # a byte per label
    assert np.array_equal(jd.segment_array(seg, source, client=client, chunk=32), whole)


def test_segment_array_of_numpy_and_dask_arrays_equals_whole_image(client, faces):
    import dask.array as da

    images, labels = faces
    seg = small(smoothing=2, max_depth=10).fit(images, labels)
    big = np.concatenate([np.concatenate(images[i:i + 3], axis=1) for i in (0, 3)], axis=0)
    whole = segment(seg.jungle_, big, probabilities=False)[0]
    lazy = da.from_array(big, chunks=(40, 50, 3))
    n_tasks = (-(-big.shape[0] // 32)) * (-(-big.shape[1] // 32))
    assert n_tasks > _tasks.TASKS_PER_SLOT * 2  # more tasks than are handed out at once
    for array in (big, lazy):  # windows sent from here, or computed on the cluster
        assert np.array_equal(jd.segment_array(seg, array, client=client, chunk=32), whole)
    assert np.array_equal(jd.segment_array(seg, lazy, chunk=32), whole)


def test_halo_one_pixel_short_differs(faces):
    images, labels = faces
    seg = JungleSegmenter(ColourFeatures(max_offset=3, kinds=("value", "difference")),
                          n_estimators=2, max_depth=10, samples_per_image=800,
                          n_candidate_features=40, random_state=0).fit(images[:4], labels[:4])
    big = np.concatenate(images[:4], axis=1)
    whole = segment(seg.jungle_, big, probabilities=False)[0]
    halo = _tasks._halo(seg.jungle_, 0)
    assert np.array_equal(jd.segment_array(seg, big, chunk=16), whole)
    short = jd.segment_array(seg, big, chunk=16, halo=[h - 1 for h in halo])
    assert (short != whole).sum() > 0


def test_volume_segment_array_equals_whole_volume():
    from jungleseg import VolumeFeatures
    from jungleseg.datasets.cells3d import paint_slices, render_cell_volume

    volume, truth = render_cell_volume(shape=(20, 48, 48), seed=0)
    family = VolumeFeatures(spacing=(0.3, 0.1, 0.1), max_offset=0.6, smoothing_scales=(0.2,))
    seg = JungleSegmenter(family,
                          n_estimators=2, max_depth=6, samples_per_image=2000,
                          ignore=[0], smoothing=1, random_state=0)
    seg.fit([volume], [paint_slices(truth, [4, 10], fraction=0.2)])
    whole = segment(seg.jungle_, volume, probabilities=False)[0]
    assert min(_tasks._halo(seg.jungle_, 1)) < 16
    assert np.array_equal(jd.segment_array(seg, volume, chunk=16), whole)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def dask_cluster():
    """``dask scheduler`` and ``dask worker`` (two processes, one thread each) started as
    a user would; torn down afterwards."""
    from distributed import Client

    dask = str(Path(sys.executable).parent / "dask")
    address = f"tcp://127.0.0.1:{free_port()}"
    env = {**os.environ, "NUMBA_NUM_THREADS": "1"}
    procs = [subprocess.Popen([dask, "scheduler", "--host", "127.0.0.1", "--port",
                               address.rsplit(":", 1)[1], "--no-dashboard"], env=env,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)]
    try:
        procs.append(subprocess.Popen([dask, "worker", address, "--nworkers", "2",
                                       "--nthreads", "1", "--no-dashboard"], env=env,
                                      stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        with Client(address, timeout="60s") as c:
            c.wait_for_workers(2, timeout=120)
        yield address
    finally:
        for proc in reversed(procs):
            proc.terminate()
        for proc in reversed(procs):
            try:
                proc.wait(30)
            except subprocess.TimeoutExpired:
                proc.kill()


def test_cli_on_a_dask_scheduler_and_workers(dask_cluster, tmp_path):
    faces = tmp_path / "faces"
    run("generate", "faces", "--n", "8", "--size", "48x64", "--out", faces)
    local, remote = tmp_path / "local.h5", tmp_path / "remote.h5"
    run("train", "configs/faces.yaml", "--data", faces, "--out", local, *FAST)
    run("train", "configs/faces.yaml", "--data", faces, "--out", remote, *FAST,
        "--scheduler", dask_cluster)
    assert same_model(load_model(local), load_model(remote))
    sharded = tmp_path / "sharded.h5"
    run("train", "configs/faces.yaml", "--data", faces, "--out", sharded, *FAST,
        "--scheduler", dask_cluster, "--data-parallel")
    assert same_model(load_model(local), load_model(sharded))
    refused = run("train", "configs/faces.yaml", "--data", faces, "--out", sharded,
                  "--data-parallel", ok=False)
    assert "--data-parallel trains on a dask cluster" in one_line_error(refused)
    run("segment", remote, faces / "images", "--out", tmp_path / "seg", "--scheduler",
        dask_cluster)
    run("segment", remote, faces / "images", "--out", tmp_path / "seg-local")
    names = sorted(p.name for p in (tmp_path / "seg").iterdir())
    assert len(names) == 8
    assert names == sorted(p.name for p in (tmp_path / "seg-local").iterdir())
    for name in names:
        assert (tmp_path / "seg" / name).read_bytes() == \
            (tmp_path / "seg-local" / name).read_bytes()
    for how, name in ((["--scheduler", dask_cluster], "a"), (["--workers", "2"], "b"),
                      ([], "c")):
        run("evaluate", remote, "--dataset", "faces", "--data", faces, "--json",
            tmp_path / f"{name}.json", *how)
    assert (tmp_path / "a.json").read_text() == (tmp_path / "c.json").read_text()
    assert (tmp_path / "b.json").read_text() == (tmp_path / "c.json").read_text()


def test_segment_files_tasks_and_a_zarr_of_several_chunks_in_chunks(client, faces, tmp_path):
    from distributed import get_task_stream

    from jungleseg import save_model
    from jungleseg.imageio import read_labels

    images, labels = faces
    seg = small().fit(images, labels)
    seg.jungle_.metadata["class_colours"] = {"1": [255, 0, 0], "2": [0, 0, 255]}
    model = save_model(seg.jungle_, tmp_path / "m.h5")
    big = np.concatenate(images[:4], axis=1)  # (64, 320): far below 4096 x 4096 pixels
    source = zarr.open_array(str(tmp_path / "big.zarr"), mode="w", shape=big.shape,
                             chunks=(32, 64, 3), dtype=big.dtype)
    source[...] = big
    np.save(tmp_path / "one.npy", images[5])
    (tmp_path / "bad.npy").write_bytes(b"not an array")
    pairs = [(tmp_path / "big.zarr", tmp_path / "big-labels.zarr"),
             (tmp_path / "one.npy", tmp_path / "one.png"),
             (tmp_path / "bad.npy", tmp_path / "bad.png")]
    steps = []  # a progress bar over the files, chunk by chunk in the zarr
    with get_task_stream(client) as stream:
        results = jd.segment_files(client, model, pairs, tile=32, progress=steps.append)
    assert sum(steps) == pytest.approx(len(pairs)) and len(steps) > len(pairs)
    chunked = [t for t in stream.data if "_segment_region" in str(t["key"])]
    assert len(chunked) == len(_tasks._chunks(64, 32, 0)) * len(_tasks._chunks(320, 32, 0)) > 1
    assert results[0] == (big.shape[0] * big.shape[1], None)
    assert results[1] == (images[5].shape[0] * images[5].shape[1], None)
    assert results[2][0] == 0 and "bad.npy" in results[2][1]
    whole = segment(seg.jungle_, big, probabilities=False)[0]
    written = zarr.open_array(str(tmp_path / "big-labels.zarr"))
    assert np.array_equal(written[...], whole)
    assert written.attrs["class_colours"] == seg.jungle_.metadata["class_colours"]
    assert np.array_equal(read_labels(tmp_path / "one.png"),
                          segment(seg.jungle_, images[5], probabilities=False)[0])
    # the inference overrides reach both kinds of task
    weighed = jd.segment_files(client, model, pairs[:2], tile=32, inference=(None, None, 1))
    assert weighed == results[:2]
    whole = segment(seg.jungle_, big, probabilities=False, prior_power=1)[0]
    assert np.array_equal(zarr.open_array(str(tmp_path / "big-labels.zarr"))[...], whole)
    one = segment(seg.jungle_, images[5], probabilities=False, prior_power=1)[0]
    assert np.array_equal(read_labels(tmp_path / "one.png"), one)
    assert not np.array_equal(one, segment(seg.jungle_, images[5], probabilities=False)[0])
    # OME-Zarr labels as a task of its own writes them: one level "0"
    ome = [(tmp_path / "big.zarr", tmp_path / "big-labels.ome.zarr")]
    assert jd.segment_files(client, model, ome, tile=32) == results[:1]
    group = zarr.open_group(str(tmp_path / "big-labels.ome.zarr"), mode="r")
    assert np.array_equal(group["0"][...], segment(seg.jungle_, big, probabilities=False)[0])
    assert group.attrs["multiscales"][0]["name"] == "big-labels.ome"  # not the hidden folder's


@pytest.mark.parametrize("side, own", [(3000, 3000), (4096, 512), (4096, 4096), (2500, 100)])
def test_mid_size_zarr_images_go_in_chunks_whose_window_is_bounded(faces, tmp_path, side, own):
    from jungleseg._memory import WINDOW_BYTES, window_bytes

    images, labels = faces
    jungle = small().fit(images, labels).jungle_
    image = zarr.open_array(str(tmp_path / "in.zarr"), mode="w", shape=(side, side, 3),
                            chunks=(own, own, 3), dtype=np.uint8)  # nothing written
    chunk = _tasks._task_chunk(jungle, image)
    margin = _tasks._halo(jungle, 0)[0]
    assert chunk is not None and len(_tasks._chunks(side, chunk, margin)) > 1
    assert window_bytes(jungle, chunk + 2 * margin, chunk + 2 * margin, 0) <= WINDOW_BYTES
    assert chunk % own == 0 or own > chunk  # whole chunks of the zarr where they fit
    assert _tasks._task_chunk(jungle, image[:200, :200]) is None  # one chunk: one task


def test_stop_cancels_the_tasks_and_removes_half_written_labels(client, faces, tmp_path):
    from jungleseg import save_model

    images, labels = faces
    seg = small().fit(images, labels)
    big = np.concatenate(images[:4], axis=1)
    assert jd.segment_array(seg, big, client, out=tmp_path / "l.zarr", chunk=32,
                            stop=lambda: True) is None
    time.sleep(1)  # a task that was running when stopped has ended: it must not write again
    assert not list(tmp_path.iterdir())  # nor the hidden folder it was written in
    previous = jd.segment_array(seg, big, client, out=tmp_path / "l.zarr", chunk=32)[...]
    assert jd.segment_array(seg, big[:, :100], client, out=tmp_path / "l.zarr", chunk=32,
                            stop=lambda: True) is None
    time.sleep(1)
    np.testing.assert_array_equal(zarr.open_array(str(tmp_path / "l.zarr"), mode="r")[...],
                                  previous)  # labels written before are kept
    shutil.rmtree(tmp_path / "l.zarr")
    source = zarr.open_array(str(tmp_path / "big.zarr"), mode="w", shape=big.shape,
                             chunks=(32, 64, 3), dtype=big.dtype)
    source[...] = big
    np.save(tmp_path / "one.npy", images[5])
    model = save_model(seg.jungle_, tmp_path / "m.h5")
    pairs = [(tmp_path / "big.zarr", tmp_path / "big-labels.zarr"),
             (tmp_path / "one.npy", tmp_path / "one.png")]
    assert jd.segment_files(client, model, pairs, tile=32, stop=lambda: True) == [None, None]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["big.zarr", "m.h5", "one.npy"]


def _disk_full(full: bool) -> None:
    """On a worker: every zarr chunk write fails as on a full disk (or again succeeds)."""
    import errno

    saved = "_jungleseg_saved_setitem"
    if not full:
        zarr.Array.__setitem__ = getattr(zarr.Array, saved)
        return
    setattr(zarr.Array, saved, zarr.Array.__setitem__)

    def no_space(self, key, value):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    zarr.Array.__setitem__ = no_space


def test_a_full_disk_on_a_worker_is_an_error_naming_the_label_file(client, faces, tmp_path):
    images, labels = faces
    seg = small().fit(images, labels)
    big = np.concatenate(images[:4], axis=1)
    target = tmp_path / "l.zarr"
    client.run(_disk_full, True)
    try:
        with pytest.raises(OSError) as caught:
            jd.segment_array(seg, big, client, out=target, chunk=32)
    finally:
        client.run(_disk_full, False)
    assert str(caught.value) == f"{target}: could not write this file ({os.strerror(28)})"
    time.sleep(1)  # the other tasks have ended
    assert not list(tmp_path.iterdir())


def test_ctrl_c_stops_segment_on_a_cluster_at_once(faces, tmp_path):
    from jungleseg import save_model

    images, labels = faces
    model = save_model(small().fit(images, labels).jungle_, tmp_path / "m.h5")
    big = np.tile(np.concatenate(images, axis=1), (32, 6, 1))  # (2048, 3840): many chunks
    source = zarr.open_array(str(tmp_path / "big.zarr"), mode="w", shape=big.shape,
                             chunks=(256, 256, 3), dtype=big.dtype)
    source[...] = big
    target = tmp_path / "labels.zarr"
    proc = subprocess.Popen(
        [sys.executable, "-m", "jungleseg.cli", "segment", str(model), str(tmp_path / "big.zarr"),
         "--out", str(target), "--workers", "2", "--tile", "256"], cwd=REPO,
        stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    deadline = time.monotonic() + 300
    while not any(p.name.endswith("labels.zarr") for p in tmp_path.iterdir()):  # begun
        assert proc.poll() is None and time.monotonic() < deadline, proc.stderr.read()
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    pressed = time.monotonic()
    assert proc.wait(timeout=60) == 130
    assert time.monotonic() - pressed < 30  # not the rest of the image first
    rest = proc.stderr.read()
    assert "Traceback" not in rest
    assert rest.strip().splitlines()[-1] == "jungleseg: error: interrupted; 0 of 1 images segmented"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["big.zarr", "m.h5"]  # no labels
