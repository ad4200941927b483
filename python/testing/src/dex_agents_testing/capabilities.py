"""Checks that a runner's `describe()` matches what it implements, for each adapter's tests.

The methods the session calls exist exactly when their capability is declared,
and every capability is either supported or has a reason; what the adapter's
framework does beyond that is pinned by the adapter's own test.

`check_capabilities_file` keeps the adapter's checked-in `capabilities.json` equal
to its live declaration: each adapter's tests run on its own interpreter, so the
file is how docs/adapters.md's table (tools/capabilities) reads every runner
without importing any framework.
"""

from __future__ import annotations

import difflib
import json
import os
from pathlib import Path
from typing import Any

from dex_agents._runner.capabilities import (
    ContextCompactionRunner,
    ToolTaskCanceller,
    ToolTaskPoller,
    UnfinishedTurnMessageBuilder,
)
from dex_agents._runner.declared import CAPABILITIES, DescribedRunner
from dex_agents.offline import RecordingEventWriter
from dex_agents.runner import RunnerCapabilities
from dex_agents_contracts import RunnerCapabilities as WireCapabilities
from dex_agents_contracts import TextDeltaPayload, decode, encode

__all__ = [
    "WRITE_ENV",
    "assert_text_deltas_as_declared",
    "check_capabilities_file",
    "checked_description",
    "declaration",
    "supported",
]

WRITE_ENV = "DEX_WRITE_CAPABILITIES"
"""Set to 1 (tools/capabilities.sh does) to rewrite the file instead of checking it."""

_METHODS: dict[str, type] = {
    "unfinished_turn_messages": UnfinishedTurnMessageBuilder,
    "tool_task_polls": ToolTaskPoller,
    "tool_task_cancels": ToolTaskCanceller,
    "compaction": ContextCompactionRunner,
}


def supported(capabilities: RunnerCapabilities) -> set[str]:
    """The names of the supported capabilities."""
    return {name for name in CAPABILITIES if getattr(capabilities, name)}


def checked_description(runner: object) -> RunnerCapabilities:
    """`runner.describe()`, after asserting it is whole and agrees with the runner's methods."""
    assert isinstance(runner, DescribedRunner), f"{type(runner).__name__} has no describe()"
    capabilities = runner.describe()
    assert isinstance(capabilities, RunnerCapabilities)
    # It crosses the wire unchanged, as a sidecar's does.
    assert decode(WireCapabilities, encode(capabilities)) == capabilities
    for name, protocol in _METHODS.items():
        implements = isinstance(runner, protocol)
        assert getattr(capabilities, name) == implements, (
            f"{name} is declared {getattr(capabilities, name)} but the runner "
            f"{'implements' if implements else 'lacks'} {protocol.__name__}"
        )
    gaps = {gap.capability: gap.reason for gap in capabilities.gaps}
    assert len(gaps) == len(capabilities.gaps), "a capability has two reasons"
    assert set(gaps) == set(CAPABILITIES) - supported(capabilities), (
        "each capability is either supported or has a reason"
    )
    assert all(reason.strip() for reason in gaps.values()), "a reason is blank"
    return capabilities


def assert_text_deltas_as_declared(
    capabilities: RunnerCapabilities, events: RecordingEventWriter
) -> None:
    """After a turn that answered in text: text_delta events exist exactly when declared."""
    wrote = any(isinstance(payload, TextDeltaPayload) for _, payload in events.events)
    assert wrote == capabilities.text_deltas, (
        f"text_deltas is declared {capabilities.text_deltas} but the turn "
        f"{'wrote' if wrote else 'wrote no'} text_delta events"
    )


def declaration(runner: object) -> dict[str, Any]:
    """The runner's checked description as capabilities.json holds it (proto order)."""
    capabilities = checked_description(runner)
    reasons = {gap.capability: gap.reason for gap in capabilities.gaps}
    return {
        "runner": type(runner).__name__,
        "supported": [name for name in CAPABILITIES if getattr(capabilities, name)],
        "unsupported": {name: reasons[name] for name in CAPABILITIES if name in reasons},
    }


def check_capabilities_file(runner: object, path: str) -> None:
    """Asserts the file at `path` (relative to the workspace root) is `runner`'s declaration.

    With `DEX_WRITE_CAPABILITIES=1` it writes the file instead, under
    `BUILD_WORKSPACE_DIRECTORY` when `bazel run` sets it (else the working directory).
    """
    text = json.dumps(declaration(runner), indent=2, ensure_ascii=False) + "\n"
    if os.environ.get(WRITE_ENV) == "1":
        root = Path(os.environ.get("BUILD_WORKSPACE_DIRECTORY", "."))
        (root / path).write_text(text, encoding="utf-8")
        return
    stored = Path(path).read_text(encoding="utf-8") if Path(path).exists() else ""
    diff = "".join(
        difflib.unified_diff(
            stored.splitlines(keepends=True),
            text.splitlines(keepends=True),
            f"{path} (checked in)",
            f"{type(runner).__name__}.describe()",
        )
    )
    assert stored == text, (
        f"{path} is not what {type(runner).__name__}.describe() declares; "
        f"rewrite it and docs/adapters.md with `tools/capabilities.sh {path}`:\n{diff}"
    )
