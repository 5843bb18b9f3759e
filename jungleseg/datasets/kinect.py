"""Synthetic Kinect-like depth frames of people with 31 body-part labels.

Benchmark A of the Decision Jungles paper (Shotton et al., NIPS 2013) uses
Kinect depth images labelled with 31 body parts, which are not public.  This
module renders a stand-in: an articulated body made of capsules and ellipsoids
is posed by forward kinematics, placed in front of a pinhole camera with
Kinect intrinsics and ray cast in a Numba kernel.  Sensor effects (distance
dependent noise, millimetre quantisation, invalid pixels at depth
discontinuities) are added afterwards.

Every frame is a pure function of ``(seed, index)``: its random numbers come
from ``np.random.SeedSequence([seed, index])``, so frame ``i`` of a batch is
identical to frame ``i`` rendered on its own.

Label conventions: 0 is background (depth 0), 1..31 are the body parts listed
in `PART_NAMES`, 255 (`VOID`) marks invalid pixels on the body (depth 0).
"Left" and "right" are the person's own left and right.
"""

from __future__ import annotations

import json
import math
import os
from pathlib import Path

import cv2
import numpy as np
from numba import njit, prange

__all__ = [
    "BACKGROUND",
    "MIRROR_LABEL",
    "N_CLASSES",
    "PART_COLOURS",
    "PART_NAMES",
    "VOID",
    "contact_sheet",
    "kinect_intrinsics",
    "load_frames",
    "mirror",
    "render_frame",
    "render_frames",
    "save_frames",
]

# --------------------------------------------------------------------------
# Labels
# --------------------------------------------------------------------------

PART_NAMES: list[str] = [
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

N_CLASSES: int = len(PART_NAMES)
"""Number of classes including background (32)."""

BACKGROUND: int = 0
"""Label of pixels that do not see the body (their depth is 0)."""

VOID: int = 255
"""Label of invalid sensor pixels on the body (their depth is 0)."""

_LABEL = {name: i for i, name in enumerate(PART_NAMES)}


def _mirror_table() -> np.ndarray:
    table = np.arange(256, dtype=np.uint8)
    for i, name in enumerate(PART_NAMES):
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


PART_COLOURS: np.ndarray = _part_colours()
"""(32, 3) uint8 RGB colours, one per class; background is black."""

# --------------------------------------------------------------------------
# Camera
# --------------------------------------------------------------------------

_FOCAL_640 = 571.26  # Kinect v1 depth camera focal length at 640x480, pixels


def kinect_intrinsics(size: tuple[int, int] = (240, 320)) -> dict[str, float]:
    """Pinhole intrinsics of a Kinect v1 depth camera scaled to an image size.

    Parameters
    ----------
    size : tuple of int
        Image ``(height, width)``; the focal length scales with the width
        (571.26 px at 640x480, about 285.6 px at 320x240).

    Returns
    -------
    dict
        ``fx``, ``fy``, ``cx``, ``cy`` in pixels.  Pixel ``(v, u)`` looks along
        the camera ray ``((u - cx) / fx, (v - cy) / fy, 1)`` (x right, y down).
    """
    height, width = size
    f = _FOCAL_640 * width / 640.0
    return {"fx": f, "fy": f, "cx": (width - 1) / 2.0, "cy": (height - 1) / 2.0}


# --------------------------------------------------------------------------
# Skeleton, joint angles and canonical poses
# --------------------------------------------------------------------------

_TRUNK_ANGLES = [
    "pelvis_pitch", "pelvis_roll",
    "spine_flex", "spine_lat", "spine_twist",
    "neck_flex", "neck_lat", "neck_twist",
]  # fmt: skip
_SIDE_ANGLES = [
    "sh_flex", "sh_abd", "sh_twist", "elbow", "wrist_flex", "wrist_dev",
    "hip_flex", "hip_abd", "hip_twist", "knee", "ankle",
]  # fmt: skip
_ANGLE_NAMES = (
    _TRUNK_ANGLES + ["l_" + a for a in _SIDE_ANGLES] + ["r_" + a for a in _SIDE_ANGLES]
)
_A = {name: i for i, name in enumerate(_ANGLE_NAMES)}
_N_ANGLES = len(_ANGLE_NAMES)
_N_TRUNK = len(_TRUNK_ANGLES)
_N_SIDE = len(_SIDE_ANGLES)

# Joint limits in degrees, (low, high).  Hip flexion is measured from the
# vertical, independent of the pelvis lean, so legs stay plausible when the
# trunk bends.
_TRUNK_LIMITS = {
    "pelvis_pitch": (-15, 50), "pelvis_roll": (-12, 12),
    "spine_flex": (-20, 50), "spine_lat": (-30, 30), "spine_twist": (-40, 40),
    "neck_flex": (-40, 50), "neck_lat": (-30, 30), "neck_twist": (-70, 70),
}  # fmt: skip
_SIDE_LIMITS = {
    "sh_flex": (-60, 180), "sh_abd": (-10, 180), "sh_twist": (-90, 90),
    "elbow": (0, 150), "wrist_flex": (-70, 70), "wrist_dev": (-25, 35),
    "hip_flex": (-30, 120), "hip_abd": (-15, 60), "hip_twist": (-40, 40),
    "knee": (0, 150), "ankle": (-30, 45),
}  # fmt: skip
# Standard deviation (degrees) of the perturbation of canonical poses.
_TRUNK_SIGMA = {
    "pelvis_pitch": 5, "pelvis_roll": 3, "spine_flex": 6, "spine_lat": 5,
    "spine_twist": 8, "neck_flex": 10, "neck_lat": 8, "neck_twist": 20,
}  # fmt: skip
_SIDE_SIGMA = {
    "sh_flex": 15, "sh_abd": 12, "sh_twist": 20, "elbow": 15, "wrist_flex": 20,
    "wrist_dev": 10, "hip_flex": 8, "hip_abd": 5, "hip_twist": 8, "knee": 10,
    "ankle": 8,
}  # fmt: skip


def _per_angle(trunk: dict, side: dict) -> list:
    return [trunk[a] for a in _TRUNK_ANGLES] + [side[a] for a in _SIDE_ANGLES] * 2


_LIMITS = np.radians(np.array(_per_angle(_TRUNK_LIMITS, _SIDE_LIMITS), dtype=float))
_LOW, _HIGH = _LIMITS[:, 0], _LIMITS[:, 1]
_SIGMA = np.radians(np.array(_per_angle(_TRUNK_SIGMA, _SIDE_SIGMA), dtype=float))
# Trunk angles whose sign flips when the pose is mirrored left <-> right.
_MIRROR_SIGN = np.ones(_N_ANGLES)
_MIRROR_SIGN[[_A[a] for a in ("pelvis_roll", "spine_lat", "spine_twist", "neck_lat", "neck_twist")]] = -1.0
_MIRROR_PERM = np.r_[
    np.arange(_N_TRUNK),
    np.arange(_N_TRUNK + _N_SIDE, _N_ANGLES),
    np.arange(_N_TRUNK, _N_TRUNK + _N_SIDE),
]


def _pose(**degrees: float) -> np.ndarray:
    """Angle vector (radians) from keyword degrees; ``elbow=`` sets both sides."""
    angles = np.zeros(_N_ANGLES)
    for key, value in degrees.items():
        keys = [key] if key in _A else ["l_" + key, "r_" + key]
        for k in keys:
            angles[_A[k]] = math.radians(value)
    return angles


_CANONICAL_POSES = np.stack([
    # standing, arms relaxed
    _pose(sh_abd=8, elbow=10, knee=3),
    # walking
    _pose(l_hip_flex=25, r_hip_flex=-15, l_knee=5, r_knee=30, r_ankle=-10,
          l_sh_flex=-20, r_sh_flex=25, elbow=20, sh_abd=6, spine_twist=-6),
    # running
    _pose(pelvis_pitch=10, l_hip_flex=55, l_knee=85, r_hip_flex=-20, r_knee=60,
          l_sh_flex=-40, r_sh_flex=50, elbow=90, sh_abd=10, spine_twist=-10),
    # reaching forward with one arm
    _pose(r_sh_flex=90, r_elbow=10, l_sh_abd=8, l_elbow=15, spine_twist=15,
          pelvis_pitch=8, knee=5),
    # reaching up with one arm
    _pose(r_sh_flex=160, r_sh_abd=20, r_elbow=10, l_sh_abd=10, l_elbow=20,
          spine_lat=-8, r_ankle=-20),
    # both arms raised
    _pose(sh_flex=165, sh_abd=15, elbow=15, neck_flex=-15),
    # T-pose
    _pose(sh_abd=90, elbow=5),
    # crouching
    _pose(pelvis_pitch=30, spine_flex=20, hip_flex=100, hip_abd=12, knee=125,
          ankle=30, sh_flex=45, elbow=60),
    # kicking
    _pose(pelvis_pitch=-5, spine_flex=-10, r_hip_flex=80, r_knee=20, r_ankle=-10,
          l_knee=10, sh_abd=35, elbow=20),
    # bending over
    _pose(pelvis_pitch=45, spine_flex=30, neck_flex=-25, sh_flex=70, elbow=10,
          knee=5),
    # waving
    _pose(r_sh_abd=90, r_sh_twist=90, r_elbow=95, l_sh_abd=8, l_elbow=10),
    # lunging
    _pose(l_hip_flex=60, l_knee=70, r_hip_flex=-30, r_knee=20, r_ankle=-20,
          sh_abd=20, elbow=30),
    # boxing guard
    _pose(spine_twist=20, sh_flex=50, sh_abd=20, elbow=115, l_hip_flex=15,
          r_hip_flex=-10, knee=15),
    # side stretch
    _pose(spine_lat=-25, l_sh_flex=170, l_sh_abd=30, l_elbow=25, r_sh_abd=15,
          r_elbow=30, l_hip_abd=10),
    # balancing on one leg
    _pose(l_hip_flex=-20, l_knee=100, sh_abd=90, elbow=10, r_knee=5),
])  # fmt: skip

# Segment lengths as fractions of body height (Drillis and Contini); each is
# jittered per person.
_SEGMENTS = [
    ("upper_arm", 0.186), ("forearm", 0.146), ("hand", 0.108),
    ("thigh", 0.245), ("shin", 0.246), ("foot", 0.152),
    ("shoulder_half", 0.10), ("hip_half", 0.05), ("lower_spine", 0.12),
    ("upper_spine", 0.16), ("neck", 0.05), ("head", 0.065),
]  # fmt: skip
_S = {name: i for i, (name, _) in enumerate(_SEGMENTS)}
_SEGMENT_FRACTIONS = np.array([f for _, f in _SEGMENTS])

# --------------------------------------------------------------------------
# Primitives and joint spheres
# --------------------------------------------------------------------------

_CAPSULE, _ELLIPSOID = 0, 1
# Joint spheres: (label, radius in metres for a 1.75 m person).
_JOINTS = [
    ("left_shoulder", 0.12), ("right_shoulder", 0.12),
    ("left_elbow", 0.09), ("right_elbow", 0.09),
    ("left_wrist", 0.08), ("right_wrist", 0.08),
    ("left_knee", 0.10), ("right_knee", 0.10),
    ("left_ankle", 0.08), ("right_ankle", 0.08),
]  # fmt: skip
_JOINT_LABEL = np.array([_LABEL[name] for name, _ in _JOINTS], dtype=np.uint8)
_JOINT_RADIUS = np.array([r for _, r in _JOINTS])
_JOINT_INDEX = {name: i for i, (name, _) in enumerate(_JOINTS)}
_JOINT_BITS = np.array([1 << i for i in range(len(_JOINTS))], dtype=np.int64)


def _bits(*names: str) -> int:
    return sum(1 << _JOINT_INDEX[name] for name in names)


# name, kind, labels [upper-left, upper-right, lower-left, lower-right],
# joint spheres allowed to relabel its surface.
_PRIMITIVES = [
    ("head", _ELLIPSOID, ["left_upper_head", "right_upper_head", "left_lower_head", "right_lower_head"], 0),
    ("neck", _CAPSULE, ["neck"] * 4, 0),
    ("chest", _ELLIPSOID, ["left_upper_torso", "right_upper_torso"] * 2, _bits("left_shoulder", "right_shoulder")),
    ("abdomen", _ELLIPSOID, ["left_lower_torso", "right_lower_torso"] * 2, 0),
    ("pelvis", _ELLIPSOID, ["left_lower_torso", "right_lower_torso"] * 2, 0),
    ("l_shoulder", _CAPSULE, ["left_upper_torso"] * 4, _bits("left_shoulder")),
    ("r_shoulder", _CAPSULE, ["right_upper_torso"] * 4, _bits("right_shoulder")),
    ("l_upper_arm", _CAPSULE, ["left_upper_arm"] * 4, _bits("left_shoulder", "left_elbow")),
    ("r_upper_arm", _CAPSULE, ["right_upper_arm"] * 4, _bits("right_shoulder", "right_elbow")),
    ("l_forearm", _CAPSULE, ["left_lower_arm"] * 4, _bits("left_elbow", "left_wrist")),
    ("r_forearm", _CAPSULE, ["right_lower_arm"] * 4, _bits("right_elbow", "right_wrist")),
    ("l_hand", _ELLIPSOID, ["left_hand"] * 4, _bits("left_wrist")),
    ("r_hand", _ELLIPSOID, ["right_hand"] * 4, _bits("right_wrist")),
    ("l_thigh", _CAPSULE, ["left_upper_leg"] * 4, _bits("left_knee")),
    ("r_thigh", _CAPSULE, ["right_upper_leg"] * 4, _bits("right_knee")),
    ("l_shin", _CAPSULE, ["left_lower_leg"] * 4, _bits("left_knee", "left_ankle")),
    ("r_shin", _CAPSULE, ["right_lower_leg"] * 4, _bits("right_knee", "right_ankle")),
    ("l_foot", _ELLIPSOID, ["left_foot"] * 4, _bits("left_ankle")),
    ("r_foot", _ELLIPSOID, ["right_foot"] * 4, _bits("right_ankle")),
]  # fmt: skip
_P = {name: i for i, (name, *_) in enumerate(_PRIMITIVES)}
_N_PRIM = len(_PRIMITIVES)
_PRIM_KIND = np.array([kind for _, kind, _, _ in _PRIMITIVES], dtype=np.int64)
_PRIM_LABELS = np.array([[_LABEL[n] for n in labels] for _, _, labels, _ in _PRIMITIVES], dtype=np.uint8)
_PRIM_MASK = np.array([mask for *_, mask in _PRIMITIVES], dtype=np.int64)

# --------------------------------------------------------------------------
# Random scene parameters
# --------------------------------------------------------------------------

# Layout of the per-frame uniform draws.
_U_POSE, _U_RANDOM_MODE, _U_SWAP, _U_MIRROR, _U_HEIGHT, _U_GIRTH, _U_YAW = range(7)
_U_CAM_HEIGHT, _U_NEAR, _U_DISTANCE, _U_CROP, _U_CROP_AXIS, _U_CROP_AMOUNT, _U_EDGE = range(7, 14)
_U_ANGLES = 14
_N_UNIFORM = _U_ANGLES + _N_ANGLES
# Layout of the per-frame normal draws.
_Z_ANGLES = 0
_Z_SEGMENTS = _N_ANGLES
_Z_AZIMUTH = _Z_SEGMENTS + len(_SEGMENTS)
_Z_PITCH, _Z_ROLL = _Z_AZIMUTH + 1, _Z_AZIMUTH + 2
_N_NORMAL = _Z_ROLL + 1

_P_RANDOM_POSE = 0.3  # fraction of poses drawn within the joint limits
_P_CROP = 0.12  # fraction of frames aimed off-centre so the body is cropped
_P_NEAR = 0.15  # fraction of frames at 1.5-2.3 m (often cropped) instead of 2.3-4 m
_NOISE_MM_PER_M2 = 1.5  # depth noise sigma = 1.5 mm * z^2


def _sample_scenes(seed: int, indices: np.ndarray) -> dict[str, np.ndarray]:
    """Draw body, pose, camera and sensor parameters for the given frames.

    Frame ``i`` uses only ``np.random.SeedSequence([seed, i])``.
    """
    n = len(indices)
    uni = np.empty((n, _N_UNIFORM))
    nrm = np.empty((n, _N_NORMAL))
    noise_seed = np.empty(n, dtype=np.uint64)
    for row, index in enumerate(indices):
        rng = np.random.default_rng(np.random.SeedSequence([seed, int(index)]))
        uni[row] = rng.random(_N_UNIFORM)
        nrm[row] = rng.standard_normal(_N_NORMAL)
        noise_seed[row] = rng.integers(0, 2**63, dtype=np.uint64)

    # Pose: a perturbed canonical pose, or (partly) uniform within the limits.
    canon = _CANONICAL_POSES[(uni[:, _U_POSE] * len(_CANONICAL_POSES)).astype(int)]
    uniform = _LOW + (_HIGH - _LOW) * uni[:, _U_ANGLES:]
    perturbed = canon + _SIGMA * nrm[:, _Z_ANGLES:_Z_SEGMENTS]
    # Random poses: arms, wrists and head free; trunk and legs halfway between
    # the canonical pose and the uniform draw so people mostly stay upright.
    free = np.zeros(_N_ANGLES, dtype=bool)
    free[[_A[a] for a in ("neck_flex", "neck_lat", "neck_twist")]] = True
    for side in ("l_", "r_"):
        free[[_A[side + a] for a in _SIDE_ANGLES[:6]]] = True
    random_pose = np.where(free, uniform, 0.5 * (canon + uniform))
    is_random = uni[:, _U_RANDOM_MODE] < _P_RANDOM_POSE
    angles = np.clip(np.where(is_random[:, None], random_pose, perturbed), _LOW, _HIGH)
    swap = uni[:, _U_SWAP] < 0.5
    angles[swap] = angles[swap][:, _MIRROR_PERM] * _MIRROR_SIGN

    # Camera distance, with a near mode that often crops the body, and an
    # occasional aim offset that pushes the body partly out of the frame.
    near = uni[:, _U_NEAR] < _P_NEAR
    distance = np.where(near, 1.5 + 0.8 * uni[:, _U_DISTANCE], 2.3 + 1.7 * uni[:, _U_DISTANCE])
    crop = uni[:, _U_CROP] < _P_CROP
    # One uniform picks the crop axis (< 0.5: horizontal) and, within each
    # half, the direction of the offset.
    crop_horizontal = uni[:, _U_CROP_AXIS] < 0.5
    direction = np.where(uni[:, _U_CROP_AXIS] % 0.5 < 0.25, -1.0, 1.0)
    offset = np.radians(12.0 + 10.0 * uni[:, _U_CROP_AMOUNT]) * direction
    azimuth = np.radians(4.0) * nrm[:, _Z_AZIMUTH] + np.where(crop & crop_horizontal, offset, 0.0)
    pitch_offset = np.radians(3.0) * nrm[:, _Z_PITCH] + np.where(crop & ~crop_horizontal, 0.7 * offset, 0.0)

    return {
        "height": 1.4 + 0.6 * uni[:, _U_HEIGHT],
        "girth": 0.8 + 0.55 * uni[:, _U_GIRTH],
        "segments": _SEGMENT_FRACTIONS * np.clip(1.0 + 0.05 * nrm[:, _Z_SEGMENTS:_Z_AZIMUTH], 0.88, 1.12),
        "angles": angles,
        "yaw": 2.0 * np.pi * uni[:, _U_YAW],
        "camera_height": 0.6 + 1.2 * uni[:, _U_CAM_HEIGHT],
        "distance": distance,
        "azimuth": azimuth,
        "pitch_offset": pitch_offset,
        "roll": np.radians(2.0) * nrm[:, _Z_ROLL],
        "mirror": uni[:, _U_MIRROR] < 0.5,
        "edge_dropout": 0.05 + 0.3 * uni[:, _U_EDGE],
        "noise_seed": noise_seed,
    }


# --------------------------------------------------------------------------
# Forward kinematics and primitive construction (vectorised over frames)
# --------------------------------------------------------------------------


def _rot(axis: int, angle: np.ndarray) -> np.ndarray:
    """Stack of rotation matrices (n, 3, 3) about a coordinate axis."""
    c, s = np.cos(angle), np.sin(angle)
    i, j = [(1, 2), (2, 0), (0, 1)][axis]
    r = np.zeros((*angle.shape, 3, 3))
    r[..., axis, axis] = 1.0
    r[..., i, i] = c
    r[..., j, j] = c
    r[..., i, j] = -s
    r[..., j, i] = s
    return r


def _rx(a: np.ndarray) -> np.ndarray:
    return _rot(0, a)


def _ry(a: np.ndarray) -> np.ndarray:
    return _rot(1, a)


def _rz(a: np.ndarray) -> np.ndarray:
    return _rot(2, a)


def _at(origin: np.ndarray, rotation: np.ndarray, x, y, z) -> np.ndarray:
    """``origin + rotation @ (x, y, z)`` for (n,) or scalar offsets."""
    n = origin.shape[0]
    offset = np.stack(np.broadcast_arrays(x, y, z, np.zeros(n))[:3], axis=-1)
    return origin + np.einsum("nij,nj->ni", rotation, offset)


def _build_body(scenes: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """Pose the bodies in their own frame (x = person's left, y up, z forward).

    Returns primitive geometry (capsule ends/radii, ellipsoid centres, rotations
    and semi-axes), label split planes and joint-sphere centres/radii, with the
    lowest body point on the floor ``y = 0``.
    """
    n = len(scenes["height"])
    h, g = scenes["height"], scenes["girth"]
    s = h / 1.75  # overall size relative to a 1.75 m person
    seg = scenes["segments"] * h[:, None]
    ang = scenes["angles"]
    a = {name: ang[:, i] for name, i in _A.items()}

    def length(name: str) -> np.ndarray:
        return seg[:, _S[name]]

    zero = np.zeros(n)
    # Trunk: pelvis root, two spine links, neck and head.
    r_pelvis = _rx(a["pelvis_pitch"]) @ _rz(a["pelvis_roll"])
    spine = _rx(a["spine_flex"] / 2) @ _rz(a["spine_lat"] / 2) @ _ry(a["spine_twist"] / 2)
    r_lower = r_pelvis @ spine
    r_upper = r_lower @ spine
    r_head = r_upper @ _rx(a["neck_flex"]) @ _rz(a["neck_lat"]) @ _ry(a["neck_twist"])
    pelvis = np.zeros((n, 3))
    waist = _at(pelvis, r_lower, zero, length("lower_spine"), zero)
    neck_base = _at(waist, r_upper, zero, length("upper_spine"), zero)
    head_base = _at(neck_base, r_head, zero, length("neck"), zero)
    head = _at(head_base, r_head, zero, 0.05 * h, 0.01 * h)

    geo = {
        "a": np.zeros((n, _N_PRIM, 3)),  # capsule ends or ellipsoid centres
        "b": np.zeros((n, _N_PRIM, 3)),
        "radius": np.zeros((n, _N_PRIM)),
        "rot": np.tile(np.eye(3), (n, _N_PRIM, 1, 1)),  # ellipsoid orientation
        "axes": np.ones((n, _N_PRIM, 3)),  # ellipsoid semi-axes
        "split_centre": np.zeros((n, _N_PRIM, 3)),
        "split_lr": np.zeros((n, _N_PRIM, 3)),  # points to the person's left
        "split_ud": np.zeros((n, _N_PRIM, 3)),  # points up
        "joints": np.zeros((n, len(_JOINTS), 3)),
        "joint_radius": _JOINT_RADIUS * s[:, None],
    }

    def capsule(name, p, q, radius):
        k = _P[name]
        geo["a"][:, k], geo["b"][:, k], geo["radius"][:, k] = p, q, radius

    def ellipsoid(name, centre, rotation, ax, ay, az, split=False):
        k = _P[name]
        geo["a"][:, k], geo["rot"][:, k] = centre, rotation
        geo["axes"][:, k] = np.stack(np.broadcast_arrays(ax, ay, az), axis=-1)
        if split:
            geo["split_centre"][:, k] = centre
            geo["split_lr"][:, k] = rotation[:, :, 0]
            geo["split_ud"][:, k] = rotation[:, :, 1]

    head_y = length("head")
    ellipsoid("head", head, r_head, 0.68 * head_y, head_y, 0.85 * head_y, split=True)
    capsule("neck", _at(neck_base, r_upper, zero, -0.02 * h, zero), head, 0.055 * s * np.sqrt(g))
    # Overlapping chest, abdomen and pelvis blocks give a continuous torso.
    ellipsoid("chest", _at(waist, r_upper, zero, 0.45 * length("upper_spine"), zero), r_upper,
              0.17 * s * g, 0.6 * length("upper_spine"), 0.10 * s * g, split=True)  # fmt: skip
    ellipsoid("abdomen", _at(waist, r_lower, zero, -0.3 * length("lower_spine"), zero), r_lower,
              0.145 * s * g, 0.8 * length("lower_spine"), 0.10 * s * g**1.3, split=True)  # fmt: skip
    ellipsoid("pelvis", _at(pelvis, r_pelvis, zero, -0.01 * h, zero), r_pelvis,
              0.165 * s * g, 0.07 * h, 0.105 * s * g, split=True)  # fmt: skip

    # Limbs.  Arms hang along -y at zero angles; legs hang from an upright hip
    # frame so hip flexion is measured from the vertical.
    for side, sign in (("l", 1.0), ("r", -1.0)):
        q = {name: a[f"{side}_{name}"] for name in _SIDE_ANGLES}

        shoulder = _at(neck_base, r_upper, sign * length("shoulder_half"), -0.02 * h, zero)
        r_arm = r_upper @ _rx(-q["sh_flex"]) @ _rz(sign * q["sh_abd"]) @ _ry(sign * q["sh_twist"])
        elbow = _at(shoulder, r_arm, zero, -length("upper_arm"), zero)
        r_forearm = r_arm @ _rx(-q["elbow"])
        wrist = _at(elbow, r_forearm, zero, -length("forearm"), zero)
        r_hand = r_forearm @ _rz(sign * q["wrist_flex"]) @ _rx(q["wrist_dev"])
        hand = _at(wrist, r_hand, zero, -0.5 * length("hand"), zero)

        hip = _at(pelvis, r_pelvis, sign * length("hip_half"), -0.03 * h, zero)
        r_thigh = _rx(-q["hip_flex"]) @ _rz(sign * q["hip_abd"]) @ _ry(sign * q["hip_twist"])
        knee = _at(hip, r_thigh, zero, -length("thigh"), zero)
        r_shin = r_thigh @ _rx(q["knee"])
        ankle = _at(knee, r_shin, zero, -length("shin"), zero)
        r_foot = r_shin @ _rx(q["ankle"])
        ankle_height = 0.039 * h
        foot = _at(ankle, r_foot, zero, -0.55 * ankle_height, 0.25 * length("foot"))

        capsule(f"{side}_shoulder", _at(neck_base, r_upper, zero, -0.03 * h, zero), shoulder, 0.06 * s * g)
        capsule(f"{side}_upper_arm", shoulder, elbow, 0.047 * s * g)
        capsule(f"{side}_forearm", elbow, wrist, 0.037 * s * g**0.8)
        ellipsoid(f"{side}_hand", hand, r_hand, 0.022 * s, 0.5 * length("hand"), 0.045 * s)
        capsule(f"{side}_thigh", hip, knee, 0.075 * s * g)
        capsule(f"{side}_shin", knee, ankle, 0.052 * s * g**0.8)
        ellipsoid(f"{side}_foot", foot, r_foot, 0.05 * s, 0.035 * s, 0.5 * length("foot"))

        full = "left" if side == "l" else "right"
        for joint, centre in (("shoulder", shoulder), ("elbow", elbow), ("wrist", wrist),
                              ("knee", knee), ("ankle", ankle)):  # fmt: skip
            geo["joints"][:, _JOINT_INDEX[f"{full}_{joint}"]] = centre

    # Stand the body on the floor: shift so its lowest point has y = 0.
    low, high = _vertical_extent(geo)
    lift = -low.min(axis=1)
    for key in ("a", "b", "split_centre", "joints"):
        geo[key][..., 1] += lift[:, None]
    geo["top"] = high.max(axis=1) + lift
    return geo


def _vertical_extent(geo: dict[str, np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """Lowest and highest y of every primitive, (n, n_prim) each."""
    is_capsule = _PRIM_KIND == _CAPSULE
    ay, by, r = geo["a"][..., 1], geo["b"][..., 1], geo["radius"]
    ell_half = np.sqrt(((geo["rot"][..., 1, :] * geo["axes"]) ** 2).sum(-1))
    low = np.where(is_capsule, np.minimum(ay, by) - r, ay - ell_half)
    high = np.where(is_capsule, np.maximum(ay, by) + r, ay + ell_half)
    return low, high


def _to_camera(scenes: dict[str, np.ndarray], geo: dict[str, np.ndarray], size: tuple[int, int]) -> dict:
    """Place bodies in the world, aim the camera and express everything in camera coordinates.

    Returns the arrays consumed by the ray-casting kernel.
    """
    n = len(scenes["height"])
    intr = kinect_intrinsics(size)
    # Body frame -> world: yaw about the vertical, then move to the floor spot
    # at the sampled distance and azimuth in front of the camera.
    r_yaw = _ry(scenes["yaw"])
    d, az = scenes["distance"], scenes["azimuth"]
    position = np.stack([d * np.sin(az), np.zeros(n), d * np.cos(az)], axis=-1)
    # Camera at (0, camera_height, 0) looking along +z, pitched towards the
    # body's vertical centre; camera axes x right, y down, z forward.
    cam_h = scenes["camera_height"]
    pitch = np.arctan2(cam_h - 0.5 * geo["top"], d) + scenes["pitch_offset"]
    r_world_to_cam = _rz(scenes["roll"]) @ _rx(pitch) @ np.diag([-1.0, -1.0, 1.0])
    rot = r_world_to_cam @ r_yaw
    camera = np.stack([np.zeros(n), cam_h, np.zeros(n)], axis=-1)
    shift = np.einsum("nij,nj->ni", r_world_to_cam, position - camera)

    def point(p: np.ndarray) -> np.ndarray:
        return np.einsum("nij,n...j->n...i", rot, p) + shift.reshape((n,) + (1,) * (p.ndim - 2) + (3,))

    def vector(v: np.ndarray) -> np.ndarray:
        return np.einsum("nij,n...j->n...i", rot, v)

    a, b = point(geo["a"]), point(geo["b"])
    r_ell = np.einsum("nij,nkjl->nkil", rot, geo["rot"])  # ellipsoid axes in camera frame
    axes = geo["axes"]
    # Kernel parameters: capsules (a, b, radius); ellipsoids (M @ -c, M) with
    # M = diag(1 / axes) @ R^T mapping camera space to the unit sphere.
    m = np.swapaxes(r_ell, -1, -2) / axes[..., :, None]
    params = np.zeros((n, _N_PRIM, 12))
    is_capsule = _PRIM_KIND == _CAPSULE
    params[:, is_capsule, 0:3] = a[:, is_capsule]
    params[:, is_capsule, 3:6] = b[:, is_capsule]
    params[:, is_capsule, 6] = geo["radius"][:, is_capsule]
    params[:, ~is_capsule, 0:3] = -np.einsum("nkij,nkj->nki", m, a)[:, ~is_capsule]
    params[:, ~is_capsule, 3:12] = m[:, ~is_capsule].reshape(n, -1, 9)

    # Screen-space bounding boxes from the camera-space axis-aligned boxes.
    ell_half = np.sqrt(((r_ell * axes[..., None, :]) ** 2).sum(-1))
    lo = np.where(is_capsule[:, None], np.minimum(a, b) - geo["radius"][..., None], a - ell_half)
    hi = np.where(is_capsule[:, None], np.maximum(a, b) + geo["radius"][..., None], a + ell_half)
    corners = np.stack(np.meshgrid([0, 1], [0, 1], [0, 1], indexing="ij"), -1).reshape(8, 3)
    box3 = np.where(corners[None, None], hi[:, :, None], lo[:, :, None])  # (n, k, 8, 3)
    z = np.maximum(box3[..., 2], 1e-6)
    u = intr["fx"] * box3[..., 0] / z + intr["cx"]
    v = intr["fy"] * box3[..., 1] / z + intr["cy"]
    height, width = size
    behind = (box3[..., 2] < 0.05).any(-1)
    box = np.stack([
        np.where(behind, 0, np.maximum(np.floor(u.min(-1)), 0)),
        np.where(behind, width - 1, np.minimum(np.ceil(u.max(-1)), width - 1)),
        np.where(behind, 0, np.maximum(np.floor(v.min(-1)), 0)),
        np.where(behind, height - 1, np.minimum(np.ceil(v.max(-1)), height - 1)),
    ], axis=-1).astype(np.int64)  # fmt: skip

    split = np.concatenate([point(geo["split_centre"]), vector(geo["split_lr"]), vector(geo["split_ud"])], -1)
    return {
        "params": params,
        "split": split,
        "box": box,
        "joints": point(geo["joints"]),
        "joint_r2": geo["joint_radius"] ** 2,
        "intrinsics": np.array([intr["fx"], intr["fy"], intr["cx"], intr["cy"]]),
    }


# --------------------------------------------------------------------------
# Numba kernels
# --------------------------------------------------------------------------


@njit(cache=True)
def _ray_capsule(p, dx, dy):
    """Nearest positive hit of the ray ``t * (dx, dy, 1)`` with a capsule, or -1."""
    ax, ay, az, bx, by, bz, r = p[0], p[1], p[2], p[3], p[4], p[5], p[6]
    bax, bay, baz = bx - ax, by - ay, bz - az
    oax, oay, oaz = -ax, -ay, -az
    baba = bax * bax + bay * bay + baz * baz
    bard = bax * dx + bay * dy + baz
    baoa = bax * oax + bay * oay + baz * oaz
    rdoa = dx * oax + dy * oay + oaz
    oaoa = oax * oax + oay * oay + oaz * oaz
    rdrd = dx * dx + dy * dy + 1.0
    qa = baba * rdrd - bard * bard
    qb = baba * rdoa - baoa * bard
    qc = baba * oaoa - baoa * baoa - r * r * baba
    h = qb * qb - qa * qc
    if h < 0.0:
        return -1.0
    if qa > 1e-12:
        # Infinite cylinder around the axis; accept if between the end caps.
        t = (-qb - math.sqrt(h)) / qa
        y = baoa + t * bard
        if 0.0 < y < baba:
            return t
        # Otherwise the first hit, if any, is on the sphere at the nearer end.
        if y <= 0.0:
            return _ray_sphere(ax, ay, az, r, dx, dy, rdrd)
        return _ray_sphere(bx, by, bz, r, dx, dy, rdrd)
    # Ray parallel to the axis: only the caps can be hit first.
    ta = _ray_sphere(ax, ay, az, r, dx, dy, rdrd)
    tb = _ray_sphere(bx, by, bz, r, dx, dy, rdrd)
    if ta < 0.0 or (0.0 < tb < ta):
        return tb
    return ta


@njit(cache=True)
def _ray_sphere(cx, cy, cz, r, dx, dy, rdrd):
    b = dx * cx + dy * cy + cz
    c = cx * cx + cy * cy + cz * cz - r * r
    h = b * b - rdrd * c
    if h < 0.0:
        return -1.0
    return (b - math.sqrt(h)) / rdrd


@njit(cache=True)
def _ray_ellipsoid(p, dx, dy):
    """Nearest positive hit of the ray ``t * (dx, dy, 1)`` with an ellipsoid, or -1."""
    ox, oy, oz = p[0], p[1], p[2]
    ex = p[3] * dx + p[4] * dy + p[5]
    ey = p[6] * dx + p[7] * dy + p[8]
    ez = p[9] * dx + p[10] * dy + p[11]
    a = ex * ex + ey * ey + ez * ez
    b = ox * ex + oy * ey + oz * ez
    c = ox * ox + oy * oy + oz * oz - 1.0
    h = b * b - a * c
    if h < 0.0:
        return -1.0
    return (-b - math.sqrt(h)) / a


@njit(cache=True, parallel=True)
def _raycast(
    kind, params, split, prim_labels, prim_mask, box, joints, joint_r2, joint_labels, joint_bits,
    intrinsics, depth, labels,
):  # fmt: skip
    """Z-buffered ray casting of all frames; writes z-depth (metres) and labels."""
    n, height, width = depth.shape
    n_prim = kind.shape[0]
    n_joint = joint_labels.shape[0]
    fx, fy, cx, cy = intrinsics[0], intrinsics[1], intrinsics[2], intrinsics[3]
    for job in prange(n * height):
        f = job // height
        v = job - f * height
        active = np.empty(n_prim, dtype=np.int64)
        n_active = 0
        for k in range(n_prim):
            if box[f, k, 2] <= v <= box[f, k, 3] and box[f, k, 0] <= box[f, k, 1]:
                active[n_active] = k
                n_active += 1
        dy = (v - cy) / fy
        for u in range(width):
            depth[f, v, u] = 0.0
            labels[f, v, u] = 0
            dx = (u - cx) / fx
            best = np.inf
            hit = -1
            for i in range(n_active):
                k = active[i]
                if u < box[f, k, 0] or u > box[f, k, 1]:
                    continue
                if kind[k] == 0:
                    t = _ray_capsule(params[f, k], dx, dy)
                else:
                    t = _ray_ellipsoid(params[f, k], dx, dy)
                if 0.0 < t < best:
                    best = t
                    hit = k
            if hit < 0:
                continue
            px, py, pz = dx * best, dy * best, best
            s = split[f, hit]
            qx, qy, qz = px - s[0], py - s[1], pz - s[2]
            lower = qx * s[6] + qy * s[7] + qz * s[8] < 0.0
            right = qx * s[3] + qy * s[4] + qz * s[5] < 0.0
            label = prim_labels[hit, 2 * lower + right]
            nearest = np.inf
            for j in range(n_joint):
                if prim_mask[hit] & joint_bits[j]:
                    ex = px - joints[f, j, 0]
                    ey = py - joints[f, j, 1]
                    ez = pz - joints[f, j, 2]
                    d2 = ex * ex + ey * ey + ez * ez
                    if d2 < joint_r2[f, j] and d2 < nearest:
                        nearest = d2
                        label = joint_labels[j]
            depth[f, v, u] = best
            labels[f, v, u] = label


@njit(cache=True)
def _hash_uniform(seed, counter):
    """Counter-based uniform in (0, 1): SplitMix64 finaliser of seed + counter."""
    x = seed + np.uint64(counter) * np.uint64(0x9E3779B97F4A7C15)
    x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    x = x ^ (x >> np.uint64(31))
    return ((x >> np.uint64(11)) + 0.5) * (1.0 / 9007199254740992.0)


@njit(cache=True, parallel=True)
def _sensor(
    clean_depth, clean_labels, noise_seed, edge_dropout, flip, mirror_label, noise_coeff, jump, depth, labels
):
    """Add Kinect-like noise, 1 mm quantisation, edge dropouts and optional mirroring."""
    n, height, width = clean_depth.shape
    for job in prange(n * height):
        f = job // height
        v = job - f * height
        seed = noise_seed[f]
        for u in range(width):
            uo = width - 1 - u if flip[f] else u
            z = clean_depth[f, v, u]
            if z <= 0.0:
                depth[f, v, uo] = 0.0
                labels[f, v, uo] = 0
                continue
            # Silhouette or depth discontinuity among the 4-neighbours.
            edge = False
            for vn, un in ((v - 1, u), (v + 1, u), (v, u - 1), (v, u + 1)):
                if 0 <= vn < height and 0 <= un < width:
                    zn = clean_depth[f, vn, un]
                    if zn <= 0.0 or abs(zn - z) > jump:
                        edge = True
            counter = 3 * (v * width + u)
            if edge and _hash_uniform(seed, counter) < edge_dropout[f]:
                depth[f, v, uo] = 0.0
                labels[f, v, uo] = 255
                continue
            # Box-Muller normal from two further counters.
            u1 = _hash_uniform(seed, counter + 1)
            u2 = _hash_uniform(seed, counter + 2)
            g = math.sqrt(-2.0 * math.log(u1)) * math.cos(2.0 * math.pi * u2)
            z = z + noise_coeff * z * z * g
            depth[f, v, uo] = math.floor(z * 1000.0 + 0.5) / 1000.0
            label = clean_labels[f, v, u]
            labels[f, v, uo] = mirror_label[label] if flip[f] else label


# --------------------------------------------------------------------------
# Public rendering API
# --------------------------------------------------------------------------

_CHUNK = 256  # frames rendered per kernel call (bounds temporary memory)
_JUMP = 0.05  # depth discontinuity threshold between neighbours, metres


def _render_scenes(
    scenes: dict[str, np.ndarray], size: tuple[int, int], depth: np.ndarray, labels: np.ndarray
) -> None:
    """Render sampled scenes into preallocated ``depth`` and ``labels``."""
    cam = _to_camera(scenes, _build_body(scenes), size)
    clean_depth = np.empty(depth.shape, dtype=np.float32)
    clean_labels = np.empty(labels.shape, dtype=np.uint8)
    _raycast(
        _PRIM_KIND, cam["params"], cam["split"], _PRIM_LABELS, _PRIM_MASK, cam["box"], cam["joints"],
        cam["joint_r2"], _JOINT_LABEL, _JOINT_BITS, cam["intrinsics"], clean_depth, clean_labels,
    )  # fmt: skip
    _sensor(
        clean_depth, clean_labels, scenes["noise_seed"], scenes["edge_dropout"], scenes["mirror"],
        MIRROR_LABEL, _NOISE_MM_PER_M2 / 1000.0, _JUMP, depth, labels,
    )  # fmt: skip


def _check_size(size: tuple[int, int]) -> tuple[int, int]:
    height, width = (int(x) for x in size)
    if height < 1 or width < 1:
        raise ValueError(f"size must be a positive (height, width), got {size!r}")
    return height, width


def render_frames(n: int, seed: int = 0, size: tuple[int, int] = (240, 320)) -> tuple[np.ndarray, np.ndarray]:
    """Render ``n`` synthetic Kinect depth frames with body-part labels.

    Parameters
    ----------
    n : int
        Number of frames.
    seed : int, optional
        Run seed.  Frame ``i`` depends only on ``(seed, i)``, so it equals
        ``render_frame(seed, i, size)``.
    size : tuple of int, optional
        Image ``(height, width)``; ``(240, 320)`` by default, ``(480, 640)``
        for full Kinect resolution.  Intrinsics follow `kinect_intrinsics`.

    Returns
    -------
    depth : ndarray of float32, shape (n, height, width)
        Z-depth in metres, quantised to 1 mm; 0 for background and invalid
        pixels.
    labels : ndarray of uint8, shape (n, height, width)
        0 background, 1..31 body parts (see `PART_NAMES`), 255 invalid
        pixels on the body.
    """
    if n < 0:
        raise ValueError(f"n must be non-negative, got {n}")
    height, width = _check_size(size)
    depth = np.empty((n, height, width), dtype=np.float32)
    labels = np.empty((n, height, width), dtype=np.uint8)
    for start in range(0, n, _CHUNK):
        stop = min(start + _CHUNK, n)
        scenes = _sample_scenes(seed, np.arange(start, stop))
        _render_scenes(scenes, (height, width), depth[start:stop], labels[start:stop])
    return depth, labels


def render_frame(seed: int, index: int, size: tuple[int, int] = (240, 320)) -> tuple[np.ndarray, np.ndarray]:
    """Render frame ``index`` of the run with the given seed.

    Parameters
    ----------
    seed : int
        Run seed.
    index : int
        Frame index within the run (non-negative).
    size : tuple of int, optional
        Image ``(height, width)``.

    Returns
    -------
    depth : ndarray of float32, shape (height, width)
        Depth in metres (0 = background or invalid).
    labels : ndarray of uint8, shape (height, width)
        Part labels as in `render_frames`.
    """
    height, width = _check_size(size)
    depth = np.empty((1, height, width), dtype=np.float32)
    labels = np.empty((1, height, width), dtype=np.uint8)
    _render_scenes(_sample_scenes(seed, np.array([index])), (height, width), depth, labels)
    return depth[0], labels[0]


def mirror(depth: np.ndarray, labels: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Flip frames left-right and swap left/right part labels.

    Parameters
    ----------
    depth : ndarray, shape (..., height, width)
        Depth frame(s).
    labels : ndarray of uint8, shape (..., height, width)
        Label frame(s) matching ``depth``.

    Returns
    -------
    depth : ndarray
        Horizontally flipped copy of ``depth``.
    labels : ndarray of uint8
        Horizontally flipped labels with left and right parts exchanged via
        `MIRROR_LABEL`.
    """
    return np.ascontiguousarray(depth[..., ::-1]), MIRROR_LABEL[labels[..., ::-1]]


# --------------------------------------------------------------------------
# Disk format
# --------------------------------------------------------------------------

_DEPTH_SCALES = {"mm": 1000.0, "100um": 10000.0}  # PNG units per metre


def save_frames(
    folder: str | os.PathLike,
    depth: np.ndarray,
    labels: np.ndarray,
    units: str = "mm",
    seed: int | None = None,
) -> None:
    """Write frames as 16-bit depth PNGs, 8-bit label PNGs and ``meta.json``.

    Layout: ``depth/000000.png`` (uint16, 0 = background/invalid),
    ``labels/000000.png`` (uint8 class index) and ``meta.json`` with units,
    depth scale, intrinsics, seed, count and part names.

    Parameters
    ----------
    folder : str or path-like
        Output folder, created if needed.
    depth : ndarray of float, shape (n, height, width)
        Depth in metres.
    labels : ndarray of uint8, shape (n, height, width)
        Part labels.
    units : {'mm', '100um'}, optional
        Depth PNG units: millimetres (range 65.5 m) or 0.1 mm (range 6.5 m).
    seed : int, optional
        Seed the frames were rendered with, recorded in ``meta.json``.

    Raises
    ------
    ValueError
        If ``units`` is unknown, shapes differ, or a depth does not fit in
        16 bits at the chosen units.
    """
    if units not in _DEPTH_SCALES:
        raise ValueError(f"units must be one of {sorted(_DEPTH_SCALES)}, got {units!r}")
    if depth.shape != labels.shape or depth.ndim != 3:
        raise ValueError(f"depth {depth.shape} and labels {labels.shape} must be equal (n, height, width)")
    scale = _DEPTH_SCALES[units]
    raw = np.round(np.asarray(depth, dtype=np.float64) * scale)
    if raw.size and (raw.min() < 0 or raw.max() > np.iinfo(np.uint16).max):
        raise ValueError(f"depth outside the 16-bit range for units {units!r}")
    raw = raw.astype(np.uint16)
    folder = Path(folder)
    (folder / "depth").mkdir(parents=True, exist_ok=True)
    (folder / "labels").mkdir(parents=True, exist_ok=True)
    for i in range(len(depth)):
        name = f"{i:06d}.png"
        ok_depth = cv2.imwrite(str(folder / "depth" / name), raw[i])
        ok_labels = cv2.imwrite(str(folder / "labels" / name), np.asarray(labels[i], dtype=np.uint8))
        if not (ok_depth and ok_labels):
            raise OSError(f"could not write frame {name} in {folder}")
    meta = {
        "units": units,
        "depth_scale": scale,
        "intrinsics": kinect_intrinsics(depth.shape[1:]),
        "size": list(depth.shape[1:]),
        "seed": seed,
        "count": len(depth),
        "part_names": PART_NAMES,
        "void_label": VOID,
    }
    (folder / "meta.json").write_text(json.dumps(meta, indent=2))


def load_frames(folder: str | os.PathLike) -> tuple[np.ndarray, np.ndarray]:
    """Read frames written by `save_frames`.

    Parameters
    ----------
    folder : str or path-like
        Folder containing ``meta.json``, ``depth/`` and ``labels/``.

    Returns
    -------
    depth : ndarray of float32, shape (n, height, width)
        Depth in metres.
    labels : ndarray of uint8, shape (n, height, width)
        Part labels.
    """
    folder = Path(folder)
    meta = json.loads((folder / "meta.json").read_text())
    height, width = meta["size"]
    depth = np.empty((meta["count"], height, width), dtype=np.float32)
    labels = np.empty((meta["count"], height, width), dtype=np.uint8)
    for i in range(meta["count"]):
        name = f"{i:06d}.png"
        raw = cv2.imread(str(folder / "depth" / name), cv2.IMREAD_UNCHANGED)
        lab = cv2.imread(str(folder / "labels" / name), cv2.IMREAD_UNCHANGED)
        if raw is None or lab is None:
            raise OSError(f"missing or unreadable frame {name} in {folder}")
        depth[i] = raw / meta["depth_scale"]
        labels[i] = lab
    return depth, labels


# --------------------------------------------------------------------------
# Visualisation
# --------------------------------------------------------------------------


def contact_sheet(depth: np.ndarray, labels: np.ndarray, path: str | os.PathLike, n: int = 8) -> None:
    """Write a PNG grid of depth frames above their coloured part labels.

    Parameters
    ----------
    depth : ndarray, shape (m, height, width)
        Depth frames in metres (0 = no data, drawn black).
    labels : ndarray of uint8, shape (m, height, width)
        Part labels; void pixels are drawn white.
    path : str or path-like
        Output PNG file; its folder is created if needed.
    n : int, optional
        Number of frames shown (at most 8 per row of pairs).
    """
    from matplotlib.figure import Figure  # Agg canvas, no pyplot state

    n = min(n, len(depth))
    if n < 1:
        raise ValueError("contact_sheet needs at least one frame")
    cols = min(n, 8)
    pairs = -(-n // cols)
    height, width = depth.shape[1:]
    colours = np.full((256, 3), 255, dtype=np.uint8)
    colours[:N_CLASSES] = PART_COLOURS
    panel = 2.4  # inches per frame
    fig = Figure(figsize=(panel * cols, 2.0 * panel * pairs * height / width + 0.3))
    for i in range(n):
        row, col = divmod(i, cols)
        body = depth[i] > 0
        ax = fig.add_subplot(2 * pairs, cols, 2 * row * cols + col + 1)
        shown = np.ma.masked_where(~body, depth[i])
        if body.any():
            ax.imshow(shown, cmap="viridis_r", vmin=depth[i][body].min(), vmax=depth[i][body].max())
        ax.set_title(f"frame {i}", fontsize=8, color="white")
        ax.axis("off")
        ax = fig.add_subplot(2 * pairs, cols, (2 * row + 1) * cols + col + 1)
        ax.imshow(colours[labels[i]])
        ax.axis("off")
    fig.subplots_adjust(left=0.01, right=0.99, bottom=0.01, top=0.95, wspace=0.03, hspace=0.08)
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=100, facecolor="black")
