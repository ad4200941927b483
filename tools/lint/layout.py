"""Package layout rules that no linter checks: one-way imports, small modules, layers.

A circle of imports works until the day the import order changes, also when it
hides inside a function or under ``TYPE_CHECKING``, so imports are read from the
source with `ast`, wherever they stand. A module past the line limit usually
holds two jobs. A layer rule (``dex_agents`` never imports ``dexlite``) keeps a
test server out of what users install.

Usage: ``layout.py [--max-lines N] PACKAGE_DIR[=FORBIDDEN,...] ...``: each
PACKAGE_DIR is a top-level Python package; FORBIDDEN names top-level packages it
must not import. Directories named ``_gen`` hold generated code: their imports
count, their length does not. Standard library only, so any package may use it.
"""

from __future__ import annotations

import argparse
import ast
import sys
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

DEFAULT_MAX_LINES = 600
GENERATED_DIR = "_gen"


def package_modules(package_dir: Path) -> dict[str, Path]:
    """Every module of the package by dotted name, the package itself included."""
    found: dict[str, Path] = {}
    for path in sorted(package_dir.rglob("*.py")):
        parts = [package_dir.name, *path.relative_to(package_dir).with_suffix("").parts]
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


def imports(source: str, module: str, *, is_package: bool) -> list[tuple[str, str | None]]:
    """What `module` imports, anywhere in its source, as (module, name taken from it)."""
    found: list[tuple[str, str | None]] = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found.extend((alias.name, None) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = module.split(".") if is_package else module.split(".")[:-1]
                anchor = anchor[: len(anchor) - (node.level - 1)]
                base = ".".join([*anchor, base] if base else anchor)
            found.extend((base, alias.name) for alias in node.names)
    return found


def import_graph(modules: Mapping[str, Path]) -> dict[str, set[str]]:
    """Edges between the package's own modules.

    ``from X import Y`` is an edge to ``X.Y`` when that is a module, else to ``X``.
    """
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        source = path.read_text(encoding="utf-8")
        targets: set[str] = set()
        for base, taken in imports(source, name, is_package=path.name == "__init__.py"):
            submodule = f"{base}.{taken}"
            targets.add(submodule if taken and submodule in modules else base)
        graph[name] = {target for target in targets if target in modules and target != name}
    return graph


def import_cycles(graph: Mapping[str, Iterable[str]]) -> list[list[str]]:
    """The groups of modules that import each other in a circle (Tarjan's components)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    cycles: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in sorted(graph.get(node, ())):
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
                cycles.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return cycles


@dataclass(frozen=True)
class PackageRule:
    """One command-line argument: a package directory and the packages it must not import."""

    directory: Path
    forbidden: frozenset[str]

    @classmethod
    def parse(cls, argument: str) -> PackageRule:
        directory, _, forbidden = argument.partition("=")
        return cls(Path(directory), frozenset(name for name in forbidden.split(",") if name))


def package_problems(rule: PackageRule, max_lines: int) -> list[str]:
    """Every broken rule in one package, each as a line that names the file."""
    if not (rule.directory / "__init__.py").is_file():
        return [f"{rule.directory}: not a Python package (no __init__.py)"]
    modules = package_modules(rule.directory)
    problems = [
        f"{rule.directory}: import circle: {' <-> '.join(cycle)}"
        for cycle in import_cycles(import_graph(modules))
    ]
    for name, path in modules.items():
        source = path.read_text(encoding="utf-8")
        lines = len(source.splitlines())
        if lines > max_lines and GENERATED_DIR not in path.relative_to(rule.directory).parts:
            problems.append(f"{path}: {lines} lines, more than {max_lines}")
        imported = imports(source, name, is_package=path.name == "__init__.py")
        for top in sorted({base.split(".")[0] for base, _ in imported} & rule.forbidden):
            problems.append(f"{path}: imports {top}, which {rule.directory.name} must not")
    return problems


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--max-lines", type=int, default=DEFAULT_MAX_LINES)
    parser.add_argument("packages", nargs="+", metavar="PACKAGE_DIR[=FORBIDDEN,...]")
    args = parser.parse_args(argv)
    rules = [PackageRule.parse(argument) for argument in args.packages]
    problems = [problem for rule in rules for problem in package_problems(rule, args.max_lines)]
    for problem in problems:
        print(problem, file=sys.stderr)
    if problems:
        return 1
    print(f"layout: {len(rules)} packages, no circle, no module over {args.max_lines} lines")
    return 0


if __name__ == "__main__":
    sys.exit(main())
