"""RemoteRunner through the real path: dexlite, a Python Worker child whose session
Flow runs on a `RemoteRunner`, and the Node sidecar serving the scripted runner of
typescript/core/src/testing with `serveRunners`. Sidecar and Worker are SIGKILLed
mid-call; the sidecar log (JSON lines synced per run) counts what ran in Node."""

from __future__ import annotations

import json
import os
import pickle
import signal
import subprocess
import sys
import uuid
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pytest
from dex_agents import (
    AgentSessionClient,
    AgentSessionFlow,
    AgentSessionOptions,
    RemoteRunner,
    RemoteRunnerError,
    RemoteRunnerUnavailableError,
    ToolPolicy,
)
from dex_agents.results import OUTCOME_UNKNOWN_RESULT
from dex_agents_contracts import AgentSnapshot, AgentStatus, MessageRole, ToolEffect
from dex_agents_testing.history import assert_step_shape
from dex_agents_testing.processes import DexliteProcess, child_env, free_port, wait_until
from remote_harness import Remote, read_runs, running_remote, wait_for_runs

SCRIPT = Path(__file__).with_name("remote_flows.py")


@pytest.fixture
def remote(
    dexlite: DexliteProcess, core_package: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Remote]:
    with running_remote(
        dexlite, core_package, tmp_path, monkeypatch, script=SCRIPT, flow_type_prefix="Remote"
    ) as (sidecar, app):
        yield Remote(sidecar, app)


def test_tool_turn_runs_each_call_in_node_and_streams_its_text(remote: Remote) -> None:
    app = remote.app
    session = app.start("weather in Paris")
    snapshot = app.wait_idle(session, 1)
    assert [m.role for m in snapshot.messages] == [
        MessageRole.USER,
        MessageRole.ASSISTANT,
        MessageRole.TOOL,
        MessageRole.ASSISTANT,
    ]
    assert snapshot.messages[2].tool_output == "sunny in Paris"
    assert snapshot.messages[-1].text == "Results: get_weather=sunny in Paris"
    assert snapshot.usage is not None
    assert snapshot.usage.model_calls == 2
    assert_step_shape(
        app.history(session), ["RunModel", "CallTool", "ResumeTurn", "RunModel"], turn=0
    )
    (run,) = remote.runs("tool", name="get_weather")
    assert run["key"] == f"{session}/turn-1/w1"
    # The text_delta the runner wrote in Node reached the AgentEvents Stream.
    events = app.events(session, "turn_completed")
    deltas = [json.loads(e.payload)["text"] for e in events if e.type == "text_delta"]
    assert deltas == ["Results: get_weather=sunny in Paris"]

    assert app.client.send_user_message(session, "thanks")
    second = app.wait_idle(session, 2)
    assert second.messages[-1].text == "I have seen 5 messages."


def test_cancel_turn_aborts_the_running_model_call_in_node(remote: Remote) -> None:
    app = remote.app
    session = app.start("slow")
    remote.wait_runs("model", 1, prompt="slow")
    assert app.client.cancel_turn(session)
    # The Step's cancellation reached Node as the runner's cancellationSignal.
    (aborted,) = remote.wait_runs("model_aborted", 1)
    assert aborted["attempt"] == 1
    snapshot = app.wait_idle(session, 1)
    assert snapshot.state is not None
    assert snapshot.state.last_turn_error is None
    assert len(remote.runs("model", prompt="slow")) == 1


def test_sigkill_of_the_sidecar_mid_run_model_reruns_only_that_call(remote: Remote) -> None:
    app = remote.app
    session = app.start("slow")
    remote.wait_runs("model", 1, prompt="slow")
    remote.restart_sidecar()
    second = remote.wait_runs("model", 2, prompt="slow")
    assert [r["attempt"] for r in second] == [1, 2]
    remote.open_gate("model")
    snapshot = app.wait_idle(session, 1)
    assert snapshot.messages[-1].text == "I have seen 1 messages."
    assert len(remote.runs("model")) == 2


def test_sigkill_of_the_sidecar_mid_single_attempt_tool_records_outcome_unknown(
    remote: Remote,
) -> None:
    app = remote.app
    session = app.start("charge")
    remote.wait_runs("tool", 1, name="charge")
    remote.restart_sidecar()
    remote.open_gate("charge")  # a second run would now finish at once
    snapshot = app.wait_idle(session, 1, timeout=60)
    assert snapshot.messages[-1].text == f"Results: charge={OUTCOME_UNKNOWN_RESULT}"
    assert_step_shape(
        app.history(session), ["RunModel", "RecordToolOutcomeUnknown", "ResumeTurn", "RunModel"]
    )
    assert len(remote.runs("tool", name="charge")) == 1


def test_sigkill_of_the_python_worker_mid_run_model_aborts_node_and_reruns(
    remote: Remote,
) -> None:
    app = remote.app
    session = app.start("slow")
    remote.wait_runs("model", 1, prompt="slow")
    app.kill_worker()
    # The dead Worker's connection closed: Node aborted the running model call.
    remote.wait_runs("model_aborted", 1)
    app.start_worker()
    remote.wait_runs("model", 2, prompt="slow")
    remote.open_gate("model")
    snapshot = app.wait_idle(session, 1)
    assert snapshot.messages[-1].text == "I have seen 1 messages."


def test_a_runner_that_throws_fails_the_turn_with_its_error(remote: Remote) -> None:
    app = remote.app
    session = app.start("boom")
    snapshot = app.wait(
        session,
        "the failed turn",
        lambda s: s.state is not None and s.state.last_turn_error is not None,
    )
    assert snapshot.state is not None
    error = snapshot.state.last_turn_error or ""
    assert "`RunModelStep`" in error
    assert "raised RangeError: the scripted model failed" in error
    # Only the Step's own policy retried it: three attempts, each ran once in Node.
    assert [r["attempt"] for r in remote.runs("model", prompt="boom")] == [1, 2, 3]


def test_a_turn_failed_thrown_in_node_ends_the_turn_without_a_retry(remote: Remote) -> None:
    """The sidecar reports the kit's TurnFailed by name; RunModel ends the turn as for a
    runner in process, instead of retrying what would fail again."""
    app = remote.app
    session = app.start("refuse")
    snapshot = app.wait(
        session,
        "the failed turn",
        lambda s: s.state is not None and s.state.last_turn_error is not None,
    )
    assert snapshot.state is not None
    assert snapshot.state.last_turn_error == "the scripted framework refused the turn"
    assert [r["attempt"] for r in remote.runs("model", prompt="refuse")] == [1]
    assert_step_shape(app.history(session), ["RunModel"])


def test_a_sidecar_gone_for_good_fails_the_turn_clearly(remote: Remote) -> None:
    app = remote.app
    session = app.start("slow")
    remote.wait_runs("model", 1, prompt="slow")
    remote.sidecar.kill()  # and never back: the retries of RunModel cannot connect
    app.timeout = 60.0  # two more attempts, each waiting 5 s for a connection
    snapshot = app.wait(
        session,
        "the failed turn",
        lambda s: s.state is not None and s.state.last_turn_error is not None,
    )
    assert snapshot.state is not None
    assert snapshot.state.status is AgentStatus.WAITING_FOR_USER_MESSAGE
    error = snapshot.state.last_turn_error or ""
    assert f"runner {app.flow_type!r} at {remote.sidecar.address!r}" in error
    assert "`RunModelStep` (attempt 3) failed: the runner service is unreachable" in error
    assert len(remote.runs("model")) == 1


def _launch(
    dexlite: DexliteProcess, core_package: Path, log: Path, flow_type: str, *extra: str
) -> tuple[subprocess.Popen[bytes], str]:
    """launched_agents.js: serveRunners plus launchWorker's Python Worker, and its address."""
    log.touch()
    address = f"127.0.0.1:{free_port()}"
    script = core_package / "dist" / "testing" / "launched_agents.js"
    command = ["node", str(script), "--server", dexlite.address, "--log", str(log)]
    command += ["--flow-type", flow_type, "--python", sys.executable, "--address", address]
    launcher = subprocess.Popen([*command, *extra], env=child_env(), start_new_session=True)
    return launcher, address


def _stop_launcher(launcher: subprocess.Popen[bytes], log: Path) -> None:
    launcher.send_signal(signal.SIGTERM)
    launcher.wait(30)
    # Stopping the launcher killed the Worker's process group.
    last = read_runs(log, "worker")[-1]["pid"]
    wait_until(lambda: not _alive(last), what="the Worker to be gone")


def test_the_launcher_starts_the_worker_and_restarts_it_after_a_sigkill(
    dexlite: DexliteProcess, core_package: Path, tmp_path: Path
) -> None:
    """One command (launched_agents.js): serveRunners plus launchWorker's Python Worker."""
    flow_type = f"Launched{uuid.uuid4().hex[:10]}"
    log = tmp_path / "sidecar.jsonl"
    launcher, address = _launch(dexlite, core_package, log, flow_type)
    try:
        (first,) = wait_for_runs(log, "worker", 1)
        flow = AgentSessionFlow(RemoteRunner(address, flow_type), flow_type=flow_type)
        with AgentSessionClient(flow, server_address=dexlite.address) as client:
            session = f"s-{uuid.uuid4().hex[:12]}"
            client.start_session(session, "weather in Paris")
            _wait_turns(client, session, 1)
            os.killpg(first["pid"], signal.SIGKILL)
            second = wait_for_runs(log, "worker", 2)[1]
            assert second["pid"] != first["pid"]
            assert client.send_user_message(session, "thanks")
            snapshot = _wait_turns(client, session, 2)
            assert snapshot.messages[-1].text == "I have seen 5 messages."
    finally:
        _stop_launcher(launcher, log)


def test_the_launched_worker_runs_with_the_session_options_the_sidecar_serves(
    dexlite: DexliteProcess, core_package: Path, tmp_path: Path
) -> None:
    """serveRunners({sessionOptions}) reach the launched Worker through DescribeRunner:
    a policy makes the read tool get_weather wait for approval, with a deadline."""
    flow_type = f"Options{uuid.uuid4().hex[:10]}"
    log = tmp_path / "sidecar.jsonl"
    served = {
        "toolPolicies": {"get_weather": {"effect": int(ToolEffect.READ), "requiresApproval": True}},
        "defaultToolEffect": int(ToolEffect.IDEMPOTENT_WRITE),
        "interruptDeadlineSeconds": 3600,
        "builtInTools": ["ask_user"],
        "retainedMessageLimit": None,
    }
    launcher, address = _launch(
        dexlite, core_package, log, flow_type, "--session-options", json.dumps(served)
    )
    try:
        wait_for_runs(log, "worker", 1)
        runner = RemoteRunner(address, flow_type)
        options = runner.session_options
        assert options is not None
        assert options.tool_policies == {
            "get_weather": ToolPolicy(effect=ToolEffect.READ, requires_approval=True)
        }
        assert options.default_tool_effect is ToolEffect.IDEMPOTENT_WRITE
        assert options.interrupt_deadline == timedelta(hours=1)
        assert options.built_in_tools == ("ask_user",)
        assert options.compaction is None
        assert options.retained_message_limit is None
        assert options.max_value_bytes == AgentSessionOptions().max_value_bytes
        flow = AgentSessionFlow(runner, flow_type=flow_type, options=options)
        with AgentSessionClient(flow, server_address=dexlite.address) as client:
            session = f"s-{uuid.uuid4().hex[:12]}"
            client.start_session(session, "weather in Oslo")

            def pending() -> AgentSnapshot | None:
                snapshot = client.get_snapshot(session)
                return snapshot if snapshot.pending_interrupts else None

            (interrupt,) = wait_until(pending, timeout=30, what="the approval").pending_interrupts
            assert interrupt.tool_call_id == "w1"
            assert interrupt.deadline is not None  # the served interruptDeadlineSeconds
            assert read_runs(log, "tool") == []  # nothing ran before the approval
            assert client.resolve_interrupt(session, interrupt.interrupt_id, approved=True)
            snapshot = _wait_turns(client, session, 1)
            assert snapshot.messages[-1].text == "Results: get_weather=sunny in Oslo"
            assert len(read_runs(log, "tool")) == 1
    finally:
        _stop_launcher(launcher, log)


def _wait_turns(client: AgentSessionClient, session: str, turns: int) -> AgentSnapshot:
    def done() -> AgentSnapshot | None:
        s = client.get_snapshot(session)
        idle = s.state is not None and s.state.status is AgentStatus.WAITING_FOR_USER_MESSAGE
        return s if idle and s.state is not None and s.state.turn_count >= turns else None

    result: AgentSnapshot = wait_until(done, timeout=30, what=f"{turns} turns")
    return result


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def test_remote_runner_errors_survive_pickling() -> None:
    """They cross the Step's failure boundary like every run error."""
    error = RemoteRunnerUnavailableError(
        "runner 'A' at 'h:1': `RunModelStep` (attempt 2) failed: unreachable",
        target="h:1",
        flow_type="A",
        method="RunModelStep",
        attempt=2,
        session_id="s1",
    )
    copy = pickle.loads(pickle.dumps(error))
    assert type(copy) is RemoteRunnerUnavailableError
    assert isinstance(copy, RemoteRunnerError)
    assert (str(copy), copy.target, copy.flow_type, copy.method, copy.attempt) == (
        str(error),
        "h:1",
        "A",
        "RunModelStep",
        2,
    )
    assert (copy.error_type, copy.session_id) == (None, "s1")
