"""The worker plugin: a worker that joins the cluster after the work was prepared gets its
Numba threads and runs the warm-up too."""
import functools

from jungleseg import distributed as jd
from jungleseg.distributed import _cluster

MARK = "import os; os.environ['JUNGLESEG_WARMED'] = '1'"


def test_a_worker_that_joins_later_is_prepared():
    with jd.local_cluster(1) as client:
        warm = functools.partial(exec, MARK)  # picklable, leaves a trace on the worker
        jd.prepare_workers(client, warm)
        first = set(client.nthreads())
        given = client.run(lambda: _cluster._TASK_THREADS["n"])  # the first worker's share
        client._jungleseg_cluster.scale(2)
        client.wait_for_workers(2, timeout=120)
        (late,) = set(client.nthreads()) - first
        state = client.run(lambda: (_cluster._TASK_THREADS["n"],
                                    __import__("os").environ.get("JUNGLESEG_WARMED")),
                           workers=[late])[late]
    assert state == (min(given.values()), "1")
