"""The eight face classes and their display colours."""
from __future__ import annotations

import numpy as np

#: The eight classes, in label order.
CLASS_NAMES: tuple[str, ...] = (
    "background",
    "skin",
    "hair",
    "eyebrows",
    "eyes",
    "nose",
    "lips",
    "inner_mouth",
)

#: Display colour (RGB) of each class, shape (8, 3).
CLASS_COLOURS: np.ndarray = np.array(
    [
        [0, 0, 0],  # background
        [255, 220, 60],  # skin
        [140, 20, 10],  # hair
        [255, 0, 255],  # eyebrows
        [0, 60, 255],  # eyes
        [0, 255, 255],  # nose
        [0, 220, 0],  # lips
        [255, 128, 0],  # inner mouth
    ],
    dtype=np.uint8,
)

BACKGROUND, SKIN, HAIR, EYEBROWS, EYES, NOSE, LIPS, INNER_MOUTH = range(len(CLASS_NAMES))
