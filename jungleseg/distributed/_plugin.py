"""The worker plugin that prepares every worker of a cluster, including those that join
or restart later (:func:`jungleseg.distributed.prepare_workers`). Imported only where
a cluster is used: it subclasses dask's WorkerPlugin. It imports nothing of jungleseg:
what it sets and runs on a worker comes with it, as functions pickled by reference."""
from __future__ import annotations

from distributed import WorkerPlugin


class _Prepared(WorkerPlugin):
    """Worker plugin: sets the Numba threads of tasks and loads the warmed kernels on
    every worker, including those that join or restart later."""

    name = "jungleseg-prepared"

    def __init__(self, threads: dict, default: int, warm, set_threads):
        self.threads, self.default, self.warm = threads, default, warm
        self.set_threads = set_threads

    def setup(self, worker):
        self.set_threads(self.threads.get(worker.address, self.default))
        if self.warm is not None:
            self.warm()
