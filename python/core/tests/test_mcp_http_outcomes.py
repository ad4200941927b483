"""How a Streamable HTTP call's failure is classified, against real loopback servers.

`mcp_support/faults.py` serves the real `basic` test server and answers a
`tools/call` of each `fault_*` tool with one misbehaviour of the outcome table
(the core README's MCP section); no MCP mock is involved.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from dex_agents.mcp import McpHttpServer, McpToolCallInterruptedError, McpToolSource
from dex_agents.runner import ToolExecutionError
from dex_agents_testing import free_port
from mcp_support import FAULTS_SCRIPT, SERVERS_SCRIPT, HttpServerProcess, calls, http_server


@pytest.fixture(scope="module")
def faults(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HttpServerProcess]:
    log = tmp_path_factory.mktemp("faults") / "calls.jsonl"
    with http_server(FAULTS_SCRIPT, log) as server:
        yield server


@dataclass(frozen=True)
class Case:
    id: str
    tool: str
    error: type[Exception]
    text: str


CASES = [
    Case("http_500", "fault_http500", McpToolCallInterruptedError, "-32603"),
    Case("bare_404", "fault_http404", ToolExecutionError, "-32601"),
    Case("503_with_json_rpc_body", "fault_http503_rpc", ToolExecutionError, "-32099"),
    Case("unparseable_body", "fault_garbage", McpToolCallInterruptedError, "-32700"),
    Case("wrong_content_type", "fault_wrong_type", McpToolCallInterruptedError, "-32600"),
    Case("accepted_202", "fault_accepted", McpToolCallInterruptedError, "got no result"),
    Case("sse_without_result", "fault_sse_no_result", McpToolCallInterruptedError, "no result"),
    Case("hang", "fault_hang", McpToolCallInterruptedError, "call timeout"),
    Case("is_error", "broken", ToolExecutionError, "the tool broke"),
]


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_http_outcomes(faults: HttpServerProcess, case: Case) -> None:
    source = McpToolSource([faults.config("f")], call_timeout=3)
    with pytest.raises(case.error) as raised:
        asyncio.run(source.call_tool(f"f__{case.tool}", {}, idempotency_key="k"))
    assert case.text in str(raised.value)


def test_http_server_killed_mid_call_is_interrupted(tmp_path: Path) -> None:
    with http_server(FAULTS_SCRIPT, tmp_path / "calls.jsonl") as server:
        source = McpToolSource([server.config("f")], call_timeout=10)
        with pytest.raises(McpToolCallInterruptedError):
            asyncio.run(source.call_tool("f__fault_kill", {}, idempotency_key="k"))


def test_a_refused_connection_is_a_call_never_sent() -> None:
    source = McpToolSource([McpHttpServer(name="off", url=f"http://127.0.0.1:{free_port()}/mcp")])
    with pytest.raises(ToolExecutionError, match="not called"):
        asyncio.run(source.call_tool("off__lookup", {}, idempotency_key="k"))


def test_http_call_after_a_server_restart_on_the_same_port(tmp_path: Path) -> None:
    """Listing and calling use separate connections, so a restart between them is harmless."""
    log = tmp_path / "calls.jsonl"
    server = HttpServerProcess(SERVERS_SCRIPT, log).start()

    async def scenario() -> str:
        source = McpToolSource([server.config("web")])
        names = [tool.name for tool in await source.list_tools()]
        assert "web__lookup" in names
        server.kill()
        with pytest.raises(ToolExecutionError, match="not called"):
            await source.call_tool("web__lookup", {"city": "Rome"}, idempotency_key="k1")
        await asyncio.to_thread(server.start)
        output = await source.call_tool("web__lookup", {"city": "Rome"}, idempotency_key="k2")
        # -32020 (HeaderMismatch): listed on that connection, the call is retried once.
        assert await source.call_tool("web__headered", {}, idempotency_key="k3") == "headers fine"
        await source.aclose()
        return output

    try:
        assert asyncio.run(scenario()) == "basic: sunny in Rome"
    finally:
        server.kill()
    assert [c["key"] for c in calls(log, "lookup")] == ["k2"]
    assert [c["key"] for c in calls(log, "headered")] == ["k3", "k3"]
