"""Segmenting a file into a label file: PNG in the model's colours, probabilities."""
import cv2
import numpy as np
from PIL import Image

from jungleseg import ColourFeatures, JungleSegmenter, segment
from jungleseg.datasets.faces import render_faces
from jungleseg.segmentation._files import segment_file


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
