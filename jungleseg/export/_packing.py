"""Tabular models as one bit stream of nodes: every field takes exactly the bits it needs.

A tabular split node holds a column, a threshold and two child codes (:mod:`._layout`).
Byte-wide tables round each of them up to 8, 16 or 32 bits; here a node is the fields

    column (``column_bits``) | threshold (``threshold_bits``) | left | right

written least significant bit first, one node after the other in DAG and level order.
The two child codes take the bits of their *level* (``level_child_bits``: enough for the
next level's split nodes plus the leaf rows; stored 4 bits each where they fit), so the
narrow levels near the roots and the leaves cost fewer bits than the widest. The
thresholds are

- float variant: the index of the threshold in ``threshold_value``, the model's distinct
  float32 thresholds in increasing order (binned models have few: the bin cuts);
- quantised variant: the fixed-point threshold plus ``threshold_bias``, unsigned.

The runtime walks a DAG level by level and keeps the bit position of the level it is on
(``dag_bit`` holds each DAG's first), walking all DAGs side by side so that their steps
overlap; a field of at most 25 bits is read from the four bytes it starts in, so the
stream is padded for the last such read.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ._layout import ExportError, Layout, build_layout, c_int_type

#: How the nodes are written: packed tables and a loop, or code (:mod:`._inline`).
STYLES = ("tables", "inline")
#: Widest field a runtime read takes (a 32-bit read shifted by up to 7 bits).
FIELD_LIMIT = 25


def bits_for(largest: int) -> int:
    """Bits of an unsigned field holding ``0..largest`` (at least 1)."""
    return max(1, int(largest).bit_length())


@dataclass
class PackedNodes:
    """A tabular layout's nodes as a bit stream (module docstring)."""

    stream: np.ndarray  # uint8, padded
    column_bits: int
    threshold_bits: int
    threshold_value: np.ndarray | None  # float variant: distinct thresholds, increasing
    threshold_bias: int  # quantised variant: stored threshold = threshold + bias
    level_count: np.ndarray  # split nodes of each level (0 ends a DAG)
    level_child_bits: np.ndarray  # bits of a child code of each level's nodes
    dag_bit: np.ndarray  # bit position of each DAG's first node

    def tables(self) -> dict[str, tuple[str, np.ndarray]]:
        """The constant tables, by name: (C type, values)."""
        bits = self.level_child_bits
        if bits.max(initial=1) < 16:  # two levels a byte
            pairs = np.append(bits, 0)[: 2 * ((len(bits) + 1) // 2)].reshape(-1, 2)
            child_bits = pairs[:, 0] | pairs[:, 1] << 4
        else:
            child_bits = bits
        out = {"nodes": ("uint8_t", self.stream), "level_child_bits": ("uint8_t", child_bits),
               "level_count": (c_int_type(0, int(self.level_count.max(initial=0))),
                               self.level_count),
               "dag_bit": (c_int_type(0, int(self.dag_bit.max(initial=0))), self.dag_bit)}
        if self.threshold_value is not None:
            out["threshold_value"] = ("float", self.threshold_value)
        return out


def pack_nodes(layout: Layout) -> PackedNodes:
    """The bit stream of a tabular ``layout``'s split nodes."""
    counts = np.diff(layout.level_first).astype(np.int64)
    following = np.append(counts[1:], 0)  # the next level's split nodes (0 after a DAG)
    child_bits = np.array([bits_for(c + layout.n_leaves - 1) for c in following], np.int64)
    if child_bits.max(initial=1) > FIELD_LIMIT:
        raise ExportError(f"a level has {int(counts.max())} nodes: too many for the "
                          "packed layout")
    if layout.variant == "float":
        values, index = np.unique(np.asarray(layout.threshold, np.float32), return_inverse=True)
        threshold, bias = index.astype(np.int64), 0
        if not values.size:  # no split node (every DAG a leaf): one value the walk never reads
            values = np.zeros(1, np.float32)
    else:
        values = None
        q = np.asarray(layout.threshold, np.int64)
        bias = -int(q.min(initial=0))
        threshold = q + bias
    column_bits = bits_for(max(layout.n_features - 1, 0))
    threshold_bits = bits_for(int(threshold.max(initial=0)))
    if max(column_bits, threshold_bits) > FIELD_LIMIT:
        raise ExportError("too many columns or thresholds for the packed layout")
    node_level = np.repeat(np.arange(len(counts)), counts)
    node_bits = column_bits + threshold_bits + 2 * child_bits[node_level]
    node_at = np.concatenate([[0], np.cumsum(node_bits)])
    fields = [(np.asarray(layout.feature, np.int64), np.full(layout.n_split, column_bits),
               node_at[:-1]),
              (threshold, np.full(layout.n_split, threshold_bits),
               node_at[:-1] + column_bits),
              (np.asarray(layout.left, np.int64), child_bits[node_level],
               node_at[:-1] + column_bits + threshold_bits),
              (np.asarray(layout.right, np.int64), child_bits[node_level],
               node_at[:-1] + column_bits + threshold_bits + child_bits[node_level])]
    # the last read takes the 4 bytes from the byte its field starts in
    last_field = int(node_at[-1] - child_bits[node_level[-1]]) if layout.n_split else 0
    bits = np.zeros(max(int(node_at[-1]), 8 * ((last_field >> 3) + 4)), np.uint8)
    for value, width, at in fields:
        for b in range(int(width.max(initial=0))):
            take = width > b
            bits[at[take] + b] = (value[take] >> b) & 1
    stream = np.packbits(bits, bitorder="little")
    level_at = node_at[np.asarray(layout.level_first[:-1], np.int64)]
    return PackedNodes(stream=stream, column_bits=column_bits, threshold_bits=threshold_bits,
                       threshold_value=values, threshold_bias=bias, level_count=counts,
                       level_child_bits=child_bits,
                       dag_bit=level_at[np.asarray(layout.dag_level, np.int64)])


def pack_layout(jungle, variant: str = "float", threshold_bits: int = 16,
                style: str = "tables") -> Layout:
    """:func:`~._layout.build_layout`, with a tabular model's nodes packed as a bit
    stream (``style='tables'``) or marked to be written as code (``'inline'``): what the
    export writes."""
    if style not in STYLES:
        raise ExportError(f"unknown style {style!r}: expected one of {', '.join(STYLES)}")
    layout = build_layout(jungle, variant, threshold_bits)
    if style == "inline":
        if layout.kind != "tabular":
            raise ExportError(f"style 'inline' covers tabular models, not {layout.kind} "
                              "models: use style 'tables'")
        layout.inline = True
    elif layout.kind == "tabular":
        layout.packed = pack_nodes(layout)
    return layout
