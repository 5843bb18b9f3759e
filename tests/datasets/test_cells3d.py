"""Synthetic cell volumes: classes, anisotropy, the thin variant, stains, strokes."""
import numpy as np

from jungleseg.datasets.cells3d import (
    MEMBRANE,
    NUCLEUS,
    paint_slices,
    render_cell_volume,
)


def test_volumes_are_reproducible_and_hold_every_class():
    volume, labels = render_cell_volume((16, 96, 96), seed=4)
    again, same = render_cell_volume((16, 96, 96), seed=4)
    np.testing.assert_array_equal(volume, again)
    np.testing.assert_array_equal(labels, same)
    assert volume.dtype == np.float32 and labels.dtype == np.uint8
    assert set(np.unique(labels)) == {1, 2, 3}
    assert volume[labels == MEMBRANE].mean() > volume[labels == NUCLEUS].mean() \
        > volume[labels == 1].mean()


def run_lengths(mask):
    """Lengths of the runs of True along the last axis."""
    edge = np.zeros(mask.shape[:-1] + (1,), bool)
    step = np.diff(np.concatenate([edge, mask, edge], axis=-1).astype(np.int8), axis=-1)
    return np.argwhere(step == -1)[:, -1] - np.argwhere(step == 1)[:, -1]


def test_membranes_have_one_physical_thickness_on_anisotropic_voxels():
    _, labels = render_cell_volume((40, 120, 120), seed=0)
    membrane = labels == MEMBRANE
    # a 0.3 um shell crossed square on: 3 pixels of 0.1 um, 1 slice of 0.3 um
    assert np.median(run_lengths(membrane)) in (3, 4)
    assert np.median(run_lengths(np.moveaxis(membrane, 0, -1))) == 1


def test_thin_nuclei_look_like_membranes_within_a_slice():
    volume, labels = render_cell_volume((40, 96, 96), seed=1, thin=True)
    nucleus, membrane = volume[labels == NUCLEUS].mean(), volume[labels == MEMBRANE].mean()
    assert abs(nucleus - membrane) < 0.1 * nucleus
    plates = labels == MEMBRANE
    assert np.median(run_lengths(np.moveaxis(plates, 0, -1))) == 1  # one slice thick
    stains, same = render_cell_volume((40, 96, 96), seed=1, thin=True, channels=True)
    np.testing.assert_array_equal(same, labels)
    assert stains.shape == (40, 96, 96, 3)
    assert stains[..., 0][labels == NUCLEUS].mean() > 3 * stains[..., 0][labels == 1].mean()


def test_strokes_only_on_the_chosen_slices():
    _, labels = render_cell_volume((16, 96, 96), seed=2)
    paint = paint_slices(labels, [3, 9], fraction=0.02)
    assert [z for z in range(16) if paint[z].any()] == [3, 9]
    painted = paint > 0
    np.testing.assert_array_equal(paint[painted], labels[painted])
