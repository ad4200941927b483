"""dex_agents.http without a server: its public names, that the core never imports
it, the bounds' checks and the UI token's refusals."""

from __future__ import annotations

import subprocess
import sys

import dex_agents.http
import pytest
from dex_agents.http import HttpLimits, UiToken
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
