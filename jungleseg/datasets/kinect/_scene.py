"""The camera, the skeleton's joint angles and canonical poses, the body's segments,
joints and primitives, and the random scene of every frame (pose, shape, placement)."""
from __future__ import annotations

import math

import numpy as np

from ._labels import _LABEL

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
_MIRROR_SIGN[[_A[a] for a in ("pelvis_roll", "spine_lat", "spine_twist", "neck_lat",
                               "neck_twist")]] = -1.0
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
    ("head", _ELLIPSOID,
     ["left_upper_head", "right_upper_head", "left_lower_head", "right_lower_head"], 0),
    ("neck", _CAPSULE, ["neck"] * 4, 0),
    ("chest", _ELLIPSOID, ["left_upper_torso", "right_upper_torso"] * 2,
     _bits("left_shoulder", "right_shoulder")),
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
_PRIM_LABELS = np.array([[_LABEL[n] for n in labels] for _, _, labels, _ in _PRIMITIVES],
                        dtype=np.uint8)
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
    pitch_offset = (np.radians(3.0) * nrm[:, _Z_PITCH]
                    + np.where(crop & ~crop_horizontal, 0.7 * offset, 0.0))

    return {
        "height": 1.4 + 0.6 * uni[:, _U_HEIGHT],
        "girth": 0.8 + 0.55 * uni[:, _U_GIRTH],
        "segments": _SEGMENT_FRACTIONS * np.clip(1.0 + 0.05 * nrm[:, _Z_SEGMENTS:_Z_AZIMUTH],
                                                 0.88, 1.12),
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
