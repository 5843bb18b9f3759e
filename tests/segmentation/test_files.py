"""segment_file: an image file into a label file (PNG, or zarr chunk by chunk), equal to
segmenting the array, with the probabilities beside when asked."""
import cv2
import numpy as np
import pytest

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
