"""Unit tests without a server: codecs, design texts, the event writer, the public API."""

from __future__ import annotations

import asyncio
import json
import threading
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import dex
import dex_agents
import dex_agents.codecs
import dex_agents.runner
import pytest
from dex import Value, WireKind
from dex_agents import AgentSessionFlow, AgentSessionOptions, UserError
from dex_agents._runner.policies import ResolvedToolPolicy
from dex_agents._runner.tool_call_ids import invalid_tool_call_ids
from dex_agents._runner.values import deferred_tool_call
from dex_agents.codecs import agent_codec_registry
from dex_agents.results import model_visible_result, turn_failure_note
from dex_agents.runner import DeferredToolCall
from dex_agents.session._event_writer import StepEventWriter
from dex_agents.session._rules.tool_outcomes import idempotency_key
from dex_agents.session._time import ceil_seconds
from dex_agents_contracts import (
    AgentEvent,
    AgentInterrupt,
    AgentState,
    AgentStatus,
    AgentToolCall,
    CompactContextInput,
    InteractionMode,
    InterruptKind,
    ToolCallStatus,
    ToolEffect,
    TurnStartedPayload,
)
from dex_agents_testing import ModelReply, RunLog, ScriptedRunner


def _record(order: int, status: ToolCallStatus, **fields: Any) -> AgentToolCall:
    return AgentToolCall(
        tool_call_id=f"c{order}",
        turn_id="turn-1",
        tool_name=f"tool{order}",
        arguments='{"a":1}',
        effect=ToolEffect.READ,
        status=status,
        deferral_order=order,
        input_allows_free_text=True,
        **fields,
    )


# --- codecs ---------------------------------------------------------------------------


def test_codecs_store_wire_json() -> None:
    registry = agent_codec_registry()
    codec = registry.resolve(AgentState)
    state = AgentState(
        status=AgentStatus.RUNNING_MODEL,
        next_message_sequence=3,
        active_turn_id="turn-1",
        interaction_mode=InteractionMode.CHAT,
    )
    value = codec.encode(state)
    assert value.kind is WireKind.JSON
    assert value.data == (
        '{"status":"running_model","turn_count":0,"active_turn_id":"turn-1",'
        '"next_message_sequence":3,"last_turn_error":null,"interaction_mode":"chat",'
        '"accepts_turn_control":false}'
    )
    assert codec.decode(value) == state
    with pytest.raises(TypeError):
        codec.encode("not a state")
    with pytest.raises(ValueError, match="AgentState"):
        codec.decode(Value(WireKind.JSON, '{"status":"runing"}'))


def test_list_and_optional_codecs() -> None:
    registry = agent_codec_registry()
    interrupts = registry.resolve(list[AgentInterrupt])
    interrupt = AgentInterrupt(
        interrupt_id="c1",
        kind=InterruptKind.TOOL_APPROVAL,
        tool_call_id="c1",
        tool_name="t",
        arguments="{}",
        created_at=datetime(2026, 11, 1, 12, 0, 0, 123000, tzinfo=UTC),
        allows_free_text=True,
    )
    encoded = interrupts.encode([interrupt])
    assert isinstance(encoded.data, str)
    assert encoded.data.startswith('[{"interrupt_id":"c1","kind":"tool_approval"')
    assert '"created_at":"2026-11-01T12:00:00.123Z"' in encoded.data
    assert interrupts.decode(encoded) == [interrupt]
    optional = registry.resolve(CompactContextInput | None)
    assert optional.encode(None).data == "null"
    assert optional.decode(optional.encode(None)) is None
    assert optional.decode(optional.encode(CompactContextInput(through_sequence=4))) == (
        CompactContextInput(through_sequence=4)
    )


# --- design texts ----------------------------------------------------------------------


def test_model_visible_results_and_turn_failure_note() -> None:
    records = [
        _record(2, ToolCallStatus.OUTCOME_UNKNOWN),
        _record(0, ToolCallStatus.SUCCEEDED, output="done"),
        _record(1, ToolCallStatus.FAILED, error="boom"),
        _record(3, ToolCallStatus.REJECTED),
        _record(4, ToolCallStatus.REJECTED, rejection_message="no"),
        _record(5, ToolCallStatus.AWAITING_APPROVAL),
    ]
    assert model_visible_result(records[2]) == "The tool call failed: boom"
    assert model_visible_result(records[3]) == "The user rejected this tool call."
    with pytest.raises(ValueError, match="not final"):
        model_visible_result(records[5])
    assert turn_failure_note(records) == (
        "[Dex] The previous turn failed after these tool calls ran:\n"
        '- tool0 {"a":1} -> succeeded: done\n'
        '- tool1 {"a":1} -> failed: The tool call failed: boom\n'
        '- tool2 {"a":1} -> outcome_unknown: The tool call\'s outcome is unknown: it stopped '
        "without returning a result, so it may or may not have taken effect. It will not be "
        "retried automatically.\n"
        '- tool3 {"a":1} -> rejected: The user rejected this tool call.\n'
        '- tool4 {"a":1} -> rejected: no\n'
        "Do not repeat these tool calls unless the user asks again."
    )
    assert turn_failure_note([records[5]]) is None


def test_tool_call_id_rules_and_idempotency_key() -> None:
    policy = ResolvedToolPolicy(effect=ToolEffect.READ, requires_approval=False)

    def call(tool_call_id: str) -> DeferredToolCall:
        return deferred_tool_call(
            tool_call_id=tool_call_id, tool_name="t", arguments="{}", policy=policy
        )

    assert invalid_tool_call_ids([call("a"), call("b")], []) is None
    assert invalid_tool_call_ids([call("a")], [_record(0, ToolCallStatus.SUCCEEDED)]) is None
    assert invalid_tool_call_ids([call("c0")], [_record(0, ToolCallStatus.SUCCEEDED)]) == (
        "dex-agents: tool call ID 'c0' is used twice in one turn"
    )
    assert invalid_tool_call_ids([call("")], []) == "dex-agents: a tool call ID must not be empty"
    assert idempotency_key("s-1", "turn-2", "c3") == "s-1/turn-2/c3"


def test_timers_round_deadlines_up_to_whole_seconds() -> None:
    now = datetime(2026, 1, 1, tzinfo=UTC)
    assert ceil_seconds(now + timedelta(milliseconds=1), now) == timedelta(seconds=1)
    assert ceil_seconds(now + timedelta(seconds=2), now) == timedelta(seconds=2)
    assert ceil_seconds(now - timedelta(seconds=5), now) == timedelta(0)


# --- event writer --------------------------------------------------------------------


@dataclass
class _FakeStepContext:
    attempt: int = 2
    step_execution_id: str = "RunModel-7"

    def __post_init__(self) -> None:
        self.written: list[AgentEvent] = []

    def _write_stream(self, definition: object, value: AgentEvent) -> None:
        self.written.append(value)


def test_event_writer_is_safe_from_any_thread() -> None:
    async def scenario() -> list[AgentEvent]:
        context = _FakeStepContext()
        stream: dex.Stream[AgentEvent] = dex.Stream("AgentEvents", AgentEvent, 1024)
        writer = StepEventWriter(stream, context, turn_id="turn-1")  # type: ignore[arg-type]

        def burst(n: int) -> None:
            for i in range(50):
                writer.write_raw("text_delta", json.dumps({"text": f"{n}-{i}"}))

        threads = [threading.Thread(target=burst, args=(n,)) for n in range(4)]
        for thread in threads:
            thread.start()
        writer.write(TurnStartedPayload(sequence=1))

        def join_all() -> None:
            for thread in threads:
                thread.join()

        await asyncio.to_thread(join_all)
        await asyncio.sleep(0)  # let the loop run the handed-over writes
        writer.close()
        writer.write(TurnStartedPayload(sequence=2))  # after close: dropped
        await asyncio.sleep(0)
        return context.written

    written = asyncio.run(scenario())
    assert len(written) == 201
    assert {e.turn_id for e in written} == {"turn-1"}
    assert {(e.attempt, e.step_execution_id) for e in written} == {(2, "RunModel-7")}
    assert sum(1 for e in written if e.type == "turn_started") == 1
    assert json.loads(next(e for e in written if e.type == "turn_started").payload) == {
        "sequence": 1
    }


def test_event_writer_refuses_non_objects_and_unknown_payloads() -> None:
    async def scenario() -> None:
        stream: dex.Stream[AgentEvent] = dex.Stream("AgentEvents", AgentEvent, 1024)
        writer = StepEventWriter(stream, _FakeStepContext(), turn_id=None)  # type: ignore[arg-type]
        with pytest.raises(ValueError, match="JSON object"):
            writer.write_raw("adapter.thing", "[1]")
        with pytest.raises(TypeError, match="not an event payload"):
            writer.write(object())
        writer.write('{"x":1}', event_type="adapter.thing")

    asyncio.run(scenario())


# --- configuration and public API ---------------------------------------------------


def test_flow_refuses_bad_configuration() -> None:
    runner = ScriptedRunner([[ModelReply(text="hi")]], [], RunLog("/dev/null"))
    with pytest.raises(UserError):
        AgentSessionFlow(object(), flow_type="X")  # type: ignore[arg-type]
    with pytest.raises(UserError):
        AgentSessionFlow(runner, flow_type="a/b")
    with pytest.raises(UserError):
        AgentSessionOptions(message_window_size=0)
    with pytest.raises(UserError):
        AgentSessionOptions(message_chunk_max_bytes=9 * 1024 * 1024)
    flow = AgentSessionFlow(runner, flow_type="Triage")
    registry = dex_agents.agent_registry([flow])
    assert flow.get_flow_type() == "Triage"
    assert registry.flows == (flow,)
    assert issubclass(UserError, dex_agents.AgentSessionError)
    assert issubclass(dex_agents.ValueTooLarge, dex_agents.AgentSessionError)


def test_public_api_exports() -> None:
    # Application names at the top level, runner names in dex_agents.runner, codecs in
    # dex_agents.codecs (test_public_api pins the lists).
    expected = {
        "AgentSessionFlow",
        "AgentSessionOptions",
        "AgentSessionClient",
        "AgentWorker",
        "agent_registry",
        "run_worker",
        "AgentSessionError",
    }
    expected_runner = {
        "AgentFrameworkRunner",
        "AgentTurnContext",
        "DeferredToolExecution",
        "ToolExecutionError",
    }
    assert expected <= set(dex_agents.__all__)
    assert expected_runner <= set(dex_agents.runner.__all__)
    assert "agent_codec_registry" in dex_agents.codecs.__all__
    for name in dex_agents.__all__:
        assert getattr(dex_agents, name) is not None


def test_attempt_progress_is_unspecified_without_sdk_support() -> None:
    from dex import RecoveryErrorInfo
    from dex_agents.session._steps.tools import attempt_progress

    @dataclass
    class _Recovered:
        recovery_error: object

    @dataclass
    class _Progress:
        detail: str = "d"
        error_type: str = "t"
        attempt_progress: str = "ATTEMPT_PROGRESS_NOT_STARTED"

    sdk_1_23 = _Recovered(RecoveryErrorInfo(detail="worker died", error_type="UNAVAILABLE"))
    assert attempt_progress(sdk_1_23) == "UNSPECIFIED"  # type: ignore[arg-type]
    assert attempt_progress(_Recovered(_Progress())) == "NOT_STARTED"  # type: ignore[arg-type]
    assert attempt_progress(_Recovered(None)) == "UNSPECIFIED"  # type: ignore[arg-type]
