import numpy as np
import pytest

from jungleseg import confusion_matrix, evaluate


def test_voc_jaccard_by_hand():
    truth = [np.array([[0, 0, 1, 1], [2, 2, 255, 1]])]
    pred = [np.array([[0, 1, 1, 1], [2, 0, 2, 9]])]
    cm = confusion_matrix(truth, pred, classes=[0, 1, 2])
    # class 0: TP 1, FP 1 (a 2 predicted 0), FN 1 (a 0 predicted 1)
    np.testing.assert_array_equal(cm, [[1, 1, 0, 0], [0, 2, 0, 1], [1, 0, 1, 0]])
    s = evaluate(truth, pred, classes=[0, 1, 2])
    # the 9 counts against class 1 in the truth but for no class in the predictions
    assert s.per_class_jaccard == pytest.approx([1 / 3, 2 / 4, 1 / 2])
    assert s.mean_jaccard == pytest.approx((1 / 3 + 1 / 2 + 1 / 2) / 3)
    assert s.pixel_accuracy == pytest.approx(4 / 7)
    assert s.mean_class_accuracy == pytest.approx((1 / 2 + 2 / 3 + 1 / 2) / 3)
    d = s.as_dict(["a", "b", "c"])
    assert set(d) == {"mean_jaccard", "per_class_jaccard", "pixel_accuracy",
                      "mean_class_accuracy"}


def test_one_matrix_over_the_whole_set():
    truth = [np.zeros((2, 2), int), np.ones((2, 2), int)]
    pred = [np.zeros((2, 2), int), np.zeros((2, 2), int)]
    s = evaluate(truth, pred, classes=[0, 1])
    assert s.per_class_jaccard == pytest.approx([0.5, 0.0])


def test_shape_mismatch_is_named():
    with pytest.raises(ValueError, match="shapes"):
        confusion_matrix([np.zeros((2, 2))], [np.zeros((2, 3))], [0])
    # as many pixels, other axes: a transposed prediction is not scored
    with pytest.raises(ValueError, match=r"image 1: truth and prediction shapes differ: "
                                         r"\(2, 3\) vs \(3, 2\)"):
        confusion_matrix([np.zeros((2, 2)), np.zeros((2, 3))],
                         [np.zeros((2, 2)), np.zeros((3, 2))], [0])


def test_unequal_numbers_of_images_are_named():
    """Lists of different lengths are refused, not scored on their common part."""
    truth = [np.zeros((2, 2), int), np.ones((2, 2), int)]
    with pytest.raises(ValueError, match="different numbers of label images: image 1 has no "
                                         "prediction"):
        evaluate(truth, truth[:1], classes=[0, 1])
    with pytest.raises(ValueError, match="image 2 has no truth"):
        evaluate(truth, iter(truth * 2), classes=[0, 1])


def test_confusion_plot_is_written(tmp_path):
    import cv2

    from jungleseg.evaluate import plot_confusion

    plot_confusion(np.array([[5, 1, 0], [2, 7, 1]]), ["sky", "tree"], tmp_path / "c.png")
    assert cv2.imread(str(tmp_path / "c.png")) is not None


def test_class_mismatch_leaves_out_ignored_values():
    """A Kinect model has no background class; the dataset's background 0 is no mismatch
    when 0 is ignored, and a dataset class the model lacks is none either."""
    from jungleseg.evaluate import class_mismatch
    from jungleseg.jungle import Jungle

    model = Jungle([], np.arange(1, 4), None, {}, {"class_names": {"1": "a", "2": "b",
                                                                   "3": "c"}})
    dataset = {0: "background", 1: "a", 2: "b", 3: "c", 4: "d"}
    assert class_mismatch(model, dataset, ignore=(0, 255)) is None
    assert "model's classes [3]" in class_mismatch(model, {1: "a", 2: "b"})
    assert "'c' in the model but 'z'" in class_mismatch(model, {**dataset, 3: "z"})


def test_an_unseen_class_is_scored_as_zero():
    from jungleseg import ColourFeatures, JungleSegmenter
    from jungleseg.datasets.faces import render_faces
    from jungleseg.evaluate import evaluate_jungle

    images, labels = render_faces(3, seed=0, size=(32, 32))
    train = [np.where(lab == 2, 1, lab) for lab in labels]  # hair never seen
    jungle = JungleSegmenter(ColourFeatures(max_offset=4), n_estimators=1, max_depth=3,
                             samples_per_image=100, random_state=0).fit(images, train).jungle_
    assert 2 not in jungle.classes and (np.asarray(labels) == 2).any()
    scores, report = evaluate_jungle(jungle, images, labels, class_names={2: "hair"})
    assert report["unseen_classes"] == [2] and report["per_class_jaccard"]["hair"] == 0
    assert scores.confusion.shape[0] == len(jungle.classes) + 1
    hair = scores.confusion[-1]
    assert hair.sum() == (np.asarray(labels) == 2).sum()  # every hair pixel counted
