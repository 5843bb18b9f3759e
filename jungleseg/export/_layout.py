"""What the C export can cover, and the compact tables it writes a model as.

Every DAG's split nodes are numbered together, in DAG and level order, and
``level_first[l]`` is the number of the first split node of level ``l`` (levels of all
DAGs counted together; ``dag_level[g]`` is DAG g's level 0). A child (or a root) is a
*code* local to its level: below the level's split-node count it is the rank of a split
node within the level, otherwise ``code - count`` is a row of the leaf table. Codes
therefore fit in a byte whenever the widest level plus the distinct leaves do. Leaf rows
are shared: the DAG shares a leaf between all the parents that reach it, and rows of
equal values (pure leaves, most of all) are stored once for the whole model. Codes,
feature indices and thresholds take the narrowest C integer type that holds them; the
export packs a tabular model's nodes further, as a bit stream (:mod:`._packing`), or
writes them as code (:mod:`._inline`), where the float variant compares each column's
small integer codes (:func:`column_codes`, exact) where the thresholds allow.

The quantised variant (``variant='quantised'``) replaces every float by an integer:

- tabular: feature ``j`` is read as the code ``floor(x * 2**shift[j]) - offset[j]``
  (int16, saturated), a threshold ``t`` becomes ``ceil(t * 2**shift[j]) - offset[j]``;
  where every threshold of every column shares its last bits, code and thresholds are
  divided by ``2**step[j]`` (floor), which keeps every comparison as it was and narrows
  the packed threshold field.
  ``x < t`` then holds whenever the code comparison does, exactly for values on the
  grid ``2**-shift[j]`` (whole numbers: for every shift >= 0); ``shift`` is the coarsest
  that represents every threshold of the feature exactly, else the finest that keeps
  them in int16 (or int8, with ``threshold_bits=8``: half the node bytes, exact still
  for whole-number features spanning up to 254).
- depth: millimetres as they come from the sensor; probe offsets in pixel-metres
  ``* 2**param_shift`` (int16); responses in millimetres, a probe off the body reading
  ``FAR_Q`` (int16), thresholds mapped so that they separate the same responses.
- colour: every channel value as ``floor(v * 2**shift)`` (one shift for all channels,
  so that channels compare), responses and thresholds in those units (int16).
- leaves: each class probability times 255, rounded (uint8); labels maximise the sum
  over the DAGs.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from ..features import ColourFeatures, DepthFeatures, TabularFeatures
from ..features import _kernels as kernels
from ..jungle._model import class_sample, integer_classes

VARIANTS = ("float", "quantised")
#: The fixed-point conversion of the quantised variant saturates at this magnitude.
FIXED_LIMIT = 1 << 29
#: A depth probe off the body, in the quantised variant's millimetre responses.
FAR_Q = 32767
#: Depths beyond this many millimetres read as this far in the quantised variant.
DEPTH_LIMIT_Q = 16383


class ExportError(ValueError):
    """The model cannot be exported as C (the message says why)."""


def c_int_type(low: int, high: int) -> str:
    """The narrowest C99 fixed-width integer type holding ``low..high``."""
    for bits in (8, 16, 32):
        if low >= 0 and high < (1 << bits):
            return f"uint{bits}_t"
        if low >= -(1 << (bits - 1)) and high < (1 << (bits - 1)):
            return f"int{bits}_t"
    raise ExportError(f"values {low}..{high} do not fit in 32 bits")


def type_bytes(ctype: str) -> int:
    """Bytes of a C type the export uses."""
    return {"float": 4, "double": 8}.get(ctype) or int("".join(filter(str.isdigit, ctype))) // 8


def c_float(x: float) -> str:
    """A float32 value as a C literal that reads back bit for bit."""
    x = float(np.float32(x))
    if x == int(x) and abs(x) < 1 << 24 and not (x == 0 and np.signbit(x)):
        return f"{int(x)}.0f"
    return f"{x.hex()}f"


def jungle_of(model):
    """The :class:`~jungleseg.Jungle` of a fitted estimator, or the model itself."""
    from ..jungle import Jungle

    if isinstance(model, Jungle):
        return model
    jungle = getattr(model, "jungle_", None)
    if isinstance(jungle, Jungle):
        return jungle
    raise ExportError(f"cannot export a {type(model).__name__}: expected a fitted "
                      "JungleClassifier or JungleSegmenter, or a loaded model")


def _class_values(classes: np.ndarray) -> np.ndarray:
    """The class values as int64 for ``PREFIX_CLASSES`` (``int32_t``), or ExportError."""
    values = integer_classes(classes)
    if values is None:
        raise ExportError(f"class values must be integers of 32 bits at most; this model's "
                          f"are {class_sample(classes)}: fit on integer labels (e.g. "
                          "sklearn's LabelEncoder)")
    if values.min() < -(1 << 31) or values.max() >= 1 << 31:
        raise ExportError(f"class values must be integers of 32 bits at most; this model's "
                          f"are {class_sample(values)}")
    return values


def check_coverage(jungle) -> str:
    """The family the export writes for ``jungle`` ('tabular', 'depth' or 'colour'), or
    :class:`ExportError` naming why it cannot."""
    family = jungle.family
    if jungle.context:
        raise ExportError("auto-context models are not exported: their later stages read "
                          "class maps of the earlier ones")
    if float(jungle.params.get("soft", 0.0) or 0.0) > 0:
        raise ExportError("soft routing (soft > 0) is not exported: the C code routes hard; "
                          "retrain with soft: 0")
    if isinstance(family, TabularFeatures):
        return "tabular"
    if not any(np.any(dag.left >= 0) for dag in jungle.dags):
        raise ExportError("an image model without split nodes is not exported: every DAG is "
                          "one leaf, so every pixel gets the same class")
    if isinstance(family, DepthFeatures):
        return "depth"
    if isinstance(family, ColourFeatures):
        return "colour"
    raise ExportError(f"{family.name} features are not exported (covered: tabular, depth, "
                      "colour and grey)")


@dataclass
class Layout:
    """A model as the tables of the C source (module docstring)."""

    kind: str  # 'tabular', 'depth' or 'colour'
    variant: str
    n_dags: int
    n_classes: int
    n_features: int  # tabular columns, or channel planes an image model reads
    classes: np.ndarray
    roots: np.ndarray  # (n_dags,) level-0 codes
    level_first: np.ndarray  # (n_levels + 1,) first split node of each level
    dag_level: np.ndarray  # (n_dags,) each DAG's level 0
    left: np.ndarray  # (n_split,) codes
    right: np.ndarray
    threshold: np.ndarray  # float32, or int16 (quantised)
    feature: np.ndarray  # tabular: column (n_split,); image kinds: node kind codes
    params: np.ndarray  # depth (n_split, 4); colour (n_split, 8); tabular (n_split, 0)
    leaves: np.ndarray  # (n_leaves, n_classes) float32, or uint8 (quantised)
    label_weight: np.ndarray | None  # float32 (n_classes,), or uint32; None: all equal
    background: int = 0
    smoothing: int = 0  # the model's probability smoothing (not exported)
    guided_eps: float | None = None
    quant: dict = field(default_factory=dict)  # the quantised variant's scales
    packed: object = None  # tabular: the nodes as a bit stream (._packing.pack_layout)
    inline: bool = False  # tabular: the nodes written as code (._inline), not tables

    @property
    def n_split(self) -> int:
        return int(self.left.shape[0])

    @property
    def n_leaves(self) -> int:
        return int(self.leaves.shape[0])

    @property
    def code_type(self) -> str:
        widest = int(np.diff(self.level_first).max(initial=0))
        return c_int_type(0, widest + self.n_leaves - 1)

    @property
    def threshold_type(self) -> str:
        if self.variant == "float":
            return "float"
        t = np.asarray(self.threshold, np.int64)
        return c_int_type(min(int(t.min(initial=0)), -1), int(t.max(initial=0)))

    def uniform(self, key: str) -> int | None:
        """The value of the quantised tabular scale ``key`` ('shift' or 'step') shared by
        every column a node reads (the C code then writes it as a constant), or None."""
        values = np.unique(np.asarray(self.quant[key])[np.unique(self.feature)])
        if not len(values):  # no node reads a column: any constant will do
            return 0
        return int(values[0]) if len(values) == 1 else None

    def leaf_classes(self) -> np.ndarray | None:
        """Inline tabular models whose leaf rows each hold one nonzero value, the same in
        every row (pure leaves: 1.0, or 255 quantised): the class of each row, else None.
        Their code returns a DAG's class instead of a leaf row, and needs no leaf table:
        a class's sum over k DAGs is k times the value, exactly (k is small), so
        ``predict`` counts votes and takes the most voted class."""
        if not self.inline:
            return None
        leaves = np.asarray(self.leaves)
        nonzero = leaves != 0
        if not len(leaves) or np.any(nonzero.sum(axis=1) != 1):
            return None
        values = leaves[nonzero]
        if np.any(values != (1 if self.variant == "float" else 255)):
            return None
        return nonzero.argmax(axis=1)

    def tables(self) -> dict[str, tuple[str, np.ndarray]]:
        """Every constant table of the model by name: (C type, values)."""
        out = {"root": (self.code_type, self.roots),
               "dag_level": (c_int_type(0, len(self.level_first)), self.dag_level)}
        if self.inline:  # the nodes are code
            out = {}
        elif self.packed is not None:
            out.update(self.packed.tables())
            if np.all(self.roots == self.roots[0]):  # the walk writes it as a constant
                del out["root"]
        else:
            out.update({"left": (self.code_type, self.left), "right": (self.code_type, self.right),
                        "level_first": (c_int_type(0, self.n_split), self.level_first)})
        quantised = self.variant == "quantised"
        if self.kind == "tabular":
            if self.packed is None and not self.inline:
                out["feature"] = (c_int_type(0, max(self.n_features - 1, 0)), self.feature)
                out["threshold"] = (self.threshold_type, self.threshold)
            if self.inline and not quantised:
                codes = column_codes(self)
                if codes is not None:  # the float variant's column codes
                    out["code_scale"] = ("float", np.ldexp(np.float32(1), codes["shift"]))
                    out["code_low"] = ("float", codes["low"].astype(np.float32))
                    out["code_high"] = ("float", codes["high"].astype(np.float32))
                    out["code_base"] = (c_int_type(int(codes["base"].min(initial=0)),
                                              int(codes["base"].max(initial=0))),
                                   codes["base"])
            if quantised:
                if self.uniform("shift") is None:
                    out["shift"] = ("int8_t", self.quant["shift"])
                if np.any(self.quant["step"]) and self.uniform("step") is None:
                    out["step"] = ("uint8_t", self.quant["step"])
                out["offset"] = (c_int_type(int(self.quant["offset"].min(initial=0)),
                                            int(self.quant["offset"].max(initial=0))),
                                 self.quant["offset"])
        elif self.kind == "depth":
            out["params"] = ("int16_t" if quantised else "float", self.params)
            out["threshold"] = ("int16_t" if quantised else "float", self.threshold)
        else:
            out["kind"] = ("uint8_t", self.feature)
            out.update(colour_param_tables(self.params))
            out["threshold"] = ("int16_t" if quantised else "float", self.threshold)
        if self.leaf_classes() is None:
            out["leaf"] = ("uint8_t" if quantised else "float", self.leaves)
        if self.inline and "leaf" in out:  # code for speed: rows of one nonzero value add
            # just that value
            nonzero = np.asarray(self.leaves) != 0
            single = np.where(nonzero.sum(axis=1) == 1, nonzero.argmax(axis=1), self.n_classes)
            out["leaf_single"] = (c_int_type(0, self.n_classes), single)
        if self.label_weight is not None:
            out["label_weight"] = ("uint32_t" if quantised else "float", self.label_weight)
        out["CLASSES"] = ("int32_t", self.classes)
        return out

    def table_bytes(self) -> int:
        """Bytes of all the constant tables (what they take in flash)."""
        return sum(type_bytes(t) * int(np.asarray(v).size) for t, v in self.tables().values())


#: The float variant's column codes (:func:`column_codes`) stay within the integers a
#: float32 holds exactly.
CODE_LIMIT = 1 << 24


def column_codes(layout: Layout) -> dict | None:
    """Small integer codes of the float variant's columns, where they are exact: for each
    column ``j``, ``shift`` (the least s >= 0 that makes every threshold t of the column an
    integer m = t * 2**s), ``low`` (the least m less 1), ``high`` (the greatest m) and
    ``base`` (their middle). A value x becomes ``floor(min(max(x * 2**s, low), high)) -
    base`` (NaN: ``high - base``, so that it goes right, as ``x < t`` is false), a threshold
    ``m - base``; ``x < t`` holds exactly when code < threshold code, since scaling by a
    power of two is exact (or overflows to an infinity, which the clamp keeps in order).
    Whole numbers or halves give codes of a byte or two, so the comparisons take short
    immediates: less code than the 32-bit keys of ``._inline.float_keys``, which the code
    compares instead where a column's codes would reach :data:`CODE_LIMIT` (thresholds of
    many significant bits): then None."""
    if layout.variant != "float":
        return None
    feature = np.asarray(layout.feature, np.int64)
    threshold = np.asarray(layout.threshold, np.float32).astype(np.float64)
    out = {"shift": np.zeros(layout.n_features, np.int64),
           "low": np.zeros(layout.n_features, np.int64),
           "high": np.zeros(layout.n_features, np.int64)}
    for j in np.unique(feature):
        t = threshold[feature == j]
        if not np.all(np.isfinite(t)):
            return None
        shift = max(int(v.as_integer_ratio()[1]).bit_length() - 1 for v in t.tolist())
        m = t * 2.0 ** shift  # exact: float32 values in float64
        if shift > 126 or np.abs(m).max() >= CODE_LIMIT:
            return None
        out["shift"][j], out["low"][j], out["high"][j] = shift, m.min() - 1, m.max()
    out["base"] = (out["low"] + out["high"] + 1) // 2
    return out


def colour_param_tables(params: np.ndarray) -> dict[str, tuple[str, np.ndarray]]:
    """A colour model's node parameters as narrow tables: probe offsets (row, column of u
    and v), channels, and box half-sizes (only when some node reads boxes)."""
    p = params.astype(np.int64)
    offsets = p[:, :4]
    out = {"offset": (c_int_type(int(offsets.min(initial=0)), int(offsets.max(initial=0))),
                      offsets),
           "channel": (c_int_type(0, int(p[:, 4:6].max(initial=0))), p[:, 4:6])}
    if np.any(p[:, 6:8]):
        out["box"] = (c_int_type(0, int(p[:, 6:8].max(initial=0))), p[:, 6:8])
    return out


def build_layout(jungle, variant: str = "float", threshold_bits: int = 16) -> Layout:
    """The tables of ``jungle`` for ``variant`` ('float' or 'quantised'); a quantised
    tabular model's codes and thresholds take ``threshold_bits`` (16 or 8) bits."""
    if threshold_bits not in (8, 16):
        raise ExportError(f"threshold_bits must be 8 or 16, got {threshold_bits!r}")
    if variant not in VARIANTS:
        raise ExportError(f"unknown variant {variant!r}: expected one of {', '.join(VARIANTS)}")
    kind = check_coverage(jungle)
    family = jungle.family
    quantised = variant == "quantised"
    dags = jungle.dags
    leaf_rows: dict[bytes, int] = {}
    leaves: list[np.ndarray] = []

    def leaf_row(values: np.ndarray) -> int:
        row = np.round(values.astype(np.float64) * 255).astype(np.uint8) if quantised \
            else values.astype(np.float32)
        key = row.tobytes()
        if key not in leaf_rows:
            leaf_rows[key] = len(leaves)
            leaves.append(row)
        return leaf_rows[key]

    roots, left, right, threshold, feature, params = [], [], [], [], [], []
    level_first, dag_level = [], []
    n_split = 0
    for dag in dags:
        rows = np.array([leaf_row(v) for v in dag.leaf_value], np.int64)
        is_split = dag.left >= 0
        starts = dag.level_start.astype(np.int64)
        level = np.repeat(np.arange(len(starts) - 1), np.diff(starts))
        count = np.add.reduceat(is_split.astype(np.int64), starts[:-1])  # split nodes per level
        first = n_split + np.concatenate([[0], np.cumsum(count)[:-1]])
        rank = np.cumsum(is_split) - 1 - (first[level] - n_split)  # rank within the level
        leaf = rows[np.maximum(-1 - dag.left.astype(np.int64), 0)]
        code = np.where(is_split, rank, count[level] + leaf)  # each node as its level's code
        dag_level.append(len(level_first))
        level_first.extend(first.tolist())
        roots.append(int(code[0]))
        left.append(code[dag.left[is_split]])
        right.append(code[dag.right[is_split]])
        threshold.append(dag.threshold[is_split])
        feature.append(dag.feature_kind[is_split])
        params.append(dag.feature_params[is_split])
        n_split += int(is_split.sum())
    level_first.append(n_split)
    threshold = np.concatenate(threshold).astype(np.float32)
    params = np.concatenate(params).astype(np.float32)
    node_kind = np.concatenate(feature).astype(np.int64)
    n_classes = jungle.n_classes
    weights = jungle.label_weights()
    layout = Layout(
        kind=kind, variant=variant, n_dags=len(dags), n_classes=n_classes,
        n_features=int(family.n_store_channels), classes=_class_values(jungle.classes),
        roots=np.array(roots, np.int64), level_first=np.array(level_first, np.int64),
        dag_level=np.array(dag_level, np.int64), left=np.concatenate(left),
        right=np.concatenate(right),
        threshold=threshold, feature=node_kind, params=params,
        leaves=np.array(leaves).reshape(len(leaves), n_classes),
        label_weight=None if np.all(weights == 1) else weights,
        background=int(jungle.params.get("background", 0) or 0),
        smoothing=int(jungle.params.get("smoothing", 0) or 0),
        guided_eps=jungle.params.get("guided_eps"))
    if kind == "tabular":
        layout.feature = params[:, 0].astype(np.int64)
        layout.params = np.zeros((n_split, 0), np.float32)
    elif kind == "depth":
        layout.feature = np.zeros(0, np.int64)
    if kind != "tabular" and (layout.classes.min() < 0 or layout.classes.max() > 255
                              or not 0 <= layout.background <= 255):
        raise ExportError("class values must lie in 0..255 for the C label images (uint8)")
    if quantised:
        _quantise(layout, jungle, threshold_bits)
    return layout


def fixed_ceil(t: float, shift: int) -> int:
    """``ceil(t * 2**shift)``, exactly."""
    return math.ceil(math.ldexp(float(t), shift))


def _tie_ceil(x: float) -> int:
    """``ceil(x)``, but a value within 0.001 above a whole number rounds to it: a threshold
    drawn at a response value (float32 of a whole number of units) should keep that
    response on its right."""
    return math.ceil(x - 1e-3)


def _largest_shift(low: float, high: float, span: int = 65534, limit: int = FIXED_LIMIT >> 1
                   ) -> int:
    """The largest ``shift`` in -24..24 whose grid ``2**-shift`` puts ``low..high`` within
    ``span`` steps, every value within ``limit`` steps of 0."""
    for shift in range(24, -25, -1):
        a, b = fixed_ceil(low, shift), fixed_ceil(high, shift)
        if b - a <= span and max(abs(a), abs(b)) <= limit:
            return shift
    raise ExportError(f"thresholds {low:g}..{high:g} do not fit the quantised variant")


def _exact_shift(t: np.ndarray, span: int = 65534) -> int | None:
    """The smallest ``shift`` in 0..24 making every ``t * 2**shift`` a whole number, all
    within ``span`` of each other (the comparison is then exact for every input), or
    None."""
    for shift in range(25):
        scaled = np.ldexp(t, shift)
        if np.all(scaled == np.round(scaled)):
            return shift if scaled.max() - scaled.min() <= span and \
                np.abs(scaled).max() <= FIXED_LIMIT >> 1 else None
    return None


def _quantise(layout: Layout, jungle, threshold_bits: int = 16) -> None:
    """Replace the float tables of ``layout`` by the quantised variant's (module
    docstring)."""
    if layout.label_weight is not None:  # n_dags * 255 * weight fits 32 bits
        w = layout.label_weight.astype(np.float64)
        top = (1 << 32) - 1
        layout.label_weight = np.floor(w / w.max() * (top // (255 * layout.n_dags))).astype(
            np.int64)
    if layout.kind == "tabular":
        n = layout.n_features
        shift = np.zeros(n, np.int64)
        offset = np.zeros(n, np.int64)
        step = np.zeros(n, np.int64)
        q = np.zeros(layout.n_split, np.int64)
        unreduced, plain_offset = np.zeros(layout.n_split, np.int64), np.zeros(n, np.int64)
        for j in range(n):
            at = np.flatnonzero(layout.feature == j)
            if not at.size:
                continue
            t = layout.threshold[at].astype(np.float64)
            span = 65534 if threshold_bits == 16 else 254
            s = _exact_shift(t, span)
            if s is None:
                s = _largest_shift(float(t.min()), float(t.max()), span)
            fixed = np.array([fixed_ceil(v, s) for v in t], np.int64)
            plain = fixed - (int(fixed.min()) + int(fixed.max())) // 2
            # thresholds that share their last e bits: compare floor((code - r) / 2^e),
            # which orders a code against each of them as the code itself does
            e = 0
            while e < 24 and np.all((fixed - fixed[0]) % (2 << e) == 0):
                e += 1
            reduced = (fixed - fixed[0]) >> e
            middle = (int(reduced.min()) + int(reduced.max())) // 2
            shift[j], step[j] = s, e
            offset[j] = int(fixed[0]) % (1 << e) + ((int(fixed[0]) >> e) + middle << e)
            q[at] = reduced - middle
            unreduced[at] = plain
            plain_offset[j] = (int(fixed.min()) + int(fixed.max())) // 2
        # steps cost a table and a division: taken only when they narrow the thresholds
        def bits(v):
            return int(v.max(initial=0) - v.min(initial=0)).bit_length()

        if bits(q) < bits(unreduced):
            layout.threshold = q
            layout.quant = {"shift": shift, "offset": offset, "step": step}
        else:
            layout.threshold = unreduced
            layout.quant = {"shift": shift, "offset": plain_offset, "step": step * 0}
    elif layout.kind == "depth":
        p = np.abs(layout.params.astype(np.float64)).max(initial=1.0)
        param_shift = 0
        while param_shift < 24 and p * 2 ** (param_shift + 1) <= 32767:
            param_shift += 1
        layout.params = np.round(layout.params.astype(np.float64) * 2 ** param_shift).astype(
            np.int64)
        layout.threshold = np.array([_depth_threshold(float(t)) for t in layout.threshold],
                                    np.int64)
        layout.quant = {"param_shift": param_shift}
    else:
        t = layout.threshold.astype(np.float64)
        low, high = (float(t.min()), float(t.max())) if t.size else (0.0, 0.0)
        values = jungle.metadata.get("input_values") or {}
        vlow, vhigh = values.get("range", [low, high])
        reach = max(abs(low), abs(high), 2 * abs(vlow), 2 * abs(vhigh), 1e-30)
        shift = 24
        while shift > -24 and reach * 2 ** shift > 32000:
            shift -= 1
        layout.threshold = np.array([min(max(fixed_ceil(v, shift), -32767), 32767) for v in t],
                                    np.int64)
        layout.quant = {"shift": shift}


def _depth_threshold(t: float) -> int:
    """A depth threshold in metres as the quantised responses' int16 (see :data:`FAR_Q`):
    responses between two body probes are millimetre differences (at most
    :data:`DEPTH_LIMIT_Q`), those with one probe off the body ``FAR_Q - depth`` or
    ``depth - FAR_Q``; the threshold separates the same responses in the new units."""
    far = float(kernels.DEPTH_FAR) * 1000.0
    limit = DEPTH_LIMIT_Q / 1000.0
    if abs(t) <= limit:
        return _tie_ceil(t * 1000.0)
    if limit < t < far / 1000.0 - limit:
        return DEPTH_LIMIT_Q + 1
    if t >= far / 1000.0 - limit:
        return min(FAR_Q - math.floor(far - t * 1000.0), FAR_Q)
    if -far / 1000.0 + limit < t < -limit:
        return -DEPTH_LIMIT_Q
    return max(math.ceil(far + t * 1000.0) - FAR_Q, -FAR_Q)
