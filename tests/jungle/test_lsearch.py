"""LSearch on tiny levels, checked against brute force and recomputation."""
import numpy as np
import pytest

from jungleseg.jungle import _lsearch
from jungleseg.jungle._criterion import (
    ENTROPY,
    GINI,
    HELLINGER,
    best_threshold,
    hist_cost,
    make_phi_table,
)


def make_level(rng, n_parents=6, n_cand=3, n_thr=4, n_classes=4, size=(8, 30)):
    """Consistent tables: each candidate orders a parent's samples, thresholds cut them."""
    n_classes_used = n_classes
    table = np.zeros((n_parents, n_cand, n_thr, n_classes), np.int32)
    P = np.zeros((n_parents, n_classes), np.int64)
    for i in range(n_parents):
        labels = rng.integers(0, n_classes_used, rng.integers(*size))
        P[i] = np.bincount(labels, minlength=n_classes)
        for k in range(n_cand):
            perm = rng.permutation(labels)
            cuts = np.sort(rng.integers(1, len(labels), n_thr))
            for t, cut in enumerate(cuts):
                table[i, k, t] = np.bincount(perm[:cut], minlength=n_classes)
    wl = table.sum(axis=3).astype(np.int64)
    return table, wl, P


def tree_costs(table, wl, P, phi, criterion, min_leaf=1):
    n, K, T, _ = table.shape
    costs = np.full((n, K, T), np.inf)
    best_k = np.zeros(n, np.int64)
    best_t = np.zeros(n, np.int64)
    for i in range(n):
        best = np.inf
        for k in range(K):
            t, c = best_threshold(table[i, k].astype(np.int64), wl[i, k], P[i], min_leaf, phi,
                                  criterion, costs[i, k])
            if c < best:
                best, best_k[i], best_t[i] = c, k, t
    return costs, best_k, best_t


def objective_from_scratch(table, P, k, t, l, r, n_children, phi, criterion):
    H = np.zeros((n_children, P.shape[1]), np.int64)
    for i in range(P.shape[0]):
        H[l[i]] += table[i, k[i], t[i]]
        H[r[i]] += P[i] - table[i, k[i], t[i]]
    return sum(hist_cost(H[j], phi, criterion) for j in range(n_children))


def initial_state(table, wl, P, n_children, phi, criterion):
    costs, best_k, best_t = tree_costs(table, wl, P, phi, criterion)
    wP = P.sum(axis=1)
    supp, nsupp = _lsearch.class_support(P)
    k, t = best_k.copy(), best_t.copy()
    l, r, L, H, nH, S, f = _lsearch.greedy_init(table, wl, P, wP, supp, nsupp, k, t,
                                                n_children, phi, criterion)
    order, n_scan = _lsearch.scan_orders(costs, wl)
    return dict(table=table, wl=wl, tree_cost=costs, cand_order=order, n_scan=n_scan, P=P, wP=wP,
                supp=supp, nsupp=nsupp, k=k, t=t, l=l, r=r, L=L, H=H, nH=nH, S=S, f=f)


def call_split(i, s, phi, criterion):
    return _lsearch.split_step(i, s["table"], s["wl"], s["tree_cost"], s["cand_order"],
                               s["n_scan"], s["P"], s["wP"], s["supp"], s["nsupp"], s["k"],
                               s["t"], s["l"], s["r"], s["L"], s["H"], s["nH"], s["S"], s["f"],
                               phi, criterion)


def call_branch(i, side, s, phi, criterion):
    return _lsearch.branch_step(i, side, s["P"], s["wP"], s["supp"], s["nsupp"], s["wl"], s["k"],
                                s["t"], s["l"], s["r"], s["L"], s["H"], s["nH"], s["S"], s["f"],
                                phi, criterion)


@pytest.mark.parametrize("criterion", [ENTROPY, GINI, HELLINGER])
@pytest.mark.parametrize("seed", range(5))
def test_objective_never_rises_and_matches_recomputation(criterion, seed):
    rng = np.random.default_rng(seed)
    table, wl, P = make_level(rng)
    phi = make_phi_table(int(P.sum()), criterion)
    costs, best_k, best_t = tree_costs(table, wl, P, phi, criterion)
    trace = np.full(200, np.nan)
    k, t, l, r, e, steps = _lsearch.lsearch(table, wl, costs, P, best_k, best_t, 5, 20, False,
                                            np.uint64(seed), phi, criterion, trace)
    assert steps > 0
    trace = trace[:steps]
    start = objective_from_scratch(table, P, best_k, best_t, *_greedy_edges(table, wl, P, 5, phi,
                                                                            criterion), 5, phi,
                                   criterion)
    diffs = np.diff(np.concatenate([[start], trace]))
    assert np.all(diffs <= 1e-9 * max(1.0, start))
    assert e == pytest.approx(objective_from_scratch(table, P, k, t, l, r, 5, phi, criterion),
                              rel=1e-12, abs=1e-9)


@pytest.mark.parametrize("criterion", [ENTROPY, GINI, HELLINGER])
def test_sweeps_improve_on_greedy_start_of_a_crowded_level(criterion):
    rng = np.random.default_rng(11)
    table, wl, P = make_level(rng, n_parents=30, n_cand=4, n_thr=6, n_classes=6)
    phi = make_phi_table(int(P.sum()), criterion)
    costs, best_k, best_t = tree_costs(table, wl, P, phi, criterion)
    start = objective_from_scratch(table, P, best_k, best_t,
                                   *_greedy_edges(table, wl, P, 12, phi, criterion), 12, phi,
                                   criterion)
    *_, e, steps = _lsearch.lsearch(table, wl, costs, P, best_k, best_t, 12, 50, False,
                                    np.uint64(0), phi, criterion, np.zeros(0))
    assert e < start - 1e-6
    assert steps < 50 * 30  # converged before the budget ran out


def _greedy_edges(table, wl, P, n_children, phi, criterion):
    s = initial_state(table, wl, P, n_children, phi, criterion)
    return s["l"], s["r"]


@pytest.mark.parametrize("criterion", [ENTROPY, GINI, HELLINGER])
@pytest.mark.parametrize("seed", range(6))
def test_branch_step_picks_best_child_by_brute_force(criterion, seed):
    rng = np.random.default_rng(100 + seed)
    table, wl, P = make_level(rng, n_parents=7)
    n_children = 6
    phi = make_phi_table(int(P.sum()), criterion)
    s = initial_state(table, wl, P, n_children, phi, criterion)
    for i in range(len(P)):
        for side in (0, 1):
            edges = s["l"] if side == 0 else s["r"]
            energies = []
            for j in range(n_children):
                trial = edges.copy()
                trial[i] = j
                l, r = (trial, s["r"]) if side == 0 else (s["l"], trial)
                energies.append(objective_from_scratch(table, P, s["k"], s["t"], l, r,
                                                       n_children, phi, criterion))
            before = edges[i]
            current = energies[before]
            delta = call_branch(i, side, s, phi, criterion)
            after = edges[i]
            best = min(energies)
            if best < current - 1e-9:
                assert energies[after] == pytest.approx(best, abs=1e-9)
                assert delta == pytest.approx(best - current, abs=1e-9)
            else:
                assert after == before and delta == 0.0
            # the kept state stays consistent with the edges
            ref = objective_from_scratch(table, P, s["k"], s["t"], s["l"], s["r"], n_children,
                                         phi, criterion)
            assert s["f"].sum() == pytest.approx(ref, abs=1e-9)


@pytest.mark.parametrize("seed", range(4))
def test_scan_order_is_stable_cost_order_without_invalid_or_repeated_thresholds(seed):
    rng = np.random.default_rng(300 + seed)
    table, wl, P = make_level(rng, n_parents=8, n_cand=3, n_thr=6, size=(3, 12))
    phi = make_phi_table(int(P.sum()), ENTROPY)
    costs, _, _ = tree_costs(table, wl, P, phi, ENTROPY, min_leaf=2)
    order, n_scan = _lsearch.scan_orders(costs, wl)
    repeats = 0
    for i in range(len(P)):
        flat = costs[i].ravel()
        repeated = np.zeros_like(wl[i], bool)
        repeated[:, 1:] = wl[i, :, 1:] == wl[i, :, :-1]
        repeats += repeated.sum()
        keep = np.isfinite(flat) & ~repeated.ravel()
        expected = np.argsort(flat, kind="stable")
        np.testing.assert_array_equal(order[i, :n_scan[i]], expected[keep[expected]])
    assert repeats > 0 and np.isinf(costs).any()  # both kinds were left out somewhere


@pytest.mark.parametrize("criterion", [ENTROPY, GINI, HELLINGER])
@pytest.mark.parametrize("seed", range(4))
def test_split_steps_on_the_scan_order_equal_steps_over_every_candidate(criterion, seed):
    """Leaving invalid and repeated thresholds out of the scan changes no step."""
    rng = np.random.default_rng(400 + seed)
    table, wl, P = make_level(rng, n_parents=9, n_cand=3, n_thr=8, size=(4, 16))
    phi = make_phi_table(int(P.sum()), criterion)
    pruned = initial_state(table, wl, P, 6, phi, criterion)
    full = {name: a.copy() for name, a in pruned.items()}
    m = wl.shape[1] * wl.shape[2]
    full["cand_order"] = np.stack([np.argsort(c.ravel(), kind="stable")
                                   for c in full["tree_cost"]])
    full["n_scan"] = np.full(len(P), m)
    assert (pruned["n_scan"] < m).any()
    for sweep in range(3):
        for i in range(len(P)):
            d_pruned = call_split(i, pruned, phi, criterion)
            d_full = call_split(i, full, phi, criterion)
            assert d_pruned == d_full
            for side in range(2):
                call_branch(i, side, pruned, phi, criterion)
                call_branch(i, side, full, phi, criterion)
            for name in ("k", "t", "l", "r", "H", "f"):
                np.testing.assert_array_equal(pruned[name], full[name])


@pytest.mark.parametrize("criterion", [ENTROPY, GINI, HELLINGER])
@pytest.mark.parametrize("seed", range(6))
def test_split_step_picks_best_split_by_brute_force(criterion, seed):
    rng = np.random.default_rng(200 + seed)
    table, wl, P = make_level(rng, n_parents=7)
    n_children = 5
    phi = make_phi_table(int(P.sum()), criterion)
    s = initial_state(table, wl, P, n_children, phi, criterion)
    for i in range(len(P)):
        K, T = wl.shape[1:]
        energies = np.full((K, T), np.inf)
        for kk in range(K):
            for tt in range(T):
                if wl[i, kk, tt] < 1 or P[i].sum() - wl[i, kk, tt] < 1:
                    continue
                k, t = s["k"].copy(), s["t"].copy()
                k[i], t[i] = kk, tt
                energies[kk, tt] = objective_from_scratch(table, P, k, t, s["l"], s["r"],
                                                          n_children, phi, criterion)
        current = energies[s["k"][i], s["t"][i]]
        call_split(i, s, phi, criterion)
        chosen = energies[s["k"][i], s["t"][i]]
        if s["l"][i] == s["r"][i]:
            assert chosen == current  # split irrelevant: left alone
        else:
            assert chosen == pytest.approx(energies.min(), abs=1e-9)


@pytest.mark.parametrize("criterion", [ENTROPY, GINI, HELLINGER])
def test_wide_level_equals_tree_level(criterion):
    rng = np.random.default_rng(7)
    table, wl, P = make_level(rng, n_parents=5)
    phi = make_phi_table(int(P.sum()), criterion)
    costs, best_k, best_t = tree_costs(table, wl, P, phi, criterion)
    for n_children in (10, 13):
        k, t, l, r, e, _ = _lsearch.lsearch(table, wl, costs, P, best_k, best_t, n_children, 50,
                                            False, np.uint64(0), phi, criterion, np.zeros(0))
        np.testing.assert_array_equal(k, best_k)
        np.testing.assert_array_equal(t, best_t)
        edges = np.concatenate([l, r])
        assert len(np.unique(edges)) == 2 * len(P)  # no two edges share a child
        tree = sum(costs[i, best_k[i], best_t[i]] for i in range(len(P)))
        assert e == pytest.approx(tree, rel=1e-12)


def test_stochastic_variant_improves_and_is_reproducible():
    rng = np.random.default_rng(3)
    table, wl, P = make_level(rng, n_parents=12, n_cand=4, n_thr=6)
    phi = make_phi_table(int(P.sum()), ENTROPY)
    costs, best_k, best_t = tree_costs(table, wl, P, phi, ENTROPY)
    runs = [_lsearch.lsearch(table, wl, costs, P, best_k, best_t, 8, 20, True, np.uint64(5),
                             phi, ENTROPY, np.zeros(0)) for _ in range(2)]
    for a, b in zip(runs[0][:4], runs[1][:4]):
        np.testing.assert_array_equal(a, b)
    full = _lsearch.lsearch(table, wl, costs, P, best_k, best_t, 8, 20, False, np.uint64(5),
                            phi, ENTROPY, np.zeros(0))
    start = objective_from_scratch(table, P, best_k, best_t,
                                   *_greedy_edges(table, wl, P, 8, phi, ENTROPY), 8, phi, ENTROPY)
    assert runs[0][4] <= start
    assert full[4] <= start


@pytest.mark.parametrize("criterion", [ENTROPY, GINI, HELLINGER])
def test_equivalent_states_do_not_make_a_move_cycle(criterion):
    # every histogram proportional to (1, 2): every state has the same objective, so no
    # move gains anything, and rounding must not make one look like a gain
    rng = np.random.default_rng(5)
    n, K, T = 40, 3, 5
    m = rng.integers(10, 60, n)
    P = np.stack([m, 2 * m], axis=1).astype(np.int64)
    a = np.sort(rng.integers(1, m[:, None, None], (n, K, T)), axis=2)
    table = np.stack([a, 2 * a], axis=3).astype(np.int32)
    wl = table.sum(axis=3).astype(np.int64)
    phi = make_phi_table(int(P.sum()), criterion)
    costs, best_k, best_t = tree_costs(table, wl, P, phi, criterion)
    *_, steps = _lsearch.lsearch(table, wl, costs, P, best_k, best_t, 16, 50, False,
                                 np.uint64(0), phi, criterion, np.zeros(0))
    assert steps == n  # one sweep that changes nothing
