"""The runner kit every adapter builds on: the run-state envelope and its errors,
pending calls and their results, tool values, routing, and the tool Step's info."""

from __future__ import annotations

import asyncio
import dataclasses
import json
from typing import Any

import pytest
from dex_agents import ToolPolicy
from dex_agents._runner.call_results import (
    pending_records,
    stored_result,
    with_stored_results,
)
from dex_agents._runner.policies import BUILT_IN_TOOL_POLICY
from dex_agents._runner.routing import declared_approval
from dex_agents.offline import NullEventWriter, no_heartbeat
from dex_agents.results import NO_RESULT_TEXT
from dex_agents.runner import (
    AgentTurnContext,
    DexRunInfo,
    PendingCall,
    RunStateError,
    RunStateFormat,
    ToolExecutionError,
    ToolRouter,
    dex_run_info,
    parse_tool_arguments,
    result_texts,
    running,
    tool_output_text,
)
from dex_agents.stepwise._items import ToolCallItem
from dex_agents.stepwise._state import RunState
from dex_agents_contracts import (
    AgentToolCall,
    ToolCallStatus,
    ToolEffect,
    decode_run_state_envelope,
    encode_run_state_envelope,
)

# What StepwiseRunner wrote before the envelope, after "Weather in Oslo?" asked for
# get_weather (captured from that encoder).
STEPWISE_LEGACY = (
    '{"version":1,"items":[{"type":"tool_call","tool_call_id":"call-1",'
    '"tool_name":"get_weather","arguments":"{\\"city\\":\\"Oslo\\"}"}]}'
)


FORMAT = RunStateFormat(
    adapter="demo", schema_version=2, framework="pytest", legacy=RunStateFormat.marked("version", 1)
)


def _read(payload: object) -> list[int]:
    assert isinstance(payload, dict)
    return [int(n) for n in payload["numbers"]]


def test_an_envelope_round_trips_and_says_who_wrote_it() -> None:
    text = FORMAT.encode({"numbers": [1, 2]})
    envelope = decode_run_state_envelope(text)
    assert (envelope.adapter, envelope.schema_version) == ("demo", 2)
    assert envelope.framework_version.startswith("pytest ")
    assert json.loads(envelope.payload) == {"numbers": [1, 2]}
    assert FORMAT.decode(text, _read) == [1, 2]


def test_another_adapters_state_names_the_adapter_and_both_versions() -> None:
    other = RunStateFormat(adapter="other", schema_version=7).encode({"numbers": []})
    with pytest.raises(RunStateError) as caught:
        FORMAT.decode(other, _read)
    message = str(caught.value)
    assert "not written by the demo adapter but by other (schema version 7" in message
    assert "reads schema version 2" in message


def test_a_schema_version_it_cannot_read_names_both_versions() -> None:
    newer = RunStateFormat(adapter="demo", schema_version=3, framework="pytest").encode({})
    with pytest.raises(RunStateError) as caught:
        FORMAT.decode(newer, _read)
    message = str(caught.value)
    assert "the demo run state has schema version 3" in message
    assert "it reads schema version 2" in message
    assert "written with pytest " in message


def test_a_payload_the_reader_cannot_use_is_a_run_state_error() -> None:
    with pytest.raises(RunStateError, match=r"unreadable demo run state \(schema version 2\)"):
        FORMAT.decode(FORMAT.encode({"numbers": "x"}), _read)
    with pytest.raises(RunStateError, match="KeyError"):
        FORMAT.decode(FORMAT.encode({}), _read)


def test_a_legacy_state_goes_through_the_adapters_legacy_reader() -> None:
    assert FORMAT.decode('{"version":1,"numbers":[3]}', _read) == [3]
    with pytest.raises(RunStateError, match="not written by the demo adapter"):
        FORMAT.decode('{"version":9,"numbers":[3]}', _read)
    with pytest.raises(RunStateError):
        FORMAT.decode('[{"version":1}]', _read)
    with pytest.raises(RunStateError, match="not written by the demo adapter"):
        RunStateFormat(adapter="demo").decode('{"numbers":[3]}', _read)
    with pytest.raises(RunStateError, match="not a run state envelope"):
        FORMAT.decode("not json", _read)


def test_stepwise_reads_the_state_it_wrote_before_the_envelope() -> None:
    state = RunState.decode(STEPWISE_LEGACY)
    assert state.items == (
        ToolCallItem(tool_call_id="call-1", tool_name="get_weather", arguments='{"city":"Oslo"}'),
    )
    again = decode_run_state_envelope(state.encode())
    assert (again.adapter, again.schema_version) == ("stepwise", 1)
    assert RunState.decode(state.encode()) == state
    newer = encode_run_state_envelope(dataclasses.replace(again, schema_version=2))
    with pytest.raises(RunStateError, match=r"schema version 2.*reads schema version 1"):
        RunState.decode(newer)


def _record(call_id: str, status: ToolCallStatus, **fields: Any) -> AgentToolCall:
    return AgentToolCall(
        tool_call_id=call_id, turn_id="t", tool_name="tool", status=status, **fields
    )


def test_pending_results_are_strict_in_run_model_and_lenient_otherwise() -> None:
    pending = [
        PendingCall(tool_call_id="a", tool_name="tool"),
        PendingCall(tool_call_id="b", tool_name="tool"),
    ]
    records = [
        _record("a", ToolCallStatus.SUCCEEDED, output="sunny"),
        _record("b", ToolCallStatus.APPROVED),
    ]
    assert result_texts(pending, records, strict=False) == {"a": "sunny", "b": NO_RESULT_TEXT}
    with pytest.raises(RunStateError, match="'b' \\('tool'\\) is not final: its status is"):
        pending_records(pending, records, strict=True)
    with pytest.raises(RunStateError, match="no tool call record for 'a'"):
        pending_records(pending, [], strict=True)


def test_a_pending_call_subclass_keeps_its_fields_in_json() -> None:
    @dataclasses.dataclass(frozen=True, kw_only=True)
    class Interrupted(PendingCall):
        interrupt_id: str

    call = Interrupted(tool_call_id="a", tool_name="t", interrupt_id="i")
    assert Interrupted.from_json(call.to_json()) == call
    with pytest.raises(KeyError):
        Interrupted.from_json({"tool_call_id": "a", "tool_name": "t"})


def test_stored_results_answer_gated_bodies_only_inside_their_block() -> None:
    with with_stored_results({"c1": "done"}):
        assert stored_result("tool", "c1") == "done"
        with pytest.raises(RuntimeError, match="without a stored Dex result"):
            stored_result("tool", "c2")
    with pytest.raises(RuntimeError):
        stored_result("tool", "c1")


@pytest.mark.parametrize(
    ("text", "parsed"), [("", {}), ('{"a":1}', {"a": 1}), ('{"a":{"b":[1]}}', {"a": {"b": [1]}})]
)
def test_tool_arguments_parse_to_an_object(text: str, parsed: dict[str, object]) -> None:
    assert parse_tool_arguments(text) == parsed


@pytest.mark.parametrize("text", ["not json", "[1]", '{"a": NaN}', "null"])
def test_tool_arguments_that_are_no_object_are_an_error_the_model_sees(text: str) -> None:
    with pytest.raises(ToolExecutionError, match="arguments must be a JSON object"):
        parse_tool_arguments(text)


def test_tool_output_text() -> None:
    assert tool_output_text("x") == "x"
    assert tool_output_text({"a": 1}) == '{"a":1}'
    assert tool_output_text(None) == ""
    assert tool_output_text(3) == "3"


def test_the_router_checks_ids_and_lets_policies_win_in_order() -> None:
    turn = AgentTurnContext(
        flow_id="f",
        turn_id="t",
        attempt=1,
        messages=[],
        framework_run_state=None,
        tool_calls=[],
        tool_policies={"w": ToolPolicy(effect=ToolEffect.READ)},
        default_tool_effect=ToolEffect.UNCLASSIFIED,
        events=NullEventWriter(),
        heartbeat=no_heartbeat,
        enabled_built_in_tools=("ask_user",),
    )
    router = ToolRouter(turn, tool_policies={"x": ToolPolicy(effect=ToolEffect.READ)})
    assert router.defer("1", "w", "{}").effect is ToolEffect.READ
    sourced = router.defer("2", "m", "{}", sourced=_Sourced())
    assert (sourced.effect, sourced.tool_source_reference) == (
        ToolEffect.IDEMPOTENT_WRITE,
        "ref",
    )
    built_in = router.defer("3", "ask_user", "{}")
    assert (built_in.effect, built_in.requires_approval) == (
        BUILT_IN_TOOL_POLICY.effect,
        BUILT_IN_TOOL_POLICY.requires_approval,
    )
    assert router.defer("4", "other", "{}").requires_approval is True
    with pytest.raises(ValueError, match="'1'"):
        router.defer("1", "w", "{}")


@dataclasses.dataclass
class _Sourced:
    effect: ToolEffect | None = ToolEffect.IDEMPOTENT_WRITE
    reference: str = "ref"


def test_declared_approval_only_adds_an_approval() -> None:
    async def decide(value: int) -> bool:
        return value > 1

    assert asyncio.run(declared_approval(True)) is True
    assert asyncio.run(declared_approval(False)) is None
    assert asyncio.run(declared_approval(decide, 2)) is True
    assert asyncio.run(declared_approval(decide, 1)) is None


def test_the_tool_steps_info_is_visible_only_while_it_runs() -> None:
    info = DexRunInfo(flow_id="f", turn_id="t", attempt=2, tool_call_id="c", idempotency_key="k")
    assert dex_run_info() is None
    with running(info):
        assert dex_run_info() == info
    assert dex_run_info() is None
    assert DexRunInfo.from_json(info.to_json()) == info
    assert DexRunInfo.from_json({"flow_id": "f"}) is None


def test_write_deltas_writes_reasoning_then_text_and_nothing_for_empty_pieces() -> None:
    from dex_agents._runner.deltas import write_deltas
    from dex_agents.offline import RecordingEventWriter
    from dex_agents_contracts import ReasoningDeltaPayload, TextDeltaPayload

    events = RecordingEventWriter()
    write_deltas(events, text="Hel", reasoning="hmm")
    write_deltas(events, text="", reasoning=None)
    write_deltas(events, text="lo")
    payloads = [payload for _, payload in events.events]
    assert payloads == [
        ReasoningDeltaPayload(text="hmm"),
        TextDeltaPayload(text="Hel"),
        TextDeltaPayload(text="lo"),
    ]


def test_offering_scopes_the_offered_built_ins_to_the_block_and_its_tasks() -> None:
    from dex_agents._runner.built_ins import is_offered, offering

    async def inside_a_task() -> bool:
        return is_offered("ask_user")

    async def main() -> tuple[bool, bool, bool]:
        with offering(["ask_user"]):
            in_task = await asyncio.create_task(inside_a_task())
            return is_offered("ask_user"), is_offered("durable_wait"), in_task

    assert asyncio.run(main()) == (True, False, True)
    assert not is_offered("ask_user")
