"""dexlite's modules import one way and stay small.

These read the package's source files rather than its behaviour: a circle of
imports (also one hidden under ``TYPE_CHECKING`` or inside a function) works
until the day its order changes, and a module past 600 lines usually holds two
jobs.
"""

from __future__ import annotations

import ast
from pathlib import Path

import dexlite

_ROOT = Path(dexlite.__file__).resolve().parent
_MAX_LINES = 600


def _modules() -> dict[str, Path]:
    found = {}
    for path in sorted(_ROOT.rglob("*.py")):
        parts = ("dexlite", *path.relative_to(_ROOT).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        found[".".join(parts)] = path
    return found


def _imports(name: str, path: Path, modules: dict[str, Path]) -> set[str]:
    """Every dexlite module that ``name`` imports, wherever in the file the import is."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    targets: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            targets.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            for alias in node.names:
                submodule = f"{base}.{alias.name}"
                targets.add(submodule if submodule in modules else base)
    return {target for target in targets if target in modules and target != name}


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for target in sorted(graph[node]):
            if state.get(target) == 1:
                return [*stack[stack.index(target) :], target]
            if target not in state:
                found = visit(target)
                if found:
                    return found
        stack.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state:
            found = visit(node)
            if found:
                return found
    return None


def test_no_import_circle() -> None:
    modules = _modules()
    # The top-level package only re-exports; every module needs it loaded first anyway.
    graph = {
        name: _imports(name, path, modules) - {"dexlite"}
        for name, path in modules.items()
        if name != "dexlite"
    }
    assert graph["dexlite._engine.dispatch"], "the import reader found nothing"
    assert _cycle(graph) is None


def test_no_module_over_600_lines() -> None:
    long = {
        str(path.relative_to(_ROOT)): lines
        for path in _ROOT.rglob("*.py")
        if (lines := len(path.read_text(encoding="utf-8").splitlines())) > _MAX_LINES
    }
    assert long == {}
