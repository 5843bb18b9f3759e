"""The Python helper written beside a colour model's C code, ``<name>_planes.py``: it
prepares the channel planes the C functions read from an image, as jungleseg does
(smoothing, box filters, checks and units). Python text, not C: hence a module of its own.
"""
from __future__ import annotations

import json


def planes_helper(name: str, family: dict, input_values: dict | None) -> str:
    """``<name>_planes.py``: the channel planes a colour model's C code reads, from an
    image, as jungleseg prepares them (``family``: the features' JSON, with the
    ``quantiser`` of a model of quantised channels, whose planes hold the codes)."""
    return f'''"""Channel planes for {name}_segment (written by jungleseg's C export).

    import numpy as np
    from {name}_planes import planes
    p = planes(image)            # (N_FEATURES, height, width) float32, C order
                                 # (the channel codes, for a model of quantised channels)
    p.tofile("planes.f32")       # or hand p.ctypes to the C function
"""
import json

import numpy as np

from jungleseg.features import family_from_dict
from jungleseg.features._quantise import quantiser_from_arrays
from jungleseg.segmentation._input import checked_image

SPEC = json.loads({json.dumps(json.dumps(family))})
QUANTISER = SPEC.pop("quantiser", None)
FAMILY = family_from_dict(SPEC)
INPUT_VALUES = json.loads({json.dumps(json.dumps(input_values))})


def planes(image) -> np.ndarray:
    """The (n_channels, height, width) float32 planes the model reads from ``image`` (as
    the model's own segmentation takes it: same checks and units; the codes of its
    quantiser, as float32, for a model of quantised channels)."""
    image = checked_image(image, FAMILY, INPUT_VALUES)
    p = np.ascontiguousarray(np.moveaxis(FAMILY.channels(image), 2, 0))
    if QUANTISER is not None:
        quantiser_from_arrays(QUANTISER).codes_into(p, p)
    return p
'''
