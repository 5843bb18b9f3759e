"""Class names and colours a person can read, for a model trained on their own folders.

Three sources, the first that says something about a class wins:

1. ``--classes``: ``VALUE:NAME[:COLOUR]`` items, or one ``classes.yaml``/``classes.txt``
   file;
2. ``classes.yaml`` or ``classes.txt`` in the labels folder, or beside it;
3. the palette of palette label PNGs (colours only).

A class none of them names is called by its value; one none of them colours gets the next
colour of matplotlib's ``tab20`` (its ten strong colours first, then their light partners),
so no two classes look alike and none is white.

``classes.yaml`` maps values to names, or to ``{name: ..., colour: ...}``::

    0: background
    1: {name: cell, colour: "#e41a1c"}

``classes.txt`` has a line per class, ``VALUE NAME [COLOUR]`` (``#`` starts a comment)::

    0 background
    1 cell #e41a1c

Colours are ``#rrggbb`` or ``r,g,b`` (or a list ``[r, g, b]`` in YAML).
"""
from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from pathlib import Path

from ..datasets.folders import CLASS_FILES  # read in the labels folder or beside it


def _colour(text, where: str) -> list[int]:
    """``[r, g, b]`` from ``#rrggbb``, ``r,g,b`` or a list of three 0..255 integers."""
    if isinstance(text, (list, tuple)):
        values = list(text)
    elif isinstance(text, str) and re.fullmatch(r"#[0-9a-fA-F]{6}", text.strip()):
        values = [int(text.strip()[i:i + 2], 16) for i in (1, 3, 5)]
    elif isinstance(text, str) and re.fullmatch(r"\d+,\d+,\d+", text.strip()):
        values = [int(v) for v in text.split(",")]
    else:
        values = []
    if len(values) != 3 or not all(isinstance(v, int) and 0 <= v <= 255 for v in values):
        raise ValueError(f"{where}: colour {text!r}; write #rrggbb or r,g,b with values "
                         "0..255")
    return values


def _value(text, where: str) -> int:
    try:
        value = int(str(text))
    except ValueError:
        raise ValueError(f"{where}: class value {text!r} is not a whole number") from None
    if not 0 <= value <= 65535:
        raise ValueError(f"{where}: class value {value} outside 0..65535")
    return value


def parse_items(items: Iterable[str], where: str = "--classes") -> dict[int, dict]:
    """``{value: {"name": ..., "colour": [r, g, b]}}`` from ``VALUE:NAME[:COLOUR]`` items.

    >>> parse_items(["0:sky", "1:tree:#00ff00"])
    {0: {'name': 'sky'}, 1: {'name': 'tree', 'colour': [0, 255, 0]}}
    """
    found: dict[int, dict] = {}
    for item in items:
        parts = item.split(":")
        if len(parts) not in (2, 3) or not parts[1]:
            raise ValueError(f"{where}: {item!r}; write VALUE:NAME or VALUE:NAME:COLOUR, "
                             "e.g. 1:cell:#e41a1c")
        entry = {"name": parts[1]}
        if len(parts) == 3:
            entry["colour"] = _colour(parts[2], where)
        found[_value(parts[0], where)] = entry
    return found


def read_class_file(path: str | Path) -> dict[int, dict]:
    """The classes of a ``classes.yaml`` or ``classes.txt`` file (see the module's
    docstring); ValueError naming the file when it cannot be read."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as err:
        raise ValueError(f"{path}: cannot read this class file ({err})") from None
    if path.suffix.lower() in (".yaml", ".yml"):
        return _yaml_classes(text, path)
    found: dict[int, dict] = {}
    for number, line in enumerate(text.splitlines(), 1):
        words = []
        for word in line.split():
            if word.startswith("#") and not re.fullmatch(r"#[0-9a-fA-F]{6}", word):
                break  # a comment
            words.append(word)
        if not words:
            continue
        where = f"{path}, line {number}"
        if len(words) < 2:
            raise ValueError(f"{where}: write VALUE NAME [COLOUR], e.g. '1 cell #e41a1c'")
        entry: dict = {}
        if re.fullmatch(r"#[0-9a-fA-F]{6}|\d+,\d+,\d+", words[-1]) and len(words) > 2:
            entry["colour"] = _colour(words.pop(), where)
        entry["name"] = " ".join(words[1:])
        found[_value(words[0], where)] = entry
    return found


def _yaml_classes(text: str, path: Path) -> dict[int, dict]:
    import yaml

    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as err:
        raise ValueError(f"{path}: not valid YAML ({str(err).splitlines()[0]})") from None
    if not isinstance(data, dict):
        raise ValueError(f"{path}: expected a mapping of class values to names, e.g. "
                         "'1: cell' or '1: {name: cell, colour: \"#e41a1c\"}'")
    found: dict[int, dict] = {}
    for key, entry in data.items():
        where = f"{path}: class {key}"
        if isinstance(entry, dict):
            unknown = set(entry) - {"name", "colour", "color"}
            if unknown or "name" not in entry:
                raise ValueError(f"{where}: give name and, if you like, colour")
            colour = entry.get("colour", entry.get("color"))
            entry = {"name": str(entry["name"]),
                     **({} if colour is None else {"colour": _colour(colour, where)})}
        else:
            entry = {"name": str(entry)}
        found[_value(key, path)] = entry
    return found


def class_file_near(labels: str | Path) -> Path | None:
    """``classes.yaml``/``classes.txt`` in the labels folder, else beside it, or None."""
    labels = Path(labels)
    for folder in (labels, labels.parent):
        for name in CLASS_FILES:
            if (folder / name).is_file():
                return folder / name
    return None


def palette_colours(label_files: Sequence[str | Path]) -> dict[int, list[int]]:
    """Colours of class values from the palettes of palette PNG label files (the first
    file that has a value wins)."""
    from ..imageio import _pillow_open

    colours: dict[int, list[int]] = {}
    for path in label_files:
        if Path(path).suffix.lower() != ".png":
            continue
        with _pillow_open(Path(path)) as picture:
            if picture.mode != "P":
                continue
            palette = picture.getpalette() or []
            used = [i for i, count in enumerate(picture.histogram()) if count]
        for value in used:
            if value not in colours and 3 * value + 2 < len(palette):
                colours[value] = palette[3 * value:3 * value + 3]
    return colours


def tab20_colours(n: int) -> list[list[int]]:
    """``n`` colours from matplotlib's ``tab20``: its ten strong colours, then their light
    partners, then ``tab20b`` and ``tab20c``, then again from the start."""
    from matplotlib import colormaps

    tab20 = colormaps["tab20"].colors
    cycle = [*tab20[0::2], *tab20[1::2], *colormaps["tab20b"].colors,
             *colormaps["tab20c"].colors]
    return [[round(255 * c) for c in cycle[i % len(cycle)][:3]] for i in range(n)]


def given_classes(given: Sequence[str]) -> dict[int, dict]:
    """The classes ``--classes`` names: ``VALUE:NAME[:COLOUR]`` items, or one class file."""
    one_file = len(given) == 1 and Path(given[0]).suffix.lower() in (".yaml", ".yml", ".txt")
    return read_class_file(given[0]) if one_file else parse_items(given)


def class_names_and_colours(values: Sequence[int], given: Sequence[str] | None,
                            labels_folder: str | Path | None,
                            label_files: Sequence[str | Path] = ()
                            ) -> tuple[dict[int, str], dict[int, list[int]]]:
    """Names and colours of the class ``values`` from the three sources (see the module's
    docstring): ``given`` (``--classes``), a class file near ``labels_folder``, the
    palettes of ``label_files``; the value and a ``tab20`` colour for the rest."""
    sources: list[dict[int, dict]] = []
    if given:
        sources.append(given_classes(given))
    near = class_file_near(labels_folder) if labels_folder is not None else None
    if near is not None:
        sources.append(read_class_file(near))
    sources.append({v: {"colour": c} for v, c in palette_colours(label_files).items()})
    names: dict[int, str] = {}
    colours: dict[int, list[int]] = {}
    for value in values:
        value = int(value)
        for source in sources:
            entry = source.get(value, {})
            if "name" in entry:
                names.setdefault(value, entry["name"])
            if "colour" in entry:
                colours.setdefault(value, entry["colour"])
        names.setdefault(value, str(value))
    missing = [int(v) for v in values if int(v) not in colours]
    taken = {tuple(c) for c in colours.values()}
    spare = [c for c in tab20_colours(len(missing) + len(taken)) if tuple(c) not in taken]
    colours.update(zip(missing, spare))
    return names, colours
