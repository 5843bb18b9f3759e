"""Step 2a of data-parallel training (:mod:`._dataparallel`): the channel quantiser of a
training whose images are spread over workers. Each worker samples the channels of those
of its shard's images that the quantiser is fitted on
(:func:`jungleseg.features._quantise.fit_images`), and the driver pools the samples in image
order, so the quantiser is the one a fit on all the images makes."""
from __future__ import annotations

import numpy as np


def shard_images(images: list, family, numbers, units: str) -> list:
    """A shard's images as training reads them (``JungleSegmenter._plan``'s
    ``training_values``): checked, and grey or channel images in the whole's ``units``;
    ``numbers`` are their indices in the whole, for messages."""
    from ..features import ColourFeatures
    from ..segmentation._input import _in_units, checked_image, value_units

    out = []
    for number, image in zip(numbers, images):
        image = checked_image(image, family, None, f"image {number}")
        if isinstance(family, ColourFeatures) and family.input != "rgb":
            image = _in_units(image, value_units(image, f"image {number}"), units)
        out.append(image)
    return out


def quantiser_samples(loaded: dict, estimator, first: int, units: str, n_images: int
                      ) -> list[np.ndarray]:
    """On a worker: the quantiser's samples (:func:`~jungleseg.features._quantise.
    image_sample`) of the shard's images (``loaded["images"]``, from image ``first`` of
    ``n_images``) that are among the whole's fit images, in order; none for a family
    without codes."""
    from ..features._quantise import fit_images, image_sample

    family = estimator._family()
    images = loaded["images"]
    chosen = [i for i in fit_images(n_images) if first <= i < first + len(images)]
    if family.code_type is None or not chosen:
        return []
    picked = shard_images([images[i - first] for i in chosen], family, chosen, units)
    return [image_sample(image, family.n_store_channels, family.channels_into)
            for image in picked]
