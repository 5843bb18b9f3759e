"""What images training and segmentation accept, at the Python entry points."""
import numpy as np
import pytest
from sklearn.exceptions import NotFittedError

from jungleseg import (
    ColourFeatures,
    DepthFeatures,
    JungleClassifier,
    JungleSegmenter,
    evaluate_jungle,
    segment,
    segment_frames,
    segment_prepared,
    segment_to,
    segment_volume,
)
from jungleseg.datasets.faces import render_faces
from jungleseg.segmentation import checked_image


@pytest.fixture(scope="module")
def faces():
    images, labels = render_faces(4, seed=1, size=(40, 48))
    return list(images), list(labels)


def _segmenter(**kw):
    return JungleSegmenter(ColourFeatures(max_offset=5, max_box=2, **kw), n_estimators=2,
                           max_width=8, max_depth=5, n_candidate_features=10,
                           samples_per_image=200, random_state=0)


@pytest.fixture(scope="module")
def rgb_model(faces):
    images, labels = faces
    return _segmenter().fit(images[:3], labels[:3])


@pytest.fixture(scope="module")
def grey_model(faces):
    images, labels = faces
    grey = [im.mean(axis=2).astype(np.uint8) for im in images]
    return _segmenter(input="grey", smoothing_scales=(1.0,)).fit(grey[:3], labels[:3]), grey


def test_the_same_picture_in_other_dtypes_gives_the_same_labels(rgb_model, grey_model, faces):
    image = faces[0][3]
    want = rgb_model.predict(image)
    for other in (image.astype(np.int64), image.astype(np.float32) / 255, image / 255.0,
                  image.astype(np.uint16) * 257):
        np.testing.assert_array_equal(rgb_model.predict(other), want, err_msg=str(other.dtype))
    model, grey = grey_model
    assert model.jungle_.metadata["input_values"]["units"] == "uint8"
    want = model.predict(grey[3])
    for other in (grey[3].astype(np.float32) / 255, grey[3] / 255.0,
                  grey[3].astype(np.uint16) * 257, grey[3].astype(np.int32)):
        np.testing.assert_array_equal(model.predict(other), want, err_msg=str(other.dtype))


@pytest.mark.parametrize("make, message", [
    (lambda im: im.astype(np.float32), "must lie in \\[0, 1\\]"),
    (lambda im: np.where(im > 90, np.nan, im / 255.0), "NaN or infinite"),
    (lambda im: np.full(im.shape, np.nan), "NaN or infinite"),
    (lambda im: np.where(im > 90, -np.inf, im / 255.0), "NaN or infinite"),
    (lambda im: im.astype(np.complex128), "complex"),
    (lambda im: im > 90, "boolean"),
    (lambda im: im.astype(object), "dtype object"),
    (lambda im: im.astype(np.int16) * 4, "8-bit values"),
])
def test_hostile_arrays_are_refused_for_rgb_and_grey_models(rgb_model, grey_model, faces,
                                                            make, message):
    model, grey = grey_model
    for estimator, image in ((rgb_model, faces[0][3]), (model, grey[3])):
        with pytest.raises(ValueError, match=message):
            estimator.predict(make(image))
        with pytest.raises(ValueError, match=message):
            segment(estimator.jungle_, make(image), tile=16)


def test_floats_on_another_scale_are_refused(faces):
    images, labels = faces
    floats = [im.astype(np.float32) * 3 for im in images]  # channels input on its own scale
    model = JungleSegmenter(ColourFeatures(max_offset=5, max_box=2, input="channels",
                                           n_channels=3), n_estimators=1, max_depth=4,
                            samples_per_image=100, random_state=0).fit(floats[:3], labels[:3])
    values = model.jungle_.metadata["input_values"]
    assert values["units"] == "float" and values["range"][1] > 700
    model.predict(floats[3])
    with pytest.raises(ValueError, match="far outside the training range"):
        model.predict(floats[3] * 1000)
    with pytest.raises(ValueError, match="NaN"):
        model.fit([np.full((8, 8, 3), np.nan)] * 2, [lab[:8, :8] for lab in labels[:2]])


def test_label_images_must_hold_integers(faces):
    images, labels = faces
    cases = [([lab.astype(np.float32) for lab in labels], "float32: labels must be integer "
              "class values; its values are whole numbers"),
             ([lab.astype(np.float32) / 10 for lab in labels], "float32: labels must be integer"),
             ([lab.astype(str) for lab in labels], "holds str"),
             ([labels[0].astype(object), labels[1].astype(object)], None)]
    mixed = cases[-1][0]
    mixed[1][0, 0] = "a"
    cases[-1] = (mixed, "label image 1 holds int, str values")
    for bad, message in cases:
        with pytest.raises(ValueError, match=message.replace("(", "\\(")):
            _segmenter().fit(images[:len(bad)], bad)


def test_predict_before_fit_is_not_fitted_error(faces):
    with pytest.raises(NotFittedError):
        JungleSegmenter().predict(faces[0][0])
    with pytest.raises(NotFittedError):
        JungleSegmenter().predict_proba(faces[0][0])
    with pytest.raises(NotFittedError):
        JungleClassifier().predict(np.zeros((2, 3)))


def test_models_without_a_record_keep_their_old_reading(grey_model):
    """Format-1 models have no input_values: grey values are read as they come."""
    model, grey = grey_model
    family = model.jungle_.family
    assert checked_image(grey[0], family, None) is grey[0]
    as_float = checked_image(grey[0].astype(np.float32), family, None)
    assert as_float.dtype == np.float32 and as_float.max() > 1


def test_a_picture_of_the_wrong_kind_is_named(grey_model, faces):
    """A colour picture given to a grey or a depth model is named as one (not taken for a
    stack), in fit and in segmentation."""
    model, _ = grey_model
    picture = faces[0][3]
    for call in (model.predict, lambda im: segment(model.jungle_, im, tile=16)):
        with pytest.raises(ValueError, match=r"reads grey images \(H, W\); got an image of 3 "
                                             r"channels, shape \(40, 48, 3\)"):
            call(picture)
    depth = JungleSegmenter(DepthFeatures(max_offset=0.3, focal_length=50.0), n_estimators=1,
                            max_depth=3, samples_per_image=100, random_state=0)
    with pytest.raises(ValueError, match=r"image 0: a depth image must be 2-D \(H, W\), got "
                                         r"shape \(40, 48, 3\)"):
        depth.fit(faces[0][:2], faces[1][:2])
    millimetres = [im[..., 0].astype(np.uint16) * 10 + 500 for im in faces[0]]
    depth.fit(millimetres[:2], faces[1][:2])
    with pytest.raises(ValueError, match=r"reads depth frames \(H, W\); got an image of 3"):
        depth.predict(picture)


def test_several_images_given_for_one_point_to_segment_frames(rgb_model, faces):
    """predict takes one image; a list of them (scikit-learn's habit) is refused, saying
    how to segment several."""
    with pytest.raises(ValueError, match=r"reads \(H, W, C\) images; got an array of shape "
                                         r"\(4, 40, 48, 3\): segment images, .* one by one "
                                         r"\(segment_frames\)"):
        rgb_model.predict(faces[0])


def test_the_estimator_given_for_its_model_is_named(grey_model, faces):
    model, grey = grey_model
    store = model.jungle_.family.prepare([grey[0]])
    calls = {"segment": lambda m: segment(m, grey[0]),
             "segment_frames": lambda m: list(segment_frames(m, grey[:1])),
             "segment_to": lambda m: segment_to(m, grey[0], np.zeros(grey[0].shape, np.uint8)),
             "segment_prepared": lambda m: segment_prepared(m, store),
             "evaluate_jungle": lambda m: evaluate_jungle(m, grey[:1], faces[1][:1])}
    for name, call in calls.items():
        with pytest.raises(TypeError, match=f"^{name} takes a model .* JungleSegmenter: pass "
                                            "its jungle_"):
            call(model)
        call(model.jungle_)
    with pytest.raises(TypeError, match="^segment_volume takes a model"):
        segment_volume(model, np.stack(grey[:2]))
