"""One MCP tool call as a tool Step, next to the same tool as a plain function tool.

`bazel run //python/core:mcp_call_bench` prints, per variant, the median and p90
milliseconds of:

- `execute_deferred_tool_call` in-process (what a CallTool attempt runs: for MCP
  a new connection, `tools/call`, close), and
- a whole turn on dexlite with an in-process Worker
  (RunModel -> CallTool -> ResumeTurn -> RunModel, scripted model).

Variants: a plain Stepwise function tool; the same tool on a Streamable HTTP
MCP server (one shared httpx2 client, era pinned after the first call); on a
stdio MCP server (a new process per call). Figures go into `bench/RESULTS.md`.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Awaitable, Callable
from pathlib import Path

from dex_agents import AgentSessionClient, AgentSessionFlow, ToolEffect, ToolPolicy
from dex_agents.mcp import McpHttpServer, McpServerConfig, McpStdioServer, McpToolSource
from dex_agents.models import (
    ScriptedModelClient,
    ScriptedResponse,
    scripted_answer,
    scripted_tool_calls,
)
from dex_agents.offline import NullEventWriter
from dex_agents.runner import DeferredToolExecution
from dex_agents.stepwise import AgentDefinition, StepwiseRunner, ToolSource, tool
from dex_agents_contracts import AgentToolCall
from dex_agents_testing import DexliteProcess, free_port, wait_until, worker_in_thread
from dexlite.testing import accepts_connections

_SERVER = '''
import sys
from mcp.server.mcpserver import MCPServer
from mcp.types import ToolAnnotations

server = MCPServer("bench")


@server.tool(annotations=ToolAnnotations(read_only_hint=True))
def lookup(city: str) -> str:
    """Looks up the weather."""
    return f"sunny in {city}"


if sys.argv[1] == "http":
    import uvicorn

    app = server.streamable_http_app(stateless_http=True, json_response=True)
    uvicorn.run(app, host="127.0.0.1", port=int(sys.argv[2]), log_level="warning")
else:
    server.run("stdio")
'''


def lookup(city: str) -> str:
    """Looks up the weather."""
    return f"sunny in {city}"


def _definition(
    script: list[ScriptedResponse], sources: list[ToolSource], plain: bool
) -> AgentDefinition:
    tools = [tool(lookup, name="w__lookup", policy=ToolPolicy(effect=ToolEffect.READ))]
    return AgentDefinition(
        model=ScriptedModelClient(script, record_requests=False),
        tools=tools if plain else [],
        tool_sources=sources,
    )


def _figures(label: str, samples: list[float]) -> str:
    ordered = sorted(samples)
    p90 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.9))]
    median = statistics.median(ordered)
    return f"{label:<20} median {median:8.1f} ms   p90 {p90:8.1f} ms   n={len(ordered)}"


async def _time(call: Callable[[], Awaitable[object]], count: int) -> list[float]:
    samples = []
    for _ in range(count):
        started = time.perf_counter()
        await call()
        samples.append((time.perf_counter() - started) * 1000)
    return samples


async def _in_process(runner: StepwiseRunner, count: int) -> list[float]:
    async def nothing(_: str = "") -> None:
        return None

    record = AgentToolCall(
        tool_call_id="c1",
        turn_id="t",
        tool_name="w__lookup",
        arguments='{"city": "Oslo"}',
        tool_source_reference='{"server":"w","tool":"lookup"}',
    )
    execution = DeferredToolExecution(
        flow_id="f",
        turn_id="t",
        tool_call=record,
        idempotency_key="f/t/c1",
        attempt=1,
        events=NullEventWriter(),
        heartbeat=nothing,
        save_heartbeat_checkpoint=nothing,
    )
    await runner.execute_deferred_tool_call(execution)  # warm: the era probe, imports
    return await _time(lambda: runner.execute_deferred_tool_call(execution), count)


def _turns(address: str, make_flow: Callable[[int], AgentSessionFlow], count: int) -> list[float]:
    flow = make_flow(count + 1)
    samples = []
    with (
        worker_in_thread([flow], address),
        AgentSessionClient(flow, server_address=address) as client,
    ):
        for index in range(count + 1):
            session = f"b-{uuid.uuid4().hex[:8]}"
            started = time.perf_counter()
            client.start_session(session, "weather?")
            for event, _ in client.follow_events(
                session, until=lambda e: e.type == "turn_completed", deadline_seconds=120
            ):
                del event
            if index:  # the first turn warms the Worker up
                samples.append((time.perf_counter() - started) * 1000)
    return samples


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=30, help="in-process calls per variant")
    parser.add_argument("--turns", type=int, default=10, help="dexlite turns per variant")
    parser.add_argument("--stdio-calls", type=int, default=8)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="mcp-bench-") as root:
        script = Path(root) / "server.py"
        script.write_text(_SERVER, encoding="utf-8")
        port = free_port()
        http = subprocess.Popen([sys.executable, str(script), "http", str(port)])
        dexlite = DexliteProcess(Path(root) / "dex.sqlite").start()
        try:
            wait_until(lambda: accepts_connections(port), what=f"the MCP server on port {port}")
            servers: dict[str, McpServerConfig] = {
                "http": McpHttpServer(name="w", url=f"http://127.0.0.1:{port}/mcp"),
                "stdio": McpStdioServer(
                    name="w", command=sys.executable, args=(str(script), "stdio")
                ),
            }

            def make(variant: str) -> Callable[[int], AgentSessionFlow]:
                def flow(turns: int) -> AgentSessionFlow:
                    per_turn = [
                        scripted_tool_calls(("c1", "w__lookup", '{"city": "Oslo"}')),
                        scripted_answer("Sunny."),
                    ]
                    sources: list[ToolSource] = (
                        [] if variant == "plain" else [McpToolSource([servers[variant]])]
                    )
                    definition = _definition(per_turn * turns, sources, variant == "plain")
                    return AgentSessionFlow(
                        StepwiseRunner(definition), flow_type=f"McpBench{variant}"
                    )

                return flow

            print("execute_deferred_tool_call, in-process (one CallTool attempt's work)")
            for variant, count in (
                ("plain", args.calls),
                ("http", args.calls),
                ("stdio", args.stdio_calls),
            ):
                # The record's reference rebuilds the MCP tool without a listing.
                sources: list[ToolSource] = (
                    [] if variant == "plain" else [McpToolSource([servers[variant]])]
                )
                runner = StepwiseRunner(_definition([], sources, variant == "plain"))
                samples = asyncio.run(_in_process(runner, count))
                print(_figures(f"  {variant} tool", samples))
            print("\nwhole turn on dexlite: RunModel -> CallTool -> ResumeTurn -> RunModel")
            for variant, count in (
                ("plain", args.turns),
                ("http", args.turns),
                ("stdio", max(3, args.turns // 3)),
            ):
                print(_figures(f"  {variant} tool", _turns(dexlite.address, make(variant), count)))
        finally:
            dexlite.stop()
            http.kill()
            http.wait(10)


if __name__ == "__main__":
    main()
