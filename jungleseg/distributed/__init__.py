"""Training and segmentation on a dask.distributed cluster.

* :func:`fit`: the DAGs of a jungle as tasks. Each task grows one DAG with its own random
  streams (keyed by the DAG's global id), so the merged model equals local training bit
  for bit. One decision couples the DAGs of a level: whether some DAG must merge there
  (see :func:`jungleseg.jungle.grow`). Each task reports its DAG's decisions; a DAG whose
  run assumed other decisions than the ensemble's is run again with the ensemble's. A
  level's decision only depends on the levels before it, so this settles within a few
  rounds (usually one: the DAGs of a jungle reach their width at the same level).
* ``fit(..., data_parallel=True)``: every DAG trained on images sharded over the workers,
  for data that no worker holds (:mod:`._dataparallel`, growth on shards in
  :mod:`._sharded`), the same model again.
* :func:`segment_array`: a large image or volume (dask array, zarr array, NumPy array) in
  chunks, one task per chunk that reads its window (the chunk with a halo of the model's
  probe margin plus the smoothing's reach) and passes no data to other tasks: equal to
  whole-image segmentation, a worker holding one window whatever the size, written to
  zarr by the workers when ``out`` is given.
* :func:`segment_files` and :func:`segment_images`: the images of a folder, or of a list,
  as tasks.

Workers are prepared before the work (:func:`prepare_workers`, :mod:`._cluster`): every
kernel the work uses is compiled by one worker per host first, which writes Numba's
cache, and only then loaded by the others (compiling concurrently into one cache is known
to break); each task runs Numba's parallel regions on a share of its host's cores, so that workers x
threads x Numba threads stays within the cores. Tasks are pure: a task whose worker is
lost is run again by dask with the same result. Worker processes are spawned, never
forked (a fork after Numba's threads started can hang).

dask and distributed (the ``distributed`` extra) are imported only here, and only by the
functions that use a cluster: importing this package, or the rest of jungleseg, does not
need them; without them, asking for a cluster raises a one-line ImportError that names
the extra to install. :func:`jungleseg.segmentation.segment_file`, which segments a file
in this process, is importable from here too.
"""
from ..segmentation import segment_file
from ._cluster import (
    connect,
    local_cluster,
    prepare_workers,
    require_dask,
    warm_up,
    worker_threads,
)
from ._dataparallel import LOST_WORKERS_TOLERATED, fit_in_process, fit_sharded
from ._fit import fit
from ._tasks import segment_array, segment_files, segment_images

__all__ = ["LOST_WORKERS_TOLERATED", "connect", "fit", "fit_in_process", "fit_sharded",
           "local_cluster", "prepare_workers", "require_dask", "segment_array",
           "segment_file", "segment_files", "segment_images", "warm_up", "worker_threads"]
