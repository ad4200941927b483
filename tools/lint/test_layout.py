"""The layout check finds what it is for: circles, long modules, forbidden imports."""

from __future__ import annotations

from pathlib import Path

import layout


def _package(root: Path, files: dict[str, str]) -> Path:
    for name, source in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(source, encoding="utf-8")
    return root / next(iter(files)).split("/")[0]


def test_finds_a_circle_hidden_in_a_function(tmp_path: Path) -> None:
    package = _package(
        tmp_path,
        {
            "pkg/__init__.py": "from pkg.a import thing\n",
            "pkg/a.py": "from pkg import b\nthing = 1\n",
            "pkg/b.py": "def late():\n    from pkg.a import thing\n    return thing\n",
            "pkg/c.py": "from . import a\n",
        },
    )
    graph = layout.import_graph(layout.package_modules(package))
    assert graph["pkg.c"] == {"pkg.a"}
    assert layout.import_cycles(graph) == [["pkg.a", "pkg.b"]]
    (problem,) = layout.package_problems(layout.PackageRule(package, frozenset()), 600)
    assert problem.endswith("import circle: pkg.a <-> pkg.b")


def test_relative_imports_resolve_from_the_package(tmp_path: Path) -> None:
    package = _package(
        tmp_path,
        {
            "pkg/__init__.py": "",
            "pkg/sub/__init__.py": "from .leaf import x\nfrom .. import top\n",
            "pkg/sub/leaf.py": "from ..top import y\nx = y\n",
            "pkg/top.py": "y = 1\n",
        },
    )
    graph = layout.import_graph(layout.package_modules(package))
    assert graph["pkg.sub"] == {"pkg.sub.leaf", "pkg.top"}
    assert graph["pkg.sub.leaf"] == {"pkg.top"}
    assert layout.import_cycles(graph) == []


def test_long_modules_count_except_generated_ones(tmp_path: Path) -> None:
    long = "x = 1\n" * 11
    package = _package(
        tmp_path,
        {"pkg/__init__.py": "", "pkg/big.py": long, "pkg/_gen/__init__.py": long},
    )
    problems = layout.package_problems(layout.PackageRule(package, frozenset()), 10)
    assert problems == [f"{package / 'big.py'}: 11 lines, more than 10"]


def test_forbidden_imports_are_named(tmp_path: Path) -> None:
    package = _package(
        tmp_path,
        {"pkg/__init__.py": "", "pkg/uses.py": "def f():\n    import server.testing\n"},
    )
    rule = layout.PackageRule.parse(f"{package}=server,other")
    assert rule.forbidden == {"server", "other"}
    assert layout.package_problems(rule, 600) == [
        f"{package / 'uses.py'}: imports server, which pkg must not"
    ]


def test_main_fails_on_a_directory_that_is_no_package(tmp_path: Path) -> None:
    assert layout.main([str(tmp_path)]) == 1
    _package(tmp_path, {"pkg/__init__.py": ""})
    assert layout.main([str(tmp_path / "pkg")]) == 0
