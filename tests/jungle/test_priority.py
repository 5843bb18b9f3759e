"""Priority-scheduled trees: the queue's head splits, the rest stays queued, and with M
unlimited the standard tree."""
import numpy as np
import pytest

from . import test_baselines
from .test_baselines import M, fit, parents

data = test_baselines.data  # the baselines' module-scoped fixture: pytest finds it by this name


@pytest.mark.parametrize("max_nodes", [None, 61])
def test_priority_splits_the_queue_head_and_keeps_the_rest_queued(data, max_nodes):
    clf = fit(data, max_width=M, growth="priority", max_nodes=max_nodes)
    later = 0
    for dag, rec in zip(clf.jungle_.dags, clf.grow_stats_.nodes):
        if max_nodes is not None:
            assert dag.n_nodes <= max_nodes
        parent = parents(dag)
        created = np.where(parent < 0, 0, rec.split_round[parent] + 1)
        queued = np.isfinite(rec.gain)  # had a valid split: entered the queue
        for it in range(rec.split_round.max() + 1):
            batch = np.flatnonzero(rec.split_round == it)
            waiting = np.flatnonzero(queued & (created <= it)
                                     & ((rec.split_round < 0) | (rec.split_round >= it)))
            assert 0 < batch.size <= M
            assert set(batch.tolist()) <= set(waiting.tolist())
            rest = np.setdiff1d(waiting, batch)
            if rest.size and batch.size == M:
                assert rec.gain[batch].min() >= rec.gain[rest].max()
            assert rest.size == 0 or batch.size == M or max_nodes is not None
        later += np.sum((rec.split_round >= 0) & (rec.split_round > created))
        ranks = rec.split_rank[rec.split_round >= 0]
        np.testing.assert_array_equal(np.sort(ranks), np.arange(ranks.size))
    assert later > 0  # leaves left unsplit stayed queued and were split later


def test_priority_with_unlimited_width_is_the_standard_tree(data):
    tree = fit(data, max_width=None)
    priority = fit(data, max_width=None, growth="priority")
    for a, b in zip(tree.jungle_.dags, priority.jungle_.dags):
        for name, array in a.arrays().items():
            np.testing.assert_array_equal(array, getattr(b, name), err_msg=name)
