"""Export a model as dependency-free C99 for small devices (``docs/guide/deploying.md``).

:func:`export_c` writes ``<name>.h`` and ``<name>.c``: the model as ``static const``
tables (:mod:`._layout`) and a small runtime with one interface for every program:

- tabular models: ``int32_t <name>_predict(const float *features)`` (class index) and
  ``void <name>_predict_proba(const float *features, <name>_proba_t *proba)``;
- depth models: ``<name>_segment_depth(depth, height, width, labels)`` on a uint16
  millimetre frame, and ``<name>_segment_depth_proba``;
- colour and grey models: ``<name>_segment(planes, height, width, labels)`` and
  ``<name>_segment_proba`` on the model's float32 channel planes, which
  ``<name>_planes.py`` (written beside them) prepares from an image;
- ``<name>_N_FEATURES``, ``<name>_N_CLASSES`` and ``<name>_CLASSES`` (class values).

Two variants: ``float`` (float32, the same labels as Python bit for bit) and
``quantised`` (integers only: int16 thresholds, uint8 leaf distributions). Two styles for
tabular models: ``tables`` (the nodes packed as a bit stream and walked by a loop, the
least flash) and ``inline`` (a comparison of code per node, faster).
"""
from __future__ import annotations

import os
import platform
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

from .._atomic import written_atomically
from ..io import features_dict
from ._command import run_export
from ._csource import header, source
from ._layout import VARIANTS, ExportError, jungle_of
from ._packing import pack_layout
from ._planes import planes_helper

__all__ = ["VARIANTS", "ExportError", "compiled_size", "export_c",
           "footprint", "run_export"]


def footprint(model, variant: str = "float", layout=None, threshold_bits: int = 16,
              style: str = "tables") -> dict:
    """What the exported model needs on a device, without compiling it.

    Returns ``{'tables': bytes of the constant tables (flash), 'ram': bytes of the arrays
    the call keeps on its stack}``; the runtime's code adds one to a few KB of flash
    (:func:`compiled_size` measures both with a compiler).

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from jungleseg import JungleClassifier
    >>> X, y = load_iris(return_X_y=True)
    >>> clf = JungleClassifier(n_estimators=2, max_width=4, random_state=0).fit(X, y)
    >>> footprint(clf, "quantised")["ram"]
    46
    """
    layout = layout or pack_layout(jungle_of(model), variant, threshold_bits, style)
    acc = 4 if layout.variant == "float" else (2 if 255 * layout.n_dags < 1 << 16 else 4)
    ram = layout.n_classes * acc
    if layout.kind == "tabular":  # each DAG's leaf row, and the packed walk's state
        ram += 4 * layout.n_dags * (1 if layout.inline else 4)
    if layout.kind == "tabular" and layout.variant == "quantised":
        ram += 2 * layout.n_features  # the row's 16-bit codes
    elif layout.kind == "tabular" and layout.inline:
        ram += 4 * layout.n_features  # the row's 32-bit keys
    return {"tables": layout.table_bytes(), "ram": ram}


def export_c(model, directory: str | os.PathLike, name: str = "jungle",
             variant: str = "float", threshold_bits: int = 16, style: str = "tables") -> dict:
    """Write ``model`` as self-contained C99 source and header into ``directory``.

    Parameters
    ----------
    model : JungleClassifier, JungleSegmenter or Jungle
        A fitted estimator or a loaded model: tabular, depth, or colour/grey features.
    directory : path
        Folder for the files (made if missing).
    name : str
        Prefix of the files and of every C name (a C identifier of at most 41 characters).
    variant : {'float', 'quantised'}
        float32 arithmetic (the same labels as Python), or integers only.
    threshold_bits : {16, 8}
        Quantised tabular models: bits of a column's codes and thresholds. 8 halves the
        node tables; it is exact for columns of whole numbers spanning at most 254, and
        otherwise rounds each column to 255 steps (check the labels on your data).
    style : {'tables', 'inline'}
        Tabular models: the nodes as packed tables walked by a loop (the least flash), or
        as code, one comparison and branch per node (faster, several times the flash).

    Returns
    -------
    dict
        ``files`` (the paths written), ``kind``, ``variant``, and :func:`footprint`'s
        ``tables`` and ``ram``.

    Raises
    ------
    ExportError
        The model cannot be exported (the message says why), ``name`` is not a C
        identifier, or ``directory`` is a file.

    Examples
    --------
    >>> import tempfile
    >>> from sklearn.datasets import load_iris
    >>> from jungleseg import JungleClassifier
    >>> X, y = load_iris(return_X_y=True)
    >>> clf = JungleClassifier(n_estimators=2, max_width=4, random_state=0).fit(X, y)
    >>> sorted(Path(f).name for f in export_c(clf, tempfile.mkdtemp())["files"])
    ['jungle.c', 'jungle.h']
    """
    if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
        raise ExportError(f"name {name!r} is not a C identifier (letters, digits, '_')")
    if len(name) > 41:
        raise ExportError(f"name {name!r} has {len(name)} characters; at most 41, so that "
                          "every C name stays within C99's 63 significant characters")
    jungle = jungle_of(model)
    layout = pack_layout(jungle, variant, threshold_bits, style)
    family = features_dict(jungle.family)  # with the quantiser of a model of channel codes
    sizes = footprint(jungle, variant, layout)
    out = Path(directory)
    if out.exists() and not out.is_dir():
        raise ExportError(f"{out}: is a file; the C sources go in a folder (made if missing)")
    out.mkdir(parents=True, exist_ok=True)
    texts = {f"{name}.h": header(layout, name), f"{name}.c": source(layout, name, family, sizes)}
    if layout.kind == "colour":
        texts[f"{name}_planes.py"] = planes_helper(name, family,
                                                   jungle.metadata.get("input_values"))
    files = []
    for filename, text in texts.items():
        files.append(_write_atomically(out / filename, text))
    notes = []
    if layout.smoothing:
        notes.append(f"probability smoothing is not exported: the model smooths (smoothing "
                     f"{layout.smoothing}), the C code labels unsmoothed pixels, as "
                     "segment(..., smoothing=0) does (see the comment atop the source)")
    return {"files": files, "kind": layout.kind, "variant": layout.variant,
            "notes": notes, **sizes}


def _write_atomically(path: Path, text: str) -> str:
    with written_atomically(path) as temporary:
        temporary.write_text(text)
    return str(path)


def find_compiler() -> str | None:
    """The C compiler to build with: ``$CC``, else cc or gcc on the PATH (None: none)."""
    for candidate in (os.environ.get("CC"), "cc", "gcc"):
        if candidate and shutil.which(candidate):
            return candidate
    return None


def compiled_size(source_file: str | os.PathLike, optimise: str = "-Os",
                  compiler: str | None = None) -> dict:
    """Compile one exported source to an object file and measure it: ``flash`` (text +
    data, as ``size`` reports them) and ``stack`` (the deepest entry function's frame,
    from ``-fstack-usage``, including the functions it calls where they are inlined).

    Raises ExportError without a compiler or when compilation fails.
    """
    compiler = compiler or find_compiler()
    if compiler is None:
        raise ExportError("no C compiler found (set CC, or install gcc)")
    source_file = Path(source_file)
    with tempfile.TemporaryDirectory() as work:
        obj = Path(work) / (source_file.stem + ".o")
        # x86-64 leaf functions keep up to 128 bytes below the stack pointer (the red
        # zone), which -fstack-usage does not count; small devices have none
        red_zone = ["-mno-red-zone"] if platform.machine() in ("x86_64", "AMD64") else []
        run = subprocess.run([compiler, "-std=c99", optimise, "-fstack-usage", *red_zone, "-c",
                              str(source_file), "-o", str(obj)], capture_output=True, text=True)
        if run.returncode:
            raise ExportError(f"{source_file}: does not compile: "
                              f"{(run.stderr.strip().splitlines() or ['?'])[0]}")
        sizes = subprocess.run(["size", str(obj)], capture_output=True, text=True, check=True)
        text, data = (int(v) for v in sizes.stdout.splitlines()[1].split()[:2])
        usage = Path(work) / (source_file.stem + ".su")
        frames = {}
        for line in usage.read_text().splitlines() if usage.exists() else []:
            where, size, _ = line.rsplit("\t", 2)
            frames[where.rsplit(":", 1)[-1]] = int(size)
    entries = ("predict", "predict_proba", "segment", "segment_proba", "segment_depth",
               "segment_depth_proba")
    prefix = source_file.stem + "_"
    entry = [v for k, v in frames.items() if k.startswith(prefix) and k[len(prefix):] in entries]
    helpers = [v for k, v in frames.items() if not (k.startswith(prefix)
                                                    and k[len(prefix):] in entries)]
    # at most: the largest entry frame plus every helper's frame (each called at most once
    # on the way down)
    return {"flash": text + data, "text": text, "data": data,
            "stack": max(entry, default=0) + sum(helpers)}


def summary_lines(info: dict) -> list[str]:
    """What the command line prints after an export."""
    return [f"wrote {', '.join(info['files'])} ({info['kind']} model, {info['variant']} variant)",
            f"flash: {info['tables']} bytes of tables; the call needs {info['ram']} bytes of "
            "stack arrays besides its arguments", *[f"note: {n}" for n in info["notes"]]]


def info_lines(model) -> list[str]:
    """``jungleseg info``'s lines on the C export: the tables and stack of each variant,
    or why the model is not exported."""
    try:
        sizes = {v: footprint(model, v) for v in VARIANTS}
    except ExportError as err:
        return [f"C export: not covered ({err})"]
    return ["C export: " + "; ".join(f"{v} {s['tables']} bytes of tables, {s['ram']} bytes of "
                                     "stack" for v, s in sizes.items())]


def info_dict(model) -> dict:
    """:func:`info_lines` for ``jungleseg info --json``."""
    try:
        return {v: footprint(model, v) for v in VARIANTS}
    except ExportError as err:
        return {"not_covered": str(err)}

