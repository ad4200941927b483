"""Imports inside dex_agents go one way: no circle, module level or inside functions.

Reads every module's `import` statements with `ast` (function-local imports
included, which hide a circle from Python but not from a reader), and checks
that no module of dex_agents imports dexlite, which is a test server.
"""

from __future__ import annotations

import ast
from pathlib import Path

import dex_agents

_ROOT = Path(dex_agents.__file__).parent
_PACKAGE = "dex_agents"


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(_ROOT.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _imports(path: Path, module: str, modules: set[str] | None = None) -> set[str]:
    """What `module` imports: `from X import Y` names module X.Y when there is one, else X."""
    is_package = path.name == "__init__.py"
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = module.split(".") if is_package else module.split(".")[:-1]
                anchor = anchor[: len(anchor) - (node.level - 1)]
                base = ".".join([*anchor, base] if base else anchor)
            for alias in node.names:
                submodule = f"{base}.{alias.name}"
                known = modules is None or submodule in modules
                found.add(submodule if known and modules is not None else base)
                if modules is None:
                    found.add(submodule)
    return found


def _graph() -> dict[str, set[str]]:
    paths = {_module_name(p): p for p in _ROOT.rglob("*.py")}
    names = set(paths)
    return {
        name: {t for t in _imports(path, name, names) if t in names and t != name}
        for name, path in paths.items()
    }


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in sorted(graph[node]):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component: list[str] = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_no_import_circle_in_dex_agents() -> None:
    graph = _graph()
    assert "dex_agents.session._flow" in graph
    assert _cycles(graph) == []


def test_the_circle_check_sees_function_local_imports(tmp_path: Path) -> None:
    assert _cycles({"a": {"b"}, "b": {"a"}, "c": {"a"}}) == [["a", "b"]]
    source = tmp_path / "m.py"
    source.write_text("def f():\n    from dex_agents.session import _flow\n", encoding="utf-8")
    assert "dex_agents.session._flow" in _imports(source, "dex_agents.m")


def test_dex_agents_never_imports_dexlite() -> None:
    for path in _ROOT.rglob("*.py"):
        imported = _imports(path, _module_name(path))
        assert not any(name.split(".")[0] == "dexlite" for name in imported), path
