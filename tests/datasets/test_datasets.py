"""load_benchmark: the one entry point the command line uses for every data set."""
import numpy as np
import pytest

from jungleseg.datasets import BENCHMARKS, load_benchmark
from jungleseg.datasets.faces import render_faces, save_faces


def test_synthetic_sets_render_with_names_and_colours():
    faces = load_benchmark("faces", "train", n=3)
    assert len(faces.images) == len(faces.labels) == 3
    assert faces.class_names[0] == "background" and len(faces.class_colours) == 8
    kinect = load_benchmark("kinect", "test", n=2)
    assert kinect.images[0].dtype == np.float32 and kinect.class_names[5] == "neck"
    other = load_benchmark("faces", "test", n=3)  # the test part is rendered with another seed
    assert not np.array_equal(faces.images[0], other.images[0])


def test_a_generated_folder_is_read_back(tmp_path):
    images, labels = render_faces(2, seed=5, size=(40, 50))
    save_faces(tmp_path, images, labels)
    split = load_benchmark("faces", "train", data=tmp_path)
    np.testing.assert_array_equal(np.array(split.images), images)


@pytest.mark.parametrize("name", ["stanford", "fasseg"])
def test_real_sets_come_with_their_classes(name, data_root):
    split = load_benchmark(name, "test", data=data_root, n=2)
    assert len(split.images) == 2 and split.images[0].shape[:2] == split.labels[0].shape
    assert len(split.class_names) == len(split.class_colours) >= 6


def test_unknown_names_and_parts_are_refused():
    assert set(BENCHMARKS) == {"kinect", "faces", "fasseg", "stanford"}
    with pytest.raises(ValueError, match="unknown dataset"):
        load_benchmark("cityscapes")
    with pytest.raises(ValueError, match="part"):
        load_benchmark("faces", "validation")
