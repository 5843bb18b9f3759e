"""Shared helpers and small models for the C export's tests: the exports are compiled with
-Werror by a real compiler, run on random and real inputs, and compared with Python."""
from __future__ import annotations

import os
import platform
import shutil
import subprocess

import numpy as np
import pytest

from jungleseg import JungleSegmenter
from jungleseg.datasets.kinect import render_frames
from jungleseg.export import export_c
from jungleseg.export._harness import build_harness
from jungleseg.features import DepthFeatures

# CI installs gcc (.ci/run): there these tests run, never skip
NEEDS_GCC = pytest.mark.skipif(shutil.which("gcc") is None and os.environ.get("CI") != "true",
                               reason="needs gcc")
WERROR = ["gcc", "-std=c99", "-Wall", "-Wextra", "-Werror", "-pedantic"]
X86 = platform.machine() in ("x86_64", "AMD64")


def built(model, tmp_path, variant, kind, name="jungle", style="tables"):
    """Export ``model``, compile its source with -Werror, and build the harness around it:
    (export_c's answer, the harness program)."""
    info = export_c(model, tmp_path / variant, name=name, variant=variant, style=style)
    # the quantised variant must build without any floating-point register (x86-64)
    no_float = ["-mgeneral-regs-only"] if variant == "quantised" and X86 else []
    subprocess.run([*WERROR, *no_float, "-c", str(tmp_path / variant / f"{name}.c"), "-o",
                    str(tmp_path / variant / f"{name}.o")], check=True)
    return info, build_harness(tmp_path / variant, name, kind)


def proba_dtype(variant, n_dags):
    """The dtype of the C probabilities (``<name>_proba_t``)."""
    return np.float32 if variant == "float" else (np.uint16 if 255 * n_dags < 65536
                                                  else np.uint32)


@pytest.fixture(scope="session")
def rows():
    """Tabular rows (600, 5) float32 and their four classes."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(600, 5)).astype(np.float32) * 10
    y = (X[:, 0] + 0.5 * X[:, 1] ** 2 / 10 > X[:, 2]).astype(int) + 2 * (X[:, 3] > 5)
    return X, y


@pytest.fixture(scope="session")
def kinect():
    """A small depth model and its frames in millimetres."""
    depth, labels = render_frames(4, seed=3, size=(60, 80))
    model = JungleSegmenter(DepthFeatures(max_offset=0.3, focal_length=70.0), n_estimators=2,
                            max_width=32, max_depth=10, samples_per_image=300,
                            ignore=(0, 255), random_state=0).fit(list(depth[:3]),
                                                                 list(labels[:3]))
    return model, np.round(depth * 1000).astype(np.uint16)  # millimetres, as sensors give


@pytest.fixture(scope="session")
def colour_images():
    """Three small RGB images with a darker-red rectangle (class 2) on noise (class 1)."""
    rng = np.random.default_rng(4)
    images, truths = [], []
    for _ in range(3):
        image = rng.integers(0, 256, (40, 48, 3)).astype(np.uint8)
        truth = np.ones((40, 48), np.uint8)
        truth[10:30, 12:36] = 2
        image[10:30, 12:36, 0] //= 3
        images.append(image)
        truths.append(truth)
    return images, truths
