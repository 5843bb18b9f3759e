"""Screenshots of the napari widget after training on each 2-D sample, for the docs.

Opens each 2-D sample (or any sample named, the 3-D ones too) of the jungleseg plugin in
a real napari viewer (as File > Open Sample > jungleseg does), docks the widget, presses
*Train and segment* and nothing else, and saves a screenshot of the whole window to
``docs/images/napari_<sample>.png``. Without a display it starts a virtual one (Xvfb,
through PyVirtualDisplay, which pytest-xvfb installs). Prints each sample's mean Jaccard
against its ground truth and the time from the press to the segmentation (the second
press: warm; it reuses the image's channels)::

    python docs/scripts/napari_screenshots.py            # every 2-D sample
    python docs/scripts/napari_screenshots.py cells      # one
    python docs/scripts/napari_screenshots.py cells_volume --out /tmp/shots  # a 3-D one
"""
from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

import numpy as np

SAMPLES = ("cells", "face", "depth_body")
VOLUMES = ("cells_volume", "cells_volume_channels")
IMAGES = Path(__file__).resolve().parents[1] / "images"
WINDOW = (1400, 860)


def screenshot(name: str, out: Path) -> tuple[float, float, float]:
    """Open sample ``name``, train, save the window to ``out``; mean Jaccard, seconds and
    CPU seconds (of every thread: the worker's too) of the second press."""
    import napari
    from qtpy.QtWidgets import QApplication

    from jungleseg import evaluate
    from napari_plugin._widget import JungleWidget

    viewer = napari.Viewer(show=True)
    viewer.window._qt_window.resize(*WINDOW)
    viewer.open_sample("jungleseg", name)
    widget = JungleWidget(viewer)
    viewer.window.add_dock_widget(widget, name="Decision jungle segmentation", area="right")
    seconds = cpu = 0.0
    for _ in range(2):  # the first press compiles or loads the kernels
        start, start_cpu = time.perf_counter(), time.process_time()
        widget.train_button.native.click()
        widget.wait(600)
        seconds, cpu = time.perf_counter() - start, time.process_time() - start_cpu
    truth = next(layer.data for layer in viewer.layers if layer.name.endswith("ground truth"))
    seg = next(layer.data for layer in viewer.layers if layer.name.endswith("segmentation"))
    classes = [c for c in np.unique(truth) if c]
    jaccard = evaluate([truth], [np.asarray(seg)], classes).mean_jaccard
    show_painted_part(viewer, widget.scribbles.value)
    for _ in range(5):
        QApplication.processEvents()
        time.sleep(0.05)
    viewer.screenshot(str(out), canvas_only=False, flash=False)
    viewer.close()
    return jaccard, seconds, cpu


def show_painted_part(viewer, scribbles) -> None:
    """Centre the view on the painted part of the image (a body in a large frame); of a
    volume, on its middle painted slice."""
    painted = np.asarray(scribbles.data)
    if painted.ndim == 3:
        slices = np.flatnonzero(painted.any(axis=(1, 2)))
        middle = int(slices[len(slices) // 2])
        viewer.dims.set_current_step(0, middle)
        painted = painted[middle]
    viewer.reset_view()
    rows, cols = np.nonzero(painted)
    height, width = painted.shape
    box = max((np.ptp(rows) + 1) / height, (np.ptp(cols) + 1) / width)
    middle = np.array([(rows.min() + rows.max()) / 2, (cols.min() + cols.max()) / 2])
    scale, translate = np.asarray(scribbles.scale[-2:]), np.asarray(scribbles.translate[-2:])
    viewer.scene.camera.center = tuple(translate + scale * middle)  # world coordinates
    viewer.scene.camera.zoom *= min(max(0.8 / box, 1.0), 3.0)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("samples", nargs="*", default=list(SAMPLES),
                        help=f"samples to show (default: {' '.join(SAMPLES)}; also "
                             f"{' '.join(VOLUMES)})")
    parser.add_argument("--out", type=Path, default=IMAGES, help="folder of the images")
    args = parser.parse_args()
    for name in set(args.samples) - set(SAMPLES + VOLUMES):
        parser.error(f"no sample {name!r}; samples: {', '.join(SAMPLES + VOLUMES)}")
    display = None
    if not os.environ.get("DISPLAY"):
        from pyvirtualdisplay import Display

        display = Display(visible=False, size=(1600, 1000), color_depth=24).start()
    try:
        args.out.mkdir(parents=True, exist_ok=True)
        for name in args.samples:
            out = args.out / f"napari_{name}.png"
            jaccard, seconds, cpu = screenshot(name, out)
            print(f"{name}: mean Jaccard {jaccard:.3f}, train and segment {seconds:.2f} s "
                  f"({cpu:.2f} CPU-s; warm); {out}")
    finally:
        if display is not None:
            display.stop()


if __name__ == "__main__":
    main()
