"""optimise_level, the per-DAG parallel entry point of both level optimisers: every DAG's
level optimised as its own task, whichever optimiser, worker count or task order, with each
DAG's result what a call on it alone gives."""
import numpy as np
import pytest

from jungleseg._rng import derive
from jungleseg.jungle import _clustersearch, _lsearch
from jungleseg.jungle._criterion import ENTROPY, GINI, make_phi_table
from jungleseg.jungle._level_search import _LSEARCH_STREAM, METHODS, optimise_level

from .test_lsearch import make_level, objective_from_scratch, tree_costs

SEED, LEVEL, N_CHILDREN, BUDGET = np.uint64(7), 5, 6, 40


def stacked(rng, sizes):
    """One level of several DAGs (``sizes`` parents each, 0 for a DAG with none), stacked."""
    parts = [make_level(rng, n_parents=n, n_cand=3, n_thr=4, n_classes=4) for n in sizes if n]
    table = np.concatenate([p[0] for p in parts])
    wl = np.concatenate([p[1] for p in parts])
    P = np.concatenate([p[2] for p in parts])
    return table, wl, P, np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)


def alone(method, table, wl, costs, P, k, t, phi, criterion, dag_id):
    """The optimiser called directly on one DAG's parents."""
    if method.startswith("clustersearch"):
        return _clustersearch.clustersearch(table, wl, costs, P, k, t, N_CHILDREN, BUDGET,
                                            method == "clustersearch-alternating", True, phi,
                                            criterion, np.zeros(0))
    state = np.uint64(derive(SEED, dag_id, LEVEL, _LSEARCH_STREAM, 0))
    return _lsearch.lsearch(table, wl, costs, P, k, t, N_CHILDREN, BUDGET,
                            method == "lsearch-stochastic", state, phi, criterion, np.zeros(0))


@pytest.mark.parametrize("method", list(METHODS))
@pytest.mark.parametrize("criterion", [ENTROPY, GINI])
def test_each_dag_gets_what_a_call_on_it_alone_gives(method, criterion):
    rng = np.random.default_rng(METHODS[method] + 10 * criterion)
    sizes = [7, 0, 5, 9]  # the second DAG has no parent at this level
    table, wl, P, start = stacked(rng, sizes)
    phi = make_phi_table(int(P.sum()), criterion)
    costs, best_k, best_t = tree_costs(table, wl, P, phi, criterion)
    dags = np.array([3, 4, 8, 11])  # DAG ids (as in the ensemble), not positions
    for workers in (1, 2, 3):
        k, t, l, r, energy = optimise_level(start, dags, N_CHILDREN, table, wl, costs, P,
                                            best_k, best_t, BUDGET, METHODS[method], True,
                                            SEED, LEVEL, phi, criterion, workers)
        assert energy[1] == 0
        for g, (lo, hi) in enumerate(zip(start[:-1], start[1:])):
            if hi == lo:
                continue
            kg, tg, lg, rg, e, _ = alone(method, table[lo:hi], wl[lo:hi], costs[lo:hi],
                                         P[lo:hi], best_k[lo:hi], best_t[lo:hi], phi,
                                         criterion, dags[g])
            for got, want in zip((k, t, l, r), (kg, tg, lg, rg)):
                np.testing.assert_array_equal(got[lo:hi], want)
            assert energy[g] == e
            # a real level: edges into the DAG's own children, objective as recomputed
            assert l[lo:hi].min() >= 0 and max(l[lo:hi].max(), r[lo:hi].max()) < N_CHILDREN
            assert e == pytest.approx(objective_from_scratch(
                table[lo:hi], P[lo:hi], k[lo:hi], t[lo:hi], l[lo:hi], r[lo:hi], N_CHILDREN,
                phi, criterion), rel=1e-12, abs=1e-9)


def test_lsearch_streams_follow_the_dag_id_and_level_not_the_position():
    rng = np.random.default_rng(3)
    table, wl, P, start = stacked(rng, [8, 8])
    phi = make_phi_table(int(P.sum()), ENTROPY)
    costs, best_k, best_t = tree_costs(table, wl, P, phi, ENTROPY)
    method = METHODS["lsearch-stochastic"]

    def run(dags, level=LEVEL):
        return optimise_level(start, np.array(dags), N_CHILDREN, table, wl, costs, P, best_k,
                              best_t, BUDGET, method, True, SEED, level, phi, ENTROPY, 2)

    a = run([0, 1])
    # the first block's result depends on its DAG id only: give the id to the second block
    swapped = run([1, 0])
    b_alone = alone("lsearch-stochastic", table[8:], wl[8:], costs[8:], P[8:], best_k[8:],
                    best_t[8:], phi, ENTROPY, 0)
    np.testing.assert_array_equal(swapped[2][8:], b_alone[2])
    np.testing.assert_array_equal(a[2][8:], alone(
        "lsearch-stochastic", table[8:], wl[8:], costs[8:], P[8:], best_k[8:], best_t[8:],
        phi, ENTROPY, 1)[2])
    # every (DAG, level) has its own stream: some level gives some DAG different edges
    other = [run([0, 1], level) for level in range(LEVEL + 1, LEVEL + 6)]
    assert any(not np.array_equal(o[2], a[2]) or not np.array_equal(o[3], a[3])
               for o in other)
