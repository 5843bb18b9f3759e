"""Data-parallel training of a JungleSegmenter on dask.distributed, for training images
that no single worker holds (``jungleseg.distributed.fit(..., data_parallel=True)``).

The images are cut into contiguous shards, one or more per worker. Each shard lives on
one worker as the state of :mod:`._sharded`: the worker reads its images
(paths are read there, so the driver never holds pixels), computes their channels, draws
their training pixels and keeps them; the driver sees histograms, threshold subsamples,
count tables and the channel values at the training pixels (for the model's fingerprint
and guide statistics), never an image. Every step of a level is a task on the worker
that holds the shard; count tables are summed by a tree of :func:`sum_tables` tasks on
the workers, and only the sum comes to the driver.

The model equals :meth:`JungleSegmenter.fit` on all the images, bit for bit, whatever
the number of shards: a shard prepares exactly what the whole would give its images
(channels per image, samples from per-image random streams, entries by global image),
and growth (:func:`._sharded.grow_sharded`) reproduces one process's
every number. Auto-context, priority growth and dGMML splits are refused with a
ValueError.

A lost worker loses its shards, which live nowhere else. The driver keeps what makes
them: each shard's images and plan, and the journal of every step that changed the
shards' states since. It rebuilds a lost shard on a living worker (the one holding
fewest shards) by preparing it again and replaying the journal, then asks again for the
results it was waiting for. Every step is deterministic, so the model is the one an
undisturbed fit gives. Up to :data:`LOST_WORKERS_TOLERATED` losses per fit are retried
so; after that, or with no worker left, the fit ends with a one-line RuntimeError.
"""
from __future__ import annotations

import itertools
import os
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from ._cluster import _TASK_THREADS, prepare_workers, warm_up, worker_threads
from ._quantiser import quantiser_samples, shard_images
from ._sharded import Shard, new_shard, sum_tables

if TYPE_CHECKING:
    from ..segmentation import JungleSegmenter


#: Broadcasts of a shared value tried, a pause apart, when a worker is lost during one.
SHARE_TRIES, SHARE_WAIT_SECONDS = 5, 1.0
#: how many lost workers one data-parallel fit recovers from before it gives up
LOST_WORKERS_TOLERATED = 3


class WorkersLost(RuntimeError):
    """Workers that held shards were lost (``workers``, their addresses)."""

    def __init__(self, workers: list[str]):
        super().__init__(f"worker {workers[0]}, which held a shard, was lost")
        self.workers = workers


def _task(step, *args):
    from .._workers import threads

    with threads(_TASK_THREADS["n"]):
        return step(*args)


class _Work:
    """Futures submitted by ``make()``, and the recipe to submit them again once lost
    shards are rebuilt (``make`` reads the executor's current states)."""

    def __init__(self, make):
        self.make, self.futures = make, make()


class DaskShards:
    """The executor of :mod:`._sharded` on a cluster: shard s's state is a
    future on worker ``workers[s]``, and every step on it runs there. ``origins[s]`` is
    a ``(function, args)`` computing shard s's first state from scratch: with the journal
    of updates since, it rebuilds a lost shard (module docstring)."""

    def __init__(self, client, states: list, workers: list[str], origins: list,
                 lost: int = 0):
        self.client, self.states, self.workers = client, list(states), list(workers)
        self.origins, self.journal, self.lost = origins, [], lost

    def _on(self, s: int, step, *args):
        if self.lost:
            args = _fresh(self.client, self.workers[s], args)
        return self.client.submit(_task, step, self.states[s], *args,
                                  workers=[self.workers[s]], allow_other_workers=False,
                                  pure=False)

    def update(self, step, *args) -> None:
        """Replace every shard's state by ``step(state, *args)``, on its worker."""
        self.journal.append((step, args))
        self.states = [self._on(s, step, *args) for s in range(len(self.states))]

    def each(self, step, *args) -> _Work:
        """``step(state, *args)`` of every shard (a handle for :meth:`gather`)."""
        return _Work(lambda: [self._on(s, step, *args) for s in range(len(self.states))])

    def each_with(self, step, per_shard: list, *args) -> _Work:
        """``step(state, per_shard[s], *args)`` of every shard s."""
        return _Work(lambda: [self._on(s, step, per_shard[s], *args)
                              for s in range(len(self.states))])

    def chain(self, step, first, *args) -> _Work:
        """``step(state, value, *args)`` run shard after shard, each on the value the
        shard before returned (small arrays, moved from worker to worker)."""
        def make():
            value = first
            for s in range(len(self.states)):
                value = self._on(s, step, value, *args)
            return value
        return _Work(make)

    def share(self, value):
        """``value`` scattered to every worker once, for the steps that read it. A worker
        lost during the broadcast closes the scheduler's connection midway: the broadcast
        is tried again once the scheduler has let the worker go (its shards are rebuilt
        at the next gather, as for any lost worker)."""
        for attempt in range(SHARE_TRIES):
            try:
                return self.client.scatter(value, broadcast=True, hash=False)
            except OSError:  # distributed's CommClosedError
                if attempt + 1 == SHARE_TRIES:
                    raise
                time.sleep(SHARE_WAIT_SECONDS)

    def total(self, parts: _Work) -> _Work:
        """The sum of the parts' tables: a tree of :func:`sum_tables` tasks, pairs of
        neighbours first (they share a worker when shards do)."""
        def make():
            handles = parts.make() if parts.futures is None else parts.futures
            parts.futures = None  # a resubmission makes the parts again
            while len(handles) > 1:
                handles = [self.client.submit(sum_tables, handles[j], handles[j + 1],
                                              pure=False)
                           if j + 1 < len(handles) else handles[j]
                           for j in range(0, len(handles), 2)]
            return handles[0]
        return _Work(make)

    def gather(self, work: _Work):
        """The values of a handle's futures; lost shards are rebuilt and the futures
        submitted again (module docstring)."""
        while True:
            try:
                return _gather(self.client, self.workers, work.futures)
            except WorkersLost as lost:
                self._rebuild(lost.workers)
                work.futures = work.make()

    def _rebuild(self, lost: list[str]) -> None:
        self.lost = _counted_losses(self.lost, lost)
        gone = [s for s, where in enumerate(self.workers) if where in lost]
        self.workers = _replaced(self.client, self.workers, lost)
        for s in gone:
            function, args = self.origins[s]
            args = _fresh(self.client, self.workers[s], args)
            self.states[s] = self.client.submit(_task, function, *args,
                                                workers=[self.workers[s]],
                                                allow_other_workers=False, pure=False)
            for step, step_args in self.journal:
                self.states[s] = self._on(s, step, *step_args)


def _fresh(client, where: str, args: tuple) -> tuple:
    """Task arguments for a submission after a worker was lost: every data argument
    scattered to ``where`` under a new key. Sent as they are, arrays would get the keys
    they had before, some of which name data that died with the worker, and the
    scheduler would cancel the task for lost dependencies."""
    from distributed import Future

    def kept(a) -> bool:  # literals, and futures (also in a tuple or list, as share makes)
        return (a is None or isinstance(a, (Future, bool, int, float, str, np.generic))
                or isinstance(a, (tuple, list)) and any(isinstance(v, Future) for v in a))

    return tuple(a if kept(a) else client.scatter([a], workers=[where], hash=False)[0]
                 for a in args)


def _gather(client, workers: list[str], handles):
    """The values of futures; :class:`WorkersLost` if one of the ``workers``, which hold
    the shards, is lost (tasks pinned to it could run nowhere else). Each result is
    awaited 2 s at a time, checking the workers in between: a result whose worker died
    after computing it would otherwise be waited for forever (the scheduler would
    recompute it on that worker only)."""
    futures = handles if isinstance(handles, list) else [handles]
    values = []
    for future in futures:
        while True:
            try:
                values.append(future.result(timeout=2))
                break
            except TimeoutError:
                _check_workers(client, workers)
            except BaseException:  # cancelled (a CancelledError) or failed: a lost worker?
                _check_workers(client, workers)
                raise
    return values if isinstance(handles, list) else values[0]


def _counted_losses(before: int, lost: list[str]) -> int:
    """The fit's lost workers so far; RuntimeError past :data:`LOST_WORKERS_TOLERATED`."""
    total = before + len(lost)
    if total > LOST_WORKERS_TOLERATED:
        raise RuntimeError(f"worker {lost[0]}, which held a shard, was lost, loss {total} "
                           f"of this fit (at most {LOST_WORKERS_TOLERATED} are recovered "
                           "from): fit again") from None
    return total


def _replaced(client, workers: list[str], lost: list[str]) -> list[str]:
    """``workers`` (the worker of each shard) with each lost one replaced by the living
    worker holding fewest shards."""
    alive = sorted(set(worker_threads(client)) - set(lost))
    if not alive:
        raise RuntimeError(f"worker {lost[0]}, which held a shard, was lost and no worker "
                           "is left: data-parallel training cannot go on") from None
    placed = [w for w in workers if w not in lost]
    out = []
    for where in workers:
        if where in lost:
            where = min(alive, key=lambda a: (placed.count(a), a))
            placed.append(where)
        out.append(where)
    return out


def _check_workers(client, workers: list[str]) -> None:
    lost = sorted(set(workers) - set(worker_threads(client)))
    if lost:
        raise WorkersLost(lost)


def _read(item, what: str):
    """An image or label image given as an array, or read from its file on the worker."""
    if isinstance(item, (str, os.PathLike)):
        from ..imageio import read_image, read_labels

        return read_image(item) if what == "image" else read_labels(item)
    return np.asarray(item)


def _load(images: list, labels: list, estimator, first: int) -> dict:
    """Step 1 on a worker: its shard's images and labels (from ``first`` on), checked
    (kept on the worker)."""
    from ..segmentation._input import value_units
    from ..segmentation._sampling import label_values

    images = [_read(im, "image") for im in images]
    labels = [_read(lab, "labels") for lab in labels]
    try:
        images, labels = estimator._checked_inputs(images, labels)
    except ValueError as err:
        raise ValueError(f"{err} (counting from image {first}, this shard's first)") from None
    return {"images": images, "labels": labels,
            "units": value_units(np.asarray(images[0]), "image 0"),
            "values": np.unique(np.concatenate([label_values(lab) for lab in labels])),
            "shapes": [np.shape(im)[:2] for im in images]}


def _described(loaded: dict) -> dict:
    return {k: loaded[k] for k in ("units", "values", "shapes")}


def _prepare(loaded: dict, estimator, first: int, plan: dict) -> tuple[Shard, dict]:
    """Step 2 on a worker: the shard's channels, samples and entries (as the whole's
    ``JungleSegmenter._plan`` makes them for these images), and what the driver needs of
    them: the store channels at the samples, their labels, the value range, class pixel
    counts."""
    import dataclasses

    from ..jungle._entries import Entries, image_rows
    from ..segmentation._sampling import sample_pixels

    family = estimator._family().with_quantiser(plan["quantiser"])
    images = shard_images(loaded["images"], family,
                          range(first, first + len(loaded["images"])), plan["units"])
    store = family.prepare(images, pad=plan["pad"])
    family.check_store(store)
    labels, classes = loaded["labels"], plan["classes"]
    samples = sample_pixels(labels, classes, estimator.sampling, estimator.samples_per_image,
                            plan["ignore"], plan["seed"], first_image=first)
    if family.spatial_ndim == 3:
        height = store.height[samples.image]
        samples = dataclasses.replace(samples, row=store.rows(
            samples.image, samples.row // height, samples.row % height))
    n_dags = int(estimator.n_estimators)
    every = np.arange(len(samples))
    rows = ([every] * n_dags if estimator.images_per_dag is None else
            image_rows(samples.image + first, plan["n_images"], int(estimator.images_per_dag),
                       n_dags, plan["seed"]))
    entries = Entries(np.concatenate(rows), np.ones(sum(r.size for r in rows), np.int64),
                      np.repeat(np.arange(n_dags), [r.size for r in rows]))
    reach = family.point_reach
    state = new_shard(store.as_tuple(), samples, entries, reach is not None and
                      store.pad >= reach, len(classes))
    info = {"channels": [store.values_at(samples, c) for c in range(store.n_channels)],
            "label": samples.label,
            "range": [min(float(im.min()) for im in images),
                      max(float(im.max()) for im in images)],
            "pixels": np.array([sum(int((np.asarray(lab) == v).sum()) for lab in labels)
                                for v in classes], np.int64)}
    return state, info


def _part(pair: tuple, k: int):
    return pair[k]


def shard_ranges(n_images: int, n_shards: int) -> list[tuple[int, int]]:
    """Contiguous (first, end) image ranges of ``n_shards`` shards, as even as can be."""
    if not 1 <= n_shards <= n_images:
        raise ValueError(f"need 1 to {n_images} shards for {n_images} images, got {n_shards}")
    cuts = [n_images * s // n_shards for s in range(n_shards + 1)]
    return list(itertools.pairwise(cuts))


class _Here:
    """Runs the steps of data-parallel fitting in this process, shard after shard (the
    tests' reference, and the workers' warm-up)."""

    def run(self, s: int, step, *args):
        return step(*args)

    def get(self, handles):
        return handles

    def shards(self, states: list, origins: list):  # noqa: ARG002 (nothing is lost here)
        from ._sharded import InProcess

        return InProcess(states)


class _There:
    """Runs each shard's steps on its worker, ``where[s]``."""

    def __init__(self, client, where: list[str]):
        self.client, self.where, self.lost = client, where, 0

    def run(self, s: int, step, *args):
        if self.lost:
            args = _fresh(self.client, self.where[s], args)
        return self.client.submit(_task, step, *args, workers=[self.where[s]],
                                  allow_other_workers=False, pure=False)

    def get(self, handles):
        return _gather(self.client, self.where, handles)

    def shards(self, states: list, origins: list) -> DaskShards:
        return DaskShards(self.client, states, self.where, origins, self.lost)

    def replace(self, lost: list[str]) -> None:
        """Move the shards of lost workers to living ones (counting the loss)."""
        self.lost = _counted_losses(self.lost, lost)
        self.where = _replaced(self.client, self.where, lost)


def _checked(estimator, images: list, labels: list) -> None:
    estimator._validate_params()
    if estimator.auto_context > 1:
        raise ValueError("data-parallel training does not fit auto-context stages (their "
                         "maps come out of fold); fit them locally (estimator.fit)")
    if estimator.growth == "priority":
        raise ValueError("data-parallel training grows level by level: growth 'priority' "
                         "is not supported; use DAGs as tasks (data_parallel=False)")
    if len(images) != len(labels) or not images:
        raise ValueError(f"got {len(images)} images and {len(labels)} label images")


def fit_sharded(estimator: JungleSegmenter, images: Sequence, labels: Sequence, client,
                n_shards: int | None = None) -> JungleSegmenter:
    """Fit a :class:`~jungleseg.JungleSegmenter` data-parallel on a cluster: the images
    in ``n_shards`` contiguous shards (default one per worker) over the workers, each
    worker holding only its shards' channels; equal to ``estimator.fit(images, labels)``
    bit for bit (module docstring).

    Parameters
    ----------
    estimator : JungleSegmenter
        Unfitted or fitted; fitted in place and returned.
    images, labels : sequences of arrays or of file paths
        Paths are read by the workers (which must see them): the driver then never holds
        an image (but the first, for the workers' warm-up).
    client : distributed.Client
    n_shards : int, optional
        Shards, assigned to the workers in turn.

    Returns
    -------
    JungleSegmenter
        The estimator, fitted; ``grow_stats_.table_bytes`` holds, per level (and wave of
        nodes), the bytes of the count tables its reduction summed (every shard's part).
    """
    images, labels = list(images), list(labels)
    _checked(estimator, images, labels)
    workers = sorted(worker_threads(client))
    ranges = shard_ranges(len(images), n_shards or min(len(workers), len(images)))
    prepare_workers(client, _Warm(estimator, _read(images[0], "image")))
    where = [workers[s % len(workers)] for s in range(len(ranges))]
    return _fit(estimator, images, labels, _There(client, where), ranges)


def fit_in_process(estimator: JungleSegmenter, images: Sequence, labels: Sequence,
                   n_shards: int = 2) -> JungleSegmenter:
    """:func:`fit_sharded` with every shard in this process, one after the other: the
    same model, without a cluster."""
    images, labels = list(images), list(labels)
    _checked(estimator, images, labels)
    return _fit(estimator, images, labels, _Here(), shard_ranges(len(images), n_shards))


def _prepared(estimator, images: list, labels: list, runner, ranges: list) -> tuple:
    """Every shard loaded and prepared on its worker: their states (futures on a
    cluster), the driver's part of :func:`_prepare` for each, and the plan."""
    from ..features._quantise import quantiser_of_samples
    from ..segmentation._context import cheap_pad
    from ..segmentation._sampling import trained_classes

    loaded = [runner.run(s, _load, images[a:b], labels[a:b], estimator, a)
              for s, (a, b) in enumerate(ranges)]
    described = runner.get([runner.run(s, _described, f) for s, f in enumerate(loaded)])
    family = estimator._family()
    ignore = estimator._never_trained(family)
    values = np.unique(np.concatenate([d["values"] for d in described]))
    classes = trained_classes(values, ignore)
    shapes = [shape for d in described for shape in d["shapes"]]
    plan = {"units": described[0]["units"], "classes": classes, "ignore": tuple(ignore),
            "seed": estimator._seed(), "n_images": len(images),
            "pad": cheap_pad(family.point_reach, [s[:2] for s in shapes]), "quantiser": None}
    if family.code_type is not None:  # fitted on the driver from the shards' samples
        samples = runner.get([runner.run(s, quantiser_samples, f, estimator, a,
                                         plan["units"], len(images))
                              for s, (f, (a, _)) in enumerate(zip(loaded, ranges))])
        plan["quantiser"] = quantiser_of_samples([x for part in samples for x in part],
                                                 family.code_type)
    pairs = [runner.run(s, _prepare, f, estimator, a, plan)
             for s, (f, (a, _)) in enumerate(zip(loaded, ranges))]
    states = [runner.run(s, _part, p, 0) for s, p in enumerate(pairs)]
    infos = runner.get([runner.run(s, _part, p, 1) for s, p in enumerate(pairs)])
    return states, infos, plan


def _rebuilt(images: list, labels: list, estimator, first: int, plan: dict) -> Shard:
    """A shard's first state made again from scratch, on a worker (a lost shard's)."""
    return _prepare(_load(images, labels, estimator, first), estimator, first, plan)[0]


def _fit(estimator, images: list, labels: list, runner, ranges: list):
    from ..features import ColourFeatures
    from ..segmentation._segmenter import _reweighted, summary_of
    from ._sharded import grow_sharded

    start = time.perf_counter()
    while True:  # a worker lost while the shards are prepared: prepare them all again
        try:
            states, infos, plan = _prepared(estimator, images, labels, runner, ranges)
            break
        except WorkersLost as err:
            runner.replace(err.workers)
    prepare_seconds = time.perf_counter() - start
    family = estimator._family()
    classes, seed = plan["classes"], plan["seed"]
    origins = [(_rebuilt, (images[a:b], labels[a:b], estimator, a, plan)) for a, b in ranges]
    shards = runner.shards(states, origins)
    params = estimator._grow_params(len(classes), int(estimator.n_candidate_features), seed)
    dags, stats = grow_sharded(shards, family, params, int(estimator.n_estimators))
    stats.seconds["prepare"] = prepare_seconds
    label = np.concatenate([info["label"] for info in infos])
    ratio = None
    if estimator.correct_prior:
        pixels = np.sum([info["pixels"] for info in infos], axis=0).astype(np.float64)
        sampled = np.bincount(label, minlength=classes.size).astype(np.float64)
        ratio = (pixels / pixels.sum()) / np.maximum(sampled / sampled.sum(), 1e-12)
        dags = _reweighted(dags, ratio)
    channels = [np.concatenate([info["channels"][c] for info in infos])
                for c in range(len(infos[0]["channels"]))]
    input_values = None
    if isinstance(family, ColourFeatures):
        input_values = {"units": plan["units"], "range": [min(i["range"][0] for i in infos),
                                                          max(i["range"][1] for i in infos)]}
    return estimator._fitted(summary_of(classes, seed, channels, label, len(images),
                                        input_values, ratio, plan["quantiser"]), dags, stats)


class _Warm(warm_up):
    """The workers' warm-up for data-parallel fitting: :class:`warm_up`'s, then a tiny
    data-parallel fit in process (the shard and driver kernels)."""

    def __init__(self, estimator, image):
        super().__init__(estimator=estimator, image=image)
        self.key = (*self.key, "data-parallel")

    def __call__(self) -> None:
        super().__call__()
        from .._workers import threads

        shape = self.image.shape[:self.estimator._family().spatial_ndim]
        labels = (np.indices(shape).sum(axis=0) // 5 % 2 + 1).astype(np.uint8)
        small = self.estimator.__class__(**{
            **self.estimator.get_params(deep=False), "n_estimators": 1, "max_depth": 4,
            "max_width": 2, "samples_per_image": 200, "images_per_dag": None,
            "random_state": 0})
        with threads(_TASK_THREADS["n"]):
            fit_in_process(small, [self.image] * 2, [labels] * 2)
