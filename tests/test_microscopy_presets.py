"""The microscopy presets (2-D ``microscopy``, 3-D ``volume`` and the napari widget's 3-D
``napari_volume``) load, train and segment through the command line on the shared real
microscopy data, cropped to a tiny size."""
import numpy as np
import pytest
import tifffile

from jungleseg.imageio import read_labels
from tests.cli.test_commands import FAST, REPO, run


def crops(data_root, tmp_path, planar: bool):
    """Crops of the membrane-stained ovule volume and its truth (1 background, 2 boundary):
    two volumes, or their middle slices as 2-D images."""
    folder = data_root / "microscopy" / "ovule_cells"
    volume, truth = np.load(folder / "volume.npy"), 1 + np.load(folder / "labels.npy")
    images, labels = tmp_path / "images", tmp_path / "labels"
    images.mkdir()
    labels.mkdir()
    for i, (y, x) in enumerate([(0, 0), (64, 64)]):
        block = (slice(10, 22), slice(y, y + 48), slice(x, x + 48))
        image, label = volume[block], truth[block].astype(np.uint8)
        if planar:
            image, label = image[6], label[6]
        tifffile.imwrite(images / f"crop{i}.tif", image)
        tifffile.imwrite(labels / f"crop{i}.tif", label)
    return images, labels


@pytest.mark.parametrize("preset, planar", [("microscopy", True), ("volume", False),
                                            ("napari_volume", False)])
def test_preset_trains_and_segments_real_crops(data_root, tmp_path, preset, planar):
    images, labels = crops(data_root, tmp_path, planar)
    model = tmp_path / "model.h5"
    spacing = [] if planar else ["--set", "features.spacing=[0.235, 0.15, 0.15]"]
    said = run("train", REPO / "configs" / f"{preset}.yaml", "--images", images,
               "--labels", labels, "--out", model, *FAST, *spacing, quiet=False)
    assert f"trained on 2 {'images' if planar else 'volumes'} in" in said.stdout
    out = tmp_path / "out"
    said = run("segment", model, images / "crop1.tif", "--out", out, quiet=False)
    assert f"segmented 1 {'image' if planar else 'volume'} (" in said.stdout
    segmented = sorted(out.glob("crop1*"))
    assert segmented, list(out.iterdir())
    result, truth = read_labels(segmented[0]), tifffile.imread(labels / "crop1.tif")
    assert result.shape == truth.shape
    assert np.mean(result == truth) > 0.6  # trained on this crop: well above chance
