"""Beyond the paper (issue 18), judged on held-out data: soft routing, split criteria and
auto-context on Stanford Background (k-fold), FASSEG (V2+V3 train, V2 test) and UCI.

Per option: mean Jaccard, pixel accuracy, log loss and Brier score (labelled test pixels;
probabilities as segmentation returns them, smoothing included), nodes, fit and segment
seconds; soft routing also split-node visits per pixel, Mpx/s of the traversal alone and
its time over the hard traversal's (timed in turn, best of 3); ``softcv`` chooses the
soft-routing factor and epsilon on held-back training images.
UCI: accuracy, balanced accuracy, log loss, nodes and fit seconds, on the paper's 50/50
splits and on one-class-against-the-rest sets (imbalanced).

    python benchmarks/beyond.py soft     [--data DIR] [--sets stanford fasseg kinect]
                                         [--folds 0 1 2 3 4]
    python benchmarks/beyond.py softcv   [--data DIR] [--sets stanford fasseg kinect]
    python benchmarks/beyond.py criteria [--data DIR] [--sets stanford fasseg uci]
    python benchmarks/beyond.py context  [--data DIR] [--sets stanford fasseg] [--stages 1 2]
    python benchmarks/beyond.py prior    [--data DIR] [--sets stanford fasseg uci] [--powers 0 0.3]

``prior`` fits each split once and scores its labels at every prior power (labels
maximising probability / training class share ** power), from one segmentation per image
(UCI: accuracy and balanced accuracy from one ``predict_proba``); Kinect's prior powers
are scored by ``benchmarks/kinect.py --prior-powers``. UCI runs take ``jungle.*``
overrides (JungleClassifier parameters).

``--set KEY=VALUE`` overrides the configs (as in benchmarks/stanford.py; ``seed=S`` adds S
to every split's seed, which is otherwise the split's index); ``--quick``
shrinks the segmentation runs to fit minutes on a shared 2-core machine (what it reduces is
printed and recorded with the figures in docs/results/accuracy.md).
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import KINECT_3_DAGS, scores_by_prior_power, warm_up, write_results  # noqa: E402

from jungleseg import JungleClassifier, confusion_matrix, scores, segment  # noqa: E402
from jungleseg.config import load_config, parse_overrides  # noqa: E402
from jungleseg.datasets.fasseg import paper_protocol  # noqa: E402
from jungleseg.datasets.kinect import render_frames  # noqa: E402
from jungleseg.datasets.stanford import kfold_splits, load_stanford  # noqa: E402
from jungleseg.datasets.uci import load_uci, paper_splits  # noqa: E402

CONFIGS = Path(__file__).resolve().parents[1] / "configs"
#: What --quick changes in the segmentation configs (fewer samples, candidates and levels).
QUICK = {"sampling.samples_per_image": 400, "jungle.n_candidate_features": 40,
         "jungle.max_depth": 18}
#: The (factor, epsilon) grid ``softcv`` tries on held-back training images.
SOFT_GRID = [(0.02, 0.1), (0.05, 0.03), (0.05, 0.1), (0.1, 0.1)]
#: The settings ``soft`` scores on the test images: hard routing and the grid.
SOFT_SETTINGS = [(0.0, 0.0), *SOFT_GRID]
#: ``softcv`` considers only settings whose held-back traversal takes less than this many
#: times the hard traversal (issue 18's cost budget for soft routing).
TIME_BUDGET = 2.0
#: Kinect frames: (per DAG, test) at full size and with --quick; training frames come from
#: seed 0 and test frames from seed 1, as in benchmarks/kinect.py.
KINECT_FRAMES = {False: (1000, 300), True: (150, 100)}
#: Label values that no score counts, per set (Kinect: background and invalid depth).
IGNORE = {"stanford": (255,), "fasseg": (255,), "kinect": (0, 255)}
#: The figures a run prints, by set, written to benchmarks/results/beyond_<what>.json.
FIGURES: dict = {}


def _record(r: dict) -> dict:
    """A row of figures as JSON values (numpy scalars as Python numbers, nan as null)."""
    out = {}
    for k, v in r.items():
        v = v.item() if hasattr(v, "item") else v
        out[k] = None if isinstance(v, float) and np.isnan(v) else v
    return out


def held_back(train: list) -> tuple[list, list]:
    """(fit, held): a split's training pairs less a seeded fifth, and that fifth, to choose
    settings on training images only."""
    order = np.random.default_rng(123).permutation(len(train))
    return ([train[i] for i in sorted(order[len(train) // 5:])],
            [train[i] for i in sorted(order[:len(train) // 5])])


def _folds(name: str, data: str | None, folds: list[int], quick: bool,
           validate: bool = False):
    """(config, [(train, test)]) of a segmentation set: images and labels per split; with
    ``validate``, each split's training pairs less a held-back fifth, and that fifth in
    place of the test pairs (:func:`held_back`)."""
    config, splits = _split_pairs(name, data, folds, quick)
    return config, [held_back(train) for train, _ in splits] if validate else splits


def _split_pairs(name: str, data: str | None, folds: list[int], quick: bool):
    if name == "stanford":
        pairs = {i: (im, lab) for i, im, lab in load_stanford(data)}
        splits = kfold_splits(list(pairs), k=5, seed=0)
        return "stanford.yaml", [([pairs[i] for i in splits[f][0]],
                                  [pairs[i] for i in splits[f][1]]) for f in folds]
    if name == "kinect":
        per_dag, n_test = KINECT_FRAMES[quick]
        depth, labels = render_frames(3 * per_dag, seed=0)
        test_depth, test_labels = render_frames(n_test, seed=1)
        return "kinect.yaml", [(list(zip(depth, labels)), list(zip(test_depth, test_labels)))]
    train, test = paper_protocol(data)
    if quick:  # every V2 face, every other V3 head
        train = train[:20] + train[20::2]
    return "fasseg.yaml", [([(im, lab) for _, im, lab in train],
                            [(im, lab) for _, im, lab in test])]


def _estimator(config: str, overrides: dict, split: int):
    """The config's estimator with the overrides; its seed is the split's index plus
    ``--seed``."""
    seed = split + int(overrides.get("seed", 0))
    return load_config(CONFIGS / config).with_overrides({**overrides, "seed": seed}).estimator()


def probability_scores(labels, proba, classes, ignore=(255,)) -> dict:
    """Log loss (natural log, probabilities floored at 1e-6) and Brier score (sum over
    classes of squared error) over the labelled pixels."""
    losses, briers = [], []
    index = {int(c): k for k, c in enumerate(classes)}
    for lab, p in zip(labels, proba):
        keep = ~np.isin(lab.ravel(), ignore)
        y = np.array([index[int(v)] for v in np.unique(lab.ravel()[keep])])
        lookup = np.zeros(256, np.int64)
        lookup[np.unique(lab.ravel()[keep])] = y
        truth = lookup[lab.ravel()[keep]]
        p = p.reshape(-1, p.shape[-1])[keep].astype(np.float64)
        losses.append(-np.log(np.maximum(p[np.arange(truth.size), truth], 1e-6)))
        onehot = np.zeros_like(p)
        onehot[np.arange(truth.size), truth] = 1
        briers.append(((p - onehot) ** 2).sum(axis=1))
    return {"log_loss": float(np.concatenate(losses).mean()),
            "brier": float(np.concatenate(briers).mean())}


def judge(jungle, test, ignore=(255,), **routing) -> dict:
    """Scores of one model on test pairs (label values in ``ignore`` not counted), segment
    seconds and Mpx/s."""
    start = time.perf_counter()
    out = [segment(jungle, im, **routing) for im, _ in test]
    seconds = time.perf_counter() - start
    labels = [lab for _, lab in test]
    s = scores(confusion_matrix(labels, [o[0] for o in out], jungle.classes, ignore))
    pixels = sum(lab.size for lab in labels)
    return {"jaccard": s.mean_jaccard, "accuracy": s.pixel_accuracy,
            "balanced": s.mean_class_accuracy,
            **probability_scores(labels, [o[1] for o in out], jungle.classes, ignore),
            "segment_s": seconds, "mpx_s": pixels / seconds / 1e6}


def judge_routings(jungle, test, settings, ignore=(255,)) -> list[dict]:
    """:func:`judge` of each (factor, epsilon) setting, each test image's channels prepared
    once for all settings; ``segment_s`` and ``mpx_s`` then cover traversal and smoothing."""
    from jungleseg.segmentation import segment_prepared

    conf = [0 for _ in settings]
    sums = [{"log_loss": 0.0, "brier": 0.0, "n": 0, "segment_s": 0.0} for _ in settings]
    for im, lab in test:
        store = jungle.family.prepare([im], pad=jungle.point_reach or 0)
        for k, (soft, eps) in enumerate(settings):
            start = time.perf_counter()
            labels, proba = segment_prepared(jungle, store, 0, soft=soft, soft_epsilon=eps)
            sums[k]["segment_s"] += time.perf_counter() - start
            conf[k] = conf[k] + confusion_matrix([lab], [labels], jungle.classes, ignore)
            count = int(np.sum(~np.isin(lab, ignore)))
            if not count:
                continue
            p = probability_scores([lab], [proba], jungle.classes, ignore)
            sums[k]["log_loss"] += p["log_loss"] * count
            sums[k]["brier"] += p["brier"] * count
            sums[k]["n"] += count
    pixels = sum(lab.size for _, lab in test)
    out = []
    for c, t in zip(conf, sums):
        sc = scores(c)
        out.append({"jaccard": sc.mean_jaccard, "accuracy": sc.pixel_accuracy,
                    "log_loss": t["log_loss"] / t["n"], "brier": t["brier"] / t["n"],
                    "segment_s": t["segment_s"], "mpx_s": pixels / t["segment_s"] / 1e6})
    return out


def _fitted(name: str, config: str, overrides: dict, split: int, train, models, tag: str):
    """The split's fitted estimator's jungle and fit seconds; with ``models`` (a folder)
    loaded from ``<models>/<name>_<tag>.h5`` where a previous run saved it (fit seconds
    then nan), else fitted and saved there."""
    from jungleseg import load_model, save_model

    path = Path(models) / f"{name}_{tag}.h5" if models else None
    if path is not None and path.exists():
        return load_model(path), float("nan")
    model = _estimator(config, overrides, split)
    start = time.perf_counter()
    model.fit([im for im, _ in train], [lab for _, lab in train])
    fit_s = time.perf_counter() - start
    if path is not None:
        save_model(model.jungle_, path)
    return model.jungle_, fit_s


def traversal(jungle, test, settings, n: int = 4, repeats: int = 3) -> list[tuple]:
    """(split-node visits per pixel, Mpx/s, time / hard time) of hard routing and then of
    each (factor, epsilon) setting: the traversal alone (channels prepared beforehand) on
    the first ``n`` test images (their foreground pixels for a depth model). Hard routing
    and the settings are timed in turn, ``repeats`` times, and each keeps its best time, so
    that a shared machine's load hits them alike."""
    stores = [jungle.family.prepare([im], pad=jungle.point_reach or 0) for im, _ in test[:n]]
    # a depth model classifies foreground pixels only, as segment does
    listed = [np.flatnonzero(np.asarray(im) > 0) if jungle.family.name == "depth" else None
              for im, _ in test[:n]]
    runs = [(0.0, 0.0), *settings]
    best, visits = [np.inf] * len(runs), [0.0] * len(runs)
    pixels = sum(int(s.height[0]) * int(s.width[0]) if index is None else index.size
                 for s, index in zip(stores, listed))
    for r in range(repeats + 1):  # the first round compiles or loads the kernel
        for k, (soft, eps) in enumerate(runs):
            total = 0
            start = time.perf_counter()
            for store, index in zip(stores, listed):
                counts = {}
                jungle.classify_image(store, 0, index, False, soft=soft, epsilon=eps,
                                      counts=counts)
                total += counts["visits"]
            if r:
                best[k] = min(best[k], time.perf_counter() - start)
            visits[k] = total / pixels
    return [(visits[k], pixels / best[k] / 1e6, best[k] / best[0]) for k in range(len(runs))]


def _row(prefix: str, r: dict) -> str:
    balanced = f"balanced {100 * r['balanced']:5.1f} % " if "balanced" in r else ""
    return (f"{prefix} J {r['jaccard']:.3f} acc {100 * r['accuracy']:5.1f} % {balanced}"
            f"logloss {r['log_loss']:.3f} brier {r['brier']:.3f} "
            + " ".join(f"{k} {v:.2f}" if isinstance(v, float) else f"{k} {v}"
                       for k, v in r.items()
                       if k not in ("jaccard", "accuracy", "balanced", "log_loss", "brier")))


def _mean(rows: list[dict]) -> dict:
    return {k: float(np.mean([r[k] for r in rows])) for k in rows[0]}


def _for_set(name: str, overrides: dict, train) -> dict:
    """The overrides for one set's training pairs: Kinect's 3 DAGs of depth 20, unsmoothed,
    labelled by the most probable part (:data:`KINECT_3_DAGS`, the config when these
    comparisons were made), share its frames."""
    if name == "kinect":
        return {**KINECT_3_DAGS, **overrides, "sampling.images_per_dag": len(train) // 3}
    return overrides


def run_soft(args, overrides) -> None:
    for name in args.sets:
        config, splits = _folds(name, args.data, args.folds, args.quick)
        table = {}
        for f, (train, test) in enumerate(splits):
            test = test[:args.test_images]
            jungle, fit_s = _fitted(name, config, _for_set(name, overrides, train), f, train,
                                    args.models, f"split{args.folds[f]}")
            print(f"{name} split {f}: nodes {jungle.node_count} fit {fit_s:.1f} s", flush=True)
            settings = SOFT_SETTINGS
            costs = traversal(jungle, test, settings[1:])
            print("  traversal (visits/px, Mpx/s, time/hard):", costs, flush=True)
            split = {"split": args.folds[f], "nodes": int(jungle.node_count),
                     "fit_s": None if np.isnan(fit_s) else fit_s, "settings": []}
            FIGURES.setdefault(name, {"splits": []})["splits"].append(split)
            for (soft, eps), cost, r in zip(settings, costs,
                                            judge_routings(jungle, test, settings,
                                                           IGNORE[name])):
                r["visits_px"], r["traverse_mpx_s"], r["time_vs_hard"] = cost
                table.setdefault((soft, eps), []).append(r)
                print(_row(f"  soft {soft:<5} eps {eps:<6}", r), flush=True)
                split["settings"].append({"soft": soft, "soft_epsilon": eps, **_record(r)})
        print(f"{name}: mean over {len(splits)} split(s)")
        for (soft, eps), rows in table.items():
            print(_row(f"  soft {soft:<5} eps {eps:<6}", _mean(rows)), flush=True)
            FIGURES[name].setdefault("mean", []).append(
                {"soft": soft, "soft_epsilon": eps, **_record(_mean(rows))})


def run_softcv(args, overrides) -> None:
    """Choose the soft-routing factor and epsilon on training images only: fit on the
    training images of the first split but a held-back fifth (seeded), score every
    :data:`SOFT_GRID` setting on that fifth (at most 40 of its images), and pick the
    lowest log loss among the settings that traverse the held-back images in less than
    :data:`TIME_BUDGET` times the hard time and lower the log loss of hard routing (hard
    routing if none does). The test images are never read."""
    for name in args.sets:
        config, splits = _folds(name, args.data, args.folds[:1], args.quick)
        fit, held = held_back(splits[0][0])
        held = held[:40]
        jungle, fit_s = _fitted(name, config, _for_set(name, overrides, fit), 0, fit,
                                args.models, "cv")
        print(f"{name}: fit on {len(fit)} training images, scored on {len(held)} held back "
              f"(nodes {jungle.node_count}, fit {fit_s:.1f} s)", flush=True)
        settings = [(0.0, 0.0), *SOFT_GRID]
        rows = {}
        costs = traversal(jungle, held, SOFT_GRID, n=2, repeats=2)
        print("  traversal (visits/px, Mpx/s, time/hard):", costs, flush=True)
        for k, cost, r in zip(settings, costs,
                              judge_routings(jungle, held, settings, IGNORE[name])):
            r["visits_px"], r["traverse_mpx_s"], r["time_vs_hard"] = cost
            rows[k] = r
            print(_row(f"  soft {k[0]:<5} eps {k[1]:<6}", r), flush=True)
        FIGURES[name] = {"fit_images": len(fit), "held_back_images": len(held),
                         "nodes": int(jungle.node_count),
                         "fit_s": None if np.isnan(fit_s) else fit_s,
                         "settings": [{"soft": k[0], "soft_epsilon": k[1], **_record(r)}
                                      for k, r in rows.items()], "chosen": None}
        hard = rows.pop((0.0, 0.0))
        within = {k: r for k, r in rows.items()
                  if r["time_vs_hard"] < TIME_BUDGET and r["log_loss"] < hard["log_loss"]}
        if not within:
            print(f"{name}: no setting lowers the log loss within {TIME_BUDGET}x the hard "
                  "time: hard routing", flush=True)
            continue
        soft, eps = min(within, key=lambda k: within[k]["log_loss"])
        FIGURES[name]["chosen"] = {"soft": soft, "soft_epsilon": eps}
        print(f"{name}: chosen soft {soft} soft_epsilon {eps} (log loss "
              f"{hard['log_loss']:.3f} -> {within[soft, eps]['log_loss']:.3f}; "
              f"{len(rows) - len(within)} setting(s) over {TIME_BUDGET}x the hard time or "
              "not lower)", flush=True)


def run_context(args, overrides) -> None:
    for name in args.sets:
        config, splits = _folds(name, args.data, args.folds, args.quick, args.held_back)
        for stages in args.stages:
            rows = []
            for f, (train, test) in enumerate(splits):
                model = _estimator(config, {**overrides, "jungle.auto_context": stages}, f)
                start = time.perf_counter()
                model.fit([im for im, _ in train], [lab for _, lab in train])
                r = {**judge(model.jungle_, test, IGNORE[name]),
                     "fit_s": time.perf_counter() - start, "nodes": model.node_count_}
                rows.append(r)
                print(_row(f"{name} stages {stages} split {f}", r), flush=True)
            print(_row(f"{name} stages {stages} MEAN", _mean(rows)), flush=True)
            FIGURES.setdefault(name, {})[f"stages_{stages}"] = {
                "splits": [_record(r) for r in rows], "mean": _record(_mean(rows))}


def _uci_prior(args, overrides) -> None:
    """UCI sets: accuracy and balanced accuracy of each split's classifier at every prior
    power, from one ``predict_proba``."""
    from sklearn.metrics import balanced_accuracy_score

    from jungleseg.segmentation import with_inference

    for name, X, y in _uci_sets(args.data):
        table = {}
        for r, (train, test) in enumerate(paper_splits(len(y), args.repeats)):
            clf = _uci_classifier(overrides, random_state=r).fit(X[train], y[train])
            proba = clf.predict_proba(X[test])
            for power in args.powers:
                chosen = with_inference(clf.jungle_, prior_power=power).label_indices(proba)
                pred = clf.classes_[chosen]
                table.setdefault(power, []).append(
                    (np.mean(pred == y[test]), balanced_accuracy_score(y[test], pred)))
        for power, rows in table.items():
            accuracy, balanced = np.mean(rows, axis=0)
            print(f"{name:18s} prior power {power:<4}  acc {100 * accuracy:6.2f} balanced "
                  f"{100 * balanced:6.2f}", flush=True)
            FIGURES.setdefault(name, {})[str(power)] = {"accuracy": float(accuracy),
                                                        "balanced": float(balanced)}


def run_prior(args, overrides) -> None:
    for name in args.sets:
        if name == "uci":
            _uci_prior(args, overrides)
            continue
        if name == "kinect":
            raise SystemExit("prior: for kinect see benchmarks/kinect.py --prior-powers")
        config, splits = _folds(name, args.data, args.folds, args.quick, args.held_back)
        table = {}
        for f, (train, test) in enumerate(splits):
            model = _estimator(config, overrides, f)
            start = time.perf_counter()
            model.fit([im for im, _ in train], [lab for _, lab in train])
            fit_s = time.perf_counter() - start
            by_power = scores_by_prior_power(model.jungle_, [im for im, _ in test],
                                             [lab for _, lab in test], args.powers,
                                             IGNORE[name])
            print(f"{name} split {f}: nodes {model.node_count_} fit {fit_s:.1f} s", flush=True)
            FIGURES.setdefault(name, {"splits": []})["splits"].append(
                {"split": f, "nodes": int(model.node_count_), "fit_s": fit_s,
                 "by_prior_power": {str(power): {"mean_jaccard": s.mean_jaccard,
                                                 "pixel_accuracy": s.pixel_accuracy}
                                    for power, s in by_power.items()}})
            for power, s in by_power.items():
                table.setdefault(power, []).append(s)
                print(f"  prior power {power:<4}  mean Jaccard {s.mean_jaccard:.4f}  pixel acc "
                      f"{100 * s.pixel_accuracy:5.1f} %", flush=True)
        print(f"{name}: mean over {len(splits)} split(s)")
        for power, rows in table.items():
            jaccard = [s.mean_jaccard for s in rows]
            print(f"  prior power {power:<4}  mean Jaccard {np.mean(jaccard):.4f} +- "
                  f"{np.std(jaccard):.3f}  pixel acc "
                  f"{100 * np.mean([s.pixel_accuracy for s in rows]):5.1f} %", flush=True)
            FIGURES[name].setdefault("mean", {})[str(power)] = {
                "mean_jaccard": float(np.mean(jaccard)), "std_jaccard": float(np.std(jaccard)),
                "pixel_accuracy": float(np.mean([s.pixel_accuracy for s in rows]))}


def _uci_sets(data):
    """(name, X, y) of the multi-class UCI sets and of one-vs-rest sets made from them
    (the rarest class of each, about 4 to 10 % of the rows, against the rest)."""
    for name in ("satimage", "pendigits", "letter"):
        X, y = load_uci(name, data)
        yield name, X, y
        values, counts = np.unique(y, return_counts=True)
        rare = values[np.argmin(counts)]
        yield f"{name}-1vr({rare})", X, (y == rare).astype(int)


def _uci_classifier(overrides: dict, **params) -> JungleClassifier:
    """The UCI comparisons' classifier (8 DAGs, M = 128) with ``params`` and the
    ``jungle.*`` overrides; SystemExit for overrides a classifier does not take."""
    other = [k for k in overrides if not k.startswith("jungle.") and k != "seed"]
    if other:
        raise SystemExit(f"UCI runs take jungle.* overrides only, not {', '.join(other)}")
    return JungleClassifier(**{"n_estimators": 8, "max_width": 128, **params,
                               **{k[len("jungle."):]: v for k, v in overrides.items()
                                  if k.startswith("jungle.")}})


def run_criteria(args, overrides) -> None:
    from sklearn.metrics import balanced_accuracy_score, log_loss

    criteria = ("entropy", "gini", "hellinger", "dgmml")
    if "uci" in args.sets:
        for name, X, y in _uci_sets(args.data):
            for criterion in criteria:
                rows = []
                for r, (train, test) in enumerate(paper_splits(len(y), args.repeats)):
                    clf = _uci_classifier(overrides, criterion=criterion, random_state=r)
                    start = time.perf_counter()
                    clf.fit(X[train], y[train])
                    fit_s = time.perf_counter() - start
                    proba = clf.predict_proba(X[test])
                    pred = clf.predict(X[test])
                    rows.append({"accuracy": float(np.mean(pred == y[test])),
                                 "balanced": balanced_accuracy_score(y[test], pred),
                                 "log_loss": log_loss(y[test], np.clip(proba, 1e-6, 1),
                                                      labels=clf.classes_),
                                 "nodes": clf.node_count_, "fit_s": fit_s})
                m = _mean(rows)
                print(f"{name:18s} {criterion:9s} acc {100 * m['accuracy']:6.2f} balanced "
                      f"{100 * m['balanced']:6.2f} logloss {m['log_loss']:.3f} nodes "
                      f"{m['nodes']:7.0f} fit {m['fit_s']:6.2f} s", flush=True)
                FIGURES.setdefault(name, {})[criterion] = {
                    "splits": [_record(r) for r in rows], "mean": _record(m)}
    for name in [s for s in args.sets if s != "uci"]:
        config, splits = _folds(name, args.data, args.folds, args.quick, args.held_back)
        for criterion in criteria:
            rows = []
            for f, (train, test) in enumerate(splits):
                model = _estimator(config, {**_for_set(name, overrides, train),
                                             "jungle.criterion": criterion}, f)
                start = time.perf_counter()
                model.fit([im for im, _ in train], [lab for _, lab in train])
                rows.append({**judge(model.jungle_, test, IGNORE[name]),
                             "fit_s": time.perf_counter() - start, "nodes": model.node_count_})
                print(_row(f"{name} {criterion} split {f}", rows[-1]), flush=True)
            print(_row(f"{name} {criterion} MEAN", _mean(rows)), flush=True)
            FIGURES.setdefault(name, {})[criterion] = {
                "splits": [_record(r) for r in rows], "mean": _record(_mean(rows))}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("what", choices=("soft", "softcv", "criteria", "context", "prior"))
    parser.add_argument("--data", default=None)
    parser.add_argument("--sets", nargs="+", default=["stanford", "fasseg"],
                        choices=("stanford", "fasseg", "kinect", "uci"))
    parser.add_argument("--folds", type=int, nargs="+", default=[0, 1, 2, 3, 4])
    parser.add_argument("--stages", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--repeats", type=int, default=3, help="UCI splits")
    parser.add_argument("--powers", type=float, nargs="+",
                        default=[0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.75, 1.0],
                        help="prior: the prior powers scored")
    parser.add_argument("--quick", action="store_true", help=f"segmentation: {QUICK}")
    parser.add_argument("--set", nargs="*", default=[], metavar="KEY=VALUE")
    parser.add_argument("--test-images", type=int, default=None, metavar="N",
                        help="soft: score the first N test images only")
    parser.add_argument("--held-back", action="store_true",
                        help="context, criteria, prior: score on a held-back fifth of each "
                             "split's training images, not its test images (to choose "
                             "settings)")
    parser.add_argument("--models", default=None, metavar="DIR",
                        help="soft, softcv: keep fitted models here and reuse them")
    args = parser.parse_args()
    overrides = {**(QUICK if args.quick else {}), **parse_overrides(args.set)}
    print(f"overrides: {overrides}", flush=True)
    warm_up()
    {"soft": run_soft, "softcv": run_softcv, "criteria": run_criteria,
     "context": run_context, "prior": run_prior}[args.what](
        args, overrides)
    write_results(f"beyond_{args.what}", {
        "overrides": overrides, "quick": args.quick, "folds": args.folds,
        "held_back": args.held_back, "test_images": args.test_images,
        "uci_repeats": args.repeats, "sets": FIGURES})


if __name__ == "__main__":
    main()
