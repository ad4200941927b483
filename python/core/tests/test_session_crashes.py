"""Matrix items 5, 6, 8 and 9: SIGKILLed Workers and failed turns."""

from __future__ import annotations

from pathlib import Path

from dex import FlowConfig, StartFlowOptions, StepDurability
from dex.dexpb import dex_pb2 as pb
from dex_agents import ToolPolicy
from dex_agents.results import OUTCOME_UNKNOWN_RESULT
from dex_agents_contracts import MessageRole, ToolEffect
from dex_agents_testing import (
    ModelReply,
    ScriptedTool,
    ScriptedToolCall,
    assert_step_shape,
    wait_until,
)
from helpers import HarnessFactory

NO_APPROVAL = {
    "charge": ToolPolicy(effect=ToolEffect.NON_IDEMPOTENT_WRITE, requires_approval=False)
}


def _charge_script() -> list[list[ModelReply]]:
    return [
        [
            ModelReply(tool_calls=[ScriptedToolCall(tool_call_id="p1", tool_name="charge")]),
            ModelReply(text="I could not confirm the charge."),
        ]
    ]


def _kill_during_single_attempt_write(
    harness: HarnessFactory, tmp_path: Path, options: StartFlowOptions | None
) -> None:
    gate = tmp_path / "charge-gate"
    h = harness(
        script=_charge_script(),
        tools=[ScriptedTool(name="charge", effect=ToolEffect.NON_IDEMPOTENT_WRITE, gate=str(gate))],
        tool_policies=NO_APPROVAL,
    )
    session = h.start("charge me", options=options)
    wait_until(lambda: h.log.count("tool", name="charge") == 1, what="the charge to start")
    # Dex has the Step's output (tool_call_started), so the attempt counts as started.
    h.events(session, "tool_call_started")
    h.restart_worker()  # SIGKILL mid-call, then a fresh Worker
    gate.touch()  # a second run would now finish at once
    done = h.wait_idle(session, 1, timeout=60)
    assert h.log.count("tool", name="charge") == 1
    (resumed,) = h.log.entries("model", call=1)
    assert resumed["tool_results"] == {"p1": OUTCOME_UNKNOWN_RESULT}
    assert done.messages[-1].text == "I could not confirm the charge."
    history = h.history(session)
    assert_step_shape(history, ["RunModel", "RecordToolOutcomeUnknown", "ResumeTurn", "RunModel"])
    # The tool Step ran with SYNC durability whatever the Flow's default.
    durabilities = {
        event.step_execute_failed.context.durability
        for event in history
        if event.WhichOneof("payload") == "step_execute_failed"
        and event.step_execute_failed.context.step_type == "CallSingleAttemptTool"
    }
    assert durabilities == {pb.STEP_DURABILITY_SYNC}


def test_sigkill_during_single_attempt_tool_records_outcome_unknown(
    harness: HarnessFactory, tmp_path: Path
) -> None:
    _kill_during_single_attempt_write(harness, tmp_path, None)


def test_async_durability_default_never_reruns_single_attempt_write(
    harness: HarnessFactory, tmp_path: Path
) -> None:
    options = StartFlowOptions(config_override=FlowConfig(step_durability=StepDurability.ASYNC))
    _kill_during_single_attempt_write(harness, tmp_path, options)


def test_sigkill_during_run_model_reruns_only_that_model_call(
    harness: HarnessFactory, tmp_path: Path
) -> None:
    gate = tmp_path / "model-gate"
    h = harness(
        script=[
            [
                ModelReply(tool_calls=[ScriptedToolCall(tool_call_id="c1", tool_name="lookup")]),
                ModelReply(text="42", gate=str(gate)),
            ]
        ],
        tools=[ScriptedTool(name="lookup", output="42")],
    )
    session = h.start("answer?")
    wait_until(lambda: h.log.count("model", call=1) == 1, what="the second model call")
    h.restart_worker()
    gate.touch()
    h.wait_idle(session, 1, timeout=60)
    assert h.log.count("model", call=0) == 1
    # The killed attempt ran again; Dex reuses its number when no output reached it.
    assert [e["attempt"] for e in h.log.entries("model", call=1)] in ([1, 1], [1, 2])
    assert h.log.count("tool") == 1
    assert_step_shape(h.history(session), ["RunModel", "CallTool", "ResumeTurn", "RunModel"])


def test_failed_turn_after_write_leaves_note_and_write_is_not_repeated(
    harness: HarnessFactory,
) -> None:
    h = harness(
        script=[
            [
                ModelReply(
                    tool_calls=[
                        ScriptedToolCall(
                            tool_call_id="p1", tool_name="charge", arguments={"usd": 5}
                        )
                    ]
                ),
                ModelReply(error="model unavailable"),
            ],
            [ModelReply(text="The charge already ran.")],
        ],
        tools=[
            ScriptedTool(name="charge", effect=ToolEffect.NON_IDEMPOTENT_WRITE, output="charged")
        ],
        tool_policies=NO_APPROVAL,
    )
    session = h.start("charge me")
    failed = h.wait_idle(session, 1, timeout=60)
    assert failed.state is not None
    assert failed.state.last_turn_error is not None
    assert "model unavailable" in failed.state.last_turn_error
    note = failed.messages[-1]
    assert note.role is MessageRole.USER
    assert note.text == (
        "[Dex] The previous turn failed after these tool calls ran:\n"
        '- charge {"usd":5} -> succeeded: charged\n'
        "Do not repeat these tool calls unless the user asks again."
    )
    # The runner's unfinished-turn messages (call and result) come before the note.
    assert [m.role for m in failed.messages] == [
        MessageRole.USER,
        MessageRole.ASSISTANT,
        MessageRole.TOOL,
        MessageRole.USER,
    ]
    assert not failed.tool_calls
    assert h.log.count("model", call=1) == 3  # RunModel's three attempts
    assert h.client.send_user_message(session, "did it work?")
    done = h.wait_idle(session, 2)
    assert done.state is not None
    assert done.state.last_turn_error is None
    assert h.log.count("tool", name="charge") == 1
    (second,) = h.log.entries("model", turn="turn-2")
    assert note.text in second["seen"]
    assert_step_shape(
        h.history(session), ["RunModel", "CallSingleAttemptTool", "ResumeTurn", "RecordTurnFailure"]
    )
