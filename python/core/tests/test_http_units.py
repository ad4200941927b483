"""dex_agents.http without a server: its public names, that the core never imports
it, the bounds' checks and the UI token's refusals."""

from __future__ import annotations

import subprocess
import sys
from datetime import timedelta
from typing import Any, cast

import dex_agents.http
import pytest
from dex_agents.http import HttpLimits, UiToken
from dex_agents.http._ui_reader import TurnReader
from dex_agents_testing import child_env


def test_public_names_are_pinned() -> None:
    assert sorted(dex_agents.http.__all__) == [
        "HttpLimits",
        "ToolFacts",
        "UiToken",
        "UiTurnTranslator",
        "create_app",
        "mount_console",
        "ui_snapshot_json",
    ]


def test_the_core_never_loads_the_http_dependencies() -> None:
    probe = (
        "import sys, dex_agents, dex_agents.client, dex_agents.worker\n"
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in "
        "('starlette', 'sse_starlette', 'uvicorn'))\n"
        "bad += [m for m in sys.modules if m.startswith('dex_agents.http')]\n"
        "print(bad)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, env=child_env()
    ).stdout
    assert out.strip() == "[]"


@pytest.mark.parametrize(
    ("field", "value", "text"),
    [
        ("max_streams", 0, "HttpLimits.max_streams must be a positive integer, got 0"),
        ("queue_size", 1.5, "HttpLimits.queue_size must be a positive integer, got 1.5"),
        ("poll_seconds", 0.5, "HttpLimits.poll_seconds must be a positive integer, got 0.5"),
        ("ping_seconds", -1, "HttpLimits.ping_seconds must be a positive number, got -1"),
        ("idle_timeout_seconds", True, "must be a positive number, got True"),
    ],
)
def test_limits_name_the_bad_field(field: str, value: object, text: str) -> None:
    with pytest.raises(ValueError, match="HttpLimits") as raised:
        HttpLimits(**{field: value})  # type: ignore[arg-type]
    assert text in str(raised.value)


@pytest.mark.parametrize(
    ("text", "error"),
    [
        ("", "does not start with 'u1.'"),
        ("u1.%%%", "is malformed"),
        ("u1.WzFd", "is malformed"),  # [1]
        ("u1.WyJzIiwidCIsIiIsIjEiLC0xLFtdXQ", "is malformed"),  # chunk -1
    ],
)
def test_ui_token_refusals(text: str, error: str) -> None:
    with pytest.raises(ValueError, match="UI stream token") as raised:
        UiToken.decode(text)
    assert error in str(raised.value)


class _PausingTurn:
    """A turn state that waits only for approvals; the stream has one event the reader
    has not read yet, then none."""

    session_id = "s1"
    turn_id = "turn-1"

    def __init__(self) -> None:
        self.tails = [False, True]

    def waits_only_for_approvals(self) -> bool:
        return True

    def at_tail(self, position: str) -> bool:
        return self.tails.pop(0)


class _ApprovalsAsked:
    awaiting_steered = False
    pending_approvals = frozenset({"k1"})

    def pause_for_approvals(self) -> list[dict[str, object]]:
        return [{"type": "finish", "finishReason": "tool-calls"}]


def test_a_pause_for_approvals_waits_until_every_committed_event_is_read() -> None:
    """A tool call that finished after the cursor's last read shows in the state first:
    the response must not finish before its events are in the message."""
    reader = TurnReader(
        state=cast(Any, _PausingTurn()),
        translator=cast(Any, _ApprovalsAsked()),
        start="p0",
        read_from="p0",
        poll=timedelta(0),
    )
    emitted: list[Any] = []

    def emit(item: Any) -> bool:
        emitted.append(item)
        return True

    reader._emit = emit
    reader._idle("p1")  # an event follows p1: read it first
    assert emitted == []
    reader._idle("p2")
    assert [chunk["type"] for chunk, _ in emitted] == ["finish"]
