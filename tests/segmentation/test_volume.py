"""Volume segmentation: training on paint on a few slices, whole and tiled volumes (equal
with the margin, different without), 2-D and volume models refusing each other's input,
and model files of volume models."""
import dataclasses

import numpy as np
import pytest

from jungleseg import (
    ColourFeatures,
    JungleSegmenter,
    VolumeFeatures,
    load_model,
    save_model,
    segment,
    segment_prepared,
)
from jungleseg.features import Samples
from jungleseg.segmentation import _volume

SPACING = (0.3, 0.1, 0.1)


def ball_volume(shape=(20, 48, 48), seed=0):
    """A noisy bright ball (label 2) in a dark background (label 1), round in micrometres
    on anisotropic voxels."""
    rng = np.random.default_rng(seed)
    z, y, x = np.indices(shape)
    centre = [n // 2 for n in shape]
    r2 = sum(((a - c) * s) ** 2 for a, c, s in zip((z, y, x), centre, SPACING))
    truth = np.where(r2 < 1.6 ** 2, 2, 1).astype(np.uint8)
    volume = (truth == 2) + rng.normal(0, 0.7, shape)
    return volume.astype(np.float32), truth


@pytest.fixture(scope="module")
def volume_model():
    volume, truth = ball_volume()
    paint = np.zeros_like(truth)
    paint[6], paint[10] = truth[6], truth[10]  # two painted slices
    family = VolumeFeatures(SPACING, max_offset=0.6, smoothing_scales=(0.2, 0.4),
                            box_filters=(0.3,))
    model = JungleSegmenter(family, n_estimators=2, max_depth=8, max_width=32,
                            n_candidate_features=30, sampling="balanced",
                            samples_per_image=3000, ignore=(0,), random_state=0)
    return model.fit([volume], [paint]), volume, truth


def test_training_on_two_slices_segments_the_volume(volume_model):
    model, volume, truth = volume_model
    labels = model.predict(volume)
    assert labels.shape == truth.shape and model.predict_proba(volume).shape == (20, 48, 48, 2)
    assert np.mean(labels == truth) > 0.95
    far = np.r_[0:3, 15:20]  # slices far from the paint
    assert np.mean(labels[far] == truth[far]) > 0.95
    painted = truth[[6, 10]]
    assert model.n_samples_ == sum(min(1500, int((painted == c).sum())) for c in (1, 2))


def test_volume_traversal_equals_the_sample_traversal(volume_model):
    model, volume, _ = volume_model
    jungle = model.jungle_
    store = jungle.family.prepare([volume])
    rng = np.random.default_rng(1)
    z, y, x = (rng.integers(0, n, 400) for n in volume.shape)
    image = np.zeros(400, np.int32)
    samples = Samples(image, store.rows(image, z, y), x.astype(np.int32))
    proba = jungle.predict_volume(store)
    np.testing.assert_array_equal(jungle.predict_proba(store, samples), proba[z, y, x])
    np.testing.assert_array_equal(jungle.predict_volume(store, slices=[3, 7]), proba[[3, 7]])
    labels, _ = segment_prepared(jungle, store)
    np.testing.assert_array_equal(labels, segment(jungle, volume)[0])
    with pytest.raises(ValueError, match="traversed by predict_volume"):
        jungle.predict_image(store)


@pytest.mark.parametrize("smoothing", [0, 2])
def test_tiled_volume_equals_whole_and_needs_the_margin(volume_model, monkeypatch, smoothing):
    model, volume, _ = volume_model
    jungle = model.jungle_
    whole_labels, whole = segment(jungle, volume, smoothing=smoothing)
    labels, proba = segment(jungle, volume, tile=(6, 20, 17), smoothing=smoothing)
    np.testing.assert_array_equal(proba, whole)
    np.testing.assert_array_equal(labels, whole_labels)
    monkeypatch.setattr(VolumeFeatures, "margin", lambda self, tile=None: (0, 0, 0))
    _, cut = segment(jungle, volume, tile=(6, 20, 17), smoothing=0)
    assert not np.array_equal(cut, segment(jungle, volume, smoothing=0)[1])


def test_volume_labels_follow_the_prior_power(volume_model):
    model, volume, _ = volume_model
    # balanced samples give equal shares; say class 1 had 97 % of them instead
    jungle = dataclasses.replace(model.jungle_, metadata={**model.jungle_.metadata,
                                                          "class_shares": [0.97, 0.03]})
    plain, proba = segment(jungle, volume)
    labels, kept = segment(jungle, volume, prior_power=1.0)
    assert kept.tobytes() == proba.tobytes()
    weights = np.array([1 / 0.97, 1 / 0.03], np.float32)
    np.testing.assert_array_equal(labels, jungle.classes[np.argmax(proba * weights, axis=3)])
    assert (labels == 2).sum() > (plain == 2).sum()
    np.testing.assert_array_equal(segment(jungle, volume, tile=(6, 20, 17),
                                          prior_power=1.0)[0], labels)


def test_smoothing_box_has_equal_physical_size():
    family = VolumeFeatures(SPACING)
    assert _volume.smoothing_halves(family, 3) == (1, 3, 3)
    assert _volume.smoothing_halves(family, 0) == (0, 0, 0)


def test_two_d_and_volume_models_refuse_each_other(volume_model, tmp_path):
    model, volume, _ = volume_model
    with pytest.raises(ValueError, match=r"volume model reads \(D, H, W\) volumes; got a 2-D"):
        segment(model.jungle_, volume[0])
    grey = JungleSegmenter(ColourFeatures(4, input="grey", smoothing_scales=(1.0,)),
                           n_estimators=1, max_depth=4, samples_per_image=200, random_state=0)
    grey.fit([volume[10]], [np.where(volume[10] > 0.5, 2, 1)])
    with pytest.raises(ValueError, match=r"2-D model reads \(H, W\) images; got an array of "
                                         r"shape \(20, 48, 48\)"):
        segment(grey.jungle_, volume)
    with pytest.raises(ValueError, match="2-D model reads stores of 2-D images"):
        segment_prepared(grey.jungle_, model.jungle_.family.prepare([volume]))
    path = save_model(model.jungle_, tmp_path / "volume.h5")
    loaded = load_model(path)
    assert loaded.family == model.jungle_.family and loaded.family.spacing == SPACING
    np.testing.assert_array_equal(segment(loaded, volume)[1], segment(model.jungle_, volume)[1])
    with pytest.raises(ValueError, match="got a 2-D image"):
        segment(loaded, volume[0])


def test_model_files_refuse_probes_beyond_the_volume_reach(volume_model, tmp_path):
    import h5py

    from jungleseg import ModelFileError

    from ..test_io import _restamp

    model, _, _ = volume_model
    path = save_model(model.jungle_, tmp_path / "volume.h5")
    with h5py.File(path, "r+") as f:
        kind = f["dags/0/feature_kind"][()]
        params = f["dags/0/feature_params"][()]
        split = np.flatnonzero(f["dags/0/left"][()] >= 0)[0]
        assert kind[split] >= 10  # a volume kind
        params[split, 0] = 50  # fifty slices away: outside the padded store
        f["dags/0/feature_params"][...] = params
        _restamp(f)  # a forged checksum: the validation behind it must refuse the probe
    with pytest.raises(ModelFileError, match="within the reach"):
        load_model(path)


def test_labels_must_match_the_volume():
    volume, truth = ball_volume((6, 16, 16))
    model = JungleSegmenter(VolumeFeatures(SPACING, max_offset=0.3), n_estimators=1,
                            max_depth=3, random_state=0)
    with pytest.raises(ValueError, match=r"image 0 is \(6, 16, 16\) but its labels are"):
        model.fit([volume], [truth[0]])
    with pytest.raises(ValueError, match="guided_eps"):
        model.set_params(smoothing=2, guided_eps=0.1).fit([volume], [truth])
