"""The dock widget: train a jungle on painted scribbles and show what it segments.

A thin layer over :mod:`napari_plugin._session`: it reads the chosen layers and knobs,
runs training and segmentation in a worker thread (progress bar, Cancel), and puts the
results into Labels and Image layers. Errors become napari notifications.
"""
from __future__ import annotations

import threading
import time
from typing import TYPE_CHECKING

import numpy as np
from magicgui.widgets import (
    CheckBox,
    ComboBox,
    Container,
    FloatSpinBox,
    Label,
    ProgressBar,
    PushButton,
    SpinBox,
)
from napari.layers import Image, Labels
from napari.qt.threading import create_worker
from napari.utils.colormaps import DirectLabelColormap
from napari.utils.notifications import show_error, show_info
from qtpy.QtCore import QObject, QTimer, Signal
from qtpy.QtWidgets import QFileDialog

from jungleseg import ColourFeatures, DepthFeatures, JungleSegmenter, load_model, save_model
from jungleseg._validation import bounds
from jungleseg.config import load_preset

from . import _session as session

if TYPE_CHECKING:
    import napari

LIVE_DELAY_MS = 600  # quiet time after the last brush stroke before a live update


def _spin_range(name: str) -> dict:
    """A spin box's range: the interval the segmenter declares for parameter ``name``."""
    low, high = bounds(JungleSegmenter._parameter_constraints[name])
    return {"min": int(low), "max": int(high)}


class Cancelled(Exception):
    """Raised inside training when the user pressed Cancel."""


class _Relay(QObject):
    """Carries training progress from the worker thread to the interface thread."""

    levels_done = Signal(int)


class JungleWidget(Container):
    """Train on a Labels layer of scribbles, segment, save, load and apply models."""

    def __init__(self, napari_viewer: "napari.viewer.Viewer"):
        super().__init__(labels=True)
        self.viewer = napari_viewer
        self.jungle = None  # the current model, trained here or loaded
        self.last_seconds: dict[str, float] = {}
        self._worker = None
        self._cancel = threading.Event()
        self._pending_live = False
        self._count_slices = False
        self._watched = None  # the scribble layer whose painting triggers live updates
        self._relay = _Relay()
        self._relay.levels_done.connect(self._on_levels_done)
        self._timer = QTimer()
        self._timer.setSingleShot(True)
        self._timer.setInterval(LIVE_DELAY_MS)
        self._timer.timeout.connect(self._live_update)

        self.image = ComboBox(label="image", choices=self._layers_of(Image), nullable=True)
        self.kind = ComboBox(label="image type", choices=session.IMAGE_KINDS)
        self.scribbles = ComboBox(label="scribbles", choices=self._layers_of(Labels),
                                  nullable=True)
        presets = session.image_presets()
        self.preset = ComboBox(label="preset", choices=list(presets) or [session.DEFAULT_PRESET])
        self.n_estimators = SpinBox(label="DAGs", **_spin_range("n_estimators"))
        self.width_m = SpinBox(label="width M", **_spin_range("max_width"))
        self.max_depth = SpinBox(label="depth", **_spin_range("max_depth"))
        self.max_offset = FloatSpinBox(label="offset range", step=1)
        self.smoothing = SpinBox(label="smoothing (px)", **_spin_range("smoothing"),
                                 tooltip="half-size of the box over which class probabilities "
                                         "are averaged before labelling (0: none); edge-aware "
                                         "(a guided filter) when the preset sets guided_eps")
        self.display = ComboBox(label="show", choices=("uncertainty", "probabilities", "labels only"))
        self.live = CheckBox(text="live update while painting")
        self.train_button = PushButton(text="Train and segment")
        self.cancel_button = PushButton(text="Cancel", enabled=False)
        self.progress = ProgressBar(label="progress", min=0, max=1, value=0)
        self.status = Label(label="status", value="paint two or more classes, then train")
        self.save_button = PushButton(text="Save model...")
        self.load_button = PushButton(text="Load model...")
        self.target = ComboBox(label="apply to", choices=self._layers_of(Image), nullable=True)
        self.apply_button = PushButton(text="Apply model to every slice")
        self.extend([self.image, self.kind, self.scribbles, self.preset, self.n_estimators,
                     self.width_m, self.max_depth, self.max_offset, self.smoothing,
                     self.display, self.live,
                     self.train_button, self.cancel_button, self.progress, self.status,
                     self.save_button, self.load_button, self.target, self.apply_button])

        self.image.changed.connect(self._on_image_changed)
        self.scribbles.changed.connect(self._watch_scribbles)
        self.preset.changed.connect(self._on_preset_changed)
        self.kind.changed.connect(self._on_preset_changed)
        self.live.changed.connect(self._on_live_toggled)
        self.train_button.changed.connect(self.train)
        self.cancel_button.changed.connect(self.cancel)
        self.save_button.changed.connect(self._ask_save)
        self.load_button.changed.connect(self._ask_load)
        self.apply_button.changed.connect(lambda: self.apply(self.target.value))
        for event in (self.viewer.layers.events.inserted, self.viewer.layers.events.removed):
            event.connect(self.reset_choices)
        self.reset_choices()
        self._on_preset_changed()
        self._on_image_changed()
        self._watch_scribbles()

    # ---------------------------------------------------------------- layer choices
    def _layers_of(self, layer_type):
        def choices(_widget=None):
            return [layer for layer in self.viewer.layers if isinstance(layer, layer_type)]
        return choices

    def _on_image_changed(self, *_):
        layer = self.image.value
        if layer is not None:
            self.kind.value = session.guess_kind(layer.data, layer.rgb)
            if self.target.value is None:
                self.target.value = layer

    def _on_preset_changed(self, *_):
        """Load the preset's knobs; offsets are metres for depth and pixels otherwise."""
        try:
            config = load_preset(self.preset.value)
        except (ValueError, OSError) as err:
            show_error(str(err))
            return
        jungle = config.jungle_params
        self.n_estimators.value = jungle.get("n_estimators", 3)
        self.width_m.value = jungle.get("max_width") or 256
        self.max_depth.value = jungle.get("max_depth") or 20
        self.smoothing.value = jungle.get("smoothing", 0)
        features = config.feature_params or {}
        depth_preset = features.get("family") == "depth"
        family = DepthFeatures if self.kind.value == "depth" else ColourFeatures
        low, high = bounds(family._parameter_constraints["max_offset"])
        self.max_offset.min, self.max_offset.max = max(low, 0.01), high
        if self.kind.value == "depth":
            self.max_offset.value = features.get("max_offset", 0.45) if depth_preset else 0.45
            self.max_offset.step, self.max_offset.label = 0.05, "offset range (m)"
        else:
            self.max_offset.value = 16 if depth_preset else features.get("max_offset", 16)
            self.max_offset.step, self.max_offset.label = 1, "offset range (px)"

    def _watch_scribbles(self, *_):
        if self._watched is not None:
            self._watched.events.paint.disconnect(self._on_paint)
            self._watched.events.data.disconnect(self._on_paint)
        self._watched = self.scribbles.value
        if self._watched is not None:
            self._watched.events.paint.connect(self._on_paint)
            self._watched.events.data.connect(self._on_paint)

    # ---------------------------------------------------------------- live update
    def _on_live_toggled(self, on: bool):
        if on:
            self._timer.start()
        else:
            self._timer.stop()

    def _on_paint(self, *_):
        if self.live.value:
            self._timer.start()  # restarts: waits for a pause in the painting

    def _live_update(self):
        if self._worker is not None:  # one run at a time: retrain when this one ends
            self._pending_live = True
            self._cancel.set()
            return
        self.train(visible_only=True)

    # ---------------------------------------------------------------- train and segment
    def _inputs(self):
        image, scribbles = self.image.value, self.scribbles.value
        if image is None:
            raise ValueError("choose an image layer to train on")
        if scribbles is None:
            raise ValueError("choose (or add) a Labels layer and paint scribbles on it")
        return image, scribbles

    def _estimator(self, image_layer):
        kind = self.kind.value
        n_channels = image_layer.data.shape[-1] if kind == "channels" else 1
        return session.estimator(load_preset(self.preset.value), kind, n_channels,
                                 self.n_estimators.value, self.width_m.value,
                                 self.max_depth.value, self.max_offset.value,
                                 smoothing=self.smoothing.value)

    def train(self, *_, visible_only: bool = False) -> None:
        """Train on the painted slices in a worker thread, then segment the visible slice
        and (unless ``visible_only``) every other slice."""
        if self._worker is not None:
            show_info("jungleseg is busy: wait or press Cancel")
            return
        try:
            image_layer, scribble_layer = self._inputs()
            # a copy: the user may keep painting while the worker trains
            data, painted, kind = image_layer.data, np.array(scribble_layer.data), self.kind.value
            session.check_layer(kind, np.shape(data), image_layer.rgb,
                                name=f"layer {image_layer.name!r}")
            model = self._estimator(image_layer)
            indices = session.painted_indices(data.shape, painted, kind)  # fail here, not later
        except ValueError as err:
            show_error(str(err))
            return
        first = self._visible_index(data, kind)
        total = int(self.max_depth.value) + 1

        def job():
            start = time.perf_counter()
            try:
                prepared = session.train(model, data, painted, kind,
                                         progress=self._progress_callback, indices=indices)
            except Cancelled:
                yield ("cancelled",)
                return
            yield "trained", model, time.perf_counter() - start
            yield from self._segment_job(model.jungle_, data, first, visible_only, prepared)

        self._run(job, total, image_layer, scribble_layer, count_slices=False)

    def _segment_job(self, jungle, data, first, visible_only: bool, prepared=None):
        """Worker generator: the visible slice, then (unless ``visible_only``) the rest;
        stops between slices when cancelled. Painted slices reuse their training channels
        (``prepared``)."""
        start = time.perf_counter()
        n = 0
        for index, labels, proba in session.segment_stack(jungle, data, first,
                                                          self.smoothing.value, prepared):
            if self._cancel.is_set():
                yield ("cancelled",)
                return
            yield "slice", index, labels, proba
            n += 1
            if visible_only:
                break
        yield "segmented", n, time.perf_counter() - start

    def _progress_callback(self, level: int, n_nodes: int):
        if self._cancel.is_set():
            raise Cancelled
        self._relay.levels_done.emit(level + 1)

    def _on_levels_done(self, levels: int):
        self.progress.value = min(levels, self.progress.max)

    def _visible_index(self, data, kind) -> tuple:
        lead = session.leading_shape(np.shape(data), kind)
        step = self.viewer.dims.current_step
        index = tuple(step[-len(lead) - 2:-2]) if lead else ()
        return tuple(min(max(int(i), 0), n - 1) for i, n in zip(index, lead))

    def _run(self, job, total: int, image_layer, scribble_layer, count_slices: bool):
        """Start ``job`` in a worker; the progress bar counts training levels or, with
        ``count_slices``, segmented slices."""
        self._count_slices = count_slices
        self._cancel.clear()
        self.progress.max, self.progress.value = total, 0
        self.train_button.enabled, self.cancel_button.enabled = False, True
        self.status.value = "training..."
        self._worker = create_worker(job, _start_thread=False)
        self._worker.yielded.connect(
            lambda item: self._on_result(item, image_layer, scribble_layer))
        self._worker.errored.connect(self._on_error)
        self._worker.finished.connect(self._on_finished)
        self._worker.start()

    def _on_result(self, item, image_layer, scribble_layer):
        what = item[0]
        if what == "trained":
            _, model, seconds = item
            self.jungle = model.jungle_
            self.last_seconds = {"train": seconds}
            self.progress.value = self.progress.max
            self.status.value = (f"trained {len(self.jungle.dags)} DAGs, "
                                 f"{self.jungle.node_count} nodes on {model.n_samples_} "
                                 f"painted pixels in {seconds:.2f} s; segmenting...")
        elif what == "cancelled":
            self.status.value = "cancelled"
        elif what == "slice":
            _, index, labels, proba = item
            self._show_slice(image_layer, scribble_layer, index, labels, proba)
            if self._count_slices:
                self.progress.value = min(self.progress.value + 1, self.progress.max)
        else:
            _, n_slices, seconds = item
            self.last_seconds["segment"] = seconds
            self.status.value = (f"{len(self.jungle.dags)} DAGs, {self.jungle.node_count} "
                                 f"nodes; trained in {self.last_seconds['train']:.2f} s, "
                                 f"{n_slices} slice(s) segmented in {seconds:.2f} s")

    def _on_error(self, err: Exception):
        self.status.value = f"failed: {err}"
        show_error(f"jungleseg: {err}")

    def _on_finished(self):
        self._worker = None
        self.train_button.enabled, self.cancel_button.enabled = True, False
        if self._pending_live:
            self._pending_live = False
            self._timer.start()

    def cancel(self, *_) -> None:
        """Stop training or segmentation at the next level or slice."""
        self._cancel.set()

    def wait(self, timeout: float = 60.0) -> None:
        """Process events until the worker is done (for scripts and tests)."""
        from qtpy.QtWidgets import QApplication

        end = time.perf_counter() + timeout
        while self._worker is not None or self._timer.isActive():
            if time.perf_counter() > end:
                raise TimeoutError("jungleseg worker still running")
            QApplication.processEvents()
            time.sleep(0.005)

    # ---------------------------------------------------------------- results
    def _colormap(self, scribble_layer):
        if scribble_layer is not None:
            return scribble_layer.colormap
        colours = (self.jungle.metadata or {}).get("class_colours") if self.jungle else None
        if not colours:
            return None
        mapping = {int(k): np.append(np.asarray(v[:3], float) / 255, 1.0)
                   for k, v in colours.items()}
        return DirectLabelColormap(color_dict={None: np.zeros(4), **mapping})

    def _output_layer(self, name, shape, dtype, make):
        layer = self.viewer.layers[name] if name in self.viewer.layers else None
        if layer is None or layer.data.shape != shape:
            if layer is not None:
                self.viewer.layers.remove(layer)
            layer = make(np.zeros(shape, dtype), name=name)
        return layer

    def _show_slice(self, image_layer, scribble_layer, index, labels, proba):
        kind = session.model_kind(self.jungle)
        lead = session.leading_shape(np.shape(image_layer.data), kind)
        shape = lead + labels.shape
        seg = self._output_layer(f"{image_layer.name} segmentation", shape, labels.dtype,
                                 self.viewer.add_labels)
        seg.data[index] = labels
        colormap = self._colormap(scribble_layer)
        if colormap is not None:
            seg.colormap = colormap
        seg.refresh()
        if self.display.value == "uncertainty":
            layer = self._output_layer(f"{image_layer.name} uncertainty", shape, np.float32,
                                       lambda d, name: self.viewer.add_image(
                                           d, name=name, colormap="magma",
                                           contrast_limits=(0, 1), opacity=0.6))
            layer.data[index] = session.uncertainty(proba)
            layer.refresh()
        elif self.display.value == "probabilities":
            shape = (self.jungle.n_classes,) + shape
            layer = self._output_layer(f"{image_layer.name} probabilities", shape, np.float32,
                                       lambda d, name: self.viewer.add_image(
                                           d, name=name, colormap="viridis",
                                           contrast_limits=(0, 1), visible=False))
            layer.data[(slice(None),) + index] = np.moveaxis(proba, -1, 0)
            layer.refresh()

    # ---------------------------------------------------------------- models
    def save(self, path) -> None:
        """Write the current model (atomically), with the scribble layer's class colours and,
        where its features have a 'class' column (row = label value), the class names."""
        if self.jungle is None:
            raise ValueError("no model yet: train or load one first")
        scribble_layer = self.scribbles.value
        if scribble_layer is not None:
            classes = [int(c) for c in self.jungle.classes]
            self.jungle.metadata["class_colours"] = {
                str(c): [round(255 * float(x)) for x in scribble_layer.get_color(c)[:3]]
                for c in classes}
            names = scribble_layer.features.get("class")
            if names is not None and len(names) > max(classes):
                self.jungle.metadata["class_names"] = {str(c): str(names[c]) for c in classes}
        save_model(self.jungle, path)
        self.status.value = f"saved {path}"

    def load(self, path) -> None:
        """Read and validate a model file; it becomes the model applied to layers."""
        self.jungle = load_model(path)
        self.smoothing.value = self.jungle.params.get("smoothing", 0)
        self.status.value = (f"loaded {path}: {len(self.jungle.dags)} DAGs, "
                             f"{self.jungle.node_count} nodes, reads {session.model_kind(self.jungle)}"
                             " images")

    def apply(self, layer) -> None:
        """Segment every slice of an image layer with the current model, in the worker."""
        if self._worker is not None:
            show_info("jungleseg is busy: wait or press Cancel")
            return
        if self.jungle is None:
            show_error("no model yet: train or load one first")
            return
        if layer is None or not isinstance(layer, Image):
            show_error("choose an image layer to apply the model to")
            return
        jungle, data = self.jungle, layer.data
        kind = session.model_kind(jungle)
        try:
            session.check_layer(kind, np.shape(data), layer.rgb,
                                getattr(jungle.family, "n_input_channels", None),
                                f"layer {layer.name!r}")
            indices = session.slice_indices(np.shape(data), kind)
        except ValueError as err:
            show_error(f"jungleseg: {err}")
            return
        first = self._visible_index(data, session.model_kind(jungle))
        self.last_seconds = {"train": 0.0}

        def job():
            yield from self._segment_job(jungle, data, first, False)

        self._run(job, len(indices), layer, None, count_slices=True)
        self.status.value = f"segmenting {len(indices)} slice(s) of {layer.name}..."

    def _ask_save(self, *_):
        path, _ = QFileDialog.getSaveFileName(None, "Save jungle model", "model.h5",
                                              "jungleseg models (*.h5)")
        if path:
            self._guarded(self.save, path)

    def _ask_load(self, *_):
        path, _ = QFileDialog.getOpenFileName(None, "Load jungle model", "",
                                              "jungleseg models (*.h5)")
        if path:
            self._guarded(self.load, path)

    def _guarded(self, action, *args):
        try:
            action(*args)
        except (ValueError, OSError) as err:
            show_error(f"jungleseg: {err}")
