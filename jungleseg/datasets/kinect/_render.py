"""Ray casting of the body (Numba), sensor effects, and the public rendering calls."""
from __future__ import annotations

import math

import numpy as np
from numba import njit, prange

from ._body import _build_body, _to_camera
from ._labels import MIRROR_LABEL
from ._scene import (
    _JOINT_BITS,
    _JOINT_LABEL,
    _NOISE_MM_PER_M2,
    _PRIM_KIND,
    _PRIM_LABELS,
    _PRIM_MASK,
    _sample_scenes,
)

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
    clean_depth, clean_labels, noise_seed, edge_dropout, flip, mirror_label, noise_coeff, jump,
    depth, labels
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
        _PRIM_KIND, cam["params"], cam["split"], _PRIM_LABELS, _PRIM_MASK, cam["box"],
        cam["joints"], cam["joint_r2"], _JOINT_LABEL, _JOINT_BITS, cam["intrinsics"],
        clean_depth, clean_labels,
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


def render_frames(n: int, seed: int = 0, size: tuple[int, int] = (240, 320)
                  ) -> tuple[np.ndarray, np.ndarray]:
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
        0 background, 1..31 body parts (see `CLASS_NAMES`), 255 invalid
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


def render_frame(seed: int, index: int, size: tuple[int, int] = (240, 320)
                 ) -> tuple[np.ndarray, np.ndarray]:
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
