"""The napari plugin's samples: mean Jaccard and time of one press of *Train and segment*.

For each sample, does what the widget does on one press, without Qt (the session in
``napari_plugin._session``): the sample's layers, its preset (``napari``, or
``napari_volume`` for the 3-D samples) and image type, training on the strokes, then the
segmentation of the whole image or volume from the channels computed for training. Prints
the mean Jaccard against the sample's ground truth, and the CPU time (every thread) and wall
time of the press, best of ``--repeats``, after a first press that compiles or loads the
kernels: *first*, on an image the widget has not seen (channels computed), and *again*, a
second press on the same image (its channels kept, as after painting a stroke). Writes
``benchmarks/results/napari_samples.json`` (``napari_samples_detail<k>.json`` with
``--detail k``, the speed/detail slider's position other than the middle).

With ``--widget``, times the press in the real widget instead: a napari viewer (shown;
under Xvfb without a display) opens the sample, docks the widget and clicks *Train and
segment*, as a user does; the press lasts until the segmentation is in its layer and the
viewer has processed its events (redraws). Each timed press is on a fresh viewer (the
first press on an image) after one untimed press that compiles or loads the kernels;
*again* is a second press in the same viewer. It prints the press's wall and CPU time
(every thread) and where they went: computing the channels, training, segmenting (in the
worker thread), writing the result layers and the rest of the interface thread's work
(progress, status, redraws; its CPU time from the interface thread's own clock). Writes
``benchmarks/results/napari_samples_widget.json``. ::

    python benchmarks/napari_samples.py [cells face ...] [--repeats 3] [--detail 1]
    xvfb-run -a -s "-screen 0 1600x1000x24" python benchmarks/napari_samples.py --widget
"""
from __future__ import annotations

import argparse
import contextlib
import sys
import threading
import time
from pathlib import Path

import numpy as np

sys.path[:0] = [str(Path(__file__).resolve().parent), str(Path(__file__).resolve().parents[1])]
from _common import write_results  # noqa: E402

SAMPLES = ("cells", "face", "depth_body", "cells_volume", "cells_volume_channels")


def sample_input(name: str):
    """The sample's image (channels last for the three stains), truth, strokes, image
    type, voxel spacing (None for 2-D) and preset, as the widget reads them."""
    from napari_plugin import _sample_data, _session

    (image, image_kwargs, _), (truth, _, _), (strokes, _, _) = getattr(_sample_data, name)()
    spacing = image_kwargs.get("scale")
    kind = ("channels" if "channel_axis" in image_kwargs
            else _session.guess_kind(image, image_kwargs.get("rgb", False)))
    preset = _session.VOLUME_PRESET if spacing else _session.DEFAULT_PRESET
    return image, truth, strokes, kind, spacing, preset


def press(image, strokes, kind: str, spacing, preset_name: str, channels: dict,
          detail: int | None = None):
    """One press of Train and segment: the labels of the whole image or volume, with the
    speed/detail slider at ``detail`` (default: the middle, the preset's DAGs and depth)."""
    from jungleseg.config import load_preset
    from napari_plugin import _session
    from napari_plugin._panel import DETAIL_STEPS

    preset = load_preset(preset_name)
    knobs = preset.jungle_params
    features = preset.feature_params
    n_channels = image.shape[-1] if kind == "channels" else 1
    times, deeper = DETAIL_STEPS[(detail or (len(DETAIL_STEPS) + 1) // 2) - 1]
    size = (max(1, round(knobs["n_estimators"] * times)), knobs["max_width"],
            max(1, knobs["max_depth"] + deeper))
    if spacing:
        model = _session.volume_estimator(preset, n_channels, spacing, *size,
                                          features["max_offset"])
        prepared = _session.train_volumes(model, image, strokes, kind, channels=channels)
        parts = _session.segment_volumes(model.jungle_, image, prepared=prepared)
        return next(parts)[2]
    offset = 0.45 if kind == "depth" else features["max_offset"]  # the widget's defaults
    model = _session.estimator(preset, kind, n_channels, *size, offset)
    prepared = _session.train(model, image, strokes, kind, channels=channels)
    return next(_session.segment_stack(model.jungle_, image, prepared=prepared))[1]


def measure(name: str, repeats: int, detail: int | None = None) -> dict:
    from jungleseg import evaluate

    image, truth, strokes, kind, spacing, preset = sample_input(name)
    press(image, strokes, kind, spacing, preset, {}, detail)  # compiles or loads the kernels
    figures = {"preset": preset}
    for case in ("first", "again"):
        best = None
        for _ in range(repeats):
            kept = {}
            if case == "again":
                press(image, strokes, kind, spacing, preset, kept, detail)
            start, start_cpu = time.perf_counter(), time.process_time()
            labels = press(image, strokes, kind, spacing, preset, kept, detail)
            timing = (time.process_time() - start_cpu, time.perf_counter() - start)
            best = timing if best is None or timing < best else best
        figures[f"{case}_cpu_s"], figures[f"{case}_wall_s"] = (round(t, 3) for t in best)
    classes = [c for c in np.unique(truth) if c]
    figures["mean_jaccard"] = round(float(evaluate([truth], [labels], classes).mean_jaccard),
                                    3)
    return figures


class Phases:
    """Wall and CPU seconds spent in named functions, summed over a press. CPU time is the
    process's (every thread) for worker-thread phases, which the interface thread's work
    meanwhile inflates a little, and the calling thread's own for interface-thread phases
    (exact)."""

    def __init__(self):
        self.wall: dict[str, float] = {}
        self.cpu: dict[str, float] = {}
        self.lock = threading.Lock()

    def add(self, phase: str, wall: float, cpu: float) -> None:
        with self.lock:
            self.wall[phase] = self.wall.get(phase, 0.0) + wall
            self.cpu[phase] = self.cpu.get(phase, 0.0) + cpu

    @contextlib.contextmanager
    def timing(self, phase: str, clock=time.process_time):
        start, start_cpu = time.perf_counter(), clock()
        try:
            yield
        finally:
            self.add(phase, time.perf_counter() - start, clock() - start_cpu)

    def wrap(self, phase: str, function, clock=time.process_time):
        def timed(*args, **kwargs):
            with self.timing(phase, clock):
                return function(*args, **kwargs)
        return timed

    def wrap_generator(self, phase: str, function):
        """Times each step of the generator ``function`` returns (the worker's segmenting:
        the time between its yields is spent in the interface thread's handlers)."""
        def timed(*args, **kwargs):
            parts = function(*args, **kwargs)
            while True:
                with self.timing(phase):
                    try:
                        part = next(parts)
                    except StopIteration:
                        return
                yield part
        return timed


def instrument(monkeypatch: contextlib.ExitStack, phases: Phases) -> None:
    """Wrap the widget's session and layer functions so that ``phases`` records them."""
    from napari_plugin import _results, _session, _widget

    def patch(owner, name, wrapped):
        original = getattr(owner, name)
        setattr(owner, name, wrapped(original))
        monkeypatch.callback(setattr, owner, name, original)

    patch(_session, "_kept_channels", lambda f: phases.wrap("channels", f))
    for name in ("train", "train_volumes"):
        patch(_session, name, lambda f: phases.wrap("channels+training", f))
    for name in ("segment_stack", "segment_volumes"):
        patch(_session, name, lambda f: phases.wrap_generator("segmentation", f))
    patch(_results.ResultLayers, "show",
          lambda f: phases.wrap("writing layers", f, time.thread_time))
    patch(_widget.JungleWidget, "_prepare_layers",
          lambda f: phases.wrap("making layers", f, time.thread_time))
    patch(_widget.JungleWidget, "_prepare_training",
          lambda f: phases.wrap("reading layers", f, time.thread_time))
    patch(_widget.JungleWidget, "_on_levels_done",
          lambda f: phases.wrap("progress", f, time.thread_time))


def thread_cpu() -> dict[str, float]:
    """CPU seconds so far of this process's threads (Linux ``/proc``), in three groups: the
    interface (main) thread, software OpenGL rendering (Mesa's ``llvmpipe`` threads, which
    draw the canvas under Xvfb; a GPU draws it on a desktop) and every other thread (the
    worker and the kernels' threads)."""
    import os

    ticks = os.sysconf("SC_CLK_TCK")
    groups = {"interface": 0.0, "software rendering": 0.0, "worker and kernels": 0.0}
    for tid in os.listdir("/proc/self/task"):
        try:
            with open(f"/proc/self/task/{tid}/stat") as f:
                stat = f.read()
        except OSError:  # the thread ended meanwhile
            continue
        name = stat[stat.index("(") + 1:stat.rindex(")")]
        fields = stat[stat.rindex(")") + 2:].split()
        seconds = (int(fields[11]) + int(fields[12])) / ticks  # utime + stime
        group = ("interface" if int(tid) == os.getpid() else
                 "software rendering" if name.startswith("llvmpipe") else
                 "worker and kernels")
        groups[group] += seconds
    return groups


def widget_press(viewer, widget, phases: Phases) -> dict:
    """Click Train and segment; wall, CPU (every thread) and interface-thread CPU seconds
    until the worker is done and the viewer's pending events (redraws) are processed, and
    the phases."""
    from qtpy.QtWidgets import QApplication

    phases.wall.clear()
    phases.cpu.clear()
    threads = thread_cpu()
    start, start_cpu, start_gui = time.perf_counter(), time.process_time(), time.thread_time()
    widget.train_button.native.click()
    widget.wait(600)
    QApplication.processEvents()
    wall, cpu = time.perf_counter() - start, time.process_time() - start_cpu
    gui = time.thread_time() - start_gui
    threads = {group: seconds - threads.get(group, 0.0)  # threads that ended: not counted
               for group, seconds in thread_cpu().items()}
    if not widget.status.value.startswith("Done"):
        raise RuntimeError(f"the press did not finish: {widget.status.value}")
    worker = phases.wall.get("channels+training", 0) + phases.wall.get("segmentation", 0)
    figures = {"wall_s": wall, "cpu_s": cpu, "interface_thread_cpu_s": gui,
               "worker_wall_s": worker,
               **{f"{group} threads cpu_s": seconds for group, seconds in threads.items()}}
    split = {"reading layers": "reading layers", "channels": "channels",
             "training": "channels+training", "segmentation": "segmentation",
             "making layers": "making layers", "writing layers": "writing layers",
             "progress": "progress"}
    for phase, key in split.items():
        figures[f"{phase} wall_s"] = phases.wall.get(key, 0.0)
        figures[f"{phase} cpu_s"] = phases.cpu.get(key, 0.0)
    for what in ("wall_s", "cpu_s"):  # training alone
        figures[f"training {what}"] -= figures[f"channels {what}"]
    figures["other interface work cpu_s"] = gui - sum(  # status, redraws, events
        phases.cpu.get(key, 0.0) for key in ("reading layers", "making layers",
                                            "writing layers", "progress"))
    return figures


def open_docked(name: str, detail: int | None):
    """A shown viewer with sample ``name`` open and the widget docked (slider at
    ``detail``), its events processed."""
    import napari
    from qtpy.QtWidgets import QApplication

    from napari_plugin._widget import JungleWidget

    viewer = napari.Viewer(show=True)
    viewer.window._qt_window.resize(1400, 860)
    viewer.open_sample("jungleseg", name)
    widget = JungleWidget(viewer)
    viewer.window.add_dock_widget(widget, name="jungleseg", area="right")
    if detail is not None:
        widget.detail.value = detail
    for _ in range(3):
        QApplication.processEvents()
        time.sleep(0.05)
    return viewer, widget


def measure_widget(name: str, repeats: int, detail: int | None = None) -> dict:
    from jungleseg import evaluate

    phases = Phases()
    with contextlib.ExitStack() as undo:
        instrument(undo, phases)
        viewer, widget = open_docked(name, detail)
        widget_press(viewer, widget, phases)  # compiles or loads the kernels
        viewer.close()
        figures = {}
        for _ in range(repeats):
            viewer, widget = open_docked(name, detail)
            first = widget_press(viewer, widget, phases)
            again = widget_press(viewer, widget, phases)
            truth = next(l.data for l in viewer.layers if l.name.endswith("ground truth"))
            seg = next(l.data for l in viewer.layers if l.name.endswith(" segmentation"))
            classes = [c for c in np.unique(truth) if c]
            jaccard = float(evaluate([truth], [np.asarray(seg)], classes).mean_jaccard)
            viewer.close()
            for case, press_figures in (("first", first), ("again", again)):
                best = figures.get(case)
                if best is None or press_figures["wall_s"] < best["wall_s"]:
                    figures[case] = press_figures
        figures["mean_jaccard"] = jaccard
    return {case: {k: round(v, 3) for k, v in f.items()} if isinstance(f, dict)
            else round(f, 3) for case, f in figures.items()}


def print_widget(name: str, figures: dict) -> None:
    for case in ("first", "again"):
        f = figures[case]
        worker = ", ".join(f"{p} {f[f'{p} cpu_s']:.2f}/{f[f'{p} wall_s']:.2f}" for p in
                           ("channels", "training", "segmentation"))
        gui = ", ".join(f"{p} {f[f'{p} cpu_s']:.2f}" for p in
                        ("reading layers", "making layers", "writing layers", "progress",
                         "other interface work"))
        print(f"{name:22s} {case:5s} press {f['cpu_s']:.2f} CPU-s, {f['wall_s']:.2f} s wall "
              f"(threads: worker and kernels {f['worker and kernels threads cpu_s']:.2f}, "
              f"interface {f['interface threads cpu_s']:.2f}, software rendering "
              f"{f['software rendering threads cpu_s']:.2f} CPU-s)\n"
              f"    worker (CPU-s/wall s): {worker}\n    interface thread "
              f"{f['interface_thread_cpu_s']:.2f} CPU-s: {gui}", flush=True)
    print(f"{name:22s} mean Jaccard {figures['mean_jaccard']:.3f}", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("samples", nargs="*", default=list(SAMPLES),
                        help=f"samples (default: {' '.join(SAMPLES)})")
    parser.add_argument("--repeats", type=int, default=3, help="presses timed (best kept)")
    parser.add_argument("--detail", type=int, choices=range(1, 6), default=None,
                        help="the speed/detail slider's position, 1 (fastest) to 5 (default: "
                             "3, the preset's DAGs and depth)")
    parser.add_argument("--widget", action="store_true",
                        help="time the press in the real widget, phase by phase (needs a "
                             "display: run under xvfb-run)")
    args = parser.parse_args()
    for name in set(args.samples) - set(SAMPLES):
        parser.error(f"no sample {name!r}; samples: {', '.join(SAMPLES)}")
    results = {}
    if args.widget:
        for name in args.samples:
            results[name] = measure_widget(name, args.repeats, args.detail)
            print_widget(name, results[name])
        middle = args.detail in (None, 3)
        write_results("napari_samples_widget" if middle
                      else f"napari_samples_widget_detail{args.detail}", results)
        return
    for name in args.samples:
        results[name] = figures = measure(name, args.repeats, args.detail)
        print(f"{name:22s} mean Jaccard {figures['mean_jaccard']:.3f}  first press "
              f"{figures['first_cpu_s']:.2f} CPU-s ({figures['first_wall_s']:.2f} s wall)  "
              f"again {figures['again_cpu_s']:.2f} CPU-s ({figures['again_wall_s']:.2f} s)",
              flush=True)
    middle = args.detail in (None, 3)
    write_results("napari_samples" if middle else f"napari_samples_detail{args.detail}",
                  results)


if __name__ == "__main__":
    main()
