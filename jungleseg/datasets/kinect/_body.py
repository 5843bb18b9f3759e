"""Forward kinematics: a scene's body as capsules and ellipsoids, placed in front of the
camera."""
from __future__ import annotations

import numpy as np

from ._scene import (
    _A,
    _CAPSULE,
    _JOINT_INDEX,
    _JOINT_RADIUS,
    _JOINTS,
    _N_PRIM,
    _P,
    _PRIM_KIND,
    _S,
    _SIDE_ANGLES,
    kinect_intrinsics,
)

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
              0.145 * s * g, 0.8 * length("lower_spine"), 0.10 * s * g**1.3,
              split=True)  # fmt: skip
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

        capsule(f"{side}_shoulder", _at(neck_base, r_upper, zero, -0.03 * h, zero), shoulder,
                0.06 * s * g)
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


def _to_camera(scenes: dict[str, np.ndarray], geo: dict[str, np.ndarray],
               size: tuple[int, int]) -> dict:
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
        return (np.einsum("nij,n...j->n...i", rot, p)
                + shift.reshape((n,) + (1,) * (p.ndim - 2) + (3,)))

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

    split = np.concatenate([point(geo["split_centre"]), vector(geo["split_lr"]),
                            vector(geo["split_ud"])], -1)
    return {
        "params": params,
        "split": split,
        "box": box,
        "joints": point(geo["joints"]),
        "joint_r2": geo["joint_radius"] ** 2,
        "intrinsics": np.array([intr["fx"], intr["fy"], intr["cx"], intr["cy"]]),
    }
