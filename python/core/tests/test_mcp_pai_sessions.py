"""MCP tools in durable Pydantic AI sessions: `McpSourceToolset` on dexlite, real Workers.

`PydanticAiRunner` hands an MCP call's tool Step to the `McpToolSource` whole:
a Streamable HTTP server's task is followed by PollToolTask Steps, cancel_turn
sends `tasks/cancel`, and a Worker that never listed the servers runs a tool
Step from the record's `tool_source_reference` alone.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from dex_agents_testing import step_types, wait_until
from helpers import Harness
from mcp_support import SERVERS_SCRIPT, calls, http_server
from mcp_support.flows import call

FACTORY = "mcp_support.pai_flows:flow"
MakeHarness = Callable[..., Harness]


def _http(name: str, url: str) -> dict[str, str]:
    return {"kind": "http", "name": name, "url": url}


def test_a_task_is_followed_by_poll_steps_and_cancel_turn_sends_tasks_cancel(
    factory_harness: MakeHarness, tmp_path: Path
) -> None:
    log = tmp_path / "jobs.jsonl"
    with http_server(SERVERS_SCRIPT, log, "tasks") as jobs:
        h = factory_harness(FACTORY, {"servers": [_http("jobs", jobs.url)]})
        session = h.start(call("jobs__long_job"))
        wait_until(lambda: calls(log, "tasks/get"), timeout=90, what="the task to be polled")
        log.with_suffix(".done").touch()
        done = h.wait_idle(session, 1, timeout=90)
        assert done.messages[-1].text == "done: job done"
        steps = step_types(h.history(session))
        assert steps.index("CallTool") < steps.index("PollToolTask")
        types = [e.type for e in h.events(session, "turn_completed")]
        assert "tool_task_started" in types
        log.with_suffix(".done").unlink()
        h.client.send_user_message(session, call("jobs__long_job"))
        record = wait_until(
            lambda: next((t for t in h.snapshot(session).tool_calls if t.task_id), None),
            timeout=90,
            what="the second task to start",
        )
        assert h.client.cancel_turn(session, record.turn_id)
        wait_until(lambda: calls(log, "tasks/cancel"), timeout=90, what="tasks/cancel")
    assert [c["task"] for c in calls(log, "tasks/cancel")] == [record.task_id]


def test_a_fresh_worker_runs_the_tool_step_without_listing(
    factory_harness: MakeHarness, tmp_path: Path
) -> None:
    log = tmp_path / "web.jsonl"
    with http_server(SERVERS_SCRIPT, log) as web:
        h = factory_harness(FACTORY, {"servers": [_http("web", web.url)]})
        session = h.start(call("web__set_flag", name="blue"))
        # The first call blocks in the server: kill that Worker mid-call.
        wait_until(lambda: len(calls(log, "set_flag")) == 1, timeout=60, what="the first call")
        h.restart_worker()
        log.with_suffix(".gate").touch()
        done = h.wait_idle(session, 1, timeout=90)
    assert done.messages[-1].text == "done: flag blue set"
    first, second = (entry["pid"] for entry in h.log.entries("mcp_call"))
    assert first != second
    entries = h.log.entries()
    retried = entries.index({"kind": "mcp_call", "pid": second, "tool": "web__set_flag"})
    # The new Worker listed the servers only for the model call after the tool Step.
    assert {"kind": "mcp_listing", "pid": second} not in entries[:retried]
