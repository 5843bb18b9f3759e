"""The ``results-table`` directive: a table of the figures a benchmark wrote to
``benchmarks/results/<name>.json`` (``benchmarks/_common.write_results``), with the command,
date, machine and load of that run, so that a page shows what the file holds and cannot
drift from it. A missing file gives a note with the command that makes it.

In a Markdown page::

    ```{results-table} uci
    ```
"""

from __future__ import annotations

import json
from pathlib import Path

from docutils import nodes
from docutils.parsers.rst import Directive

RESULTS = Path(__file__).resolve().parents[2] / "benchmarks" / "results"


def flatten(figures: dict, prefix: tuple[str, ...] = ()) -> list[tuple[tuple[str, ...], dict]]:
    """Rows of (path of keys, {column: value}) from nested dictionaries whose innermost
    level maps column names to numbers or short lists."""
    leaves = {k: v for k, v in figures.items() if not isinstance(v, dict)}
    rows = [(prefix, leaves)] if leaves and prefix else []
    for key, value in figures.items():
        if isinstance(value, dict):
            rows += flatten(value, (*prefix, str(key)))
    return rows


def shown(value) -> str:
    if isinstance(value, float):
        return f"{value:.4g}"
    if isinstance(value, list):
        return "-".join(shown(v) for v in value)
    return str(value)


def table(rows: list[tuple[tuple[str, ...], dict]]) -> nodes.table:
    columns = list(dict.fromkeys(c for _, values in rows for c in values))
    depth = max(len(path) for path, _ in rows)
    headers = [""] * depth + [c.replace("_", " ") for c in columns]
    body = [[*path, *[""] * (depth - len(path)), *[shown(values.get(c, "")) for c in columns]]
            for path, values in rows]
    group = nodes.tgroup(cols=len(headers))
    group += [nodes.colspec(colwidth=1) for _ in headers]

    def row(cells):
        line = nodes.row()
        for cell in cells:
            entry = nodes.entry()
            entry += nodes.paragraph(text=cell)
            line += entry
        return line

    head = nodes.thead()
    head += row(headers)
    rows_node = nodes.tbody()
    rows_node += [row(cells) for cells in body]
    group += [head, rows_node]
    result = nodes.table()
    result += group
    return result


class ResultsTable(Directive):
    required_arguments = 1
    has_content = False

    def run(self):
        path = RESULTS / f"{self.arguments[0]}.json"
        env = self.state.document.settings.env
        env.note_dependency(str(path))
        if not path.exists():
            note = nodes.paragraph(text=f"No run recorded yet: benchmarks/results/{path.name} "
                                        "is written by the benchmark named above.")
            return [note]
        record = json.loads(path.read_text())
        machine = record.get("machine", {})
        load = machine.get("load_average") or []
        caption = nodes.paragraph()
        caption += nodes.Text(f"Figures from benchmarks/results/{path.name}, written by ")
        caption += nodes.literal(text=record.get("command", ""))
        caption += nodes.Text(
            f" on {record.get('date', '?')}: {machine.get('cpus', '?')} CPUs "
            f"({machine.get('cpu', '?')}), {machine.get('memory_gb', '?')} GB, load average "
            f"{' / '.join(f'{x:.1f}' for x in load) or '?'} at the end of the run.")
        rows = flatten(record.get("figures", {}))
        while rows and all(len(path) > 1 for path, _ in rows) and \
                len({path[0] for path, _ in rows}) == 1:  # a key every row shares says nothing
            rows = [(path[1:], values) for path, values in rows]
        settings = {k: v for k, v in record.get("figures", {}).items()
                    if not isinstance(v, dict)}
        if settings:
            caption += nodes.Text(" Settings: " + ", ".join(f"{k} {shown(v)}"
                                                             for k, v in settings.items()) + ".")
        return [caption, table(rows)] if rows else [caption]


def setup(app):
    app.add_directive("results-table", ResultsTable)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
