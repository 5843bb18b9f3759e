"""The panel in a real napari viewer under Xvfb: a short basic panel, a collapsed Advanced
section holding every other knob with its tooltip, layer lists without outputs, one width."""
import pytest

from jungleseg.config import load_preset

from .scenes import stripes_and_checks, strokes

napari = pytest.importorskip("napari")

#: The basic panel: image, scribbles (and New), preset, speed/detail, live update, Train,
#: the Model menu (save, load) and the Apply to menu, in seven rows.
BASIC = ["image", "scribbles", "new_scribbles_button", "preset", "detail", "live",
         "train_button", "model_button", "apply_button"]
ADVANCED = ["mode", "kind", "channel_layers", "channel_axis", "split_button", "n_estimators",
            "width_m", "max_depth", "max_offset", "smoothing", "soft", "prior", "stages",
            "probabilities"]


def controls(container) -> list:
    """The value and button widgets of a container and of the rows in it."""
    from magicgui.widgets import Container
    from magicgui.widgets.bases import ButtonWidget, ValueWidget

    found = []
    for child in container:
        if isinstance(child, Container):
            found += controls(child)
        elif isinstance(child, (ValueWidget, ButtonWidget)) and child.enabled is not None:
            found.append(child)
    return found


def test_the_basic_panel_is_short_and_advanced_holds_the_rest(make_napari_viewer):
    from magicgui.widgets import Label, ProgressBar

    from napari_plugin._widget import JungleWidget

    widget = JungleWidget(make_napari_viewer())
    shown = [c for c in controls(widget) if not isinstance(c, (Label, ProgressBar))]
    assert shown == [getattr(widget, name) for name in BASIC]
    assert controls(widget.advanced) == [getattr(widget, name) for name in ADVANCED]
    assert not widget.collapsible.isExpanded()  # collapsed until asked for
    for name in ADVANCED:
        assert len(getattr(widget, name).tooltip) > 40, name  # says what it does
    for name in ("n_estimators", "width_m", "max_depth", "max_offset", "smoothing"):
        assert f"Default (napari): {getattr(widget, name).value:g}" in getattr(
            widget, name).tooltip
    assert widget.preset.current_choice.startswith("napari: ")  # named for its use


def test_more_channels_lists_neither_the_image_nor_outputs(make_napari_viewer, finish):
    from napari_plugin._widget import JungleWidget

    viewer = make_napari_viewer()
    image, truth = stripes_and_checks()
    layer = viewer.add_image(image, name="texture")
    other = viewer.add_image(image + 1, name="other")
    widget = JungleWidget(viewer)
    assert widget.image.value is None  # two images, neither obvious: the user chooses
    assert "Choose the image" in widget.status.value
    widget.image.value = layer
    assert widget.channel_layers.choices == (other,)
    viewer.add_labels(strokes(truth), name="scribbles")
    assert widget.scribbles.value is viewer.layers["scribbles"]  # the only fit
    widget.train()
    finish(widget)
    assert "texture uncertainty" in viewer.layers
    assert widget.channel_layers.choices == (other,)
    assert widget.image.choices == (None, layer, other)
    widget._fill_apply_menu()  # as when the user opens 'Apply to'
    assert [action.text() for action in widget.apply_menu.actions()] == ["texture", "other"]
    widget.apply_menu.actions()[1].trigger()  # segments 'other' with the model
    finish(widget)
    assert "other segmentation" in viewer.layers
    assert widget.scribbles.choices == (None, viewer.layers["scribbles"])
    widget.image.value = other
    assert widget.channel_layers.choices == (layer,)


def test_the_detail_slider_sets_dags_and_depth_around_the_presets(make_napari_viewer):
    from napari_plugin._panel import DETAIL_STEPS
    from napari_plugin._widget import JungleWidget

    widget = JungleWidget(make_napari_viewer())
    middle = widget.detail.value
    preset = (widget.n_estimators.value, widget.max_depth.value)  # the preset's: 3, 12
    assert DETAIL_STEPS[middle - 1] == (1, 0) and preset == (3, 12)
    widget.detail.value = widget.detail.min  # fastest
    assert (widget.n_estimators.value, widget.max_depth.value) == (1, 10)
    widget.detail.value = widget.detail.max  # most detail
    assert (widget.n_estimators.value, widget.max_depth.value) == (9, 14)
    assert "Default (napari): 3." in widget.n_estimators.tooltip  # the preset's, not the slider's
    widget.mode.value = "3-D volume"  # another preset: the slider's position applies to it
    volume_preset = load_preset("napari_volume").jungle_params
    assert widget.max_depth.value == volume_preset["max_depth"] + 2
    assert len(widget.detail.tooltip) > 40


def test_the_model_menu_saves_and_loads(make_napari_viewer, monkeypatch, tmp_path):
    from napari_plugin import _widget

    asked = []
    monkeypatch.setattr(_widget.JungleWidget, "_ask_save", lambda self, *_: asked.append("save"))
    monkeypatch.setattr(_widget.JungleWidget, "_ask_load", lambda self, *_: asked.append("load"))
    widget = _widget.JungleWidget(make_napari_viewer())
    assert [a.text() for a in widget.model_menu.actions()] == ["Save model...", "Load model..."]
    for action in widget.model_menu.actions():
        action.trigger()
    assert asked == ["save", "load"]


def test_the_dock_keeps_its_width(make_napari_viewer, finish):
    from qtpy.QtWidgets import QApplication

    from napari_plugin._widget import JungleWidget

    viewer = make_napari_viewer(show=True)
    widget = JungleWidget(viewer)
    dock = viewer.window.add_dock_widget(widget, name="jungleseg")
    image, truth = stripes_and_checks()
    viewer.add_image(image, name="a texture layer with a long, long name, as files have")
    viewer.add_labels(strokes(truth), name="scribbles")
    QApplication.processEvents()
    before = (dock.width(), widget.native.width())
    widget._say("Failed: " + "a very long message naming a file " * 10)
    QApplication.processEvents()
    assert (dock.width(), widget.native.width()) == before
    assert widget.status.value.endswith("...") and "file" in widget.status.tooltip
    widget.collapsible.expand(animate=False)
    for mode in ("3-D volume", "2-D slices"):  # other presets, other offset units
        widget.mode.value = mode
        QApplication.processEvents()
        assert (dock.width(), widget.native.width()) == before
    widget.train()
    finish(widget)
    QApplication.processEvents()
    assert (dock.width(), widget.native.width()) == before
    assert widget.status.value.startswith("Done")
