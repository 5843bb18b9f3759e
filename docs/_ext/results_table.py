"""The ``results-table`` and ``results-plot`` directives: a table, or a horizontal bar
chart, of the figures a benchmark wrote to ``benchmarks/results/<name>.json``
(``benchmarks/_common.write_results``), with the command, date, machine and load of that run,
so that a page shows what the file holds and cannot drift from it. A missing file gives a
note with the command that makes it.

In a Markdown page::

    ```{results-table} uci
    ```

    ```{results-plot} throughput
    :title: Segmenting Stanford photos
    :unit: Mpx/s

    jungle.mpx_per_s = jungle
    peer (skimage features + RF(100)).mpx_per_s = scikit-image + RF
    ```

    ```{results-plot} memory
    :title: Peak memory
    :unit: MB
    :under: cases
    :key: measured_mb|estimate_mb
    :legend: measured, estimated
    ```

``results-plot`` takes either content lines ``dotted.key.path = label`` (one bar each; the
label defaults to the path) or ``:key:``, a regular expression matched in full against the
leaf keys of the figures under ``:under:`` (a dotted path, default the top): one bar per
leaf, labelled by its path below ``:under:``; when several keys match, a row holds one bar
per key, with a legend (``:legend:``, comma-separated names in the keys' order, renames
them). ``:title:`` and ``:unit:`` (the x axis) label the chart. The PNG is drawn at build time
(matplotlib, no pyplot) into ``docs/generated/results-plots``, which git ignores, and Sphinx
copies it to the build's ``_images``.
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

from docutils import nodes
from docutils.parsers.rst import Directive, directives

DOCS = Path(__file__).resolve().parents[1]
RESULTS = DOCS.parent / "benchmarks" / "results"
PLOTS = DOCS / "generated" / "results-plots"


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


def missing(path: Path) -> nodes.paragraph:
    return nodes.paragraph(text=f"No run recorded yet: benchmarks/results/{path.name} "
                                "is written by the benchmark named above.")


def caption(path: Path, record: dict) -> nodes.paragraph:
    """Where the figures come from: the file, command, date, machine and load."""
    machine = record.get("machine", {})
    load = machine.get("load_average") or []
    text = nodes.paragraph()
    text += nodes.Text(f"Figures from benchmarks/results/{path.name}, written by ")
    text += nodes.literal(text=record.get("command", ""))
    text += nodes.Text(
        f" on {record.get('date', '?')}: {machine.get('cpus', '?')} CPUs "
        f"({machine.get('cpu', '?')}), {machine.get('memory_gb', '?')} GB, load average "
        f"{' / '.join(f'{x:.1f}' for x in load) or '?'} at the end of the run.")
    return text


class ResultsTable(Directive):
    required_arguments = 1
    has_content = False

    def run(self):
        path = RESULTS / f"{self.arguments[0]}.json"
        env = self.state.document.settings.env
        env.note_dependency(str(path))
        if not path.exists():
            return [missing(path)]
        record = json.loads(path.read_text())
        text = caption(path, record)
        rows = flatten(record.get("figures", {}))
        while rows and all(len(path) > 1 for path, _ in rows) and \
                len({path[0] for path, _ in rows}) == 1:  # a key every row shares says nothing
            rows = [(path[1:], values) for path, values in rows]
        settings = {k: v for k, v in record.get("figures", {}).items()
                    if not isinstance(v, dict)}
        if settings:
            text += nodes.Text(" Settings: " + ", ".join(f"{k} {shown(v)}"
                                                          for k, v in settings.items()) + ".")
        return [text, table(rows)] if rows else [text]


def lookup(figures: dict, dotted: str):
    """The value at a dotted path of keys (keys may hold spaces but not dots)."""
    value = figures
    for key in dotted.split(".") if dotted else []:
        if not isinstance(value, dict) or key not in value:
            raise KeyError(dotted)
        value = value[key]
    return value


def leaves(figures: dict, pattern: re.Pattern, prefix: tuple[str, ...] = ()):
    """(path below the start, key, number) of every numeric leaf whose key matches."""
    for key, value in figures.items():
        if isinstance(value, dict):
            yield from leaves(value, pattern, (*prefix, str(key)))
        elif isinstance(value, (int, float)) and pattern.fullmatch(str(key)):
            yield prefix, str(key), float(value)


def number(value: float) -> str:
    return f"{value:,.0f}" if abs(value) >= 100 else f"{value:.3g}"


def draw(bars: list[tuple[str, str, float]], title: str, unit: str, out: Path,
         legend: list[str] | None = None) -> None:
    """A horizontal bar chart of (label, series, value): one row per label, first at the
    top, one bar per series in a row, with a legend when there are several series."""
    from matplotlib.figure import Figure

    labels = list(dict.fromkeys(label for label, _, _ in bars))
    series = list(dict.fromkeys(s for _, s, _ in bars))
    height = 0.8 / len(series)
    fig = Figure(figsize=(7, 1.0 + 0.22 * len(bars) + 0.12 * len(labels)), dpi=100,
                 layout="constrained")
    ax = fig.add_subplot()
    for label, s, value in bars:
        y = len(labels) - 1 - labels.index(label) + 0.4 - height * (series.index(s) + 0.5)
        ax.barh(y, value, height=height * 0.9, color=f"C{series.index(s)}")
        ax.text(value, y, f" {number(value)}", va="center", fontsize=8)
    ax.set_yticks(range(len(labels))[::-1], labels, fontsize=8)
    ax.set_xlabel(unit)
    fig.suptitle(title, fontsize=10)
    ax.margins(x=0.12)
    for side in ("top", "right"):
        ax.spines[side].set_visible(False)
    if len(series) > 1:
        handles = [ax.barh(0, 0, color=f"C{i}") for i in range(len(series))]
        names = legend or [s.replace("_", " ") for s in series]
        fig.legend(handles, names, fontsize=8,
                   loc="outside lower center", ncols=len(series), frameon=False)
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, metadata={"Software": None})


class ResultsPlot(Directive):
    required_arguments = 1
    has_content = True
    option_spec = {"title": directives.unchanged, "unit": directives.unchanged,
                   "under": directives.unchanged, "key": directives.unchanged,
                   "legend": directives.unchanged, "alt": directives.unchanged}

    def run(self):
        path = RESULTS / f"{self.arguments[0]}.json"
        env = self.state.document.settings.env
        env.note_dependency(str(path))
        env.note_dependency(__file__)
        if not path.exists():
            return [missing(path)]
        record = json.loads(path.read_text())
        figures = record.get("figures", {})
        try:
            bars = self.bars(figures)
        except (KeyError, re.error) as error:
            raise self.error(f"results-plot {path.name}: no figure {error}") from error
        if not bars:
            raise self.error(f"results-plot {path.name}: no numeric figure selected")
        title = self.options.get("title", "")
        unit = self.options.get("unit", "")
        legend = [name.strip() for name in self.options.get("legend", "").split(",")
                  if name.strip()] or None
        digest = hashlib.sha1(json.dumps([path.read_text(), bars, title, unit, legend,
                                          Path(__file__).read_text()]).encode())
        out = PLOTS / f"{path.stem}-{digest.hexdigest()[:10]}.png"
        if not out.exists():
            draw(bars, title, unit, out, legend)
        image = nodes.image(uri="/" + out.relative_to(DOCS).as_posix(),
                            alt=self.options.get("alt", title or path.stem))
        return [image, caption(path, record)]

    def bars(self, figures: dict) -> list[tuple[str, str, float]]:
        if "key" in self.options:
            under = self.options.get("under", "")
            start = lookup(figures, under)
            found = list(leaves(start, re.compile(self.options["key"])))
            return [(" / ".join(prefix) or key, key, value) for prefix, key, value in found]
        result = []
        for line in filter(None, (line.strip() for line in self.content)):
            dotted, _, label = (part.strip() for part in line.partition(" = "))
            value = lookup(figures, dotted)
            if not isinstance(value, (int, float)):
                raise KeyError(f"{dotted} (not a number)")
            result.append((label or dotted, "", float(value)))
        return result


def setup(app):
    app.add_directive("results-table", ResultsTable)
    app.add_directive("results-plot", ResultsPlot)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
