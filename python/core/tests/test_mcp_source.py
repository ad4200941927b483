"""McpToolSource against real MCP servers (stdio child processes): listing and calls.

No MCP mock: every server is `mcp_support/servers.py`, started by the source itself.
"""

from __future__ import annotations

import asyncio
import logging
import subprocess
import sys
import time
from collections.abc import Coroutine
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import pytest
from dex_agents import ToolEffect, ToolPolicy
from dex_agents.mcp import (
    IDEMPOTENCY_KEY_META,
    McpStdioServer,
    McpToolCallInterruptedError,
    McpToolSource,
    split_qualified_name,
)
from dex_agents.runner import ToolExecutionError
from dexlite.testing import child_env
from mcp_support import calls, stdio_server

T = TypeVar("T")


def run(coroutine: Coroutine[Any, Any, T]) -> T:
    return asyncio.run(coroutine)


MCP_NAMES = """
    DEFAULT_CALL_TIMEOUT_SECONDS DEFAULT_HANDSHAKE_TIMEOUT_SECONDS IDEMPOTENCY_KEY_META
    MAX_TOOL_NAME_LENGTH McpHttpServer McpServerConfig McpStdioServer McpTool
    McpToolCallInterruptedError McpToolSource split_qualified_name
""".split()  # noqa: SIM905 - several names a line keep the pin readable


def test_mcp_exports_are_pinned_and_importable() -> None:
    """A name that disappears or appears here is an API change of `dex_agents.mcp`."""
    import dex_agents.mcp

    assert sorted(dex_agents.mcp.__all__, key=str.lower) == MCP_NAMES
    for name in MCP_NAMES:
        assert getattr(dex_agents.mcp, name) is not None, name


def test_interrupted_error_survives_pickling() -> None:
    import pickle

    error = McpToolCallInterruptedError("srv", "tool", "connection closed")
    copy = pickle.loads(pickle.dumps(error))
    assert (copy.server, copy.tool, copy.reason, str(copy)) == (
        "srv",
        "tool",
        "connection closed",
        str(error),
    )


def test_import_dex_agents_loads_no_mcp_sdk() -> None:
    """A fresh interpreter: the core never imports the optional MCP SDK."""
    code = (
        "import sys, dex_agents, dex_agents.runner, dex_agents.stepwise;"
        "bad = sorted(m for m in sys.modules if m == 'mcp' or m.startswith(('mcp.', 'mcp_types',"
        " 'dex_agents.mcp', 'httpx2')));"
        "print(bad); sys.exit(1 if bad else 0)"
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=False,
        env=child_env(),
    )
    assert done.returncode == 0, done.stdout + done.stderr


def test_lists_tools_as_server_prefixed_names_with_annotation_effects(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    source = McpToolSource(
        [
            stdio_server("basic", tmp_path / "basic.jsonl"),
            stdio_server("alt", tmp_path / "alt.jsonl", variant="alt"),
            McpStdioServer(name="missing", command=str(tmp_path / "no-such-server")),
        ]
    )
    with caplog.at_level(logging.WARNING, logger="dex_agents.mcp"):
        tools = run(source.list_tools(taken=["alt__lookup"]))
    by_name = {tool.name: tool for tool in tools}
    assert sorted(by_name) == [
        "alt__set_flag",
        "basic__broken",
        "basic__die",
        "basic__hang",
        "basic__headered",
        "basic__lookup",
        "basic__odd__name",
        "basic__refuse",
        "basic__send_email",
        "basic__set_flag",
    ]
    assert by_name["basic__lookup"].effect is ToolEffect.READ
    # idempotentHint wins whatever destructiveHint says.
    assert by_name["basic__set_flag"].annotations["destructiveHint"] is True
    assert by_name["basic__set_flag"].effect is ToolEffect.IDEMPOTENT_WRITE
    assert by_name["basic__send_email"].effect is None
    assert by_name["basic__odd__name"].mcp_name == "odd__name"
    assert split_qualified_name("basic__odd__name") == ("basic", "odd__name")
    assert by_name["basic__lookup"].parameters["required"] == ["city"]
    warnings = " ".join(r.getMessage() for r in caplog.records)
    assert "'missing' could not be listed" in warnings
    assert "'lookup' of server 'alt' is left out: an earlier tool has that name" in warnings
    # The listing is cached: nothing new is spawned or logged.
    assert run(source.list_tools()) == tools

    policies = source.merge_tool_policies(
        {"basic__lookup": ToolPolicy(effect=ToolEffect.NON_IDEMPOTENT_WRITE)}
    )
    assert policies["basic__lookup"].effect is ToolEffect.NON_IDEMPOTENT_WRITE
    assert policies["basic__set_flag"].effect is ToolEffect.IDEMPOTENT_WRITE
    assert "basic__send_email" not in policies


def test_untrusted_annotations_imply_no_effect(tmp_path: Path) -> None:
    source = McpToolSource([stdio_server("basic", tmp_path / "b.jsonl")], trust_annotations=False)
    assert all(tool.effect is None for tool in run(source.list_tools()))
    assert source.merge_tool_policies() == {}


@pytest.mark.parametrize(
    ("name", "problem"),
    [("a__b", "`__`"), ("", "1 to 64"), ("x y", "[A-Za-z0-9._-]"), ("_a", "leading")],
)
def test_server_names_cannot_break_the_prefix(name: str, problem: str) -> None:
    with pytest.raises(ValueError, match="must be 1 to 64 characters") as raised:
        McpStdioServer(name=name, command="x")
    assert problem.strip("`") in str(raised.value) or problem in str(raised.value)


def test_a_call_carries_the_idempotency_key_and_needs_no_listing(tmp_path: Path) -> None:
    log = tmp_path / "basic.jsonl"
    source = McpToolSource([stdio_server("basic", log)])  # never listed
    reference = '{"server":"basic","tool":"lookup"}'
    output = run(
        source.call_tool(
            "basic__lookup",
            '{"city": "Oslo"}',
            idempotency_key="flow/turn/c1",
            tool_source_reference=reference,
        )
    )
    assert output == "basic: sunny in Oslo"
    assert calls(log) == [
        {
            "tool": "lookup",
            "arguments": {"city": "Oslo"},
            "key": "flow/turn/c1",
            "pid": calls(log)[0]["pid"],
        }
    ]
    assert IDEMPOTENCY_KEY_META == "io.superdurable.dex/idempotencyKey"


@dataclass(frozen=True)
class Case:
    id: str
    tool: str
    arguments: dict[str, object]
    error: type[Exception]
    text: str


STDIO_CASES = [
    Case("is_error", "broken", {}, ToolExecutionError, "the tool broke"),
    Case("json_rpc_error", "refuse", {"code": -32099}, ToolExecutionError, "JSON-RPC -32099"),
    Case("internal_error", "refuse", {"code": -32603}, McpToolCallInterruptedError, "-32603"),
    Case("parse_error", "refuse", {"code": -32700}, McpToolCallInterruptedError, "-32700"),
    Case("server_died", "die", {}, McpToolCallInterruptedError, "Connection closed"),
    Case("timeout", "hang", {}, McpToolCallInterruptedError, "call timeout"),
    Case("unknown_tool", "nope", {}, ToolExecutionError, "nope"),
]


@pytest.mark.parametrize("case", STDIO_CASES, ids=[c.id for c in STDIO_CASES])
def test_stdio_outcomes(tmp_path: Path, case: Case) -> None:
    source = McpToolSource([stdio_server("basic", tmp_path / "b.jsonl")], call_timeout=3)
    with pytest.raises(case.error) as raised:
        run(source.call_tool(f"basic__{case.tool}", case.arguments, idempotency_key="k"))
    assert case.text in str(raised.value)


def test_servers_come_only_from_the_source_configuration(tmp_path: Path) -> None:
    source = McpToolSource([stdio_server("basic", tmp_path / "b.jsonl")])
    forged = '{"server":"evil","tool":"lookup"}'
    with pytest.raises(ToolExecutionError, match="'evil' is not configured on this Worker"):
        run(source.call_tool("evil__lookup", {}, idempotency_key="k", tool_source_reference=forged))
    assert source.stepwise_tool("evil__lookup", forged) is None


def test_a_mute_server_is_not_called_once_the_handshake_bound_passes(tmp_path: Path) -> None:
    mute = McpStdioServer(name="mute", command="sleep", args=("100",))
    source = McpToolSource([mute], handshake_timeout=1)
    started = time.monotonic()
    with pytest.raises(
        ToolExecutionError, match="could not be reached, so 'lookup' was not called"
    ):
        run(source.call_tool("mute__lookup", {}, idempotency_key="k"))
    # The bound plus the SDK's stdio teardown (stdin close, SIGTERM after 2 s).
    assert time.monotonic() - started < 15


def test_a_server_that_cannot_start_is_a_call_never_sent(tmp_path: Path) -> None:
    source = McpToolSource([McpStdioServer(name="gone", command=str(tmp_path / "missing"))])
    with pytest.raises(ToolExecutionError, match="not called"):
        run(source.call_tool("gone__lookup", {}, idempotency_key="k"))
