"""The per-DAG parallel entry point of both level optimisers: each DAG gets what a call
on its own gives, whatever the number of workers claiming DAGs."""
import numpy as np
import pytest

from jungleseg.jungle import _clustersearch, _lsearch
from jungleseg.jungle._criterion import ENTROPY, make_phi_table
from jungleseg.jungle._level_search import _LSEARCH_STREAM, METHODS, optimise_level
from jungleseg._rng import derive

from .test_lsearch import make_level, tree_costs


def three_dags(seed=0):
    rng = np.random.default_rng(seed)
    parts = [make_level(rng, n_parents=n) for n in (8, 5, 7)]
    table, wl, P = (np.concatenate([part[i] for part in parts]) for i in range(3))
    phi = make_phi_table(int(P.sum()), ENTROPY)
    costs, best_k, best_t = tree_costs(table, wl, P, phi, ENTROPY)
    return table, wl, P, phi, costs, best_k, best_t, np.array([0, 8, 13, 20])


def alone(method, g, lo, hi, level):
    table, wl, P, phi, costs, best_k, best_t, _ = level
    if method.startswith("clustersearch"):
        return _clustersearch.clustersearch(
            table[lo:hi], wl[lo:hi], costs[lo:hi], P[lo:hi], best_k[lo:hi], best_t[lo:hi], 5,
            20, method.endswith("alternating"), True, phi, ENTROPY, np.zeros(0))
    state = np.uint64(derive(3, g, 2, _LSEARCH_STREAM, 0))
    return _lsearch.lsearch(table[lo:hi], wl[lo:hi], costs[lo:hi], P[lo:hi], best_k[lo:hi],
                            best_t[lo:hi], 5, 20, method == "lsearch-stochastic", state, phi,
                            ENTROPY, np.zeros(0))


@pytest.mark.parametrize("method", sorted(METHODS))
@pytest.mark.parametrize("workers", [1, 2, 3])
def test_each_dag_gets_what_a_call_on_its_own_gives(method, workers):
    level = three_dags()
    table, wl, P, phi, costs, best_k, best_t, dag_start = level
    k, t, l, r, energy = optimise_level(dag_start, np.arange(3), 5, table, wl, costs, P,
                                        best_k, best_t, 20, METHODS[method], True,
                                        np.uint64(3), 2, phi, ENTROPY, workers)
    for g in range(3):
        lo, hi = dag_start[g], dag_start[g + 1]
        expected = alone(method, g, lo, hi, level)
        for got, want in zip((k, t, l, r), expected[:4]):
            np.testing.assert_array_equal(got[lo:hi], want)
        assert energy[g] == expected[4]
        assert len(np.unique(np.concatenate([l[lo:hi], r[lo:hi]]))) <= 5
