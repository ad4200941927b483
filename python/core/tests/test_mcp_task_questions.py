"""An MCP task in input_required as a session question, against a real HTTP server.

`ask_job`'s task asks one enum field; the source is driven as PollToolTask
drives it: a poll asks, the poll after the resolution sends it with
`tasks/update` (first attempt only, to the request asked), and the next
completes. The server logs every `tasks/*` request.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from dex_agents._runner.capabilities import ToolTaskPending, ToolTaskPoll
from dex_agents.mcp import McpToolCallInterruptedError, McpToolSource
from dex_agents.mcp._questions import Continuation, fingerprint, task_question
from dex_agents.offline import NullEventWriter, RecordingEventWriter
from dex_agents.runner import (
    DeferredToolExecution,
    ToolExecutionResult,
    ToolInputRequested,
    ToolTaskStarted,
)
from dex_agents_contracts import AgentToolCall, QuestionAnswer, QuestionResolution
from mcp_support import SERVERS_SCRIPT, HttpServerProcess, calls, http_server

REFERENCE = '{"server":"jobs","tool":"ask_job"}'


@pytest.fixture
def jobs(tmp_path: Path) -> Iterator[HttpServerProcess]:
    with http_server(SERVERS_SCRIPT, tmp_path / "jobs.jsonl", "tasks") as server:
        yield server


class Beats:
    def __init__(self) -> None:
        self.count = 0

    async def __call__(self) -> None:
        self.count += 1


def _started(source: McpToolSource, key: str = "f/t/c1") -> AgentToolCall:
    record = AgentToolCall(
        tool_call_id="c1",
        turn_id="t",
        tool_name="jobs__ask_job",
        arguments="{}",
        tool_source_reference=REFERENCE,
    )

    async def save(_: str) -> None:
        return None

    execution = DeferredToolExecution(
        flow_id="f",
        turn_id="t",
        tool_call=record,
        idempotency_key=key,
        attempt=1,
        events=NullEventWriter(),
        heartbeat=Beats(),
        save_heartbeat_checkpoint=save,
        supports_tool_tasks=True,
    )
    started = asyncio.run(source.execute_deferred_tool_call(execution))
    assert isinstance(started, ToolTaskStarted)
    record.task_id, record.task_poll_interval_seconds = started.task_id, 1
    return record


def _poll(
    source: McpToolSource,
    record: AgentToolCall,
    *,
    answer: QuestionAnswer | None = None,
    attempt: int = 1,
    beats: Beats | None = None,
    events: RecordingEventWriter | None = None,
) -> object:
    poll = ToolTaskPoll(
        flow_id="f",
        tool_call=record,
        idempotency_key="f/t/c1",
        attempt=attempt,
        heartbeat=beats or Beats(),
        input_answers=(answer,) if answer else (),
        events=events or RecordingEventWriter(),
        pending_answer=answer,
    )
    return asyncio.run(source.poll_tool_task(poll))


def _answer(
    text: str, resolution: QuestionResolution = QuestionResolution.ANSWERED
) -> QuestionAnswer:
    return QuestionAnswer(
        interrupt_id="c1-input-1", question="Which colour?", answer=text, resolution=resolution
    )


def _ask(source: McpToolSource, record: AgentToolCall) -> ToolInputRequested:
    asked = _poll(source, record)
    assert isinstance(asked, ToolInputRequested)
    record.input_continuation = asked.continuation
    return asked


def test_the_question_names_the_request_and_an_answer_is_sent_once_then_completes(
    jobs: HttpServerProcess,
) -> None:
    source = McpToolSource([jobs.config("jobs")])
    record = _started(source)
    events = RecordingEventWriter()
    asked = _poll(source, record, events=events)
    assert isinstance(asked, ToolInputRequested)
    assert (asked.question, tuple(asked.choices), asked.allows_free_text) == (
        "Which colour?",
        ("red", "blue"),
        False,
    )
    (request,) = json.loads((jobs.log.with_suffix(".tasks") / (record.task_id or "")).read_text())[
        "inputRequests"
    ].values()
    named = Continuation.decode(asked.continuation)
    assert (named.key, named.fingerprint) == ("confirm-1", fingerprint(request))
    assert [p["status"] for t, p in events.events if t == "mcp.task_status"] == ["input_required"]  # type: ignore[index] # raw events are parsed JSON
    record.input_continuation = asked.continuation
    beats = Beats()
    before = time.time()
    sent = _poll(source, record, answer=_answer("red"), beats=beats)
    assert isinstance(sent, ToolTaskPending)
    assert beats.count == 1
    after = Continuation.decode(sent.continuation)
    assert (after.key, after.fingerprint) == (named.key, named.fingerprint)
    assert after.sent_at is not None
    assert before <= after.sent_at <= time.time()
    (update,) = calls(jobs.log, "tasks/update")
    assert update["responses"] == {"confirm-1": {"action": "accept", "content": {"colour": "red"}}}
    record.input_continuation = sent.continuation
    done = _poll(source, record)
    assert done == ToolExecutionResult(output='chose {"colour": "red"}')
    assert len(calls(jobs.log, "tasks/update")) == 1


def test_a_retried_attempt_asks_again_and_sends_nothing(jobs: HttpServerProcess) -> None:
    source = McpToolSource([jobs.config("jobs")])
    record = _started(source)
    _ask(source, record)
    again = _poll(source, record, answer=_answer("red"), attempt=2)
    assert isinstance(again, ToolInputRequested)
    assert again.question == "Which colour?"
    assert calls(jobs.log, "tasks/update") == []


def test_a_changed_request_under_the_same_key_never_gets_the_old_answer(
    jobs: HttpServerProcess,
) -> None:
    source = McpToolSource([jobs.config("jobs")])
    record = _started(source)
    _ask(source, record)
    path = jobs.log.with_suffix(".tasks") / (record.task_id or "")
    state = json.loads(path.read_text())
    state["inputRequests"]["confirm-1"]["params"]["message"] = "Which colour now?"
    path.write_text(json.dumps(state))
    asked = _poll(source, record, answer=_answer("red"))
    assert isinstance(asked, ToolInputRequested)
    assert asked.question == "Which colour now?"
    assert calls(jobs.log, "tasks/update") == []


def test_a_sent_request_still_listed_reads_as_working_for_ten_seconds(
    jobs: HttpServerProcess,
) -> None:
    jobs.log.with_suffix(".slow").touch()  # the server keeps listing the request
    source = McpToolSource([jobs.config("jobs")])
    record = _started(source)
    _ask(source, record)
    sent = _poll(source, record, answer=_answer("blue"))
    assert isinstance(sent, ToolTaskPending)
    assert sent.poll_interval_seconds == 1
    record.input_continuation = sent.continuation
    working = _poll(source, record)
    assert isinstance(working, ToolTaskPending)
    assert working.continuation == sent.continuation
    # Past the ten seconds, the same request is a new question.
    old = Continuation.decode(sent.continuation)
    record.input_continuation = Continuation(
        status=old.status, key=old.key, fingerprint=old.fingerprint, sent_at=time.time() - 11
    ).encode()
    assert isinstance(_poll(source, record), ToolInputRequested)
    assert len(calls(jobs.log, "tasks/update")) == 1


def test_a_decline_and_a_passed_deadline_send_decline_and_cancel(
    jobs: HttpServerProcess,
) -> None:
    source = McpToolSource([jobs.config("jobs")])
    for resolution, action in (
        (QuestionResolution.DECLINED, "decline"),
        (QuestionResolution.DEADLINE_PASSED, "cancel"),
    ):
        record = _started(source, key=action)
        _ask(source, record)
        assert isinstance(_poll(source, record, answer=_answer("x", resolution)), ToolTaskPending)
        assert calls(jobs.log, "tasks/update")[-1]["responses"] == {"confirm-1": {"action": action}}


def test_a_decline_the_server_refuses_cancels_the_task_and_fails_the_poll(
    jobs: HttpServerProcess,
) -> None:
    jobs.log.with_suffix(".refuse").touch()
    source = McpToolSource([jobs.config("jobs")])
    record = _started(source)
    _ask(source, record)
    with pytest.raises(McpToolCallInterruptedError, match="tasks/update failed"):
        _poll(source, record, answer=_answer("no", QuestionResolution.DECLINED))
    assert [c["task"] for c in calls(jobs.log, "tasks/cancel")] == [record.task_id]


def test_only_one_simple_form_field_is_a_question() -> None:
    def form(properties: dict[str, object], method: str = "elicitation/create") -> dict[str, Any]:
        schema = {"type": "object", "properties": properties}
        return {"r": {"method": method, "params": {"mode": "form", "requestedSchema": schema}}}

    assert task_question(form({"a": {"type": "string"}})) is not None
    flag = task_question(form({"a": {"type": "boolean"}}))
    assert flag is not None
    assert flag.choices == ("yes", "no")
    one_of = task_question(form({"a": {"oneOf": [{"const": "x", "title": "X"}]}}))
    assert one_of is not None
    assert one_of.choices == ("x",)
    assert task_question(form({"a": {"type": "integer"}})) is None
    assert task_question(form({"a": {"type": "string"}, "b": {"type": "string"}})) is None
    assert task_question(form({"a": {"type": "string"}}, "sampling/createMessage")) is None
    assert task_question(None) is None
