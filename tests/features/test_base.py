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
