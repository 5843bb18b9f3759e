"""The package's house rules: no import cycles, no GUI in the core, small modules."""
import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("jungleseg", "napari_plugin")
MODULES = sorted(p for pkg in PACKAGES for p in (ROOT / pkg).rglob("*.py"))
MAX_LINES = 520  # "about 500"


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


KNOWN = {module_name(p) for p in MODULES}


def module_imports(path: Path) -> set[str]:
    """This project's modules that ``path`` imports, at module level or inside a function:
    an import deferred into a function still ties the two modules together."""
    name = module_name(path)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            target = node.module
            if node.level:
                base = package.split(".")[:len(package.split(".")) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            found |= {target, *(f"{target}.{alias.name}" for alias in node.names)}
    return {m for m in found if m in KNOWN and m != name}


def test_imports_form_no_cycle():
    # a module importing a name from its own package's __init__ is not followed: the
    # package's __init__ imports its submodules by design
    graph = {module_name(p): {m for m in module_imports(p)
                              if not module_name(p).startswith(m + ".")} for p in MODULES}
    state = {}

    def visit(node, stack):
        state[node] = "open"
        for nxt in sorted(graph[node]):
            if state.get(nxt) == "open":
                pytest.fail(f"import cycle: {' -> '.join(stack + [node, nxt])}")
            if nxt not in state:
                visit(nxt, stack + [node])
        state[node] = "done"

    for node in sorted(graph):
        if node not in state:
            visit(node, [])
    assert "jungleseg.jungle._grow" in graph["jungleseg.jungle._classes"]  # edges are found,
    assert "jungleseg.features" in graph["jungleseg.imageio"]  # those inside functions too


@pytest.mark.parametrize("path", [p for p in MODULES if "napari_plugin" not in p.parts],
                         ids=lambda p: module_name(p))
def test_the_core_never_imports_napari_or_qt(path):
    names = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom) and not node.level:
            names.add(node.module.split(".")[0])
    assert not names & {"napari", "qtpy", "PyQt5", "PyQt6", "PySide2", "PySide6", "magicgui",
                        "superqt", "napari_plugin"}


@pytest.mark.parametrize("path", MODULES, ids=lambda p: module_name(p))
def test_modules_stay_small(path):
    assert len(path.read_text().splitlines()) <= MAX_LINES


def expected_test_file(path: Path) -> Path | None:
    """Where a module's tests live: ``jungleseg/jungle/_lsearch.py`` ->
    ``tests/jungle/test_lsearch.py``; a data set package (``datasets/kinect/``) has one test
    file for all its modules; a package ``__init__`` with code of its own has
    ``test_<package>.py``; one that only re-exports, none."""
    rel = path.relative_to(ROOT)
    parts = rel.parts
    if parts[0] == "napari_plugin":
        parts = ("tests", *parts)
    else:
        parts = ("tests", *parts[1:])
    if len(parts) > 3 and parts[1] == "datasets":  # tests/datasets/<set>/...
        return ROOT / "tests" / "datasets" / f"test_{parts[2]}.py"
    if path.name == "__init__.py":
        tree = ast.parse(path.read_text())
        if not any(isinstance(n, (ast.FunctionDef, ast.ClassDef)) for n in tree.body):
            return None
        return ROOT / Path(*parts[:-1]) / f"test_{parts[-2]}.py"
    if path.name in ("_version.py", "__main__.py"):  # no code of their own
        return None
    return ROOT / Path(*parts[:-1]) / f"test_{path.stem.lstrip('_')}.py"


def test_every_module_has_a_test_file():
    missing = [f"{p.relative_to(ROOT)} -> {t.relative_to(ROOT)}" for p in MODULES
               if (t := expected_test_file(p)) is not None and not t.is_file()]
    assert not missing, "modules without a test file: " + ", ".join(missing)
