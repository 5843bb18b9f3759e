"""A command-line program around an exported model, for tests, benchmarks and trying
an export on a PC: it reads inputs from standard input, writes labels and probabilities
to standard output, and times the calls.

Input (little-endian, as the host writes it): ``int32 n`` then, for a tabular model,
``n * N_FEATURES`` float32 rows; for a depth model ``int32 height, width`` and ``n``
uint16 frames; for a colour model ``int32 height, width`` and ``n`` float32 stacks of
planes. Output: the ``n`` labels (int32 class indices for rows; uint8 class values per
pixel for images), then the probabilities (``<name>_proba_t``). With a repeat count as
the first argument it runs every call that many times and prints, on standard error,
the CPU seconds per call of ``predict`` (per row) or of ``segment`` (per image).
"""
from __future__ import annotations

import subprocess
from pathlib import Path

import numpy as np

HARNESS = r"""#define _POSIX_C_SOURCE 199309L
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include "NAME.h"

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static void *take(size_t bytes)
{
    void *p = malloc(bytes ? bytes : 1);
    if (!p) {
        fprintf(stderr, "out of memory\n");
        exit(1);
    }
    return p;
}

static void must_read(void *p, size_t size, size_t n)
{
    if (fread(p, size, n, stdin) != n) {
        fprintf(stderr, "short input\n");
        exit(1);
    }
}

int main(int argc, char **argv)
{
    int32_t n, i, r, repeat = argc > 1 ? atoi(argv[1]) : 0;
    volatile int32_t sink = 0;
    double start;
    must_read(&n, sizeof n, 1);
BODY
    (void)sink;
    return 0;
}
"""

TABULAR = r"""    {
        float *x = take(sizeof(float) * (size_t)n * NAME_N_FEATURES);
        int32_t *labels = take(sizeof(int32_t) * (size_t)n);
        NAME_proba_t *proba = take(sizeof(NAME_proba_t) * (size_t)n * NAME_N_CLASSES);
        must_read(x, sizeof(float), (size_t)n * NAME_N_FEATURES);
        for (i = 0; i < n; i++) {
            labels[i] = NAME_predict(x + (size_t)i * NAME_N_FEATURES);
            NAME_predict_proba(x + (size_t)i * NAME_N_FEATURES, proba + (size_t)i * NAME_N_CLASSES);
        }
        if (repeat > 0) {
            start = now();
            for (r = 0; r < repeat; r++) {
                for (i = 0; i < n; i++) {
                    sink += NAME_predict(x + (size_t)i * NAME_N_FEATURES);
                }
            }
            fprintf(stderr, "%.9g\n", (now() - start) / ((double)repeat * n));
        }
        fwrite(labels, sizeof(int32_t), (size_t)n, stdout);
        fwrite(proba, sizeof(NAME_proba_t), (size_t)n * NAME_N_CLASSES, stdout);
    }
"""

IMAGES = r"""    {
        int32_t hw[2];
        size_t pixels;
        PIXEL *in;
        uint8_t *labels;
        NAME_proba_t *proba;
        must_read(hw, sizeof(int32_t), 2);
        pixels = (size_t)hw[0] * (size_t)hw[1];
        in = take(sizeof(PIXEL) * pixels * PLANES * (size_t)n);
        labels = take(pixels * (size_t)n);
        proba = take(sizeof(NAME_proba_t) * pixels * NAME_N_CLASSES * (size_t)n);
        must_read(in, sizeof(PIXEL), pixels * PLANES * (size_t)n);
        for (i = 0; i < n; i++) {
            SEGMENT(in + pixels * PLANES * (size_t)i, hw[0], hw[1], labels + pixels * (size_t)i);
            SEGMENT_PROBA(in + pixels * PLANES * (size_t)i, hw[0], hw[1],
                          proba + pixels * NAME_N_CLASSES * (size_t)i);
        }
        if (repeat > 0) {
            start = now();
            for (r = 0; r < repeat; r++) {
                for (i = 0; i < n; i++) {
                    SEGMENT(in + pixels * PLANES * (size_t)i, hw[0], hw[1],
                            labels + pixels * (size_t)i);
                }
            }
            fprintf(stderr, "%.9g\n", (now() - start) / ((double)repeat * n));
        }
        fwrite(labels, 1, pixels * (size_t)n, stdout);
        fwrite(proba, sizeof(NAME_proba_t), pixels * NAME_N_CLASSES * (size_t)n, stdout);
    }
"""


def harness_source(name: str, kind: str) -> str:
    """The harness's C text for an export named ``name`` of a ``kind`` model."""
    if kind == "tabular":
        body = TABULAR
    elif kind == "depth":
        body = (IMAGES.replace("PIXEL", "uint16_t").replace("PLANES", "1")
                .replace("SEGMENT_PROBA", "NAME_segment_depth_proba")
                .replace("SEGMENT", "NAME_segment_depth"))
    else:
        body = (IMAGES.replace("PIXEL", "float").replace("PLANES", "NAME_N_FEATURES")
                .replace("SEGMENT_PROBA", "NAME_segment_proba").replace("SEGMENT", "NAME_segment"))
    return HARNESS.replace("BODY", body.rstrip("\n")).replace("NAME", name)


def build_harness(directory: str | Path, name: str, kind: str, compiler: str = "gcc",
                  flags: tuple = ("-O2",)) -> Path:
    """Write ``<name>_harness.c`` beside an export, and compile it with the export
    (``-std=c99 -Wall -Wextra -Werror -pedantic`` plus ``flags``); returns the program."""
    directory = Path(directory)
    main = directory / f"{name}_harness.c"
    main.write_text(harness_source(name, kind))
    program = directory / f"{name}_harness"
    run = subprocess.run([compiler, "-std=c99", "-Wall", "-Wextra", "-Werror", "-pedantic",
                          *flags, "-o", str(program), str(main), str(directory / f"{name}.c")],
                         capture_output=True, text=True)
    if run.returncode:
        raise RuntimeError(f"compiling {main} failed:\n{run.stderr}")
    return program


def run_harness(program: str | Path, inputs: np.ndarray, n_classes: int, proba_dtype,
                kind: str, repeat: int = 0) -> tuple[np.ndarray, np.ndarray, float | None]:
    """Run a harness on ``inputs``: rows (n, n_features) float32, depth frames (n, H, W)
    uint16, or plane stacks (n, C, H, W) float32. Returns the labels, the probabilities
    and, with ``repeat``, the seconds per call."""
    n = inputs.shape[0]
    head = [np.int32(n).tobytes()]
    if kind != "tabular":
        head.append(np.array(inputs.shape[-2:], np.int32).tobytes())
    data = b"".join(head) + np.ascontiguousarray(inputs).tobytes()
    run = subprocess.run([str(program), *([str(repeat)] if repeat else [])], input=data,
                         capture_output=True, check=True)
    out = run.stdout
    if kind == "tabular":
        labels = np.frombuffer(out[:4 * n], np.int32)
        rest = out[4 * n:]
        proba = np.frombuffer(rest, proba_dtype).reshape(n, n_classes)
    else:
        pixels = n * inputs.shape[-2] * inputs.shape[-1]
        labels = np.frombuffer(out[:pixels], np.uint8).reshape(n, *inputs.shape[-2:])
        proba = np.frombuffer(out[pixels:], proba_dtype).reshape(n, *inputs.shape[-2:],
                                                                 n_classes)
    seconds = float(run.stderr.decode().split()[-1]) if repeat else None
    return labels, proba, seconds
