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
