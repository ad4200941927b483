"""MCP tasks (io.modelcontextprotocol/tasks) through McpToolSource, against a real server.

`dex_agents_testing.mcp_jobs` answers `long_job` with a task whose state lives
in files: the test completes it (`<log>.done`) or makes the server forget it
(deleting its state). The source is driven as the session's tool Step and
PollToolTask would drive it.
"""

from __future__ import annotations

import asyncio
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from dex_agents._runner.capabilities import ToolTaskCancellation, ToolTaskPending, ToolTaskPoll
from dex_agents.mcp import McpToolCallInterruptedError, McpToolSource
from dex_agents.offline import NullEventWriter, RecordingEventWriter
from dex_agents.runner import (
    DeferredToolExecution,
    ToolExecutionError,
    ToolExecutionResult,
    ToolTaskStarted,
)
from dex_agents_contracts import AgentToolCall
from mcp_support import SERVERS_SCRIPT, HttpServerProcess, calls, http_server, stdio_server

REFERENCE = '{"server":"jobs","tool":"long_job"}'


@pytest.fixture
def jobs(tmp_path: Path) -> Iterator[HttpServerProcess]:
    with http_server(SERVERS_SCRIPT, tmp_path / "jobs.jsonl", "tasks") as server:
        yield server


class Attempt:
    """One tool Step attempt's callbacks: heartbeats counted, checkpoints kept."""

    def __init__(self, checkpoint: str | None = None) -> None:
        self.checkpoint, self.saved, self.heartbeats = checkpoint, list[str](), 0

    async def heartbeat(self) -> None:
        self.heartbeats += 1

    async def save(self, text: str) -> None:
        self.saved.append(text)

    def execution(self, record: AgentToolCall, *, tasks: bool = True) -> DeferredToolExecution:
        return DeferredToolExecution(
            flow_id="f",
            turn_id="t",
            tool_call=record,
            idempotency_key="f/t/c1",
            attempt=1,
            events=NullEventWriter(),
            heartbeat=self.heartbeat,
            save_heartbeat_checkpoint=self.save,
            heartbeat_checkpoint=self.checkpoint,
            supports_tool_tasks=tasks,
        )


def _record(name: str = "jobs__long_job", reference: str = REFERENCE) -> AgentToolCall:
    return AgentToolCall(
        tool_call_id="c1",
        turn_id="t",
        tool_name=name,
        arguments="{}",
        tool_source_reference=reference,
    )


def _poll(record: AgentToolCall, events: RecordingEventWriter) -> ToolTaskPoll:
    return ToolTaskPoll(
        flow_id="f",
        tool_call=record,
        idempotency_key="f/t/c1",
        attempt=1,
        heartbeat=Attempt().heartbeat,
        input_answers=(),
        events=events,
    )


def test_a_started_task_is_checkpointed_and_a_retry_returns_it_without_calling(
    jobs: HttpServerProcess,
) -> None:
    source = McpToolSource([jobs.config("jobs")])
    first = Attempt()
    started = asyncio.run(source.execute_deferred_tool_call(first.execution(_record())))
    assert isinstance(started, ToolTaskStarted)
    assert started.poll_interval_seconds == 1
    (checkpoint,) = first.saved
    assert started.task_id in checkpoint
    retry = Attempt(checkpoint=checkpoint)
    again = asyncio.run(source.execute_deferred_tool_call(retry.execution(_record())))
    assert again == started
    assert [c["key"] for c in calls(jobs.log, "long_job")] == ["f/t/c1"]
    # Another writer's checkpoint reads as none: the call goes out.
    other = Attempt(checkpoint='{"kind":"someone-else"}')
    assert isinstance(
        asyncio.run(source.execute_deferred_tool_call(other.execution(_record()))),
        ToolTaskStarted,
    )
    assert len(calls(jobs.log, "long_job")) == 2


def _statuses(events: RecordingEventWriter) -> list[object]:
    return [p["status"] for t, p in events.events if t == "mcp.task_status"]  # type: ignore[index] # raw events are parsed JSON objects


def test_polls_write_a_status_event_only_on_change_then_complete(jobs: HttpServerProcess) -> None:
    source = McpToolSource([jobs.config("jobs")])
    started = asyncio.run(source.execute_deferred_tool_call(Attempt().execution(_record())))
    assert isinstance(started, ToolTaskStarted)
    record = _record()
    record.task_id, record.task_poll_interval_seconds = started.task_id, 1
    events = RecordingEventWriter()
    first = asyncio.run(source.poll_tool_task(_poll(record, events)))
    assert isinstance(first, ToolTaskPending)
    # The server asks for 200 ms; a Step interval is whole seconds and doubles.
    assert first.poll_interval_seconds == 2
    assert _statuses(events) == ["working"]  # the first poll saw a change: none to working
    record.input_continuation, record.task_poll_interval_seconds = first.continuation, 2
    second = asyncio.run(source.poll_tool_task(_poll(record, events)))
    assert isinstance(second, ToolTaskPending)
    assert second.poll_interval_seconds == 4
    assert _statuses(events) == ["working"]  # the second saw none
    jobs.log.with_suffix(".done").touch()
    done = asyncio.run(source.poll_tool_task(_poll(record, events)))
    assert done == ToolExecutionResult(output="job done")
    assert len(calls(jobs.log, "tasks/get")) == 3


def test_a_task_the_server_forgot_fails_the_poll(jobs: HttpServerProcess) -> None:
    source = McpToolSource([jobs.config("jobs")])
    started = asyncio.run(source.execute_deferred_tool_call(Attempt().execution(_record())))
    assert isinstance(started, ToolTaskStarted)
    shutil.rmtree(jobs.log.with_suffix(".tasks"))
    record = _record()
    record.task_id, record.task_poll_interval_seconds = started.task_id, 1
    with pytest.raises(McpToolCallInterruptedError, match="no longer knows the task"):
        asyncio.run(source.poll_tool_task(_poll(record, RecordingEventWriter())))


def test_cancel_sends_tasks_cancel(jobs: HttpServerProcess) -> None:
    source = McpToolSource([jobs.config("jobs")])
    started = asyncio.run(source.execute_deferred_tool_call(Attempt().execution(_record())))
    assert isinstance(started, ToolTaskStarted)
    record = _record()
    record.task_id = started.task_id
    cancellation = ToolTaskCancellation(
        flow_id="f",
        tool_call=record,
        idempotency_key="f/t/c1",
        attempt=1,
        heartbeat=Attempt().heartbeat,
    )
    asyncio.run(source.cancel_tool_task(cancellation))
    assert [c["task"] for c in calls(jobs.log, "tasks/cancel")] == [started.task_id]


def test_without_a_polling_runner_the_task_is_followed_inside_the_step(
    jobs: HttpServerProcess,
) -> None:
    jobs.log.with_suffix(".done").touch()
    source = McpToolSource([jobs.config("jobs")])
    attempt = Attempt()
    outcome = asyncio.run(
        source.execute_deferred_tool_call(attempt.execution(_record(), tasks=False))
    )
    assert outcome == ToolExecutionResult(output="job done")
    assert attempt.saved == []
    assert attempt.heartbeats == 1  # one per poll


def test_a_stdio_task_is_polled_on_its_own_connection(tmp_path: Path) -> None:
    log = tmp_path / "sjobs.jsonl"
    log.with_suffix(".done").touch()
    source = McpToolSource([stdio_server("sjobs", log, "tasks")])
    attempt = Attempt()
    record = _record("sjobs__long_job", '{"server":"sjobs","tool":"long_job"}')
    outcome = asyncio.run(source.execute_deferred_tool_call(attempt.execution(record)))
    assert outcome == ToolExecutionResult(output="job done")
    assert attempt.saved == []  # a stdio task dies with its process: nothing to resume
    assert attempt.heartbeats >= 1
    assert asyncio.run(source.call_tool("sjobs__long_job", {}, idempotency_key="k2")) == "job done"


def test_a_task_that_asks_for_input_records_failed_naming_it_and_is_cancelled(
    jobs: HttpServerProcess,
) -> None:
    source = McpToolSource([jobs.config("jobs")])
    record = _record("jobs__ask_form", '{"server":"jobs","tool":"ask_form"}')
    started = asyncio.run(source.execute_deferred_tool_call(Attempt().execution(record)))
    assert isinstance(started, ToolTaskStarted)
    record.task_id, record.task_poll_interval_seconds = started.task_id, 1
    with pytest.raises(ToolExecutionError, match="asked for input") as raised:
        asyncio.run(source.poll_tool_task(_poll(record, RecordingEventWriter())))
    assert "Who are you?" in str(raised.value)
    assert [c["task"] for c in calls(jobs.log, "tasks/cancel")] == [started.task_id]
