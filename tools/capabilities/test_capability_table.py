"""docs/adapters.md's capability table is the one the runners' capabilities.json give.

Runs from the repository root (Bazel's runfiles root, or a checkout), reading only
the checked-in files: no framework, no Node.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from capability_table import (
    DOC,
    NO,
    PROTO,
    RUNNERS,
    YES,
    expected_doc,
    main,
    parse_declaration,
    read_capabilities,
    read_runners,
)

ROOT = Path(".")
CAPABILITY_NAMES = [name for name, _ in read_capabilities((ROOT / PROTO).read_text())]


def test_docs_adapters_md_carries_the_table_of_the_checked_in_declarations() -> None:
    doc, expected = expected_doc(ROOT)
    assert doc == expected, (
        f"{DOC}'s capability table is stale: run tools/capabilities.sh --table "
        "(or python tools/capabilities/capability_table.py --write)"
    )


def test_the_rows_are_runner_protos_capabilities_each_with_its_meaning() -> None:
    assert CAPABILITY_NAMES[:3] == ["text_deltas", "reasoning_deltas", "usage"]
    assert len(CAPABILITY_NAMES) == 16
    meanings = dict(read_capabilities((ROOT / PROTO).read_text()))
    assert "gaps" not in meanings
    assert all(meanings.values()), "a RunnerCapabilities field has no comment"
    assert meanings["tool_cancellation"].endswith(
        "asyncio cancellation of an async tool in Python."
    )


def test_every_runner_has_a_column_and_every_gap_a_numbered_reason() -> None:
    runners = read_runners((ROOT / RUNNERS).read_text())
    assert len(runners) == 12
    _, doc = expected_doc(ROOT)
    header = next(line for line in doc.splitlines() if line.startswith("| Capability |"))
    assert [cell.strip() for cell in header.strip("|").split("|")][1:] == [r.title for r in runners]
    for runner in runners:
        declaration = parse_declaration(
            runner.path, (ROOT / runner.path).read_text(), CAPABILITY_NAMES
        )
        column = [r.title for r in runners].index(runner.title) + 1
        for name in CAPABILITY_NAMES:
            row = next(line for line in doc.splitlines() if line.startswith(f"| `{name}` |"))
            cell = [c.strip() for c in row.strip("|").split("|")][column]
            if name in declaration.supported:
                assert cell == YES
            else:
                number = cell.removeprefix(f"{NO} ")
                assert f"\n{number}. {declaration.unsupported[name]}\n" in doc


def _scratch(tmp_path: Path) -> Path:
    """The files the table is made of, copied under `tmp_path`."""
    paths = [RUNNERS, PROTO, DOC] + [r.path for r in read_runners((ROOT / RUNNERS).read_text())]
    for path in paths:
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(ROOT / path, tmp_path / path)
    return tmp_path


def test_a_changed_declaration_makes_the_table_stale_until_it_is_rewritten(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = _scratch(tmp_path)
    assert main(["--write", "--root", str(root)]) == 0
    assert main(["--check", "--root", str(root)]) == 0
    written = (root / DOC).read_text()
    changed = read_runners((root / RUNNERS).read_text())[0].path
    data = json.loads((root / changed).read_text())
    gained = next(iter(data["unsupported"]))
    del data["unsupported"][gained]
    data["supported"].append(gained)
    (root / changed).write_text(json.dumps(data, indent=2) + "\n")

    assert main(["--check", "--root", str(root)]) == 1
    assert "capability table is stale" in capsys.readouterr().err
    assert main(["--write", "--root", str(root)]) == 0
    assert main(["--check", "--root", str(root)]) == 0
    assert (root / DOC).read_text() != written


def _without_first_supported(data: dict[str, Any]) -> None:
    data["supported"].pop(0)


def _with_unknown(data: dict[str, Any]) -> None:
    data["supported"].append("teleport")


def _with_blank_reason(data: dict[str, Any]) -> None:
    data["unsupported"][next(iter(data["unsupported"]))] = " "


def _without_runner(data: dict[str, Any]) -> None:
    del data["runner"]


@dataclass(frozen=True)
class Case:
    id: str
    edit: Callable[[dict[str, Any]], None]
    message: str


CASES = [
    Case("missing", _without_first_supported, "neither supported nor given a reason"),
    Case("unknown", _with_unknown, "unknown: teleport"),
    Case("blank reason", _with_blank_reason, "without a reason"),
    Case("no runner", _without_runner, "expected the keys"),
]


@pytest.mark.parametrize("case", CASES, ids=lambda case: case.id)
def test_a_declaration_without_a_reason_for_each_gap_is_refused(case: Case) -> None:
    path = read_runners((ROOT / RUNNERS).read_text())[0].path
    data = json.loads((ROOT / path).read_text())
    case.edit(data)
    with pytest.raises(ValueError, match=case.message):
        parse_declaration(path, json.dumps(data), CAPABILITY_NAMES)
