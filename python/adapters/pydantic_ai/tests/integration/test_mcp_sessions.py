"""MCP tools in durable Pydantic AI sessions: `McpSourceToolset` on dexlite, real Workers.

`PydanticAiRunner` hands an MCP call's tool Step to the `McpToolSource` whole: a
Streamable HTTP server's task is followed by PollToolTask Steps, cancel_turn sends
`tasks/cancel`, and a Worker that never listed the servers runs a tool Step from
the record's `tool_source_reference` alone. The app is `pai_mcp_app.py`; the
server is the jobs server (`dex_agents_testing.mcp_jobs`), whose `long_job`
answers with a task.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from dex_agents_contracts import AgentToolCall
from dex_agents_testing import DexliteProcess, RunLog, step_types, wait_until
from dex_agents_testing.conformance import JOBS_URL_ENV
from dex_agents_testing.mcp_jobs import JobsServer

from integration.pai_workers import App

MCP_APP = Path(__file__).resolve().parent / "pai_mcp_app.py"
JOB = "job please"  # the data file's reply: the model calls jobs__long_job


@pytest.fixture
def jobs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[JobsServer]:
    server = JobsServer(tmp_path / "jobs.jsonl").start()
    # The app reads it here and in its Worker, which inherits it.
    monkeypatch.setenv(JOBS_URL_ENV, server.url)
    yield server
    server.kill()


def _calls(jobs: JobsServer, tool: str) -> list[dict[str, Any]]:
    """What the jobs server logged of `tool` (or `tasks/get`, `tasks/cancel`)."""
    if not jobs.log.exists():
        return []
    entries = [json.loads(line) for line in jobs.log.read_text().splitlines() if line]
    return [e for e in entries if e["tool"] == tool]


def _tool_calls(app: App, session: str) -> list[AgentToolCall]:
    return list(app.client.get_snapshot(session).tool_calls)


def test_a_task_is_followed_by_poll_steps_and_cancel_turn_sends_tasks_cancel(
    dexlite: DexliteProcess, tmp_path: Path, jobs: JobsServer
) -> None:
    app = App(dexlite, tmp_path, script=MCP_APP)
    app.start_worker()
    try:
        session = app.start(JOB)
        wait_until(lambda: _calls(jobs, "tasks/get"), timeout=90, what="the task to be polled")
        jobs.log.with_suffix(".done").touch()
        done = app.wait_idle(session, 1, timeout=90)
        assert "job done" in str(done.messages[-1].text)
        steps = step_types(app.history(session))
        assert steps.index("CallTool") < steps.index("PollToolTask")
        assert "tool_task_started" in [e.type for e in app.events(session, "turn_completed")]
        jobs.log.with_suffix(".done").unlink()
        assert app.client.send_user_message(session, JOB)
        record = wait_until(
            lambda: next(
                (t for t in app.client.get_snapshot(session).tool_calls if t.task_id), None
            ),
            timeout=90,
            what="the second task to start",
        )
        assert app.client.cancel_turn(session, record.turn_id)
        wait_until(lambda: _calls(jobs, "tasks/cancel"), timeout=90, what="tasks/cancel")
    finally:
        app.stop()
    assert [c["task"] for c in _calls(jobs, "tasks/cancel")] == [record.task_id]


def test_a_fresh_worker_runs_the_tool_step_without_listing(
    tmp_path: Path, jobs: JobsServer
) -> None:
    server = DexliteProcess(tmp_path / "private.sqlite").start()
    app = App(server, tmp_path, script=MCP_APP)
    try:
        app.start_worker()
        # The server holds its answer to the first call: kill that Worker mid-call.
        jobs.log.with_suffix(".hold").touch()
        session = app.start(JOB)
        wait_until(lambda: len(_calls(jobs, "long_job")) == 1, timeout=60, what="the first call")
        app.restart_worker()
        jobs.log.with_suffix(".release").touch()
        jobs.log.with_suffix(".done").touch()
        done = app.wait_idle(session, 1, timeout=90)
    finally:
        app.stop()
        server.stop()
    assert "job done" in str(done.messages[-1].text)
    first, second = (entry["pid"] for entry in app.entries("mcp_call"))
    assert first != second
    entries = [e for e in RunLog(str(app.log_path)).entries() if e["kind"].startswith("mcp_")]
    retried = entries.index({"kind": "mcp_call", "pid": second, "tool": "jobs__long_job"})
    # The new Worker listed the servers only for the model call after the tool Step.
    assert {"kind": "mcp_listing", "pid": second} not in entries[:retried]
