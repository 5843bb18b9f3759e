"""The worker plugin that prepares every worker of a cluster, including those that join
or restart later (:func:`jungleseg.distributed.prepare_workers`). Imported only where
a cluster is used: it subclasses dask's WorkerPlugin."""
from __future__ import annotations

from distributed import WorkerPlugin

from ._cluster import _TASK_THREADS


class _Prepared(WorkerPlugin):
    """Worker plugin: sets the Numba threads of tasks and loads the warmed kernels on
    every worker, including those that join or restart later."""

    name = "jungleseg-prepared"

    def __init__(self, threads: dict, default: int, warm):
        self.threads, self.default, self.warm = threads, default, warm

    def setup(self, worker):
        _TASK_THREADS["n"] = self.threads.get(worker.address, self.default)
        if self.warm is not None:
            self.warm()
