"""segment_file: an image file into a label file (PNG, or zarr chunk by chunk), equal to
segmenting the array, with the probabilities beside when asked."""
import dataclasses

import cv2
import numpy as np
import pytest
from PIL import Image

from jungleseg import ColourFeatures, JungleSegmenter, segment
from jungleseg.datasets.faces import render_faces
from jungleseg.imageio import read_labels
from jungleseg.segmentation import segment_file


@pytest.fixture(scope="module")
def model_and_image():
    images, labels = render_faces(3, seed=0, size=(40, 48))
    seg = JungleSegmenter(ColourFeatures(max_offset=4), n_estimators=1, max_depth=4,
                          max_width=4, samples_per_image=200, random_state=0)
    return seg.fit(list(images), list(labels)).jungle_, images[0]


@pytest.mark.parametrize("suffix", [".png", ".zarr"])
def test_a_file_is_segmented_as_its_array(model_and_image, tmp_path, suffix):
    jungle, image = model_and_image
    cv2.imwrite(str(tmp_path / "a.png"), np.ascontiguousarray(image[..., ::-1]))
    n = segment_file(jungle, tmp_path / "a.png", tmp_path / f"a_labels{suffix}", tile=16)
    whole = segment(jungle, image, probabilities=False)[0]
    assert n == whole.size
    assert np.array_equal(np.asarray(read_labels(tmp_path / f"a_labels{suffix}")), whole)


def test_probabilities_are_written_beside(model_and_image, tmp_path):
    jungle, image = model_and_image
    cv2.imwrite(str(tmp_path / "a.png"), np.ascontiguousarray(image[..., ::-1]))
    segment_file(jungle, tmp_path / "a.png", tmp_path / "a_labels.png", probabilities=True)
    proba = np.load(tmp_path / "a_labels_proba.npy")
    np.testing.assert_allclose(proba, segment(jungle, image)[1])


def test_segment_file_writes_palette_labels_and_probabilities(tmp_path):
    images, labels = render_faces(2, seed=0, size=(32, 40))
    jungle = JungleSegmenter(ColourFeatures(max_offset=4), n_estimators=1, max_depth=3,
                             samples_per_image=100, random_state=0).fit(images, labels).jungle_
    jungle.metadata["class_colours"] = {str(c): [10 * int(c), 0, 0] for c in jungle.classes}
    cv2.imwrite(str(tmp_path / "in.png"), images[0][..., ::-1])
    assert segment_file(jungle, tmp_path / "in.png", tmp_path / "out.png",
                        probabilities=True) == 32 * 40
    picture = Image.open(tmp_path / "out.png")
    expected, proba = segment(jungle, images[0])
    np.testing.assert_array_equal(np.asarray(picture), expected)
    assert picture.getpalette()[3:6] == [10, 0, 0]
    np.testing.assert_allclose(np.load(tmp_path / "out_proba.npy"), proba)


def test_tiled_files_hold_their_labels_in_the_smallest_type(model_and_image, tmp_path,
                                                            monkeypatch):
    from jungleseg.segmentation import _segment

    jungle, image = model_and_image
    jungle = dataclasses.replace(jungle, classes=jungle.classes.astype(np.int64))  # as loaded
    assert _segment.label_dtype(jungle) == np.uint8
    made = []
    tiled = _segment.segment_to

    def recording(jungle, image, labels, *rest):
        made.append(labels.dtype)
        return tiled(jungle, image, labels, *rest)

    monkeypatch.setattr(_segment, "segment_to", recording)
    cv2.imwrite(str(tmp_path / "a.png"), np.ascontiguousarray(image[..., ::-1]))
    segment_file(jungle, tmp_path / "a.png", tmp_path / "a_labels.png", tile=16)
    assert made == [np.uint8]
    assert np.array_equal(read_labels(tmp_path / "a_labels.png"),
                          segment(jungle, image, probabilities=False)[0])


@pytest.mark.parametrize("suffix", [".png", ".zarr"])
def test_a_stack_is_segmented_slice_by_slice(tmp_path, suffix):
    """A grey stack with a 2-D model: a label stack (TIFF for a .png target, or zarr),
    each slice as that slice alone, and the probabilities beside."""
    images, labels = render_faces(3, seed=0, size=(24, 28))
    grey = np.stack([cv2.cvtColor(im, cv2.COLOR_RGB2GRAY) for im in images])
    jungle = JungleSegmenter(ColourFeatures(max_offset=4, input="grey"), n_estimators=1,
                             max_depth=4, samples_per_image=100,
                             random_state=0).fit(list(grey), list(labels)).jungle_
    np.save(tmp_path / "stack.npy", grey)
    target = tmp_path / f"stack{suffix}"
    assert segment_file(jungle, tmp_path / "stack.npy", target, probabilities=True) == grey.size
    written = tmp_path / ("stack.tif" if suffix == ".png" else "stack.zarr")
    assert not (tmp_path / "stack.png").exists()
    got = np.asarray(read_labels(written))
    proba = np.load(tmp_path / "stack_proba.npy")
    for z in range(len(grey)):
        expected = segment(jungle, grey[z])
        np.testing.assert_array_equal(got[z], expected[0])
        np.testing.assert_allclose(proba[z], expected[1])


def _stop_after(n: int):
    """A ``stop`` that says True from its (n+1)-th question on."""
    asked = iter(range(1 << 30))
    return lambda: next(asked) >= n


@pytest.mark.parametrize("suffix", [".png", ".zarr"])
def test_a_label_file_appears_complete_or_not_at_all(model_and_image, tmp_path, suffix):
    """A stop between tiles, or an error after the label file was begun, writes nothing
    and leaves the previous labels as they were (a zarr used to be emptied at the start
    and left half written, its unwritten chunks reading as label 0)."""
    jungle, image = model_and_image
    cv2.imwrite(str(tmp_path / "a.png"), np.ascontiguousarray(image[..., ::-1]))
    target = tmp_path / f"labels{suffix}"
    whole = segment(jungle, image, probabilities=False)[0]
    assert segment_file(jungle, tmp_path / "a.png", target, tile=16, stop=_stop_after(99)) \
        == whole.size
    np.testing.assert_array_equal(read_labels(target), whole)
    before = sorted(p.name for p in tmp_path.rglob("*"))
    # stopped after two tiles of nine
    assert segment_file(jungle, tmp_path / "a.png", target, tile=16, stop=_stop_after(2)) is None
    np.save(tmp_path / "bright.npy", image.astype(np.float32))  # 0..255 as floats: refused
    with pytest.raises(ValueError, match="must lie in"):
        segment_file(jungle, tmp_path / "bright.npy", target, tile=16)
    np.testing.assert_array_equal(read_labels(target), whole)
    (tmp_path / "bright.npy").unlink()
    assert sorted(p.name for p in tmp_path.rglob("*")) == before  # nothing hidden beside


def test_a_stop_ends_a_volume_and_a_stack_between_tiles_and_slices(tmp_path):
    from jungleseg import VolumeFeatures, segment_to
    from jungleseg.datasets.cells3d import paint_slices, render_cell_volume

    volume, truth = render_cell_volume((8, 24, 24), seed=0)
    jungle = JungleSegmenter(VolumeFeatures(spacing=(0.3, 0.1, 0.1), max_offset=0.5),
                             n_estimators=1, max_depth=4, sampling="balanced", ignore=(0,),
                             random_state=0).fit([volume], [paint_slices(truth, [4])]).jungle_
    labels = np.zeros(volume.shape, np.uint8)
    assert segment_to(jungle, volume, labels, tile=(8, 12, 12), stop=_stop_after(1)) is False
    assert labels[:, 12:].max() == 0 and labels[:, :, 12:].max() == 0  # one tile of four
    assert segment_to(jungle, volume, labels, tile=(8, 12, 12)) is True
    np.testing.assert_array_equal(labels, segment(jungle, volume, probabilities=False)[0])
    np.save(tmp_path / "v.npy", volume)
    assert segment_file(jungle, tmp_path / "v.npy", tmp_path / "v.zarr", tile=12,
                        stop=_stop_after(1)) is None

    images, _ = render_faces(3, seed=0, size=(24, 28))
    grey = np.stack([cv2.cvtColor(im, cv2.COLOR_RGB2GRAY) for im in images])
    flat = JungleSegmenter(ColourFeatures(max_offset=4, input="grey"), n_estimators=1,
                           max_depth=4, samples_per_image=100, random_state=0).fit(
                               list(grey), [np.ones(g.shape, np.uint8) + (g > 99)
                                            for g in grey]).jungle_
    np.save(tmp_path / "stack.npy", grey)
    for suffix in (".png", ".zarr"):
        assert segment_file(flat, tmp_path / "stack.npy", tmp_path / f"stack{suffix}",
                            stop=_stop_after(1)) is None
    assert sorted(p.name for p in tmp_path.iterdir()) == ["stack.npy", "v.npy"]


def test_a_full_disk_is_an_error_naming_the_label_file(model_and_image, tmp_path, monkeypatch):
    """A chunk that cannot be written (a full disk) is an error naming the zarr label
    file, not a bare "[Errno 28]" under the input's name; nothing is left beside it."""
    import errno
    import os

    import zarr

    def full(self, key, value):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    jungle, image = model_and_image
    cv2.imwrite(str(tmp_path / "a.png"), np.ascontiguousarray(image[..., ::-1]))
    np.save(tmp_path / "stack.npy", np.stack([image, image]))
    monkeypatch.setattr(zarr.Array, "__setitem__", full)
    for source, tile in (("a.png", 16), ("a.png", None), ("stack.npy", None)):
        target = tmp_path / "labels.zarr"
        with pytest.raises(OSError) as caught:
            segment_file(jungle, tmp_path / source, target, tile=tile)
        assert str(caught.value) == (f"{target}: could not write this file "
                                     f"({os.strerror(errno.ENOSPC)})")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.png", "stack.npy"]
