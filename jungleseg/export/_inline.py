"""Tabular models as code: every split node one comparison and branch (``style='inline'``).

The loop over packed tables (:mod:`._packing`) is the smallest form of a model; written
as code, a node becomes a comparison with its column and threshold as constants and a
jump to its children, which a CPU predicts and runs faster than a table walk, at several
times the flash. A DAG becomes one function: a split node is a label, a child that is a
split node a ``goto`` its label (nodes shared by several parents are written once, as
the DAG shares them), a child that is a leaf ``return``\\ s its leaf row. The function
``<name>_walk`` has the same meaning as the table runtime's: the leaf row of each DAG.
Where every leaf is pure (:meth:`~._layout.Layout.leaf_classes`), a leaf returns its
class instead, and ``<name>_walk`` gives each DAG's class.
"""
from __future__ import annotations

import numpy as np

from ._layout import Layout, column_codes


def float_keys(values: np.ndarray) -> np.ndarray:
    """The integer that orders each float32 as the float compares (int64): the magnitude's
    bits, negated for a negative sign, so that -0 and +0 are both 0. ``x < t`` holds
    exactly when ``key(x) < key(t)``, for every x but NaN (which the C code reads as the
    largest key, so that it goes right, as ``x < t`` is false)."""
    bits = np.asarray(values, np.float32).reshape(-1).view(np.uint32).astype(np.int64)
    magnitude = bits & 0x7FFFFFFF
    return np.where(bits >> 31, -magnitude, magnitude)


def _threshold_text(layout: Layout, node: int, codes: dict | None) -> str:
    if codes is not None:
        j = int(layout.feature[node])
        return str(int(float(layout.threshold[node]) * 2.0 ** int(codes["shift"][j]))
                   - int(codes["base"][j]))
    if layout.variant == "float":
        return str(int(float_keys(layout.threshold[node])[0]))
    return str(int(layout.threshold[node]))


def x_type(layout: Layout) -> str:
    """The C type of a row's values as the DAG functions compare them: the float
    variant's column codes (:func:`column_codes`) or float keys (:func:`float_keys`; an
    immediate integer comparison is shorter code than a float one, and the same
    comparison), or the quantised variant's 16-bit codes."""
    return "int32_t" if layout.variant == "float" else "int16_t"


def dag_function(layout: Layout, n: str, dag: int) -> str:
    """The C function that walks DAG ``dag`` of a tabular ``layout`` to its leaf row."""
    codes = column_codes(layout)
    first_level = int(layout.dag_level[dag])
    counts = np.diff(layout.level_first)
    classes = layout.leaf_classes()
    lines = [f"static uint32_t {n}_dag{dag}(const {x_type(layout)} *x)", "{"]

    def leaf(row: int) -> str:
        return f"return {row if classes is None else int(classes[row])}u;"

    def child(level: int, code: int) -> tuple[int, int] | int:
        """A child code of a level-``level`` node: (level, rank) of a split node, or the
        leaf row."""
        below = int(counts[level + 1]) if level + 1 < len(counts) else 0
        return code - below if code >= below else (level + 1, code)

    def node_of(at: tuple[int, int]) -> int:
        return int(layout.level_first[at[0]]) + at[1]

    root = int(layout.roots[dag])
    if root >= counts[first_level]:  # a DAG that is one leaf: it reads no value
        lines += ["    (void)x;", f"    {leaf(root - int(counts[first_level]))}"]
        order = []
    else:  # depth first, left child first: a child written next is reached by falling
        order, seen, stack = [], set(), [(first_level, root)]  # through, not a jump
        while stack:
            at = stack.pop()
            if at not in seen:
                seen.add(at)
                order.append(at)
                node = node_of(at)
                for code in (layout.right[node], layout.left[node]):
                    below = child(at[0], int(code))
                    if isinstance(below, tuple):
                        stack.append(below)
    following = dict(zip(order, order[1:]))

    def go(to) -> str:
        if isinstance(to, tuple):
            return f"goto l{to[0] - first_level}_{to[1]};"
        return leaf(to)

    texts, targets = [], set()
    for at in order:
        node = node_of(at)
        left, right = (child(at[0], int(c)) for c in (layout.left[node], layout.right[node]))
        test = f"x[{int(layout.feature[node])}] {{}} {_threshold_text(layout, node, codes)}"
        if left == following.get(at):  # fall through to the left child
            body = [f"    if ({test.format('>=')}) {{", f"        {go(right)}", "    }"]
            jumps = [right]
        else:
            body = [f"    if ({test.format('<')}) {{", f"        {go(left)}", "    }"]
            jumps = [left]
            if right != following.get(at):
                body.append(f"    {go(right)}")
                jumps.append(right)
        targets.update(j for j in jumps if isinstance(j, tuple))
        texts.append((at, body))
    for at, body in texts:  # a label where a goto leads
        if at in targets:
            lines.append(f"l{at[0] - first_level}_{at[1]}:")
        lines.extend(body)
    lines.append("}")
    return "\n".join(lines) + "\n"


def inline_walk(layout: Layout, n: str) -> str:
    """Every DAG's function and ``<name>_walk(x, leaf)``, which calls them in turn (each
    DAG's leaf row, or its class where :meth:`~._layout.Layout.leaf_classes` holds)."""
    calls = "\n".join(f"    leaf[{g}] = {n}_dag{g}(x);" for g in range(layout.n_dags))
    return ("\n".join(dag_function(layout, n, g) for g in range(layout.n_dags))
            + "\n/* the leaf row each DAG reaches */\n"
            f"static void {n}_walk(const {x_type(layout)} *x, uint32_t *leaf)\n{{\n{calls}\n}}\n")
