"""Tabular models as code: every split node one comparison and branch (``style='inline'``).

The loop over packed tables (:mod:`._packing`) is the smallest form of a model; written
as code, a node becomes a comparison with its column and threshold as constants and a
jump to its children, which a CPU predicts and runs faster than a table walk, at several
times the flash. A DAG becomes one function: a split node is a label, a child that is a
split node a ``goto`` its label (nodes shared by several parents are written once, as
the DAG shares them), a child that is a leaf ``return``\\ s its leaf row. The function
``<name>_walk`` has the same meaning as the table runtime's: the leaf row of each DAG.
"""
from __future__ import annotations

import numpy as np

from ._layout import Layout, c_float


def _threshold_text(layout: Layout, node: int) -> str:
    if layout.variant == "float":
        return c_float(layout.threshold[node])
    return str(int(layout.threshold[node]))


def dag_function(layout: Layout, n: str, dag: int) -> str:
    """The C function that walks DAG ``dag`` of a tabular ``layout`` to its leaf row."""
    x_type = "float" if layout.variant == "float" else "int16_t"
    first_level = int(layout.dag_level[dag])
    last_level = (int(layout.dag_level[dag + 1]) if dag + 1 < layout.n_dags
                  else len(layout.level_first) - 1)
    counts = np.diff(layout.level_first)
    lines = [f"static uint32_t {n}_dag{dag}(const {x_type} *x)", "{"]

    def target(level: int, code: int) -> str:
        below = int(counts[level + 1]) if level + 1 < len(counts) else 0
        if code >= below:
            return f"return {code - below}u;"
        return f"goto l{level + 1 - first_level}_{code};"

    root = int(layout.roots[dag])
    if root >= counts[first_level]:  # a DAG that is one leaf
        lines.append(f"    return {root - int(counts[first_level])}u;")
    for level in range(first_level, last_level):
        start = int(layout.level_first[level])
        for rank in range(int(counts[level])):
            node = start + rank
            label = f"l{level - first_level}_{rank}:\n" if level > first_level else ""
            lines.append(f"{label}    if (x[{int(layout.feature[node])}] < "
                         f"{_threshold_text(layout, node)}) {{")
            lines.append(f"        {target(level, int(layout.left[node]))}")
            lines.append("    }")
            lines.append(f"    {target(level, int(layout.right[node]))}")
    lines.append("}")
    return "\n".join(lines) + "\n"


def inline_walk(layout: Layout, n: str) -> str:
    """Every DAG's function and ``<name>_walk(x, leaf)``, which calls them in turn."""
    x_type = "float" if layout.variant == "float" else "int16_t"
    calls = "\n".join(f"    leaf[{g}] = {n}_dag{g}(x);" for g in range(layout.n_dags))
    return ("\n".join(dag_function(layout, n, g) for g in range(layout.n_dags))
            + f"\n/* the leaf row each DAG reaches */\nstatic void {n}_walk(const {x_type} *x, "
            f"uint32_t *leaf)\n{{\n{calls}\n}}\n")
