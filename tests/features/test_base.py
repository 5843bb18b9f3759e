"""The family base class: round trips through files, parameters, equality."""
import pytest

from jungleseg.features import (
    ColourFeatures,
    DepthFeatures,
    TabularFeatures,
    family_from_dict,
)


@pytest.mark.parametrize("family", [TabularFeatures(4), DepthFeatures(0.3, 500.0),
                                    ColourFeatures(8, ["value", "box_sum"], 2, "grey", (1.5,)),
                                    ColourFeatures(4, centred=True),
                                    ColourFeatures(4, input="grey", gradient=True),
                                    ColourFeatures(4, box_filters=(2, 5))])
def test_family_round_trip(family):
    assert family_from_dict(family.to_dict()) == family



def test_a_segmenter_holding_a_family_clones():
    """``sklearn.base.clone`` (used by GridSearchCV and cross_val_score) copies the family
    too, as an equal and separate object, and the clone fits like the original."""
    import numpy as np
    from sklearn.base import clone

    from jungleseg import JungleSegmenter

    model = JungleSegmenter(features=ColourFeatures(max_offset=5, kinds=["value"]),
                            n_estimators=1, max_depth=3, random_state=0)
    copy = clone(model)
    assert copy.features == model.features and copy.features is not model.features
    rng = np.random.default_rng(0)
    image = rng.random((24, 24, 3)).astype(np.float32)
    labels = (image[..., 0] > 0.5).astype(np.uint8)
    np.testing.assert_array_equal(copy.fit([image], [labels]).predict(image),
                                  model.fit([image], [labels]).predict(image))


@pytest.mark.parametrize("n_images", [1, 3])
@pytest.mark.parametrize("family", [ColourFeatures(4, input="grey", gradient=True,
                                                   box_filters=(2,)),
                                    ColourFeatures(3, ["value", "box_sum"], 2)])
def test_prepare_fitted_is_the_fitted_quantisers_store(family, n_images, monkeypatch):
    """One image's channels are made once for the quantiser and the codes, several
    images' twice; either way the store is what preparing with the fitted quantiser makes,
    and the channels were made as often as that says."""
    import numpy as np

    from jungleseg.features import _colour

    rng = np.random.default_rng(1)
    shape = (20, 24) if family.input == "grey" else (20, 24, 3)
    images = [rng.random(shape).astype(np.float32) for _ in range(n_images)]
    expected = family.with_quantiser(family.fitted_quantiser(images)).prepare(images, pad=2)
    made = []
    original = _colour.ColourFeatures.channels_into
    monkeypatch.setattr(_colour.ColourFeatures, "channels_into",
                        lambda self, *a, **k: made.append(1) or original(self, *a, **k))
    store = family.prepare_fitted(images, pad=2)
    assert store.quantiser == expected.quantiser
    np.testing.assert_array_equal(store.pixels, expected.pixels)
    np.testing.assert_array_equal(store.integral, expected.integral)
    assert len(made) == (1 if n_images == 1 else 2 * n_images)


def test_coding_bytes_count_the_values_being_coded():
    from jungleseg.features._base import coding_bytes

    family = ColourFeatures(4, input="grey", gradient=True)  # 8-bit codes
    assert coding_bytes(family) == 4 * family.n_store_channels
    assert coding_bytes(family.with_quantiser(None)) == 0  # float32 store
    assert coding_bytes(DepthFeatures(0.3, 500.0)) == 0
