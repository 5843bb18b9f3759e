"""Jungles on small devices: our C export against emlearn's C export of a scikit-learn
random forest of about the same accuracy, and the Kinect frame rate from C.

For letter and pendigits (the paper's 50/50 split 0), jungle and forest are matched
without the test half: models train on three quarters of the training half, the target is
the accuracy on the last quarter of a reference jungle (8 DAGs of width 128), and each
family's smallest model within 0.25 points of it is retrained on the whole training half:
the jungle of fewest nodes with 1 to 8 DAGs (of width 128, or of each width ``--widths``
gives), the forest of fewest trees (4 or more, grown to purity). The jungle is exported
four ways: float and quantised (8-bit thresholds: exact on these whole-number columns),
each as packed tables walked by a loop (``style='tables'``) and as code
(``style='inline'``). emlearn exports
the forest as 'inline' code with float features, and as 'inline' code and 'loadable'
tables with its default int16 features (which truncate scikit-learn's half-integer thresholds,
``x <= 7.5`` becoming ``x < 7``; only emlearn exports within 0.5 points of the forest's
own accuracy are compared). Measured:

- flash: text + data of the object file compiled with ``gcc -std=c99 -Os`` (``size``);
- time per prediction: one program, compiled with ``-O2``, holds every export and times
  them round after round in the same process (CPU time over the test rows, medians of
  the rounds), so that the machine's load falls on all alike: compare the ratios. Every
  export takes the same float rows: an emlearn int16 export's call converts the row
  (``(int16_t)x``) inside the timing, and is also timed on rows converted beforehand;
- with ``--callgrind``, valgrind's instruction count per prediction of each export
  (every test row once), which the machine's load does not change, and the misses of a
  simulated 32 KB L1 instruction cache and mispredictions of its simulated branch
  predictor;
- accuracy on the test half, and for our exports the labels that differ from Python.

Kinect: a 3-DAG depth model (configs/kinect.yaml at a modest size) on rendered 320x240
frames in millimetres; the C export (CPU time per frame) against the Numba path
(``segment(..., smoothing=0)``, one thread, CPU time), timed in alternation; labels
compared with Python's, and the labels the model's probability smoothing (not exported)
changes.

    python benchmarks/embedded.py [--sets letter pendigits] [--kinect-frames 200] [--callgrind]
        [--rounds 5] [--widths 128]

Figures go to benchmarks/results/embedded.json.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results" / "embedded.json"
CFLAGS = ["-std=c99", "-Wall", "-Wextra", "-Werror", "-pedantic"]

# One program times every export of a data set in the same process: round after round,
# each model predicts every test row `repeat` times (CPU time), so that the machine's load
# falls on all of them alike; it then prints each model's labels and median time.
SAME_PROCESS = r"""#define _POSIX_C_SOURCE 199309L
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
@INCLUDES@

@WRAPPERS@
typedef int32_t (*predictor)(const float *row, const int16_t *row16);
static const predictor models[] = {@MODELS@};
#define N_MODELS ((int32_t)(sizeof models / sizeof models[0]))

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    int32_t n, i, m, r, k, rounds, repeat;
    float *x;
    int16_t *x16;
    double *times;
    volatile int32_t sink = 0;
    if (argc < 3 || fread(&n, sizeof n, 1, stdin) != 1) return 1;
    rounds = atoi(argv[1]);
    repeat = atoi(argv[2]);
    times = malloc(sizeof(double) * (size_t)rounds * N_MODELS);
    x = malloc(sizeof(float) * (size_t)n * @NF@);
    x16 = malloc(sizeof(int16_t) * (size_t)n * @NF@);
    if (fread(x, sizeof(float), (size_t)n * @NF@, stdin) != (size_t)n * @NF@) return 1;
    for (i = 0; i < n * @NF@; i++) x16[i] = (int16_t)x[i];  /* emlearn's int16 features */
    if (argc > 3) {  /* every row once through model argv[3]: for callgrind */
        m = atoi(argv[3]);
        for (i = 0; i < n; i++)
            sink += models[m](x + (size_t)i * @NF@, x16 + (size_t)i * @NF@);
        return 0;
    }
    for (m = 0; m < N_MODELS; m++) {
        for (i = 0; i < n; i++)
            printf("%d ", (int)models[m](x + (size_t)i * @NF@, x16 + (size_t)i * @NF@));
        printf("\n");
    }
    for (r = 0; r < rounds; r++) {
        for (m = 0; m < N_MODELS; m++) {
            double start = now();
            for (k = 0; k < repeat; k++)
                for (i = 0; i < n; i++)
                    sink += models[m](x + (size_t)i * @NF@, x16 + (size_t)i * @NF@);
            times[m * rounds + r] = (now() - start) / ((double)repeat * n);
        }
    }
    for (m = 0; m < N_MODELS; m++) {
        qsort(times + m * rounds, (size_t)rounds, sizeof(double), by_value);
        printf("%.9g\n", times[m * rounds + rounds / 2]);
    }
    return 0;
}
"""


def object_size(source: Path, include: list[str] = ()) -> int:
    """text + data of ``source`` compiled with -Os (``size``)."""
    obj = source.with_suffix(".o")
    subprocess.run(["gcc", "-std=c99", "-Os", *[f"-I{d}" for d in include], "-c", str(source),
                    "-o", str(obj)], check=True)
    text, data = subprocess.run(["size", str(obj)], capture_output=True, text=True,
                                check=True).stdout.splitlines()[1].split()[:2]
    return int(text) + int(data)


def emlearn_export(forest, method: str, dtype: str, folder: Path) -> tuple[str, int]:
    """Export ``forest`` with emlearn as ``<name>.h`` in ``folder``; (name, flash bytes).
    With emlearn's default ``int16_t`` features a node compares ``x < (int)threshold``,
    which truncates scikit-learn's half-integer thresholds (``x <= 7.5`` becomes
    ``x < 7``); ``float`` features compare correctly."""
    import emlearn

    name = f"rf_{method}_{dtype.replace('_t', '')}"
    emlearn.convert(forest, method=method, dtype=dtype).save(file=str(folder / f"{name}.h"),
                                                            name=name)
    (folder / f"{name}.c").write_text(f'#include "{name}.h"\n')
    return name, object_size(folder / f"{name}.c", [emlearn.includedir])


#: Suffix of an emlearn int16 export timed on rows converted to int16 before the timing
#: (a reference: the other entries all convert the same float rows inside the call).
GIVEN_INT16 = "_given_int16_rows"


#: callgrind's simulated caches (a 32 KB, 8-way L1 instruction cache, as on most x86 and
#: larger Cortex-M7 parts) and branch predictor, whatever the machine's own.
SIMULATED_CACHES = ["--cache-sim=yes", "--branch-sim=yes", "--I1=32768,8,64",
                    "--D1=32768,8,64", "--LL=2097152,16,64"]
#: What each export's ``callgrind`` entry records per prediction: callgrind event names.
CALLGRIND_EVENTS = {"instructions": "Ir", "i1_misses": "I1mr",
                    "conditional_branch_mispredictions": "Bcm"}


def time_in_one_process(folder: Path, ours: list[str], emlearn_models: dict[str, str],
                        X: np.ndarray, rounds: int, repeat: int,
                        callgrind: bool = False) -> dict:
    """Compile one program (-O2) with our exports ``ours`` (C prefixes, sources in
    ``folder``) and emlearn's (name: feature type), run it on the rows ``X``; returns
    {name: (labels, median seconds per prediction, callgrind's counts per prediction
    (:data:`CALLGRIND_EVENTS`) or None)}. Every model takes the same float rows: an int16
    export's call converts the row to int16 (``(int16_t)x``, as emlearn's own tools do)
    inside the timing; it is also timed on rows converted beforehand (name + GIVEN_INT16)."""
    import emlearn

    nf = X.shape[1]
    calls = {m: f"    (void)row16;\n    return {m}_predict(row);" for m in ours}
    for m, dtype in emlearn_models.items():
        if dtype == "int16_t":
            calls[m] = (f"    int16_t v[{nf}];\n    int32_t j;\n    (void)row16;\n"
                        f"    for (j = 0; j < {nf}; j++) v[j] = (int16_t)row[j];\n"
                        f"    return {m}_predict(v, {nf});")
            calls[m + GIVEN_INT16] = f"    (void)row;\n    return {m}_predict(row16, {nf});"
        else:
            calls[m] = f"    (void)row16;\n    return {m}_predict(row, {nf});"
    names = list(calls)
    wrappers = [f"static int32_t call_{m}(const float *row, const int16_t *row16)\n{{\n"
                f"{body}\n}}" for m, body in calls.items()]
    main = (SAME_PROCESS.replace("@INCLUDES@", "\n".join(f'#include "{m}.h"' for m in
                                                          [*ours, *emlearn_models]))
            .replace("@WRAPPERS@", "\n".join(wrappers))
            .replace("@MODELS@", ", ".join(f"call_{m}" for m in names))
            .replace("@NF@", str(nf)))
    (folder / "same_process.c").write_text(main)
    program = folder / "same_process"
    subprocess.run(["gcc", "-std=c99", "-O2", f"-I{emlearn.includedir}", f"-I{folder}", "-o",
                    str(program), str(folder / "same_process.c"),
                    *[str(folder / f"{m}.c") for m in ours]], check=True)
    data = np.int32(len(X)).tobytes() + np.ascontiguousarray(X, np.float32).tobytes()
    lines = subprocess.run([str(program), str(rounds), str(repeat)], input=data,
                           capture_output=True, check=True).stdout.decode().splitlines()
    out = {}
    for k, m in enumerate(names):
        counts = None
        if callgrind:  # the model's calls on every row once, per row
            log = folder / f"callgrind_{m}.log"
            subprocess.run(["valgrind", "--tool=callgrind", *SIMULATED_CACHES,
                            f"--toggle-collect=call_{m}",
                            f"--callgrind-out-file={folder / 'callgrind.out'}",
                            f"--log-file={log}", str(program), "1", "1", str(k)],
                           input=data, capture_output=True, check=True)
            text = log.read_text().splitlines()
            events = [line for line in text if "Events" in line][0].split(":")[1].split()
            collected = [line for line in text if "Collected" in line][0].split(":")[1].split()
            totals = dict(zip(events, [*map(int, collected), *[0] * len(events)]))
            counts = {key: totals[event] / len(X) for key, event in CALLGRIND_EVENTS.items()}
        out[m] = (np.array(lines[k].split(), np.int64), float(lines[len(names) + k]), counts)
    return out


def matched_forest(X, y, target: float, seed: int):
    """The random forest of fewest trees (4 or more, scikit-learn's default depth) whose
    accuracy on the last quarter of (X, y), trained on the rest, reaches ``target`` - 0.25
    points (target: the reference jungle's there); retrained on all of (X, y)."""
    from sklearn.ensemble import RandomForestClassifier

    cut = len(y) * 3 // 4
    tried = []
    for n_trees in range(4, 61):
        forest = RandomForestClassifier(n_estimators=n_trees, random_state=seed, n_jobs=1)
        forest.fit(X[:cut], y[:cut])
        accuracy = float((forest.predict(X[cut:]) == y[cut:]).mean())
        tried.append((n_trees, accuracy))
        if accuracy >= target - 0.0025:
            break
    forest = RandomForestClassifier(n_estimators=n_trees, random_state=seed, n_jobs=1)
    return forest.fit(X, y), tried


#: The reference jungle, whose validation accuracy is the target of both families' search
#: (the jungle's tries 1 to ``n_estimators`` DAGs of each width given, 128 by default).
REFERENCE = {"n_estimators": 8, "max_width": 128}
#: Our exports of each tabular jungle: C prefix -> (variant, style).
OURS = {"jungle_tables_float": ("float", "tables"),
        "jungle_tables_quantised": ("quantised", "tables"),
        "jungle_inline_float": ("float", "inline"),
        "jungle_inline_quantised": ("quantised", "inline")}
#: emlearn's exports of the forest: (method, feature type); its loadable tables take int16.
EMLEARN = (("inline", "float"), ("inline", "int16_t"), ("loadable", "int16_t"))


def tabular(name: str, data: str, rounds: int, work: Path, callgrind: bool = False,
            widths: tuple[int, ...] = (128,)) -> dict:
    from jungleseg import JungleClassifier
    from jungleseg.datasets.uci import load_uci, paper_splits
    from jungleseg.export import export_c

    X, y = load_uci(name, data)
    train, test = paper_splits(len(y))[0]
    rng = np.random.default_rng(0)
    train = rng.permutation(train)
    cut = len(train) * 3 // 4

    def validation(n_dags: int, width: int) -> tuple[float, int]:
        fitted = JungleClassifier(n_estimators=n_dags, max_width=width, random_state=0).fit(
            X[train[:cut]], y[train[:cut]])
        return (float((fitted.predict(X[train[cut:]]) == y[train[cut:]]).mean()),
                fitted.node_count_)

    # one target for both families, the reference jungle's validation accuracy: each is the
    # smallest of its kind within 0.25 points of it (jungles: fewest nodes over widths and
    # DAG counts; forests: fewest trees)
    reference = validation(REFERENCE["n_estimators"], REFERENCE["max_width"])
    target = reference[0]
    jungle_tried, chosen = [], None
    # widest first; a width stops at its first jungle within reach, or once it has as many
    # nodes as the smallest found (more DAGs only add nodes)
    for width in sorted(widths, reverse=True):
        for n_dags in range(1, REFERENCE["n_estimators"] + 1):
            accuracy, nodes = (reference if (n_dags, width) == (REFERENCE["n_estimators"],
                                                                 REFERENCE["max_width"])
                               else validation(n_dags, width))
            jungle_tried.append({"max_width": width, "n_estimators": n_dags,
                                 "validation_accuracy": accuracy, "nodes": nodes})
            if chosen is not None and nodes >= chosen["nodes"]:
                break
            if accuracy >= target - 0.0025:
                chosen = jungle_tried[-1]
                break
    params = dict(n_estimators=chosen["n_estimators"], max_width=chosen["max_width"],
                  random_state=0)
    jungle = JungleClassifier(**params).fit(X[train], y[train])
    forest, tried = matched_forest(X[train], y[train], target, 0)
    out = {"jungle": {"params": {k: v for k, v in params.items()},
                      "nodes": jungle.node_count_,
                      "accuracy": float((jungle.predict(X[test]) == y[test]).mean()),
                      "validation_search": jungle_tried, "target_validation_accuracy": target,
                      "reference": REFERENCE},
           "forest": {"n_estimators": forest.n_estimators,
                      "nodes": int(sum(e.tree_.node_count for e in forest.estimators_)),
                      "accuracy": float((forest.predict(X[test]) == y[test]).mean()),
                      "validation_search": tried, "jungle_validation_accuracy": target}}
    python_labels = jungle.jungle_.label_indices(jungle.predict_proba(X[test]), axis=1)
    folder = work / name
    for prefix, (variant, style) in OURS.items():
        # 8-bit thresholds: exact on these whole-number columns
        export_c(jungle, folder, name=prefix, variant=variant, threshold_bits=8, style=style)
        subprocess.run(["gcc", *CFLAGS, "-c", str(folder / f"{prefix}.c"), "-o",
                        str(folder / f"{prefix}_check.o")], check=True)  # warnings-clean
        out[prefix] = {"flash": object_size(folder / f"{prefix}.c")}
    emlearn_models = {}
    for method, dtype in EMLEARN:
        key, flash = emlearn_export(forest, method, dtype, folder)
        emlearn_models[key] = dtype
        out[key] = {"flash": flash}
    repeat = max(1, 100000 // len(test))
    timed = time_in_one_process(folder, list(OURS), emlearn_models, X[test], rounds, repeat,
                                callgrind)
    for key, (labels, seconds, counts) in timed.items():
        classes = jungle.classes_ if key in OURS else forest.classes_
        out.setdefault(key, {"flash": out[key.removesuffix(GIVEN_INT16)]["flash"]})
        out[key]["accuracy"] = float((classes[labels] == y[test]).mean())
        out[key]["us_per_prediction"] = seconds * 1e6
        if counts is not None:
            out[key]["callgrind_instructions_per_prediction"] = counts["instructions"]
            out[key]["callgrind_per_prediction"] = counts
        if key in OURS:
            out[key]["labels_differing_from_python"] = float(np.mean(labels != python_labels))
    # emlearn exports within 0.5 points of the forest's own accuracy: the comparison
    correct = [k for k in emlearn_models
               if out[k]["accuracy"] >= out["forest"]["accuracy"] - 0.005]
    if not correct:  # report all, and say so
        print(f"{name}: no emlearn export within 0.5 points of the forest's accuracy",
              {k: out[k]["accuracy"] for k in emlearn_models}, out["forest"]["accuracy"])
        correct = list(emlearn_models)
    smallest = min(correct, key=lambda k: out[k]["flash"])
    fastest = min(correct, key=lambda k: out[k]["us_per_prediction"])
    ours_fastest = min(OURS, key=lambda k: out[k]["us_per_prediction"])
    given = [k + GIVEN_INT16 for k in correct if k + GIVEN_INT16 in out]
    given_fastest = min(given, key=lambda k: out[k]["us_per_prediction"], default=None)
    out["ratios"] = {
        "emlearn_smallest": smallest, "emlearn_fastest": fastest,
        "tables_quantised_flash_over_emlearn_smallest":
            out["jungle_tables_quantised"]["flash"] / out[smallest]["flash"],
        "tables_float_flash_over_emlearn_smallest":
            out["jungle_tables_float"]["flash"] / out[smallest]["flash"],
        "ours_fastest": ours_fastest,
        "ours_fastest_time_over_emlearn_fastest":
            out[ours_fastest]["us_per_prediction"] / out[fastest]["us_per_prediction"],
        **{f"{k}_time_over_emlearn_fastest": out[k]["us_per_prediction"]
           / out[fastest]["us_per_prediction"] for k in OURS},
        **({"emlearn_fastest_given_int16_rows": given_fastest,
            "ours_fastest_time_over_emlearn_fastest_given_int16_rows":
                out[ours_fastest]["us_per_prediction"]
                / out[given_fastest]["us_per_prediction"]} if given else {}),
        "inline_float_flash_over_emlearn_inline_float":
            out["jungle_inline_float"]["flash"] / out["rf_inline_float"]["flash"],
        "accuracy_points_jungle_minus_forest": 100 * (out["jungle"]["accuracy"]
                                                      - out["forest"]["accuracy"])}
    return out


def kinect(n_frames: int, n_test: int, rounds: int, work: Path) -> dict:
    import numba

    from jungleseg import segment
    from jungleseg.config import load_config
    from jungleseg.datasets.kinect import render_frames
    from jungleseg.export import export_c
    from jungleseg.export._harness import build_harness, run_harness

    config = load_config(ROOT / "configs" / "kinect.yaml").with_overrides(
        {"jungle.n_estimators": 3, "jungle.max_width": 256, "jungle.max_depth": 20,
         "sampling.images_per_dag": None})
    depth, labels = render_frames(n_frames, seed=0)
    model = config.estimator().fit(list(depth), list(labels))
    jungle = model.jungle_
    test_depth, test_labels = render_frames(n_test, seed=1)
    test_depth = np.round(test_depth * 1000).astype(np.uint16)  # millimetres, as sensors give
    numba.set_num_threads(1)
    python = [segment(jungle, f, smoothing=0, probabilities=False)[0] for f in test_depth]
    out = {"model": {"dags": len(jungle.dags), "nodes": jungle.node_count,
                     "train_frames": n_frames, "test_frames": n_test}}
    programs = {}
    foreground = test_depth > 0
    for variant in ("float", "quantised"):
        folder = work / f"kinect_{variant}"
        export_c(jungle, folder, variant=variant)
        program = build_harness(folder, "jungle", "depth")
        got, _, _ = run_harness(program, test_depth, jungle.n_classes,
                                np.float32 if variant == "float" else np.uint16, "depth")
        programs[variant] = program
        out[f"c_{variant}"] = {
            "flash": object_size(folder / "jungle.c"),
            "foreground_labels_differing_from_python": float(
                np.mean(got[foreground] != np.stack(python)[foreground])),
            "foreground_accuracy": float(np.mean(got[foreground] == test_labels[foreground]))}
    out["numba"] = {"threads": numba.get_num_threads(), "foreground_accuracy": float(np.mean(
        np.stack(python)[foreground] == test_labels[foreground]))}
    times = {"float": [], "quantised": [], "numba": []}
    for _ in range(rounds):
        for variant, program in programs.items():
            times[variant].append(run_harness(
                program, test_depth, jungle.n_classes,
                np.float32 if variant == "float" else np.uint16, "depth", repeat=3)[2])
        start = time.process_time()
        for frame in test_depth:
            segment(jungle, frame, smoothing=0, probabilities=False)
        times["numba"].append((time.process_time() - start) / len(test_depth))
    for key, values in times.items():
        target = out["numba"] if key == "numba" else out[f"c_{key}"]
        target["ms_per_frame"] = float(np.median(values) * 1e3)
        target["frames_per_second"] = float(1.0 / np.median(values))
    # what the C code leaves out: the model's own probability smoothing (after the timing:
    # its threads must not run beside the one-thread Numba path)
    smoothed = np.stack([segment(jungle, f, probabilities=False)[0] for f in test_depth])
    out["python_with_smoothing"] = {
        "smoothing": int(jungle.params.get("smoothing", 0) or 0),
        "foreground_labels_differing_from_unsmoothed": float(np.mean(
            smoothed[foreground] != np.stack(python)[foreground])),
        "foreground_accuracy": float(np.mean(smoothed[foreground]
                                             == test_labels[foreground]))}
    out["ratios"] = {f"numba_time_over_c_{v}": out["numba"]["ms_per_frame"]
                     / out[f"c_{v}"]["ms_per_frame"] for v in programs}
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sets", nargs="*", default=["letter", "pendigits"])
    parser.add_argument("--data", default=os.environ.get("JUNGLESEG_DATA",
                                                         str(ROOT.parent / "shared" / "data")))
    parser.add_argument("--kinect-frames", type=int, default=200,
                        help="training frames of the Kinect model (0: skip Kinect)")
    parser.add_argument("--kinect-test", type=int, default=20)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--widths", type=int, nargs="+", default=[128],
                        help="jungle widths the match searches (the reference jungle's, 128, "
                             "by default; e.g. 128 64 32 for the smallest jungle over widths)")
    parser.add_argument("--callgrind", action="store_true",
                        help="also count each tabular export's instructions per prediction "
                             "with valgrind's callgrind (repeatable under load)")
    args = parser.parse_args()
    results = json.loads(RESULTS.read_text()) if RESULTS.exists() else {}
    results["machine_note"] = ("2 shared cores under other load: times are medians of "
                               "interleaved rounds; compare ratios")
    with tempfile.TemporaryDirectory() as work:
        work = Path(work)
        for name in args.sets:
            (work / name).mkdir()
            results[name] = tabular(name, args.data, args.rounds, work, args.callgrind,
                                    tuple(args.widths))
            print(name, json.dumps(results[name], indent=1), flush=True)
        if args.kinect_frames:
            results["kinect"] = kinect(args.kinect_frames, args.kinect_test, args.rounds, work)
            print("kinect", json.dumps(results["kinect"], indent=1), flush=True)
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(results, indent=1) + "\n")
    print(f"wrote {RESULTS}")


if __name__ == "__main__":
    sys.exit(main())
