"""Checks that a runner's `describe()` matches what it implements, for each adapter's tests.

The methods the session calls exist exactly when their capability is declared,
and every capability is either supported or has a reason; what the adapter's
framework does beyond that is pinned by the adapter's own test.
"""

from __future__ import annotations

from dex_agents._runner.declared import CAPABILITIES
from dex_agents.runner import (
    ContextCompactionRunner,
    DescribedRunner,
    RecordingEventWriter,
    RunnerCapabilities,
    ToolTaskCanceller,
    ToolTaskPoller,
    UnfinishedTurnMessageBuilder,
)
from dex_agents_contracts import RunnerCapabilities as WireCapabilities
from dex_agents_contracts import TextDeltaPayload, decode, encode

__all__ = ["assert_text_deltas_as_declared", "checked_description", "supported"]

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
