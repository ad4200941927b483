"""MCP tools in a durable agent session: one stdio and one Streamable HTTP server.

A Stepwise agent gets the tools of two MCP servers from its Worker's
configuration (`McpToolSource`), named `<server>__<tool>`. The scripted model
calls `notes__find_note` (stdio, readOnlyHint: a read) and `web__save_note`
(HTTP, idempotentHint: an idempotent write) in one response; each call runs in
its own CallTool Step on a fresh connection, with the Step's idempotency key in
`_meta`. The example prints the answer and the turn's Step shape:

    RunModel -> CallTool | CallTool -> ResumeTurn -> RunModel

Run it from the repository root (it starts dexlite and the HTTP server itself):

    PYTHONPATH=python/contracts/src:python/core/src:python/dexlite/src:python/testing/src \
        .venv/bin/python python/examples/mcp_example.py
"""

from __future__ import annotations

import socket
import subprocess
import sys
import time
import uuid
from pathlib import Path

from dex_agents import AgentSessionClient, AgentSessionFlow
from dex_agents.mcp import McpHttpServer, McpStdioServer, McpToolSource
from dex_agents.models import ScriptedModelClient, scripted_answer, scripted_tool_calls
from dex_agents.stepwise import AgentDefinition, StepwiseRunner
from dex_agents_testing import (
    assert_step_shape,
    dexlite_or,
    fetch_history,
    free_port,
    turn_shapes,
    worker_in_thread,
)

SERVER = str(Path(__file__).resolve().parent / "mcp_notes_server.py")
# The two reads run as parallel Steps, in either order.
EXPECTED_SHAPE: list[str | tuple[str, ...]] = [
    "RunModel",
    ("CallTool", "CallTool"),
    "ResumeTurn",
    "RunModel",
]


def build_flow(http_url: str) -> AgentSessionFlow:
    # The Worker's configuration names the servers; nothing a session sends can.
    source = McpToolSource(
        servers=[
            McpStdioServer(name="notes", command=sys.executable, args=(SERVER, "stdio")),
            McpHttpServer(name="web", url=http_url),
        ]
    )
    model = ScriptedModelClient(  # use a real ModelClient here (dex_agents.models.litellm)
        [
            scripted_tool_calls(
                ("c1", "notes__find_note", '{"topic": "dex"}'),
                ("c2", "web__save_note", '{"title": "dex"}'),
            ),
            scripted_answer("Found the note and saved it."),
        ]
    )
    definition = AgentDefinition(instructions="You keep notes.", model=model, tool_sources=[source])
    return AgentSessionFlow(StepwiseRunner(definition), flow_type="McpNotesAgent")


def wait_for_port(port: int, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while True:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                return
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.1)  # the server process has no readiness signal to wait on


def main() -> None:
    port = free_port()
    http = subprocess.Popen([sys.executable, SERVER, "http", str(port)])
    try:
        wait_for_port(port)
        with dexlite_or(None) as address:
            flow = build_flow(f"http://127.0.0.1:{port}/mcp")
            session_id = f"mcp-{uuid.uuid4().hex[:8]}"
            with (
                worker_in_thread([flow], address),
                AgentSessionClient(flow, server_address=address) as client,
            ):
                run_id = client.start_session(session_id, "Find my note about Dex and save it.")
                for event, _ in client.follow_events(
                    session_id,
                    until=lambda e: e.type in {"turn_completed", "turn_failed"},
                    deadline_seconds=90,
                ):
                    print(f"event {event.type}: {event.payload}")
                    if event.type == "turn_failed":
                        raise SystemExit("the turn failed")
                snapshot = client.wait_for_turn_end(session_id, event.turn_id or "turn-1")
            for message in snapshot.messages:
                body = message.text or message.tool_output or f"[calls {message.tool_name}]"
                print(f"  {message.role.name.lower():<9} {body}")
            history = fetch_history(address, session_id, run_id)
            print("\nStep shape: " + " -> ".join(turn_shapes(history)[0]))
            assert_step_shape(history, EXPECTED_SHAPE, turn=0)
    finally:
        http.kill()
        http.wait(10)


if __name__ == "__main__":
    main()
