"""Cluster set-up: a client of a running cluster or of a new LocalCluster, and workers
prepared for the work (kernels compiled once per host, Numba threads per task).

dask is imported only inside the functions that need a cluster; without it they raise a
one-line ImportError naming the extra to install (:func:`require_dask`).
"""
from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator

import numpy as np

#: Numba threads a task here may use; set on each worker by the plugin of :mod:`._plugin`.
_TASK_THREADS = {"n": 1}


def require_dask(what: str = "a dask cluster") -> None:
    """Raise a one-line ImportError naming the extra to install when dask.distributed
    cannot be imported (it is the optional ``distributed`` extra)."""
    try:
        import dask  # noqa: F401
        import distributed  # noqa: F401
    except ImportError as err:
        raise ImportError(f"{what} needs dask.distributed ({err}): "
                          'pip install "jungleseg[distributed]"') from None


def _cores() -> int:
    """The cores this process may run on."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()


@contextlib.contextmanager
def _environment(**values: str) -> Iterator[None]:
    """Environment variables set for the block, then as they were."""
    before = {name: os.environ.get(name) for name in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for name, value in before.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def local_cluster(n_workers: int, threads_per_worker: int = 1):
    """A :class:`distributed.Client` of a new LocalCluster of ``n_workers`` spawned worker
    processes; closing the client (``with`` block) closes the cluster too."""
    require_dask()
    import dask
    from distributed import Client, LocalCluster

    numba_threads = max(1, (_cores() or 1) // (n_workers * threads_per_worker))
    # NUMBA_NUM_THREADS is in the environment the workers are spawned with, not in the
    # nanny's ``env``: that is set after the worker has imported the parent's main module
    # (the ``jungleseg`` command imports Numba), and Numba refuses to compile once its
    # threads run with a count other than the environment's.
    with dask.config.set({"distributed.worker.multiprocessing-method": "spawn"}), \
            _environment(NUMBA_NUM_THREADS=str(numba_threads)):
        cluster = LocalCluster(n_workers=n_workers, threads_per_worker=threads_per_worker,
                               processes=True, dashboard_address=":0", silence_logs=40,
                               env={"OMP_WAIT_POLICY": "PASSIVE"})
    client = Client(cluster)
    client._jungleseg_cluster = cluster  # closed with the client (see connect)
    return client


@contextlib.contextmanager
def connect(scheduler: str | None = None, workers: int | None = None) -> Iterator:
    """A client of the cluster at ``scheduler`` (an address such as
    ``tcp://host:8786``), or of a new LocalCluster of ``workers`` processes, or None when
    neither is given (work stays in this process); closed after the block."""
    if scheduler and workers:
        raise ValueError("--scheduler and --workers exclude each other: use a running "
                         "cluster or start a local one")
    if not scheduler and not workers:
        yield None
        return
    if workers is not None and workers < 1:
        raise ValueError(f"--workers must be >= 1, got {workers}")
    require_dask()
    from distributed import Client

    if scheduler:
        try:
            client = Client(scheduler, timeout="20s")
        except OSError as err:
            raise OSError(f"--scheduler {scheduler}: cannot connect ({err})") from None
    else:
        client = local_cluster(int(workers))
    try:
        yield client
    finally:
        cluster = getattr(client, "_jungleseg_cluster", None)
        client.close()
        if cluster is not None:
            cluster.close()


def worker_threads(client) -> dict[str, int]:
    """Task slots per worker address, asked of the scheduler: ``scheduler_info()`` is a
    cache that a refresh without workers may just have replaced (distributed 2026.8)."""
    return {addr: int(n) for addr, n in client.nthreads().items()}


def _worker_plan(client) -> dict[str, tuple[str, int]]:
    """Per worker address: its host, and the Numba threads each of its task slots gets
    (the host's cores over the task slots of all its workers, at least 1)."""
    from distributed.comm import get_address_host

    workers = worker_threads(client)
    if not workers:
        raise ValueError("the cluster has no workers")
    cores = client.run(_cores)
    host = {addr: get_address_host(addr) for addr in workers}
    slots = {h: sum(n for a, n in workers.items() if host[a] == h) for h in host.values()}
    return {addr: (host[addr], max(1, int(cores.get(addr, 1)) // slots[host[addr]]))
            for addr in workers}


def prepare_workers(client, warm=None) -> None:
    """Prepare the cluster's workers: ``warm()`` (a picklable function compiling what
    the work uses, see :func:`warm_up`) runs first on one worker per host, alone, then on
    every worker (loading the cache it wrote), and every task gets its share of Numba
    threads (the package's docstring). Workers that join or restart later are prepared too."""
    from ._plugin import _Prepared

    plan = _worker_plan(client)
    key = (getattr(warm, "key", None), tuple(sorted(plan)))
    done = client.__dict__.setdefault("_jungleseg_prepared", set())
    if key[0] is not None and key in done:  # these workers are prepared for this work
        return
    done.add(key)
    first: dict[str, str] = {}
    for addr, (host, _) in sorted(plan.items()):
        first.setdefault(host, addr)
    if warm is not None:
        for addr in first.values():  # one at a time: compilation writes the cache
            client.run(warm, workers=[addr])
    threads = {addr: n for addr, (_, n) in plan.items()}
    client.register_plugin(_Prepared(threads, min(threads.values()), warm, _set_task_threads),
                           name=_Prepared.name)


def _set_task_threads(n: int) -> None:
    """Set the Numba threads of the tasks of this worker process."""
    _TASK_THREADS["n"] = n


class warm_up:  # noqa: N801 (used like a function: warm_up(estimator=..., image=...)())
    """A picklable warm-up: a tiny training with the estimator's parameters on a crop of
    ``image`` (the same dtypes and channels as the work) and a segmentation of it, or
    with ``model`` a segmentation of the crop only."""

    def __init__(self, estimator=None, image=None, model=None):
        family = model.family if model is not None else estimator._family()
        spatial = family.spatial_ndim
        crop = tuple(slice(0, 12 if spatial == 3 and k == 0 else 40) for k in range(spatial))
        self.image = np.ascontiguousarray(np.asarray(image[crop]))
        self.estimator, self.model = estimator, model
        #: what the warm-up compiles for: the same key needs no second warm-up
        self.key = (repr(family.to_dict()), self.image.dtype.str, self.image.shape,
                    estimator is not None)

    def __call__(self) -> None:
        from .._workers import threads
        from ..segmentation import segment

        with threads(_TASK_THREADS["n"]):
            model = self.model
            if self.estimator is not None:
                shape = self.image.shape[:self.estimator._family().spatial_ndim]
                labels = (np.indices(shape).sum(axis=0) // 5 % 2 + 1).astype(np.uint8)
                small = self.estimator.__class__(**{
                    **self.estimator.get_params(deep=False), "n_estimators": 1,
                    "max_depth": 4, "max_width": 2, "samples_per_image": 200,
                    "images_per_dag": None, "random_state": 0})
                model = small.fit([self.image], [labels]).jungle_
            segment(model, self.image, probabilities=False)


