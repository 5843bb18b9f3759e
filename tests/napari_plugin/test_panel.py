"""The panel in a real napari viewer under Xvfb: a short basic panel, a collapsed Advanced
section holding every other knob with its tooltip, layer lists without outputs, one width."""
import pytest

from .scenes import stripes_and_checks, strokes

napari = pytest.importorskip("napari")

#: The basic panel: image, scribbles (and New), preset, live update, Train, Save, Load and
#: Apply to (a layer and the button), in seven rows.
BASIC = ["image", "scribbles", "new_scribbles_button", "preset", "live", "train_button",
         "save_button", "load_button", "target", "apply_button"]
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


def test_more_channels_lists_neither_the_image_nor_outputs(make_napari_viewer):
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
    widget.wait()
    assert "texture uncertainty" in viewer.layers
    assert widget.channel_layers.choices == (other,)
    assert widget.image.choices == widget.target.choices == (None, layer, other)
    assert widget.scribbles.choices == (None, viewer.layers["scribbles"])
    widget.image.value = other
    assert widget.channel_layers.choices == (layer,)


def test_the_dock_keeps_its_width(make_napari_viewer):
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
    widget.wait()
    QApplication.processEvents()
    assert (dock.width(), widget.native.width()) == before
    assert widget.status.value.startswith("Done")
