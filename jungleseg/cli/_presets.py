"""Presets by name: ``jungleseg train stanford`` reads the shipped ``stanford.yaml``
(``configs/``, installed as ``jungleseg.configs``); ``jungleseg presets`` lists them with
the first comment line of each, which says what the preset is for."""
from __future__ import annotations

from pathlib import Path


def preset_description(path: Path) -> str:
    """The first line of a preset file without its ``#``: what the preset is for."""
    with open(path, encoding="utf-8") as file:
        first = file.readline().strip()
    return first.lstrip("#").strip() if first.startswith("#") else ""


def preset_table() -> str:
    """Every shipped preset, one line each: its name and what it is for."""
    from ..config import preset_paths

    paths = preset_paths()
    width = max(map(len, paths))
    return "\n".join(f"  {name:{width}s}  {preset_description(path)}"
                     for name, path in paths.items())


def config_path(name: str) -> Path:
    """The config file ``name`` means: an existing file, else the shipped preset of that
    name (``stanford``, ``stanford.yaml`` or ``configs/stanford.yaml``); a ValueError
    listing the presets when it is neither."""
    from ..config import preset_paths

    path = Path(name)
    if path.is_file():
        return path
    paths = preset_paths()
    stem = path.name[:-len(path.suffix)] if path.suffix in (".yaml", ".yml") else path.name
    if stem in paths and (path.parent == Path(".") or path.parent.name == "configs"):
        return paths[stem]  # a preset's name, even beside a data folder of that name
    if path.is_dir():
        raise ValueError(f"{name}: is a folder; give a preset's name or a config file")
    err = ValueError(f"{name}: no such preset or config file; the presets are:\n"
                     f"{preset_table()}")
    err.listing = True  # the command line prints the lines after the first too
    raise err


def load_named_config(name: str):
    """The validated :class:`~jungleseg.config.Config` of a preset's name or a file."""
    from ..config import load_config

    return load_config(config_path(name))
