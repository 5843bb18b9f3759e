"""Growing a jungle: :func:`grow` trains the DAGs level by level (:mod:`._grow`) or, for
the priority-scheduled tree baseline, from one queue of open leaves (:mod:`._priority`),
which builds on the steps of level-wise growth."""
from __future__ import annotations

import numpy as np

from .._jit import compile_ahead
from ..features import FeatureFamily, Samples
from ._assembly import assemble
from ._criterion import make_phi_table
from ._dag import DAG
from ._entries import Entries
from ._grow import GrowParams, GrowStats, Progress, _grow_levels, _Local, _Training
from ._priority import grow_priority


def grow(store: tuple, samples: Samples, family: FeatureFamily, entries: Entries,
         params: GrowParams, progress: Progress | None = None, unclamped: bool = False,
         dags=None, merge=()) -> tuple[list[DAG], GrowStats]:
    """Grow one DAG per DAG of ``entries``, level by level (with ``dags``, only those).

    ``samples`` has ``image, row, col`` and ``label`` (0..n_classes-1) arrays;
    ``store`` is an ImageStore tuple and ``family`` the feature family that drew it.
    ``progress(level, n_nodes)`` is called after each level; an exception it raises stops
    training (how a GUI cancels). ``unclamped`` reads probes without clamping them to the
    image: only for families whose candidates are point kinds (``point_reach`` not None)
    on a store padded at least that far.

    DAGs grow independently but for one decision per level: a jungle level where some
    DAG must merge (more than half as many parents as the level has nodes) is searched
    by LSearch in every DAG, which numbers a tree level's children by parent energy
    rather than in parent order. ``dags`` (global ids, sorted) grows only those DAGs,
    exactly as they grow among all when ``merge`` lists, by level, whether some DAG of
    the whole ensemble merges there (``stats.merging`` of a run); how the DAGs of one
    model train as separate tasks (:mod:`jungleseg.distributed`).
    """
    p = params
    compile_ahead(store, p, tabular=_Training.codes_of(store, family.spec()) is not None)
    max_weight = int(np.bincount(entries.dag, weights=entries.weight).max())  # of all DAGs
    if max_weight >= 2**31:
        raise ValueError("a DAG's total sample weight must stay below 2^31")
    dag_ids = np.arange(entries.n_dags, dtype=np.int64)
    if dags is not None:
        dag_ids = np.asarray(dags, np.int64)
        mine = np.isin(entries.dag, dag_ids)
        entries = Entries(entries.sample[mine], entries.weight[mine],
                          np.searchsorted(dag_ids, entries.dag[mine]))
    training = _Training(store, samples, entries, family.spec(), family.n_params, p,
                         make_phi_table(max_weight, p.criterion), unclamped, dag_ids,
                         tuple(bool(m) for m in merge))
    stats = GrowStats()
    if p.growth == "priority":
        levels = grow_priority(training, stats, progress)
    else:
        levels = _grow_levels(training, stats, progress, _Local(training))
    dags, stats.nodes = assemble(levels, entries.n_dags, family.n_params, p.n_classes)
    return dags, stats
