"""dex_agents_testing: shape matching, run logs, scenarios and processes."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from dex_agents import ToolPolicy
from dex_agents.session._time import set_clock, utc_now
from dex_agents_contracts import ToolEffect
from dex_agents_testing import (
    DexliteProcess,
    FileClock,
    ModelReply,
    RunLog,
    Scenario,
    ScriptedTool,
    ScriptedToolCall,
    WorkerProcess,
    assert_step_shape,
    wait_until,
)


def test_assert_step_shape_accepts_parallel_groups_in_any_order() -> None:
    shape = ["RunModel", "CallTool", "AwaitToolApproval", "CallTool", "ResumeTurn", "RunModel"]
    assert_step_shape(
        shape,
        ["RunModel", ("CallTool", "CallTool", "AwaitToolApproval"), "ResumeTurn", "RunModel"],
    )
    with pytest.raises(AssertionError, match="does not match"):
        assert_step_shape(shape, ["RunModel", ("CallTool", "CallTool"), "ResumeTurn", "RunModel"])
    with pytest.raises(AssertionError):
        assert_step_shape(shape, ["RunModel"])


def test_file_clock_moves_the_session_clock_and_names_a_bad_file(tmp_path: Path) -> None:
    path = tmp_path / "clock"
    clock = FileClock(path)
    assert clock.offset() == timedelta(0)  # no file yet: real time
    clock.advance(timedelta(hours=2))
    clock.advance(timedelta(minutes=30))
    assert FileClock(path).offset() == timedelta(hours=2, minutes=30)  # another process's view
    clock.install()
    try:
        ahead = utc_now() - datetime.now(UTC)
        assert timedelta(hours=2, minutes=29) < ahead <= timedelta(hours=2, minutes=30)
    finally:
        set_clock(None)
    assert abs(utc_now() - datetime.now(UTC)) < timedelta(minutes=1)
    path.write_text("soon", encoding="utf-8")
    with pytest.raises(ValueError, match="holds 'soon', not seconds"):
        clock.now()


def test_run_log_counts_across_writers(tmp_path: Path) -> None:
    log = RunLog(str(tmp_path / "runs.jsonl"))
    assert log.count("tool") == 0
    log.append("tool", name="a", attempt=1)
    RunLog(log.path).append("tool", name="a", attempt=2)
    log.append("model", call=0)
    assert log.count("tool", name="a") == 2
    assert [e["attempt"] for e in log.entries("tool")] == [1, 2]


def test_scenario_round_trips_through_a_file(tmp_path: Path) -> None:
    scenario = Scenario(
        flow_type="Roundtrip",
        script=[
            [
                ModelReply(
                    tool_calls=[
                        ScriptedToolCall(tool_call_id="c1", tool_name="t", arguments={"x": 1})
                    ]
                ),
                ModelReply(text="done", gate="/tmp/gate", fail_attempts=1),
            ]
        ],
        tools=[ScriptedTool(name="t", effect=ToolEffect.IDEMPOTENT_WRITE, output="o")],
        log_path=str(tmp_path / "log"),
        tool_policies={"t": ToolPolicy(effect=ToolEffect.READ, requires_approval=True)},
        interrupt_deadline_seconds=5.0,
        message_window_size=8,
    )
    first = scenario.save(tmp_path / "scenario.json")
    loaded = Scenario.load(first)
    assert loaded.tool_policies == scenario.tool_policies
    assert loaded.script[0][1] == scenario.script[0][1]
    again = loaded.save(tmp_path / "again.json")
    assert again.read_text() == first.read_text()


def test_scripted_runner_gates_hold_until_the_file_exists(tmp_path: Path) -> None:
    from dex_agents_testing.scripted import _wait_gate

    gate = tmp_path / "gate"

    async def scenario() -> bool:
        waiter = asyncio.create_task(_wait_gate(str(gate)))
        await asyncio.sleep(0.05)
        held = not waiter.done()
        gate.touch()
        await asyncio.wait_for(waiter, 5)
        return held

    assert asyncio.run(scenario())


def test_processes_start_kill_and_restart(tmp_path: Path) -> None:
    server = DexliteProcess(tmp_path / "db.sqlite").start()
    try:
        scenario = Scenario(flow_type="ProcessCheck", script=[], log_path=str(tmp_path / "log"))
        worker = WorkerProcess(server.address, scenario.save(tmp_path / "s.json")).start()
        pid = worker.pid
        worker.kill()
        assert worker.proc is not None
        assert worker.proc.returncode == -9
        worker.restart()
        assert worker.pid != pid
        worker.stop()
        server.kill()
        server.start()
        assert wait_until(lambda: server.proc is not None and server.proc.poll() is None)
    finally:
        server.stop()
