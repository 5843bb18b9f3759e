"""The work of a cluster as tasks: a large image in chunks (:func:`segment_array`), and
the files or images of a batch (:func:`segment_files`, :func:`segment_images`); a jungle's
DAGs are in :mod:`._fit`. The package's docstring says how each equals local work."""
from __future__ import annotations

import itertools
import os
import shutil
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

from ..segmentation import segment_file
from ._cluster import _TASK_THREADS, prepare_workers, require_dask, warm_up, worker_threads

_MODELS: dict = {}  # per worker process: models read from files, by (path, mtime)


def _halo(jungle, smoothing: int) -> tuple[int, ...]:
    """Context per spatial axis for a chunk's labels to equal the whole image's."""
    from ..segmentation._segment import tile_margin
    from ..segmentation._volume import volume_margin

    if jungle.family.spatial_ndim == 3:
        return volume_margin(jungle, smoothing)
    if jungle.family.name == "depth":
        raise ValueError("segment_array needs a margin that does not depend on the pixels; "
                         "a depth model's does: segment depth frames with segment()")
    margin = tile_margin(jungle, None, smoothing)
    return (margin, margin)


def _chunks(n: int, size: int, halo: int) -> tuple[int, ...]:
    """Chunks of ``size`` along an axis of ``n``, the last merged into the one before
    when it is smaller than the halo (a window that is mostly halo costs more than the
    pixels it labels)."""
    size = max(size, halo, 1)
    chunks = [size] * (n // size) + ([n % size] if n % size else [])
    if len(chunks) > 1 and chunks[-1] < halo:
        chunks[-2:] = [chunks[-2] + chunks[-1]]
    return tuple(chunks)


#: Tasks of :func:`segment_array` handed to the scheduler at once, per task slot of the
#: cluster: enough to keep every slot busy, few enough that the windows sent with them
#: (NumPy and dask inputs) stay a bounded amount of memory.
TASKS_PER_SLOT = 2


def segment_array(model, array, client=None, out: str | os.PathLike | None = None,
                  chunk: int | None = None, smoothing: int | None = None,
                  halo: Sequence[int] | None = None, stop: Callable[[], bool] | None = None,
                  progress: Callable[[float], object] | None = None):
    """Labels of a large image (H, W[, C]) or, with a volume model, volume (D, H, W[, C]),
    segmented chunk by chunk, equal to :func:`jungleseg.segment` of the whole.

    Each chunk is one task that reads its window (the chunk and its halo) and nothing
    else: no data passes between tasks, so a worker holds one window at a time whatever
    the size of the image. A zarr array (or another lazy array) is read by the workers
    themselves; the windows of a NumPy array are sent by this process, and those of a
    dask array computed on the cluster, a few tasks ahead of the workers.

    Parameters
    ----------
    model : Jungle or fitted JungleSegmenter
    array : dask array, zarr array or array-like
        Read window by window (chunks of a zarr array's own size unless ``chunk`` is given).
    client : distributed.Client, optional
        Where the chunks are segmented; None: in this process, one chunk at a time.
    out : path, optional
        A zarr array the labels are written to, chunk by chunk, by the workers (which
        must see the path); returned opened. Without, the labels as a NumPy array. The
        chunks go to a hidden folder beside ``out`` that takes its place once all are
        written: an error or a stop midway leaves any previous ``out`` as it was.
    chunk : int, optional
        Chunk size along each spatial axis (default 1024 for images, 128 for volumes).
    smoothing : int, optional
        As for :func:`jungleseg.segment`.
    halo : sequence of int, optional
        Context per spatial axis; default the model's probe margin plus the smoothing's
        reach, the least for which the result equals the whole image's.
    stop : callable, optional
        Asked every :data:`POLL_SECONDS` while the cluster works (Ctrl-C in the command
        line): once it says True, the tasks are cancelled, the half-written labels are
        removed, and None is returned.
    progress : callable, optional
        Called as each chunk is done with the fraction of the image it covers (a
        progress bar's ``update``).
    """
    require_dask("segment_array")
    from ..segmentation._segment import _checked_smoothing, label_dtype

    jungle = getattr(model, "jungle_", model)
    smoothing = _checked_smoothing(jungle, smoothing)
    spatial = jungle.family.spatial_ndim
    halo = tuple(int(h) for h in (_halo(jungle, smoothing) if halo is None else halo))
    if not hasattr(array, "shape"):
        array = np.asarray(array)
    if len(array.shape) < spatial:
        raise ValueError(f"array of shape {np.shape(array)}: the model segments "
                         f"{'volumes' if spatial == 3 else 'images'}")
    own = getattr(array, "chunks", None)  # a zarr array's chunks: (int, ...)
    if chunk is None:
        chunk = own[0] if own and isinstance(own[0], int) else (128 if spatial == 3 else 1024)
    shape = tuple(int(n) for n in array.shape[:spatial])
    grid = [np.cumsum((0,) + _chunks(n, chunk, h)) for n, h in zip(shape, halo)]
    regions = [tuple((int(s[i]), int(s[i + 1])) for s, i in zip(grid, where))
               for where in np.ndindex(*(len(s) - 1 for s in grid))]
    # labels written to zarr take the smallest type that holds them (a byte for most models)
    dtype = label_dtype(jungle) if out is not None else jungle.classes.dtype
    if out is None:
        labels = np.empty(shape, dtype)
        done = _segment_all(client, jungle, array, regions, (shape, halo, smoothing, dtype, None),
                            labels, stop, progress)
        return labels if done else None
    from .._atomic import zarr_written_atomically
    from ..imageio import NamedWrites, open_label_array

    try:  # written beside ``out``, put in its place once complete (as segment_file does)
        with zarr_written_atomically(out) as tmp:
            target = NamedWrites(open_label_array(
                tmp, shape, dtype, chunks=tuple(int(s[1]) for s in grid),
                colours=jungle.metadata.get("class_colours"), name=Path(out).stem), out)
            if not _segment_all(client, jungle, array, regions,
                                (shape, halo, smoothing, dtype, target), None, stop,
                                progress):
                raise _Stopped
    except _Stopped:
        return None
    import zarr

    opened = zarr.open(str(out), mode="r")
    return opened["0"] if isinstance(opened, zarr.Group) else opened


class _Stopped(Exception):
    """``stop`` said True: the half-written labels are removed."""


def _segment_all(client, jungle, array, regions: list, task: tuple, labels, stop,
                 progress=None) -> bool:
    """Every chunk of :func:`segment_array`, in this process or as tasks on ``client``;
    False if ``stop`` said so first. ``progress`` is told each chunk's share of the image."""
    from dask import is_dask_collection

    shape = task[0]

    def done(inner) -> None:
        if progress is not None:
            progress(float(np.prod([b - a for a, b in inner]) / np.prod(shape)))

    if client is None:
        for inner in regions:
            _store(labels, inner, _segment_region(jungle, array, inner, *task))
            done(inner)
        return True
    return _segment_regions(client, jungle, array, regions, task, labels, stop,
                            sent=isinstance(array, np.ndarray) or is_dask_collection(array),
                            done=done)


def _segment_regions(client, jungle, array, regions: list, task: tuple, labels, stop,
                     sent: bool, done: Callable | None = None) -> bool:
    """The tasks of :func:`segment_array` on ``client``, at most :data:`TASKS_PER_SLOT`
    per task slot at a time; the labels they return go into ``labels``. With ``sent``, each
    task's window is cut here (a NumPy array) or computed on the cluster (a dask array);
    otherwise the workers read it from ``array`` (one copy of the lazy array per worker).
    False if ``stop`` said so before all were done (:func:`_finished`)."""
    shape, halo = task[:2]
    model = client.scatter(jungle, broadcast=True, hash=False)  # a key of its own, as in fit
    if not sent:
        array = client.scatter(array, broadcast=True, hash=False)

    def submit(inner):
        if not sent:
            return client.submit(_segment_region, model, array, inner, *task, pure=False)
        outer = _window(inner, halo, shape)
        window = array[tuple(slice(a, b) for a, b in outer)]
        window = (client.compute(window) if hasattr(window, "dask")
                  else client.scatter(np.asarray(window), hash=False))
        return client.submit(_segment_region, model, window, inner, *task,
                             origin=tuple(a for a, _ in outer), pure=False)

    running = {}  # future: its chunk

    def start(inner):
        running[submit(inner)] = inner

    ahead = TASKS_PER_SLOT * max(sum(worker_threads(client).values()), 1)
    todo = iter(regions)
    for inner in itertools.islice(todo, ahead):
        start(inner)
    while running:
        finished = _finished(client, list(running), stop)
        if finished is None:
            return False
        for future in finished:
            inner = running.pop(future)
            _store(labels, inner, future.result())
            future.release()
            if done is not None:
                done(inner)
            inner = next(todo, None)
            if inner is not None:
                start(inner)
    return True


#: Seconds between two questions to a ``stop`` callable while the cluster works.
POLL_SECONDS = 0.2


def _finished(client, futures: list, stop: Callable[[], bool] | None) -> list | None:
    """The futures of ``futures`` that are done, once one is; None, with all of them
    cancelled and those already running ended (:func:`_drain`), as soon as ``stop()``
    (asked every :data:`POLL_SECONDS`) says True."""
    from distributed import wait

    while stop is None or not stop():
        try:
            done = wait(futures, timeout=None if stop is None else POLL_SECONDS,
                        return_when="FIRST_COMPLETED").done
        except TimeoutError:
            continue
        return [f for f in futures if f in done]  # in submission order
    client.cancel(futures)
    _drain(client, {f.key for f in futures})
    return None


#: Longest wait, in seconds, for cancelled tasks that were already running to end.
DRAIN_SECONDS = 60.0


def _drain(client, keys: set) -> None:
    """Wait until no worker holds a task of ``keys`` in any state (a cancelled task that
    was running runs on to its end; one sent to a worker waits for its release), at most
    :data:`DRAIN_SECONDS`: the caller then removes their half-written output."""
    keys = list(keys)

    def held(dask_worker) -> list:
        return [key for key in keys if key in dask_worker.state.tasks]

    deadline = time.monotonic() + DRAIN_SECONDS
    while time.monotonic() < deadline and any(client.run(held).values()):
        time.sleep(POLL_SECONDS)


def _window(inner: tuple, halo: tuple, shape: tuple) -> tuple:
    """The chunk ``inner`` (a (start, stop) per spatial axis) with ``halo`` around it,
    within the image."""
    return tuple((max(a - h, 0), min(b + h, n)) for (a, b), h, n in zip(inner, halo, shape))


def _store(labels, inner: tuple, part) -> None:
    """The labels of the chunk ``inner`` into ``labels`` (None: the task wrote them)."""
    if labels is not None:
        labels[tuple(slice(a, b) for a, b in inner)] = part


def _segment_region(jungle, source, inner: tuple, shape: tuple, halo: tuple, smoothing: int,
                    dtype, target, origin: tuple | None = None) -> np.ndarray | None:
    """The labels of the chunk ``inner`` of an image of ``shape``, from its window read
    from ``source``: the image, or the part of it that starts at ``origin``; written to
    the zarr array ``target`` when given (then None is returned)."""
    outer = _window(inner, halo, shape)
    origin = origin or (0,) * len(outer)
    window = source[tuple(slice(a - o, b - o) for (a, b), o in zip(outer, origin))]
    if hasattr(window, "dask"):  # a dask array segmented without a cluster
        window = window.compute(scheduler="synchronous")
    part = _segment_block(jungle, np.asarray(window), outer, inner, shape,
                          smoothing).astype(dtype, copy=False)
    if target is None:
        return part
    if _still_there(target):
        target[tuple(slice(a, b) for a, b in inner)] = part
        if not _still_there(target):  # removed while this wrote: take back what it wrote
            shutil.rmtree(target.array.store.root, ignore_errors=True)
    return None


def _still_there(target) -> bool:
    """Whether the zarr array of ``target`` (:class:`~jungleseg.imageio.NamedWrites`)
    still exists: :func:`segment_array` removes it when stopped, and a task that was
    running then must not write a chunk in its place."""
    import zarr

    try:
        zarr.open_array(store=target.array.store, path=target.array.path, mode="r")
    except FileNotFoundError:
        return False
    return True


def _segment_block(jungle, window, outer, inner, shape, smoothing) -> np.ndarray:
    """The labels of ``inner`` from the ``window`` at ``outer`` (image coordinates)."""
    from .._workers import threads
    from ..segmentation._segment import segment_part
    from ..segmentation._volume import volume_part

    with threads(_TASK_THREADS["n"]):
        if jungle.family.spatial_ndim == 3:
            return volume_part(jungle, window, outer, inner, smoothing)[0]
        return segment_part(jungle, window, outer, shape, inner, smoothing, False)[0]


def _model(path: str):
    from ..io import load_model

    key = (path, os.stat(path).st_mtime_ns)
    if key not in _MODELS:
        _MODELS.clear()
        _MODELS[key] = load_model(path)
    return _MODELS[key]


def _segment_file_task(model_path: str, path: str, target: str, tile, smoothing,
                       probabilities: bool, inference: tuple):
    from .._workers import threads
    from ..jungle import ModelError
    from ..segmentation import with_inference

    with threads(_TASK_THREADS["n"]):
        try:
            return segment_file(with_inference(_model(model_path), *inference), Path(path),
                                Path(target), tile, smoothing, probabilities), None
        except (ValueError, OSError, MemoryError, ModelError) as err:
            return 0, str(err).splitlines()[0] if str(err) else type(err).__name__


def segment_files(client, model_path, pairs: Sequence[tuple], tile=None, smoothing=None,
                  probabilities: bool = False, inference: tuple = (None, None, None),
                  stop: Callable[[], bool] | None = None,
                  progress: Callable[[float], object] | None = None
                  ) -> list[tuple[int, str | None] | None]:
    """Segment (input file, label file) pairs on workers that see the files: one task per
    file, and a zarr image larger than one chunk (:func:`_task_chunk`) written to a zarr
    label file chunk by chunk as tasks (:func:`segment_array`), so that no worker holds
    more than one window of it. Per pair, the pixels segmented and None, or 0 and the
    error's first line. ``inference``: ``(soft, soft_epsilon, prior_power)`` overrides
    (:func:`jungleseg.segmentation.with_inference`). Once ``stop()`` says True (asked
    while the cluster works, as by :func:`segment_array`), the tasks are cancelled and the
    pairs not done are None; a zarr label file half written in chunks is removed.
    ``progress``, if given, is called with 1 as each file is done, and with the share of
    the image as each chunk of one in chunks is (a progress bar over the files)."""
    from ..imageio import ZARR_SUFFIX, read_image
    from ..segmentation import with_inference
    from ..segmentation._context import input_stage

    model_path = str(Path(model_path).resolve())
    jungle = with_inference(_model(model_path), *inference)
    images = {}
    for path, _ in pairs:  # read lazily; unreadable files are reported by their tasks
        try:
            images[path] = read_image(path, input_stage(jungle).family, mmap=True)
        except (ValueError, OSError):
            continue
    if images:
        prepare_workers(client, warm_up(model=jungle, image=next(iter(images.values()))))
    results: dict[int, tuple] = {}
    for k, (path, target) in enumerate(pairs):
        image = images.get(path)
        if (image is None or Path(path).suffix.lower() != ZARR_SUFFIX or probabilities
                or Path(target).suffix.lower() != ZARR_SUFFIX):
            continue
        chunk = _task_chunk(jungle, image, tile, smoothing)
        if chunk is not None:
            out = segment_array(jungle, image, client, out=target, chunk=chunk,
                                smoothing=smoothing, stop=stop, progress=progress)
            if out is None:
                return [results.get(i) for i in range(len(pairs))]
            results[k] = (int(np.prod(out.shape)), None)
    rest = [k for k in range(len(pairs)) if k not in results]
    futures = client.map(_segment_file_task, [model_path] * len(rest),
                         [str(Path(pairs[k][0]).resolve()) for k in rest],
                         [str(Path(pairs[k][1]).resolve()) for k in rest], [tile] * len(rest),
                         [smoothing] * len(rest), [probabilities] * len(rest),
                         [tuple(inference)] * len(rest), pure=False)
    futures = dict(zip(futures, rest))  # future: its pair
    while futures:
        done = _finished(client, list(futures), stop)
        if done is None:
            break
        results.update((futures.pop(f), f.result()) for f in done)
        if progress is not None and done:
            progress(len(done))
    return [results.get(k) for k in range(len(pairs))]


def _task_chunk(jungle, image, tile: int | None = None,
               smoothing: int | None = None) -> int | None:
    """The chunk side with which :func:`segment_files` segments a zarr ``image`` as tasks
    of :func:`segment_array`, or None when one task takes it whole (it is one chunk, or
    a depth model's margin depends on the pixels).

    ``tile`` if given; else the largest multiple of the zarr's own chunk side up to the
    window tile (:func:`jungleseg._memory.window_tile`, :data:`~jungleseg._memory.VOLUME_TILE`
    for volumes), or the window tile when the zarr's chunks are larger: a task's window
    then stays near :data:`~jungleseg._memory.WINDOW_BYTES` whatever the image's size and
    chunking, as a worker may have far less memory than a whole image needs."""
    from .._memory import VOLUME_TILE, window_tile
    from ..segmentation._segment import _checked_smoothing

    if jungle.family.name == "depth":
        return None
    smoothing = _checked_smoothing(jungle, smoothing)
    halo = _halo(jungle, smoothing)
    if tile is None:
        bound = (VOLUME_TILE if jungle.family.spatial_ndim == 3
                 else window_tile(jungle, halo[0], smoothing))
        own = getattr(image, "chunks", None)
        own = int(own[0]) if own and isinstance(own[0], int) else bound
        tile = own * max(bound // own, 1) if own <= bound else bound
    shape = image.shape[:jungle.family.spatial_ndim]
    split = any(len(_chunks(int(n), tile, h)) > 1 for n, h in zip(shape, halo))
    return int(tile) if split else None


def _labels_task(jungle, image):
    from .._workers import threads
    from ..segmentation import segment

    with threads(_TASK_THREADS["n"]):
        try:
            return segment(jungle, image, probabilities=False)[0]
        except (ValueError, MemoryError) as err:
            return err


def segment_images(client, jungle, images: Sequence) -> list:
    """Labels of each image (or the ValueError or MemoryError it raised), one task per
    image."""
    images = list(images)
    if images:
        prepare_workers(client, warm_up(model=jungle, image=images[0]))
    model = client.scatter(jungle, broadcast=True, hash=False)  # a key of its own, as in fit
    return client.gather(client.map(_labels_task, [model] * len(images), images, pure=True))
