"""A model response with hundreds of tool calls (issue 41, items 2 and 7).

The scripted model answers once with CALLS tool calls, nine reads to one
single-attempt write, served by two Worker processes. The session runs at most
`max_tool_calls_in_flight` tool Steps at once (its lanes), a busy machine makes
calls wait instead of fail, and a Worker SIGKILLed halfway costs no write a
second run. `DEX_AGENTS_FANOUT=long` runs 2000 calls instead of 500.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections import defaultdict
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dex.dexpb import dex_pb2 as pb
from dex_agents import AgentSessionOptions, ToolPolicy
from dex_agents.options import MAX_VALUE_BYTES
from dex_agents.results import OUTCOME_UNKNOWN_RESULT
from dex_agents_contracts import AgentEvent, ToolEffect
from dex_agents_testing import (
    ModelReply,
    ScriptedQuestion,
    ScriptedTool,
    ScriptedToolCall,
    WorkerProcess,
    wait_until,
)
from helpers import Harness, HarnessFactory

CALLS = 2000 if os.environ.get("DEX_AGENTS_FANOUT") == "long" else 500
IN_FLIGHT = AgentSessionOptions().max_tool_calls_in_flight
_TURN_DEADLINE = 600.0 if CALLS > 500 else 180.0
_TOOL_STEPS = ("CallTool", "CallSingleAttemptTool", "RecordToolFailure", "RecordToolOutcomeUnknown")
_COMMIT_LIMIT_BYTES = 4 * 1024 * 1024
"""The gRPC message limit Dex clients and Workers keep: a commit must fit in one message."""


def _is_write(index: int) -> bool:
    return index % 10 == 9


def _fan_out(
    private_harness: HarnessFactory, calls: int, *, held: int | None = None, gate: str = ""
) -> Harness:
    """CALLS calls; call `held` (a write) waits in its tool for the `gate` file."""
    tool_calls = [
        ScriptedToolCall(
            tool_call_id=f"w{i}" if _is_write(i) else f"r{i}",
            tool_name=("held_write" if i == held else "write") if _is_write(i) else "read",
            arguments={"i": i},
        )
        for i in range(calls)
    ]
    write = ToolPolicy(effect=ToolEffect.NON_IDEMPOTENT_WRITE, requires_approval=False)
    return private_harness(
        script=[[ModelReply(tool_calls=tool_calls), ModelReply(text="all done")]],
        tools=[
            ScriptedTool(name="read", output="read-ok"),
            ScriptedTool(name="write", effect=ToolEffect.NON_IDEMPOTENT_WRITE, output="write-ok"),
            ScriptedTool(
                name="held_write",
                effect=ToolEffect.NON_IDEMPOTENT_WRITE,
                output="write-ok",
                gate=gate or None,
            ),
        ],
        tool_policies={"write": write, "held_write": write},
    )


@contextmanager
def _second_worker(h: Harness) -> Iterator[WorkerProcess]:
    worker = WorkerProcess(
        h.server.address, h.scenario_path, log_path=f"{h.scenario_path}.second.log"
    ).start()
    try:
        yield worker
    finally:
        worker.stop()


@contextmanager
def _busy_cores() -> Iterator[None]:
    """One process spinning on each core, started and killed by the test."""
    spinners = [
        subprocess.Popen([sys.executable, "-c", "while True: pass"])
        for _ in range(os.cpu_count() or 2)
    ]
    try:
        yield
    finally:
        for spinner in spinners:
            spinner.kill()
            spinner.wait()


def _runs(h: Harness) -> dict[str, list[dict[str, Any]]]:
    """Every real tool run, by tool call ID, in the order they started."""
    runs: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for entry in h.log.entries("tool"):
        runs[entry["tool_call_id"]].append(entry)
    return runs


def _results(h: Harness) -> dict[str, str]:
    """What the model saw for each call when the turn resumed (the last attempt's view)."""
    resumed = h.log.entries("model", call=1)
    assert resumed, "the turn never resumed"
    results: dict[str, str] = resumed[-1]["tool_results"]
    return results


def _started(events: list[AgentEvent]) -> set[str]:
    return {
        json.loads(event.payload)["tool_call_id"]
        for event in events
        if event.type == "tool_call_started"
    }


def _max_tool_steps_at_once(history: list[pb.FlowHistoryEvent]) -> int:
    """Most tool Step executions between their start and their commit at one moment."""
    edges: list[tuple[float, int]] = []
    for event in history:
        if event.WhichOneof("payload") != "step_execute_completed":
            continue
        context = event.step_execute_completed.context
        if context.step_type not in _TOOL_STEPS:
            continue
        start = context.started_time.ToNanoseconds()
        end = start + context.duration.ToNanoseconds()
        edges += [(start, 1), (end, -1)]
    running = peak = 0
    for _, change in sorted(edges):  # an end sorts before a start at the same instant
        running += change
        peak = max(peak, running)
    return peak


@dataclass(frozen=True)
class _Sizes:
    largest_commit: int
    """Bytes of the largest Execute result: everything one commit writes and schedules."""
    largest_commit_step: str
    largest_value: int
    """Bytes of the largest single value any commit stored."""
    largest_value_key: str
    peak_state: int
    """Most bytes of Attribute values stored at once: what a Step loading everything gets."""


def _sizes(history: list[pb.FlowHistoryEvent]) -> _Sizes:
    """Replays every commit's writes from the history to size commits, values and state."""
    commit, commit_step, value, value_key, peak = 0, "", 0, "", 0
    stored: dict[str, int] = {}
    for event in history:
        if event.WhichOneof("payload") != "step_execute_completed":
            continue
        completed = event.step_execute_completed
        if completed.output.ByteSize() > commit:
            commit, commit_step = completed.output.ByteSize(), completed.context.step_type
        for write in completed.output.upsert_attributes:
            if write.value.WhichOneof("kind") == "null_value":
                stored.pop(write.key, None)  # a deletion
                continue
            stored[write.key] = write.value.ByteSize()
            if write.value.ByteSize() > value:
                value, value_key = write.value.ByteSize(), write.key
        peak = max(peak, sum(stored.values()))
    return _Sizes(commit, commit_step, value, value_key, peak)


def _report(name: str, seconds: float, history: list[pb.FlowHistoryEvent]) -> _Sizes:
    sizes = _sizes(history)
    print(
        f"\n{name}: {CALLS} calls, {IN_FLIGHT} in flight: turn {seconds:.1f} s;"
        f" largest commit {sizes.largest_commit} bytes ({sizes.largest_commit_step});"
        f" largest value {sizes.largest_value} bytes ({sizes.largest_value_key});"
        f" peak stored state {sizes.peak_state} bytes;"
        f" most tool Steps at once {_max_tool_steps_at_once(history)}"
    )
    return sizes


def test_busy_cores_make_calls_wait_never_fail(
    private_harness: HarnessFactory,
) -> None:
    """Item 2: both cores spun by other processes, every call still runs exactly once."""
    h = _fan_out(private_harness, CALLS)
    with _second_worker(h), _busy_cores():
        started = time.monotonic()
        session = h.start("go")
        done = h.wait_idle(session, 1, timeout=_TURN_DEADLINE)
        seconds = time.monotonic() - started
    assert done.messages[-1].text == "all done"
    runs = _runs(h)
    assert sorted(runs) == sorted(f"w{i}" if _is_write(i) else f"r{i}" for i in range(CALLS)), (
        "a call never ran"
    )
    assert {call: len(entries) for call, entries in runs.items() if len(entries) != 1} == {}
    results = _results(h)
    assert [call for call, result in results.items() if result == OUTCOME_UNKNOWN_RESULT] == []
    assert {results[f"w{i}"] for i in range(CALLS) if _is_write(i)} == {"write-ok"}
    history = h.history(session)
    failed = [e for e in history if e.WhichOneof("payload") == "step_execute_failed"]
    assert failed == [], "an attempt failed although no Worker died"
    assert _max_tool_steps_at_once(history) == IN_FLIGHT
    sizes = _report("busy cores", seconds, history)
    assert sizes.largest_value <= MAX_VALUE_BYTES
    assert sizes.largest_commit <= _COMMIT_LIMIT_BYTES


def test_a_worker_sigkilled_halfway_costs_no_write_a_second_run(
    private_harness: HarnessFactory, tmp_path: Path
) -> None:
    """Item 7: a Worker dies halfway through the calls; the turn completes regardless.

    The write in the middle of the response is held in its tool, and its Worker is
    SIGKILLed there (with whatever else it runs). A read runs again only when its
    earlier run was on the killed Worker, a write never runs twice, and a write
    recorded outcome_unknown is one whose tool_call_started Dex had.
    """
    held = CALLS // 2 - 1
    assert _is_write(held)
    gate = tmp_path / "held-write-gate"
    h = _fan_out(private_harness, CALLS, held=held, gate=str(gate))
    with _second_worker(h) as second:
        started = time.monotonic()
        session = h.start("go")
        wait_until(
            lambda: h.log.count("tool", tool_call_id=f"w{held}") == 1,
            timeout=_TURN_DEADLINE,
            what="the held write to start",
        )
        killed = h.log.entries("tool", tool_call_id=f"w{held}")[0]["pid"]
        victim = h.worker if h.worker.pid == killed else second
        assert victim.pid == killed
        victim.restart()  # SIGKILL its process group mid-fan-out, then a fresh Worker
        gate.touch()  # a second run of the held write would now finish
        done = h.wait_idle(session, 1, timeout=_TURN_DEADLINE)
        seconds = time.monotonic() - started
    assert done.messages[-1].text == "all done"
    runs = _runs(h)
    results = _results(h)
    assert len(results) == CALLS
    assert results[f"w{held}"] == OUTCOME_UNKNOWN_RESULT
    assert [e["pid"] for e in runs[f"w{held}"]] == [killed]
    events = h.events(session, "turn_completed")
    started_calls = _started(events)
    for i in range(CALLS):
        call = f"w{i}" if _is_write(i) else f"r{i}"
        entries = runs.get(call, [])
        if _is_write(i):
            assert len(entries) <= 1, f"{call} ran {len(entries)} times"
            if results[call] == OUTCOME_UNKNOWN_RESULT:
                assert call in started_calls, f"{call} is unknown but never started"
                assert all(e["pid"] == killed for e in entries), (
                    f"{call} was not on the killed Worker"
                )
            else:
                assert results[call] == "write-ok"
                assert len(entries) == 1
        else:
            assert results[call] == "read-ok"
            assert entries, f"{call} never ran"
            earlier = entries[:-1]
            assert all(e["pid"] == killed for e in earlier), f"{call} re-ran without a kill"
            attempts = [e["attempt"] for e in entries]
            assert attempts == sorted(set(attempts)), f"{call} ran twice on one attempt"
    history = h.history(session)
    assert _max_tool_steps_at_once(history) <= IN_FLIGHT
    sizes = _report("SIGKILL halfway", seconds, history)
    reran = sum(1 for call, entries in runs.items() if call.startswith("r") and len(entries) > 1)
    unknown = sum(1 for result in results.values() if result == OUTCOME_UNKNOWN_RESULT)
    print(f"the kill: {reran} reads ran again, {unknown} writes recorded outcome_unknown")
    assert sizes.largest_value <= MAX_VALUE_BYTES
    assert sizes.largest_commit <= _COMMIT_LIMIT_BYTES


def test_lanes_start_each_call_once_around_questions_and_approvals(
    private_harness: HarnessFactory,
) -> None:
    """Two lanes over five plain calls; a call that asks a question runs its tool Step
    twice (before and after the answer) but starts the next call of its lane once."""
    h = private_harness(
        script=[
            [
                ModelReply(
                    tool_calls=[
                        ScriptedToolCall(tool_call_id="a1", tool_name="ask"),
                        ScriptedToolCall(tool_call_id="p1", tool_name="pay"),
                        ScriptedToolCall(tool_call_id="r1", tool_name="read"),
                        ScriptedToolCall(tool_call_id="r2", tool_name="read"),
                        ScriptedToolCall(tool_call_id="r3", tool_name="read"),
                        ScriptedToolCall(tool_call_id="r4", tool_name="read"),
                    ]
                ),
                ModelReply(text="done"),
            ]
        ],
        tools=[
            ScriptedTool(name="ask", questions=[ScriptedQuestion(question="which?")]),
            ScriptedTool(name="pay", effect=ToolEffect.NON_IDEMPOTENT_WRITE, output="paid"),
            ScriptedTool(name="read", output="read-ok"),
        ],
        tool_policies={
            "pay": ToolPolicy(effect=ToolEffect.NON_IDEMPOTENT_WRITE, requires_approval=True)
        },
        max_tool_calls_in_flight=2,
    )
    session = h.start("go")
    h.wait_snapshot(
        session,
        lambda s: {i.interrupt_id for i in s.pending_interrupts} == {"p1", "a1-input-1"},
        what="the approval and the tool's question",
    )
    # The lanes went on past the question: every read ran while both still wait.
    wait_until(lambda: h.log.count("tool", name="read") == 4, what="the reads")
    assert h.client.answer_question(session, "a1-input-1", "that one")
    assert h.client.resolve_interrupt(session, "p1", approved=True)
    done = h.wait_idle(session, 1)
    assert done.messages[-1].text == "done"
    assert {call: len(entries) for call, entries in _runs(h).items()} == {
        "a1": 2,
        "p1": 1,
        "r1": 1,
        "r2": 1,
        "r3": 1,
        "r4": 1,
    }
    assert _max_tool_steps_at_once(h.history(session)) <= 2
