"""The npe2 manifest (napari.yaml) is valid and names what the plugin offers."""


def test_manifest_is_valid():
    from npe2 import PluginManifest

    manifest = PluginManifest.from_distribution("jungleseg")
    manifest.validate_imports()
    assert manifest.name == "jungleseg"
    assert {w.display_name for w in manifest.contributions.widgets} == {
        "Decision jungle segmentation"}
    assert {s.key for s in manifest.contributions.sample_data} == {
        "cells", "face", "depth_body", "cells_volume", "cells_volume_channels"}
