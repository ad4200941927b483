"""MCP tasks in durable Stepwise sessions: real MCP servers, dexlite and real Worker processes.

The plain `StepwiseRunner` (`mcp_support.flows:flow`) hands a Streamable HTTP
server's task to PollToolTask Steps itself; a stdio server's task is followed
inside the tool Step. `ask_job`'s task asks one enum field, which becomes a
session question answered through answer_question.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

from dex_agents_contracts import AgentSnapshot
from dex_agents_testing import step_types, wait_until
from helpers import Harness
from mcp_support import SERVERS_SCRIPT, HttpServerProcess, calls, http_server
from mcp_support.flows import call

FACTORY = "mcp_support.flows:flow"
MakeHarness = Callable[..., Harness]


def _harness(factory_harness: MakeHarness, jobs: HttpServerProcess) -> Harness:
    servers = [{"kind": "http", "name": "jobs", "url": jobs.url}]
    return factory_harness(FACTORY, {"servers": servers})


def _asked(h: Harness, session: str) -> AgentSnapshot:
    return h.wait_snapshot(
        session,
        lambda s: any(i.interrupt_id == "c1-input-1" for i in s.pending_interrupts),
        timeout=90,
        what="the task's question",
    )


def _finished(h: Harness, session: str) -> dict[str, Any]:
    (payload,) = [
        json.loads(e.payload)
        for e in h.events(session, "turn_completed")
        if e.type == "tool_call_finished"
    ]
    return payload  # type: ignore[no-any-return] # a parsed JSON object


def test_an_input_required_task_answered_through_answer_question_completes_the_turn(
    factory_harness: MakeHarness, tmp_path: Path
) -> None:
    log = tmp_path / "jobs.jsonl"
    with http_server(SERVERS_SCRIPT, log, "tasks") as jobs:
        h = _harness(factory_harness, jobs)
        session = h.start(call("jobs__ask_job"))
        asked = _asked(h, session)
        (interrupt,) = asked.pending_interrupts
        assert interrupt.question == "Which colour?"
        assert list(interrupt.choices) == ["red", "blue"]
        assert h.client.answer_question(session, "c1-input-1", "red")
        done = h.wait_idle(session, 1, timeout=90)
    assert done.messages[-1].text == 'done: chose {"colour": "red"}'
    assert _finished(h, session)["status"] == "succeeded"
    (update,) = calls(log, "tasks/update")
    assert update["responses"] == {"confirm-1": {"action": "accept", "content": {"colour": "red"}}}
    steps = step_types(h.history(session))
    asked_at = steps.index("AwaitQuestionAnswer")
    assert steps.index("CallTool") < steps.index("PollToolTask") < asked_at
    assert steps.count("PollToolTask") >= 2  # one asked, one handed the answer over


def test_a_declined_task_question_sends_decline(
    factory_harness: MakeHarness, tmp_path: Path
) -> None:
    log = tmp_path / "jobs.jsonl"
    with http_server(SERVERS_SCRIPT, log, "tasks") as jobs:
        h = _harness(factory_harness, jobs)
        session = h.start(call("jobs__ask_job"))
        _asked(h, session)
        assert h.client.resolve_interrupt(session, "c1-input-1", approved=False)
        done = h.wait_idle(session, 1, timeout=90)
    assert done.messages[-1].text == "done: no choice (decline)"
    assert [c["responses"] for c in calls(log, "tasks/update")] == [
        {"confirm-1": {"action": "decline"}}
    ]


def test_a_task_the_server_forgot_is_recorded_by_effect(
    factory_harness: MakeHarness, tmp_path: Path
) -> None:
    log = tmp_path / "jobs.jsonl"
    with http_server(SERVERS_SCRIPT, log, "tasks") as jobs:
        h = _harness(factory_harness, jobs)
        session = h.start(call("jobs__long_job"))
        wait_until(lambda: calls(log, "tasks/get"), timeout=90, what="the first poll")
        shutil.rmtree(log.with_suffix(".tasks"))
        h.wait_idle(session, 1, timeout=120)
    # long_job is an idempotent write: a task nobody can follow may have run.
    assert _finished(h, session)["status"] == "outcome_unknown"
    assert "RecordToolFailure" in step_types(h.history(session))


def test_a_stdio_task_is_followed_inside_the_tool_step(
    factory_harness: MakeHarness, tmp_path: Path
) -> None:
    log = tmp_path / "sjobs.jsonl"
    log.with_suffix(".done").touch()
    entry = {"kind": "stdio", "name": "sjobs", "log": str(log), "variant": "tasks"}
    h = factory_harness(FACTORY, {"servers": [entry]})
    session = h.start(call("sjobs__long_job"))
    done = h.wait_idle(session, 1, timeout=90)
    assert done.messages[-1].text == "done: job done"
    steps = step_types(h.history(session))
    assert "CallTool" in steps
    assert "PollToolTask" not in steps
    assert len(calls(log, "tasks/get")) >= 1
