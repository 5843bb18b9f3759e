"""The 31 body-part labels, their colours and the left/right mirror table."""
from __future__ import annotations

import numpy as np

CLASS_NAMES: list[str] = [
    "background",
    "left_upper_head", "right_upper_head", "left_lower_head", "right_lower_head",
    "neck",
    "left_shoulder", "right_shoulder",
    "left_upper_arm", "right_upper_arm", "left_lower_arm", "right_lower_arm",
    "left_elbow", "right_elbow",
    "left_wrist", "right_wrist",
    "left_hand", "right_hand",
    "left_upper_torso", "right_upper_torso", "left_lower_torso", "right_lower_torso",
    "left_upper_leg", "right_upper_leg", "left_lower_leg", "right_lower_leg",
    "left_knee", "right_knee",
    "left_ankle", "right_ankle",
    "left_foot", "right_foot",
]  # fmt: skip
"""Names of the 32 classes; index 0 is background, 1..31 are body parts."""

N_CLASSES: int = len(CLASS_NAMES)
"""Number of classes including background (32)."""

BACKGROUND: int = 0
"""Label of pixels that do not see the body (their depth is 0)."""

VOID: int = 255
"""Label of invalid sensor pixels on the body (their depth is 0)."""

_LABEL = {name: i for i, name in enumerate(CLASS_NAMES)}


def _mirror_table() -> np.ndarray:
    table = np.arange(256, dtype=np.uint8)
    for i, name in enumerate(CLASS_NAMES):
        if name.startswith("left_"):
            table[i] = _LABEL["right_" + name[5:]]
        elif name.startswith("right_"):
            table[i] = _LABEL["left_" + name[6:]]
    return table


MIRROR_LABEL: np.ndarray = _mirror_table()
"""uint8 lookup table of length 256 swapping left and right part labels.

Centre parts (neck), background and void map to themselves; applying the
table twice is the identity.
"""


def _part_colours() -> np.ndarray:
    """Distinct RGB colours: golden-ratio hue steps with alternating brightness."""
    i = np.arange(1, N_CLASSES)
    hue = (i * 0.618034) % 1.0
    sat = np.where(i % 3 == 0, 0.55, 0.95)
    val = np.where(i % 2 == 0, 0.7, 1.0)
    # HSV -> RGB
    h6 = hue * 6.0
    k = np.stack([(5.0 + h6) % 6.0, (3.0 + h6) % 6.0, (1.0 + h6) % 6.0], axis=1)
    rgb = val[:, None] - (val * sat)[:, None] * np.clip(np.minimum(k, 4.0 - k), 0.0, 1.0)
    colours = np.zeros((N_CLASSES, 3), dtype=np.uint8)
    colours[1:] = np.round(rgb * 255.0).astype(np.uint8)
    return colours


CLASS_COLOURS: np.ndarray = _part_colours()
"""(32, 3) uint8 RGB colours, one per class; background is black."""
