"""The dock widget: train a jungle on painted scribbles and show what it segments.

A thin layer over :mod:`napari_plugin._session`: it reads the chosen layers and knobs
(several layers as the channels of one input, or one layer's channel axis, read by
:mod:`napari_plugin._layers`; 2-D slices or 3-D volumes), runs training and segmentation in
a worker thread (progress bar, Cancel), and puts the results into Labels and Image layers
on the input's scale (:mod:`napari_plugin._results`). Errors become napari notifications.

The panel (:mod:`napari_plugin._panel`) shows the few controls a first session needs. The
layers are chosen by themselves when the choice is obvious (:mod:`napari_plugin._choices`),
and the status line names the next useful action.
"""
from __future__ import annotations

import threading
import time
from typing import TYPE_CHECKING

import numpy as np
from napari.layers import Image, Labels
from napari.qt.threading import create_worker
from napari.utils.notifications import show_error, show_info
from qtpy.QtCore import QObject, QTimer, Signal
from qtpy.QtWidgets import QApplication, QFileDialog

from jungleseg import load_model, save_model
from jungleseg.config import load_preset
from jungleseg.segmentation import with_inference

from . import _choices as choices
from . import _layers as layers
from . import _session as session
from ._panel import Panel
from ._results import ResultLayers, class_colormap

if TYPE_CHECKING:
    import napari

LIVE_DELAY_MS = 600  # quiet time after the last brush stroke before a live update
PROGRESS_SECONDS = 0.1  # the progress bar is redrawn at most this often while training


class Cancelled(Exception):
    """Raised inside training when the user pressed Cancel."""


class _Relay(QObject):
    """Carries training progress from the worker thread to the interface thread."""

    levels_done = Signal(int)


class JungleWidget(Panel):
    """Train on a Labels layer of scribbles, segment, save, load and apply models."""

    def __init__(self, napari_viewer: napari.viewer.Viewer):
        super().__init__(napari_viewer)
        self.jungle = None  # the current model, trained here or loaded
        self.last_seconds: dict[str, float] = {}
        self._worker = None
        self._cancel = threading.Event()
        self._pending_live = False
        self._count_slices = False
        self._trained_on = None  # (image, scribbles) of the last training
        self._details = ""  # figures of the last run, for the status line's tooltip
        self._watched = None  # the scribble layer whose painting triggers live updates
        self._channels = {}  # the last training's channels, for the next (session.train)
        self._progress_shown = 0.0  # when the progress bar last moved
        self._relay = _Relay()
        self._relay.levels_done.connect(self._on_levels_done)
        self._timer = QTimer(self.native)  # dies with the panel: never fires on a deleted one
        self._timer.setSingleShot(True)
        self._timer.setInterval(LIVE_DELAY_MS)
        self._timer.timeout.connect(self._live_update)
        self._status_timer = QTimer(self.native)  # the status line follows painting
        self._status_timer.setSingleShot(True)
        self._status_timer.setInterval(300)
        self._status_timer.timeout.connect(self._say_next)

        self._results = ResultLayers(napari_viewer)
        self.image.changed.connect(self._on_image_changed)
        self.scribbles.changed.connect(self._watch_scribbles)
        self.preset.changed.connect(self._on_preset_changed)
        self.detail.changed.connect(self._apply_detail)
        self.kind.changed.connect(self._on_preset_changed)
        self.mode.changed.connect(self._on_mode_changed)
        self.split_button.changed.connect(lambda: self._guarded(self.split_channels))
        self.new_scribbles_button.changed.connect(lambda: self._guarded(self.new_scribbles))
        self.live.changed.connect(self._on_live_toggled)
        self.train_button.changed.connect(self._on_train_pressed)
        self.save_action.triggered.connect(self._ask_save)
        self.load_action.triggered.connect(self._ask_load)
        self.apply_menu.aboutToShow.connect(self._fill_apply_menu)
        self.viewer.layers.events.inserted.connect(self._on_layers_changed)
        self.viewer.layers.events.removed.connect(self._on_layers_changed)
        self.reset_choices()
        self._on_preset_changed()
        self._on_layers_changed()

    # ---------------------------------------------------------------- layer choices
    def _on_layers_changed(self, *_):
        """Refresh the layer lists; pick the image and scribbles where the choice is
        obvious and none is chosen."""
        self.reset_choices()
        if self.image.value is None:
            image, extra = choices.pick_image(choices.inputs(self.viewer.layers, Image))
            if image is not None:
                self.image.value = image  # picks the scribbles too
                if extra:
                    self.kind.value = "channels"
                    self.channel_layers.value = extra
        elif self.scribbles.value is None:
            self._pick_scribbles()
        self._say_next()

    def _pick_scribbles(self):
        try:
            inp = self._input()
        except ValueError:
            return
        found = choices.pick_scribbles(choices.inputs(self.viewer.layers, Labels), inp.shape,
                                       inp.scale)
        if found is not None:
            self.scribbles.value = found

    def _on_image_changed(self, *_):
        self._channels.clear()  # another image's channels: free them
        self.channel_layers.reset_choices()
        layer = self.image.value
        if layer is not None:
            self.kind.value = session.guess_kind(layer.data, layer.rgb)
        self.channel_axis.reset_choices()
        self.channel_axis.value = layers.NO_CHANNEL_AXIS
        if layer is not None:
            volume = choices.looks_like_volume(layer, layer.ndim - layer.rgb)
            self.mode.value = session.MODES[int(volume)]
            if self._volume_mode:  # the offset range's unit follows the layer's voxel size
                self._on_preset_changed()
            scribbles = self.scribbles.value
            if scribbles is None or tuple(np.shape(scribbles.data)) != self._spatial_shape():
                self.scribbles.value = None
                self._pick_scribbles()
        self._say_next()

    def _spatial_shape(self) -> tuple | None:
        try:
            return self._input().shape
        except ValueError:
            return None

    def _say_next(self, *_):
        """The next useful action, unless a run is under way."""
        if self._worker is not None:
            return
        trained = (self.jungle is not None
                   and self._trained_on == (self.image.value, self.scribbles.value))
        self._say(choices.next_action(len(choices.inputs(self.viewer.layers, Image)),
                                      self.image.value, self.scribbles.value, trained),
                  self._details)

    def _on_mode_changed(self, *_):
        """3-D mode takes the volume preset (offsets in the layer's scale units)."""
        presets = self.preset.choices
        wanted = session.VOLUME_PRESET if self._volume_mode else session.DEFAULT_PRESET
        if wanted in presets and self.preset.value != wanted:
            self.preset.value = wanted  # reloads the knobs
        else:
            self._on_preset_changed()

    def _chosen_axis(self) -> int | None:
        value = self.channel_axis.value
        return None if value in (None, layers.NO_CHANNEL_AXIS) else int(value)

    def _input(self, image_layer=None, extra=None) -> layers.Input:
        """The chosen layers as one input (channels last), its spatial axes and scale."""
        image_layer = self.image.value if image_layer is None else image_layer
        if image_layer is None:
            raise ValueError("choose an image layer to train on")
        extra = [l for l in (self.channel_layers.value if extra is None else extra)
                 if l is not image_layer]
        axis = self._chosen_axis() if image_layer is self.image.value else None
        inp = layers.read_input([image_layer, *extra], self.kind.value, axis,
                                self.viewer.dims.ndim)
        if not extra and axis is None:
            session.check_layer(self.kind.value, np.shape(image_layer.data), image_layer.rgb,
                                name=f"layer {image_layer.name!r}")
        return inp

    def split_channels(self) -> list:
        """Replace the image layer by one layer per channel along the chosen channel axis
        (as napari's ``channel_axis`` does), and read them as the channels of one input."""
        layer, axis = self.image.value, self._chosen_axis()
        if layer is None or axis is None:
            raise ValueError("choose an image layer and its channel axis first")
        added = layers.split_into_layers(self.viewer, layer, axis)
        self.reset_choices()
        self.image.value, self.kind.value = added[0], "channels"
        self.channel_layers.value = added[1:]
        return added

    def new_scribbles(self):
        """A Labels layer of the input's spatial shape, scale and translate: paint on it
        lands on the voxels it is drawn over. It is selected, with the brush in hand and
        class 1 chosen, so the next drag in the canvas paints."""
        inp = self._input()
        layer = self.viewer.add_labels(
            np.zeros(inp.shape, np.uint8), name=f"{self.image.value.name} scribbles",
            scale=inp.scale, translate=inp.translate)
        layer.mode = "paint"
        self.scribbles.value = layer
        return layer

    def _watch_scribbles(self, *_):
        if self._watched is not None:
            self._watched.events.paint.disconnect(self._on_paint)
            self._watched.events.data.disconnect(self._on_paint)
        self._watched = self.scribbles.value
        if self._watched is not None:
            self._watched.events.paint.connect(self._on_paint)
            self._watched.events.data.connect(self._on_paint)
        self._say_next()

    # ---------------------------------------------------------------- live update
    def _on_live_toggled(self, on: bool):
        if on:
            self._timer.start()
        else:
            self._timer.stop()

    def _on_paint(self, *_):
        if self.live.value:
            self._timer.start()  # restarts: waits for a pause in the painting
        self._status_timer.start()

    def _live_update(self):
        if self._worker is not None:  # one run at a time: retrain when this one ends
            self._pending_live = True
            self._cancel.set()
            return
        self.train(visible_only=True)

    # ---------------------------------------------------------------- train and segment
    def _prepare_training(self):
        """The input, scribbles, model and painted indices of a training run, or a
        ValueError naming what is wrong (checked here, on the interface thread)."""
        scribble_layer = self.scribbles.value
        if self.image.value is not None and scribble_layer is None:
            raise ValueError("choose (or add) a Labels layer and paint scribbles on it")
        inp = self._input()
        layers.check_scribbles(inp, scribble_layer, self.viewer.dims.ndim)
        painted = np.array(scribble_layer.data)  # a copy: painting may go on meanwhile
        kind, shape, preset = inp.kind, np.shape(inp.data), load_preset(self.preset.value)
        n_channels = shape[-1] if kind == "channels" else 1
        knobs = (self.n_estimators.value, self.width_m.value, self.max_depth.value,
                 self.max_offset.value)
        if self._volume_mode:
            if kind not in ("grey", "channels"):
                raise ValueError(f"3-D mode reads grey or multichannel volumes, not {kind}")
            session.leading_shape(shape, kind, volume=True)
            model = session.volume_estimator(preset, n_channels, inp.scale[-3:], *knobs,
                                             smoothing=self.smoothing.value)
        else:
            model = session.estimator(preset, kind, n_channels, *knobs,
                                      smoothing=self.smoothing.value)
            model.set_params(auto_context=int(self.stages.value))
        indices = session.painted_indices(shape, painted, kind, volume=self._volume_mode)
        return inp, scribble_layer, painted, model, indices

    def train(self, *_, visible_only: bool = False) -> None:
        """Train on the painted slices (or, in 3-D mode, the paint across each painted
        volume) in a worker thread, then segment the visible slice and (unless
        ``visible_only``) everything else."""
        if self._worker is not None:
            show_info("jungleseg is busy: wait or press Cancel")
            return
        try:
            inp, scribble_layer, painted, model, indices = self._prepare_training()
        except ValueError as err:
            show_error(str(err))
            self._say(f"Cannot train yet: {err}.")
            return
        volume = self._volume_mode
        first, first_slice = self._visible_part(inp, volume)
        total = int(self.max_depth.value) + 1
        fit = session.train_volumes if volume else session.train

        def job():
            start = time.perf_counter()
            try:
                prepared = fit(model, inp.data, painted, inp.kind,
                               progress=self._progress_callback, indices=indices,
                               channels=self._channels)
            except Cancelled:
                yield ("cancelled",)
                return
            yield "trained", model, time.perf_counter() - start
            yield from self._segment_job(model.jungle_, inp, first, first_slice, visible_only,
                                         prepared)

        self._run(job, total, inp, self.image.value.name, scribble_layer, count_slices=False)

    def _segment_job(self, jungle, inp, first, first_slice, visible_only: bool, prepared=None):
        """Worker generator: the visible slice, then (unless ``visible_only``) the rest;
        stops between parts when cancelled. Painted slices or volumes reuse their training
        channels (``prepared``)."""
        start, n = time.perf_counter(), 0
        jungle = with_inference(jungle, self.soft.value, prior_power=self.prior.value)
        if session.is_volume_model(jungle):
            parts = ((index + (z,), labels, proba) for index, z, labels, proba in
                     session.segment_volumes(jungle, inp.data, first, first_slice,
                                             self.smoothing.value, prepared))
        else:
            parts = session.segment_stack(jungle, inp.data, first, self.smoothing.value,
                                          prepared)
        for key, labels, proba in parts:
            if self._cancel.is_set():
                yield ("cancelled",)
                return
            yield "part", key, labels, proba
            n += 1
            if visible_only:
                break
        yield "segmented", n, time.perf_counter() - start

    def _progress_callback(self, level: int, n_nodes: int):
        if self._cancel.is_set():
            raise Cancelled
        self._relay.levels_done.emit(level + 1)

    def _on_levels_done(self, levels: int):
        """Show the levels trained, at most every :data:`PROGRESS_SECONDS` (a redraw costs)."""
        now = time.perf_counter()
        if now - self._progress_shown >= PROGRESS_SECONDS or levels >= self.progress.max:
            self._progress_shown = now
            self.progress.value = min(levels, self.progress.max)

    def _visible_part(self, inp: layers.Input, volume: bool) -> tuple[tuple, int | None]:
        """The visible slice (or volume) of the input, and in 3-D mode its visible slice."""
        n_lead = len(session.leading_shape(np.shape(inp.data), inp.kind, volume))
        index = layers.visible_index(inp, self.viewer.dims.point, n_lead + volume)
        return index[:n_lead], (index[n_lead] if volume else None)

    def _run(self, job, total: int, inp, name: str, scribble_layer, count_slices: bool):
        """Start ``job`` in a worker; the progress bar counts training levels or, with
        ``count_slices``, segmented parts."""
        self._count_slices = count_slices
        self._cancel.clear()
        self.progress.max, self.progress.value = total, 0
        self.train_button.text = "Cancel"
        self._say(session.running_status(name, count_slices, bool(self._channels)))
        self._worker = create_worker(job, _start_thread=False)
        self._worker.yielded.connect(lambda item: self._on_result(item, inp, name,
                                                                  scribble_layer))
        self._worker.errored.connect(self._on_error)
        self._worker.finished.connect(self._on_finished)
        self._worker.start()

    def _on_result(self, item, inp, name, scribble_layer):
        what = item[0]
        if what == "trained":
            _, model, seconds = item
            self.jungle = model.jungle_
            self.jungle.metadata["channel_names"] = list(inp.channel_names)
            self.last_seconds = {"train": seconds}
            self._trained_on = (self.image.value, scribble_layer)
            self.progress.value = self.progress.max
            self._details = (f"{len(self.jungle.dags)} DAGs, {self.jungle.node_count} nodes, "
                             f"trained on {model.n_samples_} painted pixels in {seconds:.2f} s")
            self._say("Trained; segmenting... (press Cancel to stop)", self._details)
            self._prepare_layers(inp, name, scribble_layer)  # while the worker segments
        elif what == "cancelled":
            self._say("Cancelled. Press 'Train and segment' to start again.")
        elif what == "part":
            _, key, labels, proba = item
            self._results.show(name, inp.shape, inp.scale, inp.translate, key, labels, proba,
                               self.probabilities.value,
                               in_memory=isinstance(inp.data, np.ndarray))
            if self._count_slices:
                self.progress.value = min(self.progress.value + 1, self.progress.max)
        else:
            _, n_parts, seconds = item
            self.last_seconds["segment"] = seconds
            what = ("the volume" if session.is_volume_model(self.jungle) else
                    "1 slice" if n_parts == 1 else f"{n_parts} slices")
            self._details = ", ".join(t for t in (self._details if not self._count_slices
                                                  else "", f"segmented {what} in "
                                                  f"{seconds:.2f} s") if t)
            total = self.last_seconds["train"] + seconds
            self._say(f"Done in {total:.1f} s: '{name} segmentation' is on top (its "
                      "uncertainty hidden under it). Paint where it is wrong, train again.",
                      self._details)

    def _prepare_layers(self, inp, name: str, scribble_layer):
        """Output layers for the model's results on ``inp``, coloured as the scribbles or model."""
        self._results.prepare(name, inp.shape, inp.scale, inp.translate,
                              session.label_dtype(self.jungle), len(self.jungle.classes),
                              self.probabilities.value, isinstance(inp.data, np.ndarray),
                              class_colormap(scribble_layer, self.jungle))

    def _on_error(self, err: Exception):
        self._say(f"Failed: {err}")
        show_error(f"jungleseg: {err}")

    def _on_train_pressed(self, *_):
        """Train, or cancel the run under way (the button reads Cancel meanwhile)."""
        (self.cancel if self._worker is not None else self.train)()

    def _on_finished(self):
        self._worker = None
        self.train_button.text = "Train and segment"
        if not self.status.value.startswith(("Done", "Failed", "Cancelled")):
            self._say_next()
        if self._pending_live:
            self._pending_live = False
            self._timer.start()

    def cancel(self, *_) -> None:
        """Stop training or segmentation at the next level or part."""
        self._cancel.set()

    def wait(self, timeout: float = 60.0) -> None:
        """Process events until the worker is done (for scripts and tests)."""
        end = time.perf_counter() + timeout
        while self._worker is not None or self._timer.isActive():
            if time.perf_counter() > end:
                raise TimeoutError("jungleseg worker still running")
            QApplication.processEvents()
            time.sleep(0.005)

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
        self._say(f"Saved the model to {path}. 'Apply to' segments other layers with it.")

    def load(self, path) -> None:
        """Read and validate a model file; it becomes the model applied to layers."""
        self.jungle = load_model(path)
        knobs = session.inference_knobs(self.jungle)
        self.smoothing.value, self.soft.value, self.prior.value = knobs
        self._say(f"Loaded a model of {session.model_kind(self.jungle)} images: choose a "
                  "layer under 'Apply to'.",
                  f"{path}: {len(self.jungle.dags)} DAGs, {self.jungle.node_count} nodes")

    def apply(self, layer, channels=()) -> None:
        """Segment every slice (or volume) of an image layer with the current model, in the
        worker; ``channels``: further layers read as its channels."""
        if self._worker is not None:
            show_info("jungleseg is busy: wait or press Cancel")
            return
        if self.jungle is None:
            show_error("no model yet: train or load one first")
            return
        if layer is None or not isinstance(layer, Image):
            show_error("choose an image layer to apply the model to")
            return
        jungle = self.jungle
        kind = session.model_kind(jungle)
        volume = session.is_volume_model(jungle)
        name = f"layer {layer.name!r}"
        try:
            inp = (self._input(layer, list(channels)) if channels or layer is self.image.value
                   else layers.read_input([layer], kind, None, self.viewer.dims.ndim))
            session.check_model_input(jungle, inp.kind, np.shape(inp.data), layer.rgb, name)
            indices = session.slice_indices(np.shape(inp.data), kind, volume=volume)
        except ValueError as err:
            show_error(f"jungleseg: {err}")
            return
        first, first_slice = self._visible_part(inp, volume)
        self.last_seconds = {"train": 0.0}
        self._prepare_layers(inp, layer.name, None)

        def job():
            yield from self._segment_job(jungle, inp, first, first_slice, False)

        self._run(job, len(indices) * (2 if volume else 1), inp, layer.name, None,
                  count_slices=True)

    def _fill_apply_menu(self):
        """One entry per input image layer (the chosen image with its extra channels)."""
        self.apply_menu.clear()
        for layer in choices.inputs(self.viewer.layers, Image):
            action = self.apply_menu.addAction(layer.name)
            action.triggered.connect(lambda _=False, layer=layer: self.apply(
                layer, self.channel_layers.value if layer is self.image.value else ()))
        if self.apply_menu.isEmpty():
            self.apply_menu.addAction("no image layers").setEnabled(False)

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
