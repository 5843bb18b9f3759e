import numpy as np
import pytest

from jungleseg import sample_pixels


@pytest.fixture
def labels():
    rng = np.random.default_rng(0)
    a = rng.choice([0, 1, 2, 255], size=(30, 40), p=[0.6, 0.3, 0.05, 0.05])
    b = np.zeros((10, 12), int)
    b[2:4, 3:5] = 2
    return [a, b]


def test_random_sampling_skips_ignored_and_unknown(labels):
    s = sample_pixels(labels, classes=[1, 2], per_image=50, ignore=(255, 0), seed=1)
    values = np.array([labels[i][r, c] for i, r, c in zip(s.image, s.row, s.col)])
    assert set(values) <= {1, 2}
    np.testing.assert_array_equal(np.array([1, 2])[s.label], values)
    assert (s.image == 0).sum() == 50 and (s.image == 1).sum() == 4  # all four there
    assert len(set(zip(s.image, s.row, s.col))) == len(s)  # without replacement


def test_all_and_balanced(labels):
    every = sample_pixels(labels, [0, 1, 2], "all", ignore=(255,))
    assert len(every) == sum((lab != 255).sum() for lab in labels)
    bal = sample_pixels(labels, [0, 1, 2], "balanced", per_image=60, ignore=(255,), seed=3)
    counts = np.bincount(bal.label[bal.image == 0], minlength=3)
    assert counts.min() == counts.max() == 20


def test_sampling_is_deterministic_and_errors_are_named(labels):
    a = sample_pixels(labels, [0, 1, 2], per_image=20, seed=4)
    b = sample_pixels(labels, [0, 1, 2], per_image=20, seed=4)
    np.testing.assert_array_equal(a.row, b.row)
    with pytest.raises(ValueError, match="strategy"):
        sample_pixels(labels, [0, 1], "stratified")
    with pytest.raises(ValueError, match="no labelled pixels"):
        sample_pixels(labels, [7])


def test_label_values_and_sparse_volumes():
    from jungleseg.segmentation._sampling import label_values

    paint = np.zeros((6, 20, 30), np.uint8)
    paint[2, 3:5, 4:9] = 2
    paint[4, 10, 10:20] = 5
    np.testing.assert_array_equal(label_values(paint), [0, 2, 5])
    np.testing.assert_array_equal(label_values(np.full((3, 3), 7, np.int16)), [7])
    samples = sample_pixels([paint], np.array([2, 5]), "all", ignore=(0,))
    assert len(samples) == 20
    z, y = samples.row // 20, samples.row % 20  # row z H + y of a volume
    np.testing.assert_array_equal(paint[z, y, samples.col], np.array([2, 5])[samples.label])


def test_crop_to_nonzero_keeps_every_nonzero_pixel_and_every_sample():
    from jungleseg.segmentation._sampling import crop_to_nonzero

    rng = np.random.default_rng(5)
    body = np.zeros((20, 30), np.float32)
    body[4:9, 10:14] = rng.uniform(1, 3, (5, 4)).astype(np.float32)
    empty = np.zeros((6, 7), np.float32)
    labels = [np.where(body > 0, 1, 0), np.zeros((6, 7), int)]
    labels[0][15, 2] = 2  # labelled where the depth is 0: its box must still hold it
    labels[1][3, 4] = 1
    samples = sample_pixels(labels, [1, 2], "all", ignore=(0,))
    crops, moved = crop_to_nonzero([body, empty], samples)
    assert crops[0].shape == (12, 12) and crops[1].shape == (1, 1)  # rows 4-15, cols 2-13
    assert np.count_nonzero(crops[0]) == np.count_nonzero(body)
    images = [body, empty]
    for i, r, c, mr, mc in zip(samples.image, samples.row, samples.col, moved.row, moved.col):
        assert crops[i][mr, mc] == images[i][r, c]
    np.testing.assert_array_equal(moved.image, samples.image)
    np.testing.assert_array_equal(moved.label, samples.label)
    nothing = sample_pixels([np.ones((3, 3), int)], [1], per_image=1)
    assert crop_to_nonzero([np.zeros((3, 3))], nothing)[0][0].shape == (1, 1)


def test_trainable_boxes_bound_every_crop_and_equal_it_when_every_pixel_is_sampled():
    from jungleseg.segmentation._sampling import crop_to_nonzero, trainable_boxes

    rng = np.random.default_rng(8)
    images, labels = [], []
    for _ in range(6):
        image = np.zeros((25, 35), np.float32)
        r, c = rng.integers(0, 20), rng.integers(0, 30)
        image[r:r + 5, c:c + 5] = 2.0
        label = np.where(image > 0, 1, 0)
        label[rng.integers(0, 25), rng.integers(0, 35)] = 3  # a class where the depth is 0
        label[rng.integers(0, 25), rng.integers(0, 35)] = 255  # ignored: outside any box
        images.append(image)
        labels.append(label)
    labels.append(np.full((4, 4), 255))  # nothing to train on: the empty box
    images.append(np.zeros((4, 4), np.float32))
    boxes = trainable_boxes(images, labels, [1, 3])
    assert boxes[-1] == (1, 1)
    every = sample_pixels(labels, [1, 3], "all", ignore=(0, 255))
    assert [im.shape for im in crop_to_nonzero(images, every)[0]][:-1] == boxes[:-1]
    for seed in range(3):  # fewer samples: never a larger box
        some = sample_pixels(labels, [1, 3], "random", per_image=3, ignore=(0, 255), seed=seed)
        for crop, box in zip(crop_to_nonzero(images, some)[0], boxes):
            assert crop.shape[0] <= box[0] and crop.shape[1] <= box[1]
    ignored = [np.where(lab == 255, 0, lab) for lab in labels]
    assert trainable_boxes(images, ignored, [1, 3]) == boxes  # 255 never widened a box


def test_trained_classes_say_when_the_unlabelled_value_left_one_class():
    from jungleseg.segmentation._sampling import trained_classes

    assert trained_classes(np.array([0, 1, 2, 255]), {0, 255}).tolist() == [1, 2]
    with pytest.raises(ValueError, match=r"found \[1\]; label value \[0\] means unlabelled.*"
                                         r"sampling\.ignore=\[\]"):
        trained_classes(np.array([0, 1]), {0})
    with pytest.raises(ValueError, match=r"found \[0\]; label value \[255\] means unlabelled "
                                         r".*: give the classes values other than 255, or"):
        trained_classes(np.array([0, 255]), {255})  # a 0/255 mask: not 'from 1'
    with pytest.raises(ValueError, match=r"found \[3\]$"):  # nothing set aside: no hint
        trained_classes(np.array([3]), {0})
