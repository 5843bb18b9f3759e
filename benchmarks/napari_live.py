"""Does the napari widget stay responsive while live update retrains? Measured, not felt.

Opens a viewer with the widget docked on the cells sample (grey, 4 textured classes),
switches live update on and paints strokes every 40 ms for a few seconds, as a user
dragging the brush would. A 10 ms Qt timer on the interface thread records how late each
tick arrives: while training and segmentation run in the worker, a late tick is a frozen
interface. Prints the tick delays (median, 99th percentile, max), how many live updates
ran, and the time from the last stroke to the updated segmentation. With
``--screenshot PATH`` it also saves a screenshot of the viewer with the widget.

    xvfb-run -a -s "-screen 0 1600x1000x24" python benchmarks/napari_live.py [--size 1024]
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path[:0] = [str(Path(__file__).resolve().parent), str(Path(__file__).resolve().parents[1])]
from _common import write_results  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=1024, help="image side (default 1024)")
    parser.add_argument("--seconds", type=float, default=6.0, help="painting time")
    parser.add_argument("--screenshot", default=None)
    args = parser.parse_args()

    import napari
    from qtpy.QtCore import QTimer
    from qtpy.QtWidgets import QApplication

    from jungleseg.datasets.microscopy import render_cells
    from jungleseg.datasets.scribbles import paint_scribbles
    from napari_plugin._widget import JungleWidget

    images, truth = render_cells(1, seed=0, size=(args.size, args.size))
    viewer = napari.Viewer(show=True)
    viewer.window._qt_window.resize(1600, 1000)
    image = viewer.add_image(images[0], name="cells", colormap="gray")
    scribbles = viewer.add_labels(paint_scribbles(truth[0], 0.005, seed=0), name="scribbles")
    widget = JungleWidget(viewer)
    viewer.window.add_dock_widget(widget, name="jungleseg", area="right")
    widget.image.value, widget.scribbles.value = image, scribbles
    app = QApplication.instance()

    widget.train()  # warm up: compiles or loads the kernels
    widget.wait(600)

    ticks: list[float] = []
    busy: list[bool] = []
    timer = QTimer()
    timer.setInterval(10)
    timer.timeout.connect(lambda: (ticks.append(time.perf_counter()),
                                   busy.append(widget._worker is not None)))
    updates = []
    show_result = widget._on_result

    def counting(item, *layers):  # note when each live update has shown its result
        if item[0] == "segmented":
            updates.append(time.perf_counter())
        show_result(item, *layers)

    widget._on_result = counting
    widget.live.value = True
    widget.wait(600)
    updates.clear()
    timer.start()
    rng = np.random.default_rng(1)
    t = truth[0]
    end = time.perf_counter() + args.seconds
    last_stroke = time.perf_counter()
    while time.perf_counter() < end:  # paint a short stroke of a true class every 40 ms
        r, c = rng.integers(10, args.size - 10, 2)
        for k in range(5):
            scribbles.paint((r, c + k), int(t[r, c + k]), refresh=False)
        scribbles.refresh()
        last_stroke = time.perf_counter()
        stop = last_stroke + 0.04
        while time.perf_counter() < stop:
            app.processEvents()
            time.sleep(0.002)
    widget.wait(600)
    timer.stop()
    gaps = np.diff(ticks) * 1000
    during = gaps[np.array(busy[1:])]
    print(f"image {args.size}x{args.size}; painted for {args.seconds:.0f} s: "
          f"{len(updates)} live updates finished")
    figures = {"size": args.size, "painting_seconds": args.seconds,
               "live_updates": len(updates), "timer_interval_ms": 10}
    keys = {"all ticks": "all_ticks", "ticks while the worker ran": "ticks_while_worker_ran"}
    for name, g in (("all ticks", gaps), ("ticks while the worker ran", during)):
        if g.size:
            figures[keys[name]] = {"count": int(g.size), "median_ms": float(np.median(g)),
                                   "p99_ms": float(np.percentile(g, 99)),
                                   "max_ms": float(g.max())}
            print(f"{name}: {g.size}, interval median {np.median(g):.1f} ms, "
                  f"99th percentile {np.percentile(g, 99):.1f} ms, max {g.max():.1f} ms "
                  f"(timer set to 10 ms)")
    if updates:
        print(f"last stroke to updated segmentation: {updates[-1] - last_stroke:.2f} s "
              f"(includes the {widget._timer.interval()} ms pause the live update waits for)")
        figures["last_stroke_to_update_seconds"] = updates[-1] - last_stroke
        figures["live_update_pause_ms"] = widget._timer.interval()
    print(f"last run: train {widget.last_seconds.get('train', 0):.2f} s, segment "
          f"{widget.last_seconds.get('segment', 0):.2f} s")
    figures["last_train_seconds"] = widget.last_seconds.get("train", 0)
    figures["last_segment_seconds"] = widget.last_seconds.get("segment", 0)
    write_results("napari_live", figures)
    if args.screenshot:
        widget.live.value = False
        viewer.layers["cells uncertainty"].visible = False
        viewer.layers["cells segmentation"].opacity = 0.45
        viewer.layers.selection.active = scribbles
        viewer.reset_view()
        app.processEvents()
        viewer.screenshot(args.screenshot, canvas_only=False, flash=False)
        print(f"screenshot: {args.screenshot}")
    viewer.close()


if __name__ == "__main__":
    main()
