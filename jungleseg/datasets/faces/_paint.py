"""Drawing a face with OpenCV primitives: colours, the label-aware painter, background
clutter and each facial part."""
from __future__ import annotations

import math
from functools import lru_cache

import cv2
import numpy as np

from ._labels import BACKGROUND, EYEBROWS, EYES, HAIR, INNER_MOUTH, LIPS, NOSE, SKIN

_COARSE = 8  # downsampling of smooth fields (gradients, shading), computed coarse and enlarged
_SHIFT = 4  # fractional bits of the fixed-point polygon coordinates passed to OpenCV
_SCALE = 1 << _SHIFT

_SKIN_TONES = np.array(
    [
        [255, 226, 204],
        [241, 194, 167],
        [226, 170, 132],
        [198, 134, 96],
        [160, 102, 70],
        [118, 74, 50],
        [78, 50, 36],
    ],
    dtype=np.float64,
)
_HAIR_COLOURS = np.array(
    [
        [22, 17, 15],
        [45, 31, 24],
        [82, 56, 38],
        [122, 86, 52],
        [185, 145, 95],
        [222, 195, 140],
        [145, 62, 32],
        [165, 163, 160],
        [228, 226, 218],
    ],
    dtype=np.float64,
)
_IRIS_COLOURS = np.array(
    [[70, 45, 25], [112, 76, 40], [60, 100, 150], [95, 135, 165], [80, 112, 70], [120, 126, 130]],
    dtype=np.float64,
)
_LIPSTICK_COLOURS = np.array(
    [[182, 32, 52], [150, 42, 72], [205, 85, 105], [118, 42, 42], [212, 112, 122]],
    dtype=np.float64,
)

# Labels whose pixels receive the rounded-face shading and the hair-strand texture.
_SHADED = np.isin(np.arange(256), (SKIN, NOSE, LIPS)).astype(np.float32)
_HAIRY = np.isin(np.arange(256), (HAIR, EYEBROWS)).astype(np.float32)


def _skin_colour(rng: np.random.Generator) -> np.ndarray:
    t = rng.uniform(0, len(_SKIN_TONES) - 1)
    i = min(int(t), len(_SKIN_TONES) - 2)
    tone = _SKIN_TONES[i] + (t - i) * (_SKIN_TONES[i + 1] - _SKIN_TONES[i])
    return tone * rng.uniform(0.92, 1.08, 3)


def _hair_colour(rng: np.random.Generator) -> np.ndarray:
    if rng.random() < 0.07:
        return rng.uniform(20, 235, 3)  # dyed
    return _HAIR_COLOURS[rng.integers(len(_HAIR_COLOURS))] * rng.uniform(0.85, 1.15, 3)


def _clutter_colour(rng: np.random.Generator) -> np.ndarray:
    kind = rng.random()
    if kind < 0.3:
        return _skin_colour(rng)
    if kind < 0.5:
        return _hair_colour(rng)
    return rng.uniform(0, 255, 3)


def _rgb(colour: np.ndarray) -> tuple[float, float, float]:
    r, g, b = np.clip(colour, 0, 255)
    return float(r), float(g), float(b)


def _ellipse(
    cu: float,
    cv: float,
    au: float,
    av: float,
    angle: float = 0.0,
    t0: float = 0.0,
    t1: float = 2 * math.pi,
    n: int = 32,
) -> np.ndarray:
    """Points (n, 2) on an ellipse arc in face coordinates; ``angle`` in radians."""
    t = np.linspace(t0, t1, n)
    u, v = au * np.cos(t), av * np.sin(t)
    c, s = math.cos(angle), math.sin(angle)
    return np.stack([cu + c * u - s * v, cv + s * u + c * v], axis=1)


@lru_cache(maxsize=8)
def _coarse_grid(height: int, width: int) -> tuple[np.ndarray, np.ndarray]:
    """Full-resolution coordinates (x, y) of the samples of a grid 8 times coarser.

    A field sampled on this grid and enlarged with :func:`_enlarge` is a smooth full-size field.
    """
    rows, cols = -(-height // _COARSE), -(-width // _COARSE)
    x = (np.arange(cols, dtype=np.float32) + 0.5) * (width / cols) - 0.5
    y = (np.arange(rows, dtype=np.float32) + 0.5) * (height / rows) - 0.5
    xx, yy = np.meshgrid(x, y)
    xx.flags.writeable = False
    yy.flags.writeable = False
    return xx, yy


def _enlarge(field: np.ndarray, height: int, width: int) -> np.ndarray:
    return cv2.resize(field, (width, height), interpolation=cv2.INTER_LINEAR)


class _Painter:
    """Draws polygons given in face coordinates on the image and the label map.

    Face coordinates are pixels relative to the face centre, ``u`` to the right and ``v``
    down, before the roll rotation.
    """

    def __init__(
        self, image: np.ndarray, labels: np.ndarray, centre: tuple[float, float], roll: float
    ) -> None:
        self.image = image
        self.labels = labels
        self.centre = np.array(centre)
        c, s = math.cos(roll), math.sin(roll)
        self.rotation = np.array([[c, -s], [s, c]])

    def points(self, uv: np.ndarray) -> np.ndarray:
        """Fixed-point image coordinates of face-coordinate points."""
        xy = self.centre + uv @ self.rotation.T
        return np.round(xy * _SCALE).astype(np.int32)

    def fill(self, polygons: list[np.ndarray], label: int, colour: np.ndarray) -> None:
        """Fill polygons with one colour and one label."""
        for p in polygons:  # one call each: fillPoly would XOR overlapping polygons
            pts = [self.points(p)]
            cv2.fillPoly(self.labels, pts, label, cv2.LINE_8, _SHIFT)
            cv2.fillPoly(self.image, pts, _rgb(colour), cv2.LINE_AA, _SHIFT)

    def fill_with_details(
        self,
        polygons: list[np.ndarray],
        label: int,
        colour: np.ndarray,
        details: list[tuple[np.ndarray, np.ndarray]],
    ) -> None:
        """Fill a region (union of polygons), then paint details clipped to it."""
        pts = [self.points(p) for p in polygons]
        corners = np.concatenate(pts) >> _SHIFT
        height, width = self.labels.shape
        x0, y0 = np.maximum(corners.min(axis=0) - 2, 0)
        x1, y1 = np.minimum(corners.max(axis=0) + 3, (width, height))
        if x0 >= x1 or y0 >= y1:
            return
        offset = np.array([x0, y0], dtype=np.int32) * _SCALE
        mask = np.zeros((y1 - y0, x1 - x0), np.uint8)
        for p in pts:
            cv2.fillPoly(mask, [p - offset], 1, cv2.LINE_8, _SHIFT)
        patch = np.empty((y1 - y0, x1 - x0, 3), np.uint8)
        patch[:] = np.clip(colour, 0, 255)
        for shape, shade in details:
            cv2.fillPoly(patch, [self.points(shape) - offset], _rgb(shade), cv2.LINE_AA, _SHIFT)
        inside = mask.astype(bool)
        self.image[y0:y1, x0:x1][inside] = patch[inside]
        self.labels[y0:y1, x0:x1][inside] = label

    def line(self, uv: np.ndarray, colour: np.ndarray, thickness: float) -> None:
        """Draw an open polyline on the image only."""
        cv2.polylines(
            self.image,
            [self.points(uv)],
            False,
            _rgb(colour),
            max(1, round(thickness)),
            cv2.LINE_AA,
            _SHIFT,
        )


def _background(rng: np.random.Generator, height: int, width: int) -> np.ndarray:
    """Cluttered background: gradient, low-frequency colour noise, blobs and stripes."""
    x, y = _coarse_grid(height, width)
    phi = rng.uniform(0, 2 * math.pi)
    t = x * math.cos(phi) + y * math.sin(phi)
    t -= t.min()
    t /= max(float(t.max()), 1e-6)
    c0, c1 = _clutter_colour(rng), _clutter_colour(rng)
    base = c0.astype(np.float32) + t[..., None] * (c1 - c0).astype(np.float32)
    coarse = rng.normal(0, rng.uniform(0, 40), (4, 5, 3)).astype(np.float32)
    base += cv2.resize(coarse, x.shape[::-1], interpolation=cv2.INTER_CUBIC)
    image = _enlarge(np.clip(base, 0, 255).astype(np.uint8), height, width)
    scale = max(height, width)
    for _ in range(rng.integers(2, 14)):
        colour = _rgb(_clutter_colour(rng))
        kind = rng.random()
        if kind < 0.55:
            centre = (int(rng.uniform(0, width)), int(rng.uniform(0, height)))
            axes = (int(rng.uniform(0.02, 0.3) * scale), int(rng.uniform(0.02, 0.3) * scale))
            cv2.ellipse(image, centre, axes, rng.uniform(0, 180), 0, 360, colour, -1, cv2.LINE_AA)
        elif kind < 0.8:
            corners = rng.uniform((0, 0), (width, height), (rng.integers(3, 7), 2))
            cv2.fillPoly(image, [np.round(corners).astype(np.int32)], colour, cv2.LINE_AA)
        else:
            p0 = rng.uniform((0, 0), (width, height))
            p1 = p0 + rng.normal(0, scale / 2, 2)
            cv2.line(
                image,
                (int(p0[0]), int(p0[1])),
                (int(p1[0]), int(p1[1])),
                colour,
                int(rng.integers(2, max(3, scale // 20))),
                cv2.LINE_AA,
            )
    return image


def _draw_body_and_hair_back(
    paint: _Painter,
    rng: np.random.Generator,
    a: float,
    b: float,
    skin: np.ndarray,
    hair: np.ndarray,
    long_hair: bool,
) -> None:
    if rng.random() < 0.85:  # clothes: background class
        shoulders = rng.uniform(1.25, 1.6) * b
        width = rng.uniform(1.8, 2.8) * a
        clothes = np.array(
            [
                [-0.55 * a, shoulders - 0.2 * b],
                [0.55 * a, shoulders - 0.2 * b],
                [width, shoulders + 0.35 * b],
                [width, 6 * b],
                [-width, 6 * b],
                [-width, shoulders + 0.35 * b],
            ]
        )
        paint.fill([clothes], BACKGROUND, _clutter_colour(rng))
    if long_hair:
        half = a * rng.uniform(1.15, 1.45)
        bottom = b * rng.uniform(0.9, 2.0)
        top = _ellipse(0, -0.1 * b, half, 1.08 * b, t0=math.pi, t1=2 * math.pi)
        ends = np.linspace(half, -half, 9)
        ragged = bottom + rng.normal(0, 0.06 * b, len(ends))
        paint.fill([np.vstack([top, np.stack([ends, ragged], axis=1)])], HAIR, hair)
    neck_w = a * rng.uniform(0.4, 0.55)
    neck_end = b * rng.uniform(1.35, 1.7)
    neck = np.vstack(
        [
            [[-neck_w, 0.4 * b], [neck_w, 0.4 * b]],
            _ellipse(0, neck_end, neck_w * 1.05, 0.15 * b, t0=0, t1=math.pi, n=12),
        ]
    )
    paint.fill([neck], SKIN, skin * rng.uniform(0.72, 0.88))


def _draw_head(
    paint: _Painter,
    rng: np.random.Generator,
    a: float,
    b: float,
    du: float,
    skin: np.ndarray,
) -> None:
    ear_v = rng.uniform(-0.08, 0.08) * b
    ears = [
        _ellipse(side * 0.97 * a + 0.3 * du, ear_v, 0.17 * a, 0.27 * b, n=16) for side in (-1, 1)
    ]
    paint.fill(ears, SKIN, skin * 0.9)
    jaw = rng.uniform(0.72, 0.95)
    cranium = _ellipse(0.15 * du, -0.05 * b, a, 0.95 * b)
    chin = _ellipse(0.25 * du, 0.1 * b, a * jaw, 0.9 * b)
    paint.fill([cranium, chin], SKIN, skin)


def _draw_hair_front(
    paint: _Painter,
    rng: np.random.Generator,
    a: float,
    b: float,
    du: float,
    hair: np.ndarray,
    long_hair: bool,
) -> None:
    if rng.random() < 0.1:  # bald, sometimes with hair above the ears
        if rng.random() < 0.6:
            tufts = [
                _ellipse(side * 0.96 * a, -0.12 * b, 0.12 * a, 0.22 * b, n=16) for side in (-1, 1)
            ]
            paint.fill(tufts, HAIR, hair)
        return
    hairline = -b * rng.uniform(0.45, 0.62)
    half = a * rng.uniform(1.03, 1.14)
    crown = b * rng.uniform(1.04, 1.22) + hairline
    temples = b * rng.uniform(0.1, 0.4)
    top = _ellipse(0.1 * du, hairline, half, crown, t0=math.pi, t1=2 * math.pi)
    u = np.linspace(half, -half, 15)
    edge = hairline + temples * (u / half) ** 2
    paint.fill([np.vstack([top, np.stack([u + 0.1 * du, edge], axis=1)])], HAIR, hair)
    if rng.random() < 0.35:  # fringe with a ragged lower edge
        top_v = hairline - 0.1 * b  # overlap the crown: no seam between the two
        depth = -b * rng.uniform(0.3, 0.42) - top_v
        fringe_u = rng.uniform(-0.2, 0.2) * a + 0.15 * du
        fringe = _ellipse(
            fringe_u,
            top_v,
            a * rng.uniform(0.6, 0.95),
            depth,
            angle=rng.uniform(-0.3, 0.3),
            t0=0,
            t1=math.pi,
            n=17,
        )
        # pull every other point towards the centre: ragged, still a simple polygon
        centre = np.array([fringe_u, top_v])
        shrink = rng.uniform(0.0, 0.25, (len(fringe[1:-1:2]), 1))
        fringe[1:-1:2] -= shrink * (fringe[1:-1:2] - centre)
        paint.fill([fringe], HAIR, hair * rng.uniform(0.9, 1.1))
    if long_hair and rng.random() < 0.5:  # locks falling over the face edges
        locks = [
            _ellipse(side * 0.9 * a, 0.1 * b, 0.18 * a, 0.85 * b, angle=-side * 0.08, n=20)
            for side in (-1, 1)
            if rng.random() < 0.8
        ]
        if locks:
            paint.fill(locks, HAIR, hair * 0.92)


def _far_side(yaw: float, side: int) -> float:
    """Width factor of a feature: features on the side turned away look narrower."""
    return 1.0 - 0.5 * max(0.0, yaw * side)


def _draw_eyes_and_brows(
    paint: _Painter,
    rng: np.random.Generator,
    a: float,
    b: float,
    du: float,
    yaw: float,
    hair: np.ndarray,
) -> None:
    spacing = a * rng.uniform(0.32, 0.42)
    eye_v = -b * rng.uniform(0.04, 0.13)
    eye_w = a * rng.uniform(0.3, 0.4)
    upper = eye_w * rng.uniform(0.16, 0.24)
    lower = eye_w * rng.uniform(0.1, 0.16)
    brow_v = eye_v - b * rng.uniform(0.15, 0.22)
    brow_len = eye_w * rng.uniform(1.1, 1.4)
    brow_thick = b * rng.uniform(0.035, 0.075)
    brow_arch = b * rng.uniform(0.0, 0.05)
    brow_colour = hair * rng.uniform(0.5, 1.0) if rng.random() < 0.8 else _hair_colour(rng)
    iris_colour = _IRIS_COLOURS[rng.integers(len(_IRIS_COLOURS))] * rng.uniform(0.85, 1.15, 3)
    sclera = np.array([235.0, 230.0, 222.0]) * rng.uniform(0.75, 1.0)
    gaze = rng.uniform(-0.2, 0.2, 2) * (eye_w * 0.5, upper)
    lid = np.array([30.0, 22.0, 20.0]) * rng.uniform(0.6, 1.4)
    for side in (-1, 1):
        f = _far_side(yaw, side)
        cu = side * spacing + du
        # eyebrow: a band along an arch, thinning towards the outer end
        x = np.linspace(-0.5, 0.5, 9) * brow_len * f
        centre_v = brow_v - brow_arch * (1 - (2 * x / (brow_len * f)) ** 2)
        thick = brow_thick * (1 - 0.55 * np.clip(side * x / (brow_len * f) + 0.5, 0, 1))
        brow = np.vstack(
            [
                np.stack([cu + x, centre_v - thick / 2], axis=1),
                np.stack([cu + x[::-1], (centre_v + thick / 2)[::-1]], axis=1),
            ]
        )
        paint.fill([brow], EYEBROWS, brow_colour)
        # eye: almond of two lid curves, iris and pupil clipped to it
        half = 0.5 * eye_w * f
        x = np.linspace(-half, half, 13)
        bulge = np.clip(1 - (x / half) ** 2, 0, 1) ** 0.8
        tilt = side * rng.uniform(-0.04, 0.1) * x
        top = np.stack([cu + x, eye_v - upper * bulge - tilt], axis=1)
        bottom = np.stack([cu + x[::-1], (eye_v + lower * bulge - tilt)[::-1]], axis=1)
        iris_r = (upper + lower) * rng.uniform(0.5, 0.62)
        iu, iv = cu + gaze[0] * f + 0.15 * side * yaw * half, eye_v + gaze[1]
        details = [
            (_ellipse(iu, iv, iris_r * f, iris_r, n=20), iris_colour),
            (_ellipse(iu, iv, 0.45 * iris_r * f, 0.45 * iris_r, n=16), np.array([12.0, 10, 10])),
            (
                _ellipse(iu + 0.3 * iris_r, iv - 0.3 * iris_r, 0.15 * iris_r, 0.15 * iris_r, n=8),
                np.array([245.0, 245, 245]),
            ),
        ]
        paint.fill_with_details([np.vstack([top, bottom])], EYES, sclera, details)
        paint.line(top, lid, 0.12 * (upper + lower))


def _draw_nose(
    paint: _Painter,
    rng: np.random.Generator,
    a: float,
    b: float,
    du: float,
    yaw: float,
    skin: np.ndarray,
) -> None:
    cu = 1.6 * du
    top_v = -b * rng.uniform(0.02, 0.1)
    tip_v = b * rng.uniform(0.2, 0.32)
    bridge = a * rng.uniform(0.06, 0.1)
    base = a * rng.uniform(0.17, 0.26)
    tip_h = b * rng.uniform(0.05, 0.08)
    lean = 0.6 * du  # the tip turns further than the bridge
    shape = [
        np.array(
            [
                [cu - bridge, top_v],
                [cu + bridge, top_v],
                [cu + lean + 0.55 * base, tip_v],
                [cu + lean - 0.55 * base, tip_v],
            ]
        ),
        _ellipse(cu + lean, tip_v, 0.5 * base, tip_h, n=20),
        _ellipse(cu + lean - 0.68 * base, tip_v + 0.2 * tip_h, 0.35 * base, 0.8 * tip_h, n=14),
        _ellipse(cu + lean + 0.68 * base, tip_v + 0.2 * tip_h, 0.35 * base, 0.8 * tip_h, n=14),
    ]
    colour = skin * rng.uniform(0.9, 1.05)
    shade_side = -1 if yaw + rng.normal(0, 0.2) > 0 else 1
    shadow = np.array(
        [
            [cu + shade_side * bridge, top_v],
            [cu + shade_side * 0.3 * bridge, top_v],
            [cu + lean + shade_side * 0.2 * base, tip_v - tip_h],
            [cu + lean + shade_side * 0.55 * base, tip_v],
        ]
    )
    nostril = np.array([30.0, 18, 16]) + 0.25 * skin
    details = [(shadow, colour * rng.uniform(0.78, 0.9))] + [
        (
            _ellipse(
                cu + lean + side * 0.38 * base,
                tip_v + 0.65 * tip_h,
                0.17 * base,
                0.35 * tip_h,
                angle=side * 0.3,
                n=12,
            ),
            nostril,
        )
        for side in (-1, 1)
        if _far_side(yaw, side) > 0.85
    ]
    paint.fill_with_details(shape, NOSE, colour, details)


def _draw_mouth(
    paint: _Painter,
    rng: np.random.Generator,
    a: float,
    b: float,
    du: float,
    yaw: float,
    skin: np.ndarray,
) -> None:
    cu = 1.3 * du
    cv = b * rng.uniform(0.5, 0.62)
    half = a * rng.uniform(0.28, 0.42)
    upper = b * rng.uniform(0.035, 0.07)
    lower = b * rng.uniform(0.045, 0.09)
    smile = b * rng.uniform(-0.02, 0.05)
    opening = b * rng.uniform(0.04, 0.15) if rng.random() < 0.4 else 0.0
    natural = skin * np.array([0.9, 0.62, 0.62])
    lipstick = _LIPSTICK_COLOURS[rng.integers(len(_LIPSTICK_COLOURS))]
    lips = natural + rng.uniform(0, 1) ** 2 * (lipstick - natural)
    lips = lips + rng.uniform(0, 0.5) * (skin - lips)  # sometimes close to the skin
    x = np.linspace(-1.0, 1.0, 21)
    # widths per point: the side turned away is foreshortened
    u = cu + half * x * np.where(x < 0, _far_side(yaw, -1), _far_side(yaw, 1))
    corner = cv - smile * x**2
    bulge = np.clip(1 - x**2, 0, 1) ** 0.7
    bow = 1 - 0.35 * np.exp(-((x / 0.15) ** 2))  # Cupid's bow
    top = np.stack([u, corner - opening / 2 * bulge - upper * bulge * bow], axis=1)
    bottom = np.stack([u, corner + opening / 2 * bulge + lower * bulge], axis=1)
    paint.fill([np.vstack([top, bottom[::-1]])], LIPS, lips)
    middle = np.stack([u, corner], axis=1)
    if opening == 0.0:
        paint.line(middle, lips * 0.45, max(1.0, 0.25 * upper))
        return
    inner_x = x * 0.85
    inner_u = cu + (u - cu) * 0.85
    inner_bulge = np.clip(1 - inner_x**2, 0, 1) ** 0.6
    inner_top = np.stack([inner_u, cv - smile * inner_x**2 - opening / 2 * inner_bulge], axis=1)
    inner_bottom = np.stack([inner_u, cv - smile * inner_x**2 + opening / 2 * inner_bulge], axis=1)
    teeth_h = opening * rng.uniform(0.2, 0.45)
    teeth = np.vstack([inner_top, (inner_top + (0, teeth_h))[::-1]])
    tongue = _ellipse(cu, cv + opening / 2, 0.5 * half, 0.45 * opening, n=16)
    details = [
        (tongue, np.array([170.0, 72, 82]) * rng.uniform(0.7, 1.1)),
        (teeth, np.array([232.0, 226, 210]) * rng.uniform(0.75, 1.0)),
    ]
    if rng.random() < 0.3:
        details = details[:1]  # no teeth showing
    mouth = np.array([70.0, 16, 22]) * rng.uniform(0.4, 1.4)
    paint.fill_with_details(
        [np.vstack([inner_top, inner_bottom[::-1]])], INNER_MOUTH, mouth, details
    )
