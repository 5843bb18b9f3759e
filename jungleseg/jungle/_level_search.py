"""Optimising a merging level of every DAG at once: LSearch (``_lsearch``) or ClusterSearch
(``_clustersearch``) per DAG, one DAG per parallel task."""
import numpy as np
from numba import njit

from .._rng import derive
from .._workers import claim, run_workers
from ._clustersearch import clustersearch
from ._lsearch import lsearch

_LSEARCH_STREAM = 1  # key separating LSearch's random stream from the others
#: ``method`` codes of :func:`optimise_level`, by search name.
METHODS = {"lsearch": 0, "lsearch-stochastic": 1, "clustersearch": 2,
           "clustersearch-alternating": 3}


def optimise_level(dag_start, dags, n_children, table, wl, tree_cost, P, best_k, best_t,
                   budget, method, exact_moves, seed, level, phi_table, criterion, n_workers):
    """Splits and edges of one level of every DAG, one DAG per task, claimed by
    ``n_workers`` workers (:mod:`jungleseg._workers`).

    Parents of DAG ``g`` are ``dag_start[g]:dag_start[g + 1]``; ``budget`` is LSearch's
    sweeps or ClusterSearch's rounds; ``exact_moves`` is ClusterSearch's. Returns per
    parent the split (k, t) and edges (l, r) into its DAG's ``n_children`` children, and
    per DAG the objective.
    """
    n = P.shape[0]
    k = np.empty(n, np.int64)
    t = np.empty(n, np.int64)
    l = np.empty(n, np.int64)
    r = np.empty(n, np.int64)
    energy = np.zeros(dag_start.shape[0] - 1)
    run_workers(_optimise_level_worker, n_workers, dag_start, dags, n_children, table, wl,
                tree_cost, P, best_k, best_t, budget, method, exact_moves, seed, level,
                phi_table, criterion, k, t, l, r, energy)
    return k, t, l, r, energy


@njit(cache=True, nogil=True)
def _optimise_level_worker(dag_start, dags, n_children, table, wl, tree_cost, P, best_k,
                           best_t, budget, method, exact_moves, seed, level, phi_table,
                           criterion, k, t, l, r, energy, counter):
    """One worker of :func:`optimise_level`: claims DAGs from ``counter``."""
    while True:
        g = claim(counter)
        if g >= dag_start.shape[0] - 1:
            break
        _optimise_dag(g, dag_start, dags, n_children, table, wl, tree_cost, P, best_k,
                      best_t, budget, method, exact_moves, seed, level, phi_table,
                      criterion, k, t, l, r, energy)


@njit(cache=True)
def _optimise_dag(g, dag_start, dags, n_children, table, wl, tree_cost, P, best_k, best_t,
                  budget, method, exact_moves, seed, level, phi_table, criterion, k, t, l, r,
                  energy):
    """The search of DAG g's parents, written to its rows of k, t, l, r and energy."""
    lo = dag_start[g]
    hi = dag_start[g + 1]
    if hi == lo:
        return
    no_trace = np.zeros(0)
    if method >= 2:
        kg, tg, lg, rg, e, _ = clustersearch(table[lo:hi], wl[lo:hi], tree_cost[lo:hi],
                                             P[lo:hi], best_k[lo:hi], best_t[lo:hi],
                                             n_children, budget, method == 3, exact_moves,
                                             phi_table, criterion, no_trace)
    else:
        state = derive(seed, dags[g], level, _LSEARCH_STREAM, 0)
        kg, tg, lg, rg, e, _ = lsearch(table[lo:hi], wl[lo:hi], tree_cost[lo:hi], P[lo:hi],
                                       best_k[lo:hi], best_t[lo:hi], n_children, budget,
                                       method == 1, state, phi_table, criterion, no_trace)
    k[lo:hi] = kg
    t[lo:hi] = tg
    l[lo:hi] = lg
    r[lo:hi] = rg
    energy[g] = e
