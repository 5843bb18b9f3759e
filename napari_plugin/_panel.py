"""The widget's panel: its controls, their layout and tooltips, and the layer lists.

A short basic panel (image, scribbles, preset, a speed/detail slider, live update, Train, a
Model menu to save and load, an Apply to menu) with a progress bar and a status line; every
other knob sits in a collapsed *Advanced* section, each with a tooltip saying what it does
and the preset's default. The panel keeps one width: long texts wrap or end in '...' (the
whole text in a tooltip), and combo boxes never widen to fit a long layer name.
:class:`napari_plugin._widget.JungleWidget` adds what the controls do.
"""
from __future__ import annotations

from magicgui.widgets import (
    CheckBox,
    ComboBox,
    Container,
    FloatSpinBox,
    Label,
    ProgressBar,
    PushButton,
    Select,
    Slider,
    SpinBox,
)
from napari.layers import Image, Labels
from napari.utils.notifications import show_error
from qtpy.QtWidgets import QComboBox, QMenu, QSizePolicy
from superqt import QCollapsible

from jungleseg import ColourFeatures, DepthFeatures, JungleSegmenter, VolumeFeatures
from jungleseg._validation import bounds
from jungleseg.config import load_preset

from . import _choices as choices
from . import _layers as layers
from . import _session as session

PANEL_WIDTH = 360  # the dock's minimum width, in pixels: long texts wrap, nothing widens it
STATUS_LINES = 3  # the status line's height; longer messages end in '...', whole in its tooltip
STATUS_CHARS = 150
#: The speed/detail slider's positions: the preset's number of DAGs times the first
#: number and its depth plus the second (the middle position keeps the preset's).
DETAIL_STEPS = ((1 / 3, -2), (2 / 3, -1), (1, 0), (2, 1), (3, 2))
DETAIL_TIP = ("Speed or detail: to the left, fewer and shallower DAGs train and segment "
              "faster; to the right, more and deeper DAGs learn finer detail and give surer "
              "results, slower. Sets DAGs and depth under Advanced; the middle keeps the "
              "preset's.")

#: What each Advanced knob does; its tooltip adds the preset's default.
HELP = {
    "mode": "2-D slices: each slice on its own. 3-D volume: features reach across slices "
            "(z-stacks with a voxel size open in this mode).",
    "kind": "How the layer's values are read: grey, RGB colour, several channels, or depth "
            "in millimetres (chosen from the layer).",
    "channel_layers": "Other image layers of the same shape read as further channels of the "
                      "image (e.g. the stains of napari's channel_axis split).",
    "channel_axis": "An axis of the image layer holding its channels ('none': no channel "
                    "axis). Split it into layers to paint on the spatial axes.",
    "n_estimators": "Number of DAGs (trees) in the jungle: more give smoother, surer "
                    "results and take longer.",
    "width_m": "Width M: the most nodes on any level of a DAG. Larger learns more detail "
               "from more paint; smaller is faster and generalises more.",
    "max_depth": "Levels of each DAG: deeper learns finer distinctions, slower.",
    "max_offset": "How far from a pixel the features look (pixels; metres for depth; the "
                  "layer's scale units in 3-D, or voxels if the layer has no voxel size): "
                  "larger reads more context (big objects), smaller keeps to local texture.",
    "smoothing": "Half-size of the box over which class probabilities are averaged before "
                 "labelling (0: none); edge-aware when the preset sets guided_eps.",
    "soft": "Soft routing: gate temperature times each node's response spread. 0 routes "
            "hard (the fastest); larger blends both branches near thresholds.",
    "prior": "Rare classes: 0 labels each pixel with its most probable class; 1 favours "
             "classes painted less (balanced recall).",
    "stages": "Auto-context stages: each later stage also reads the previous stage's class "
              "maps (colour images; 1: none). Each stage costs another training.",
    "probabilities": "Also output each class's probability as a hidden image layer "
                     "(one plane per class).",
}


def _spin_range(name: str) -> dict:
    """A spin box's range: the interval the segmenter declares for parameter ``name``."""
    low, high = bounds(JungleSegmenter._parameter_constraints[name])
    return {"min": int(low), "max": int(high)}


def _described(name: str, path) -> str:
    """A preset's name and what it is for (its file's first line, a comment)."""
    with open(path, encoding="utf-8") as file:
        first = file.readline().strip()
    return f"{name}: {first.lstrip('#').strip()}" if first.startswith("#") else name


def _narrow(combo) -> None:
    """Keep a combo box from widening the panel to fit a long layer name."""
    policy = QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon
    combo.native.setSizeAdjustPolicy(policy)
    combo.native.setMinimumContentsLength(8)


def _row(*widgets, label: str = "") -> Container:
    return Container(widgets=widgets, layout="horizontal", labels=False, label=label)



class Panel(Container):
    """The controls of the widget, laid out, with their layer lists; no behaviour."""

    def __init__(self, napari_viewer):
        super().__init__(labels=True)
        self.viewer = napari_viewer
        # the basic panel
        self.image = ComboBox(label="image", choices=self._inputs_of(Image), nullable=True,
                              tooltip="the image layer to segment")
        self.scribbles = ComboBox(choices=self._inputs_of(Labels), nullable=True,
                                  tooltip="the Labels layer you paint strokes on: label 1, 2, "
                                          "... for each class, 0 for unpainted")
        self.new_scribbles_button = PushButton(text="New", tooltip="add an empty Labels layer "
                                               "of the image's shape to paint on")
        presets = session.image_presets()
        self.preset = ComboBox(label="preset", choices=[(_described(name, path), name)
                                                        for name, path in presets.items()]
                               or [session.DEFAULT_PRESET],
                               tooltip="the settings to start from, named for what they suit "
                                       "(napari: fast training on a few strokes)")
        self.detail = Slider(label="speed / detail", min=1, max=len(DETAIL_STEPS),
                             value=(len(DETAIL_STEPS) + 1) // 2, readout=False,
                             tooltip=DETAIL_TIP)
        self.live = CheckBox(text="live update while painting",
                             tooltip="retrain and segment the visible slice after each pause "
                                     "in painting")
        self.train_button = PushButton(text="Train and segment",
                                       tooltip="train on the strokes and segment every slice; "
                                               "press again to cancel")
        self.progress = ProgressBar(min=0, max=1, value=0, label="progress")
        self.status = Label(label="")
        self.model_button = PushButton(text="Model", tooltip="save the trained model to a "
                                       "file, or load one (e.g. to apply it to other layers)")
        self.model_menu = QMenu(self.model_button.native)
        self.save_action = self.model_menu.addAction("Save model...")
        self.load_action = self.model_menu.addAction("Load model...")
        self.model_button.native.setMenu(self.model_menu)
        self.apply_button = PushButton(text="Apply to", tooltip="segment every slice of an "
                                       "image layer (a whole stack, another image) with the "
                                       "current model")
        self.apply_menu = QMenu(self.apply_button.native)  # filled with the image layers
        self.apply_button.native.setMenu(self.apply_menu)  # when it opens
        self.basic = [self.image, self.scribbles, self.new_scribbles_button, self.preset,
                      self.detail, self.live, self.train_button, self.model_button,
                      self.apply_button]
        self.extend([self.image, _row(self.scribbles, self.new_scribbles_button,
                                      label="scribbles"),
                     self.preset, self.detail, self.live, self.train_button, self.progress,
                     self.status, _row(self.model_button, self.apply_button, label="model")])
        # the Advanced section
        self.mode = ComboBox(label="mode", choices=session.MODES)
        self.kind = ComboBox(label="image type", choices=session.IMAGE_KINDS)
        self.channel_layers = Select(label="more channels", choices=self._channel_choices)
        self.channel_layers.native.setMaximumHeight(80)
        self.channel_axis = ComboBox(label="channel axis", choices=self._axis_choices)
        self.split_button = PushButton(text="Split channels into layers",
                                       tooltip="replace the image by one layer per channel "
                                               "along the channel axis")
        self.n_estimators = SpinBox(label="DAGs", **_spin_range("n_estimators"))
        self.width_m = SpinBox(label="width M", **_spin_range("max_width"))
        self.max_depth = SpinBox(label="depth", **_spin_range("max_depth"))
        self.max_offset = FloatSpinBox(label="offset range", step=1)
        self.smoothing = SpinBox(label="smoothing (px)", **_spin_range("smoothing"))
        self.soft = FloatSpinBox(label="soft routing", min=0, max=10, step=0.1)
        self.prior = FloatSpinBox(label="rare classes", min=0, max=1, step=0.25)
        self.stages = SpinBox(label="stages", **_spin_range("auto_context"))
        self.probabilities = CheckBox(text="output class probabilities")
        self.advanced = Container(labels=True, widgets=[
            self.mode, self.kind, self.channel_layers, self.channel_axis, self.split_button,
            self.n_estimators, self.width_m, self.max_depth, self.max_offset, self.smoothing,
            self.soft, self.prior, self.stages, self.probabilities])
        for name in ("mode", "kind", "channel_layers", "channel_axis", "probabilities"):
            getattr(self, name).tooltip = HELP[name]
        self.collapsible = QCollapsible("Advanced")
        self.collapsible.addWidget(self.advanced.native)
        self.native.layout().addWidget(self.collapsible)
        self._fix_layout()

    def _fix_layout(self):
        """A stable panel: a minimum width no text widens, a status line of fixed height."""
        self.native.setMinimumWidth(PANEL_WIDTH)
        for combo in (self.image, self.scribbles, self.preset, self.mode,
                      self.kind, self.channel_axis):
            _narrow(combo)
        label = self.status.native
        label.setWordWrap(True)
        label.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Fixed)
        label.setFixedHeight(label.fontMetrics().lineSpacing() * (STATUS_LINES + 1))

    # ---------------------------------------------------------------- layer choices
    def _inputs_of(self, layer_type):
        def listed(_widget=None):
            return choices.inputs(self.viewer.layers, layer_type)
        return listed

    def _channel_choices(self, _widget=None) -> list:
        """Input image layers other than the chosen image."""
        image = getattr(self, "image", None) and self.image.value
        return [layer for layer in choices.inputs(self.viewer.layers, Image)
                if layer is not image]

    def _axis_choices(self, _widget=None) -> list[str]:
        """'none' or an axis of the image layer (not of an RGB one)."""
        layer = getattr(self, "image", None) and self.image.value
        axes = [str(a) for a in range(layer.ndim)] if layer and not layer.rgb else []
        return [layers.NO_CHANNEL_AXIS, *axes]

    def reset_choices(self, *_):
        super().reset_choices()
        self.advanced.reset_choices()

    # ---------------------------------------------------------------- knobs
    def _on_preset_changed(self, *_):
        """Load the preset's knobs; offsets are metres for depth, the layer's scale units
        for volumes (voxels for a layer without a voxel size) and pixels otherwise."""
        try:
            config = load_preset(self.preset.value)
        except (ValueError, OSError) as err:
            show_error(str(err))
            return
        jungle = config.jungle_params
        self._preset_size = (jungle.get("n_estimators", 3), jungle.get("max_depth") or 20)
        self._apply_detail()
        self.width_m.value = jungle.get("max_width") or 256
        self.smoothing.value, self.soft.value = jungle.get("smoothing", 0), jungle.get("soft", 0)
        self.prior.value = jungle.get("prior_power", 0)
        self.stages.value = jungle.get("auto_context", 1)
        features = config.feature_params or {}
        depth_preset = features.get("family") == "depth"
        family = DepthFeatures if self.kind.value == "depth" else ColourFeatures
        family = VolumeFeatures if self._volume_mode else family
        low, high = bounds(family._parameter_constraints["max_offset"])
        self.max_offset.min, self.max_offset.max = max(low, 0.01), high
        if self._volume_mode:
            volume_preset = features.get("family") == "volume"
            offset = features.get("max_offset", 1.0) if volume_preset else 1.0
            layer = self.image.value
            unit = session.offset_unit(config, (1.0,) * 3 if layer is None else layer.scale)
            self.max_offset.value = offset / unit
            self.max_offset.step, self.offset_unit = (0.1, "scale units") if unit == 1 else (
                1, "voxels")
        elif self.kind.value == "depth":
            self.max_offset.value = features.get("max_offset", 0.45) if depth_preset else 0.45
            self.max_offset.step, self.offset_unit = 0.05, "m"
        else:
            self.max_offset.value = 16 if depth_preset else features.get("max_offset", 16)
            self.max_offset.step, self.offset_unit = 1, "px"
        self.max_offset.native.setSuffix(f" {self.offset_unit}")  # the label keeps its width
        defaults = dict(zip(("n_estimators", "max_depth"), self._preset_size))
        for name in ("n_estimators", "width_m", "max_depth", "max_offset", "smoothing", "soft",
                     "prior", "stages"):
            default = defaults.get(name, getattr(self, name).value)
            getattr(self, name).tooltip = (f"{HELP[name]} Default ({self.preset.value}): "
                                           f"{default:g}.")

    def _apply_detail(self, *_):
        """Set DAGs and depth from the preset's and the speed/detail slider's position."""
        n_estimators, max_depth = getattr(self, "_preset_size", (3, 12))
        times, deeper = DETAIL_STEPS[int(self.detail.value) - 1]
        self.n_estimators.value = max(1, round(n_estimators * times))
        self.max_depth.value = max(1, max_depth + deeper)

    _volume_mode = property(lambda self: self.mode.value == session.MODES[1])

    # ---------------------------------------------------------------- status line
    def _say(self, text: str, details: str = "") -> None:
        """Show ``text`` on the status line (cut to fit), the whole of it and ``details``
        in its tooltip."""
        short = text if len(text) <= STATUS_CHARS else text[:STATUS_CHARS - 3] + "..."
        self.status.value = short
        self.status.tooltip = "\n".join(t for t in (text, details) if t)
