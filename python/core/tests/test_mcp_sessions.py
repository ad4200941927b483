"""MCP tools in durable sessions: real MCP servers, dexlite and real Worker processes.

The Worker's Flow comes from `mcp_support.flows:flow`; its servers are
`mcp_support/servers.py` children (stdio, started per request by the Worker) or
a loopback Streamable HTTP process. Each server logs every call it receives,
with the idempotency key from `_meta`, so the tests count what reached it.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from dex_agents_contracts import AgentToolCall, ToolEffect
from dex_agents_testing import assert_step_shape, wait_until
from helpers import Harness
from mcp_support import SERVERS_SCRIPT, HttpServerProcess, calls, http_server
from mcp_support.flows import call

FACTORY = "mcp_support.flows:flow"
MakeHarness = Callable[..., Harness]
TASK_STATUS = "mcp.task_status"  # the event a task poll writes when the status changed


def _stdio(name: str, log: Path, variant: str = "basic") -> dict[str, Any]:
    return {"kind": "stdio", "name": name, "log": str(log), "variant": variant}


def _tool_events(h: Harness, session: str, turns: int = 1) -> dict[str, dict[str, Any]]:
    """`tool_call_deferred` and `tool_call_finished` payloads by `<type>:<tool_call_id>`,
    each with its event's turn_id (records leave the snapshot when their turn ends)."""
    found: dict[str, dict[str, Any]] = {}
    for event in h.events(session, "turn_completed", count=turns):
        if event.type in ("tool_call_deferred", "tool_call_finished"):
            payload = json.loads(event.payload)
            found[f"{event.type}:{payload['tool_call_id']}"] = {**payload, "turn": event.turn_id}
    return found


def _running(h: Harness, session: str, tool_call_id: str) -> AgentToolCall:
    def record() -> AgentToolCall | None:
        snapshot = h.snapshot(session)
        return next((t for t in snapshot.tool_calls if t.tool_call_id == tool_call_id), None)

    return wait_until(record, timeout=60, what=f"the record of {tool_call_id}")


def test_a_read_tool_over_stdio_is_one_call_step_with_the_key_and_reference(
    factory_harness: MakeHarness, tmp_path: Path
) -> None:
    log = tmp_path / "basic.jsonl"
    h = factory_harness(
        FACTORY,
        {
            "servers": [
                _stdio("basic", log),
                _stdio("alt", tmp_path / "alt.jsonl", "alt"),
                _stdio("missing", tmp_path / "missing.jsonl", "no-such-variant"),
            ],
            "app_tools": ["alt__lookup"],
        },
    )
    session = h.start(call("basic__lookup", city="Oslo"))
    done = h.wait_idle(session, 1, timeout=90)
    assert done.messages[-1].text == "done: basic: sunny in Oslo"
    events = _tool_events(h, session)
    assert events["tool_call_deferred:c1"]["effect"] == "read"
    assert events["tool_call_finished:c1"]["status"] == "succeeded"
    (logged,) = calls(log, "lookup")
    assert logged["key"] == f"{session}/{events['tool_call_finished:c1']['turn']}/c1"
    assert_step_shape(h.history(session), ["RunModel", "CallTool", "ResumeTurn", "RunModel"])
    offered = h.log.entries("model_call")[0]["tools"]
    # The application's own alt__lookup wins over the alt server's; a server that
    # cannot be listed contributes nothing.
    assert offered.count("alt__lookup") == 1
    assert "alt__set_flag" in offered
    assert "basic__odd__name" in offered
    assert not [name for name in offered if name.startswith("missing__")]


def test_an_idempotent_write_retried_after_a_worker_kill_sends_the_same_key(
    factory_harness: MakeHarness, tmp_path: Path
) -> None:
    log = tmp_path / "basic.jsonl"
    h = factory_harness(FACTORY, {"servers": [_stdio("basic", log)]})
    session = h.start(call("basic__set_flag", name="blue"))
    # The first call reached the server and blocks there: kill the Worker mid-call.
    wait_until(lambda: len(calls(log, "set_flag")) == 1, timeout=60, what="the first call")
    record = _running(h, session, "c1")
    assert record.effect is ToolEffect.IDEMPOTENT_WRITE
    assert record.tool_source_reference == '{"server":"basic","tool":"set_flag"}'
    h.restart_worker()
    done = h.wait_idle(session, 1, timeout=90)
    log.with_suffix(".gate").touch()  # release the orphaned first call, if it still waits
    assert done.messages[-1].text == "done: flag blue set"
    assert _tool_events(h, session)["tool_call_finished:c1"]["status"] == "succeeded"
    keys = [entry["key"] for entry in calls(log, "set_flag")]
    assert keys == [f"{session}/{record.turn_id}/c1"] * 2


def test_a_non_idempotent_write_interrupted_by_a_worker_kill_is_outcome_unknown_and_never_resent(
    factory_harness: MakeHarness, tmp_path: Path
) -> None:
    log = tmp_path / "basic.jsonl"
    h = factory_harness(
        FACTORY,
        {
            "servers": [_stdio("basic", log)],
            # An explicit policy wins over the (absent) annotations; no approval, to
            # keep the test on the call.
            "tool_policies": {
                "basic__send_email": {
                    "effect": "non_idempotent_write",
                    "requires_approval": False,
                }
            },
        },
    )
    session = h.start(call("basic__send_email", to="ann@example.com"))
    wait_until(lambda: calls(log, "send_email"), timeout=60, what="the call to reach the server")
    h.restart_worker()
    h.wait_idle(session, 1, timeout=90)
    log.with_suffix(".gate").touch()
    assert _tool_events(h, session)["tool_call_finished:c1"]["status"] == "outcome_unknown"
    assert len(calls(log, "send_email")) == 1
    # The killed CallSingleAttemptTool never completed: its failure route recorded the call.
    assert_step_shape(
        h.history(session), ["RunModel", "RecordToolOutcomeUnknown", "ResumeTurn", "RunModel"]
    )


def test_an_http_server_killed_between_listing_and_calling_fails_the_call_then_recovers(
    factory_harness: MakeHarness, tmp_path: Path
) -> None:
    log = tmp_path / "web.jsonl"
    server = HttpServerProcess(SERVERS_SCRIPT, log).start()
    try:
        h = factory_harness(
            FACTORY, {"servers": [{"kind": "http", "name": "web", "url": server.url}]}
        )
        session = h.start("hello")  # lists the tools in the Worker
        h.wait_idle(session, 1, timeout=60)
        assert "web__lookup" in h.log.entries("model_call")[0]["tools"]
        server.kill()
        h.client.send_user_message(session, call("web__lookup", city="Rome"))
        failed = h.wait_idle(session, 2, timeout=60)
        assert "could not be reached, so 'lookup' was not called" in (
            failed.messages[-1].text or ""
        )
        assert _tool_events(h, session, 2)["tool_call_finished:c2"]["status"] == "failed"
        server.start()  # the same port: the cached listing still holds
        h.client.send_user_message(session, call("web__lookup", city="Rome"))
        done = h.wait_idle(session, 3, timeout=60)
        assert done.messages[-1].text == "done: basic: sunny in Rome"
        assert len(calls(log, "lookup")) == 1
    finally:
        server.kill()


def test_a_session_cannot_name_an_mcp_server(factory_harness: MakeHarness, tmp_path: Path) -> None:
    evil_log = tmp_path / "evil.jsonl"
    with http_server(SERVERS_SCRIPT, evil_log) as evil:
        h = factory_harness(FACTORY, {"servers": [_stdio("basic", tmp_path / "basic.jsonl")]})
        session = h.start(
            call("evil__lookup", city="Oslo"),
            session_settings={"mcp_servers": [{"name": "evil", "url": evil.url}]},
        )
        ended = h.wait_snapshot(
            session,
            lambda s: s.state is not None and s.state.turn_count >= 1,
            timeout=90,
            what="the turn to end",
        )
        assert not [t for t in ended.tool_calls if t.tool_name.startswith("evil__")]
        assert "evil__lookup" not in h.log.entries("model_call")[0]["tools"]
    assert calls(evil_log) == []


def _tasks_harness(factory_harness: MakeHarness, jobs: HttpServerProcess) -> Harness:
    return factory_harness(
        FACTORY,
        {"servers": [{"kind": "http", "name": "jobs", "url": jobs.url}]},
    )


def test_a_task_survives_worker_kills_mid_call_and_mid_poll_as_one_task_reporting_working_once(
    factory_harness: MakeHarness, tmp_path: Path
) -> None:
    log = tmp_path / "jobs.jsonl"
    log.with_suffix(".hold").touch()  # the first tools/call answers only when released
    log.with_suffix(".hold_poll").touch()  # so does every tasks/get
    with http_server(SERVERS_SCRIPT, log, "tasks") as jobs:
        h = _tasks_harness(factory_harness, jobs)
        session = h.start(call("jobs__long_job"))
        wait_until(lambda: calls(log, "long_job"), timeout=60, what="the task to be created")
        h.restart_worker()  # killed after tools/call reached the server, before its answer
        log.with_suffix(".release").touch()
        wait_until(lambda: calls(log, "tasks/get"), timeout=90, what="the task to be polled")
        # The first PollToolTask waits for its tasks/get answer, which the server
        # holds: the kill lands before that attempt can see a status or commit.
        h.restart_worker()
        log.with_suffix(".release_poll").touch()
        # The retried poll (the second tasks/get) sees "working" and writes its
        # event; the third sees "working" again and must write nothing. A get
        # decides its answer before it is logged, so the task completes only
        # after both.
        wait_until(lambda: len(calls(log, "tasks/get")) >= 3, timeout=90, what="a third poll")
        log.with_suffix(".done").touch()
        done = h.wait_idle(session, 1, timeout=120)
    assert done.messages[-1].text == "done: job done"
    tasks = {entry["task"] for entry in calls(log, "long_job")}
    assert len(tasks) == 1  # the retried call's key named the first call's task
    (task,) = tasks
    events = _tool_events(h, session)
    assert events["tool_call_finished:c1"]["status"] == "succeeded"
    stream = [
        (e.type, json.loads(e.payload))
        for e in h.events(session, "turn_completed")
        if e.type in ("tool_call_deferred", TASK_STATUS, "tool_call_finished")
    ]
    # One status event: the killed attempt never got an answer, its retry saw the
    # status change, the polls after it saw no change. It sits between the call's
    # deferral and its result.
    assert [(kind, p.get("tool_call_id")) for kind, p in stream] == [
        ("tool_call_deferred", "c1"),
        (TASK_STATUS, None),
        ("tool_call_finished", "c1"),
    ]
    assert stream[1][1] == {"task_id": task, "status": "working", "message": None}


def test_cancel_turn_sends_tasks_cancel(factory_harness: MakeHarness, tmp_path: Path) -> None:
    log = tmp_path / "jobs.jsonl"
    with http_server(SERVERS_SCRIPT, log, "tasks") as jobs:
        h = _tasks_harness(factory_harness, jobs)
        session = h.start(call("jobs__long_job"))
        record = wait_until(
            lambda: next((t for t in h.snapshot(session).tool_calls if t.task_id), None),
            timeout=90,
            what="the task to start",
        )
        assert h.client.cancel_turn(session, record.turn_id)
        wait_until(lambda: calls(log, "tasks/cancel"), timeout=90, what="tasks/cancel")
    assert [c["task"] for c in calls(log, "tasks/cancel")] == [record.task_id]
