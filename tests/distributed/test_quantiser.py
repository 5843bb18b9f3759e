"""The data-parallel quantiser step without a cluster: shards' samples, pooled in order,
give the quantiser of a fit on all the images; a bad image is named by its index in the
whole."""
import numpy as np
import pytest

from jungleseg import ColourFeatures, JungleSegmenter
from jungleseg.datasets.faces import render_faces
from jungleseg.distributed._quantiser import quantiser_samples, shard_images
from jungleseg.features._quantise import quantiser_of_samples


@pytest.mark.parametrize("cuts", [(0, 5, 11), (0, 1, 6, 11), (0, 11)])
def test_shards_samples_give_the_quantiser_of_all_images(cuts):
    images, _ = render_faces(11, seed=3, size=(40, 48))
    estimator = JungleSegmenter(ColourFeatures(max_offset=4), random_state=0)
    family = estimator._family()
    samples = []
    for first, end in zip(cuts[:-1], cuts[1:]):
        samples += quantiser_samples({"images": images[first:end]}, estimator, first, "unit",
                                     len(images))
    assert quantiser_of_samples(samples, family.code_type) == family.fitted_quantiser(images)


def test_a_bad_image_is_named_by_its_index_in_the_whole():
    images = list(render_faces(3, seed=0, size=(32, 32))[0])
    images[1] = np.full((32, 32, 3), np.nan, np.float32)
    family = ColourFeatures(max_offset=4)
    with pytest.raises(ValueError, match="image 6"):
        shard_images(images, family, range(5, 8), "unit")
