"""A jungle's DAGs as cluster tasks (:func:`fit`): one task per DAG, each growing its DAG
with the levels the whole ensemble merges at, so that the jungle equals local training bit
for bit (the package's docstring says how)."""
from __future__ import annotations

from collections.abc import Sequence

from ._cluster import _TASK_THREADS, prepare_workers, warm_up

_PLANS: dict = {}  # per worker process: the last training plan, by token


def _tokenize(*parts) -> str:
    from dask.base import tokenize

    return tokenize(*parts)


def _train_dag(estimator, images, labels, token: str, dag: int, merge: tuple) -> dict:
    """One DAG of the estimator's jungle (global id ``dag``), grown with the levels
    ``merge`` (see :func:`jungleseg.jungle.grow`); the plan is kept per process."""
    from .._workers import threads

    with threads(_TASK_THREADS["n"]):
        plan = _PLANS.get(token)
        if plan is None:
            _PLANS.clear()
            plan = _PLANS[token] = estimator._plan(images, labels)
        dags, stats = estimator._grow(plan, dags=[dag], merge=merge)
    from ..segmentation._segmenter import _summary

    return {"dag": dags[0], "stats": stats, "merging": list(stats.merging),
            "summary": _summary(plan) if dag == 0 else None}


def _settled(merging: list, assumed: tuple, ensemble: list) -> bool:
    """Whether a run that assumed ``assumed`` searched each of its levels as the
    ensemble does (``ensemble``: per level, does some DAG merge)."""
    return all((own or (d < len(assumed) and assumed[d])) == ensemble[d]
               for d, own in enumerate(merging))


def fit(estimator, images: Sequence, labels: Sequence, client, data_parallel: bool = False,
        n_shards: int | None = None):
    """Fit a :class:`~jungleseg.JungleSegmenter` on a cluster, one task per DAG; the
    fitted estimator (the one given) equals ``estimator.fit(images, labels)`` bit for bit;
    ``distributed_rounds_`` says how many rounds of tasks that took (the package's docstring).

    Every task prepares the training images itself (once per worker process): the
    images and labels go to every worker once. With ``data_parallel``, each DAG trains
    on images sharded over the workers instead (``n_shards`` contiguous shards, default
    one per worker; images may be file paths, read by the workers), for data that no
    worker holds: :func:`jungleseg._dataparallel.fit_sharded`, the same model.
    """
    from ..jungle._grow import GrowStats

    if data_parallel:
        from ._dataparallel import fit_sharded

        return fit_sharded(estimator, images, labels, client, n_shards)
    images, labels = list(images), list(labels)
    estimator._validate_params()
    if estimator.auto_context > 1:
        raise ValueError("auto-context stages train one after another on out-of-fold "
                         "maps; fit them locally (estimator.fit)")
    if len(images) != len(labels) or not images:
        raise ValueError(f"got {len(images)} images and {len(labels)} label images")
    prepare_workers(client, warm_up(estimator=estimator, image=images[0]))
    token = _tokenize(estimator.get_params(deep=False), images, labels)
    # a key of their own: a hashed key equal to an earlier call's can be released by that
    # call while this one uses it (its tasks then fail with "lost dependencies")
    data_images, data_labels = client.scatter([images, labels], broadcast=True, hash=False)
    runs: dict[int, tuple[tuple, dict]] = {}
    rounds = 0
    for _ in range(int(estimator.max_depth or 64) + 2):
        ensemble = _ensemble(runs, estimator.n_estimators) if runs else _guess(estimator)
        todo = [g for g in range(estimator.n_estimators)
                if g not in runs or not _settled(runs[g][1]["merging"], runs[g][0], ensemble)]
        if not todo:
            break
        assumed = tuple(ensemble)
        futures = client.map(_train_dag, [estimator] * len(todo), [data_images] * len(todo),
                             [data_labels] * len(todo), [token] * len(todo), todo,
                             [assumed] * len(todo), pure=True)
        for g, result in zip(todo, client.gather(futures)):
            runs[g] = (assumed, result)
        rounds += 1
    results = [runs[g][1] for g in range(estimator.n_estimators)]
    estimator.distributed_rounds_ = rounds
    stats = GrowStats(evaluations=sum(r["stats"].evaluations for r in results),
                      nodes=[r["stats"].nodes[0] for r in results],
                      merging=_ensemble(runs, estimator.n_estimators))
    for r in results:  # seconds summed over the tasks; the plan is prepared once per worker
        for key, value in r["stats"].seconds.items():
            stats.seconds[key] = (max if key == "prepare" else sum)(
                (stats.seconds.get(key, 0.0), value))
    return estimator._fitted(results[0]["summary"], [r["dag"] for r in results], stats)


def _guess(estimator) -> list:
    """The first round's merge levels: every level whose width does not double (where a
    DAG may have to merge; with several DAGs, one usually does), none for trees."""
    from ..jungle._schedules import level_width

    if estimator.growth != "jungle" or estimator.max_width is None:
        return []
    width = [level_width(estimator.schedule, estimator.max_width, d)
             for d in range(int(estimator.max_depth or 64) + 2)]
    return [width[d + 1] < 2 * width[d] for d in range(len(width) - 1)]


def _ensemble(runs: dict, n_dags: int) -> list:
    """Per level, whether some DAG's run had to merge there."""
    depth = max((len(r["merging"]) for _, r in runs.values()), default=0)
    return [any(d < len(r["merging"]) and r["merging"][d] for _, r in runs.values())
            for d in range(depth)]
