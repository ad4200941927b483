"""Values built in code against the golden files, and the writer's refusals."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import dex_agents_contracts as c
import pytest


def test_built_value_matches_its_golden_file(testdata: Path) -> None:
    state = c.AgentState(
        status=c.AgentStatus.RUNNING_MODEL,
        turn_count=2,
        active_turn_id="turn-3",
        next_message_sequence=21,
        interaction_mode=c.InteractionMode.EXECUTING,
        accepts_turn_control=True,
    )
    golden = (testdata / "valid/AgentState/running_model.json").read_text(encoding="utf-8")
    assert c.encode_agent_state(state) == golden


def test_event_payload_types_are_named_after_the_events() -> None:
    assert c.EVENT_PAYLOAD_TYPES["turn_started"] is c.TurnStartedPayload
    assert c.EVENT_PAYLOAD_TYPES["usage_recorded"] is c.UsageRecordedPayload
    assert len(c.EVENT_PAYLOAD_TYPES) == 19


def test_list_codec_writes_a_json_array() -> None:
    interrupt = c.AgentInterrupt(
        interrupt_id="call_1",
        kind=c.InterruptKind.TOOL_APPROVAL,
        tool_call_id="call_1",
        tool_name="send",
        arguments="{}",
        created_at=datetime(2026, 1, 2, 3, 4, 5, 678901, UTC),
        allows_free_text=True,
    )
    text = c.encode_list(c.AgentInterrupt, [interrupt])
    assert text.startswith('[{"interrupt_id":"call_1","kind":"tool_approval"')
    assert '"created_at":"2026-01-02T03:04:05.678Z"' in text
    assert c.decode_list(c.AgentInterrupt, text)[0].tool_name == "send"
    assert c.encode_list(c.AgentInterrupt, []) == "[]"
    with pytest.raises(
        c.WireFormatError, match=r"^AgentInterrupt\[\]: expected array, got object$"
    ):
        c.decode_list(c.AgentInterrupt, "{}")


def test_struct_helpers_round_trip_plain_json() -> None:
    data: dict[str, object] = {"model": "x", "n": 3, "f": 0.5, "l": [True, None, {"k": "v"}]}
    assert c.struct_to_json(c.struct_from_json(data)) == data


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"at": datetime(2026, 1, 2, tzinfo=UTC)}, "Struct: expected a JSON value, got datetime"),
        ({"l": [1, (2, 3)]}, "Struct: expected a JSON value, got tuple"),
        ({"o": {1: "one"}}, "Struct: expected a string key, got int"),
    ],
)
def test_struct_from_json_names_what_is_not_json(data: dict[str, object], message: str) -> None:
    with pytest.raises(c.WireFormatError, match=f"^{message}$"):
        c.struct_from_json(data)


def test_a_struct_built_with_wrong_types_is_refused_on_write() -> None:
    number = c.struct_from_json({"n": 1}).fields["n"]
    bad_value = c.AgentSessionStartInput(session_settings=c.Struct(fields={"n": 1}))  # type: ignore[dict-item]
    bad_key = c.AgentSessionStartInput(session_settings=c.Struct(fields={2: number}))  # type: ignore[dict-item]
    path = "AgentSessionStartInput.session_settings"
    with pytest.raises(c.WireFormatError, match=f"^{path}: expected Value, got int$"):
        c.encode(bad_value)
    with pytest.raises(c.WireFormatError, match=f"^{path}: expected a string key, got int$"):
        c.encode(bad_key)


@pytest.mark.parametrize(
    ("value", "message"),
    [
        (c.AgentUsage(model_calls=2**53), "AgentUsage.model_calls: integer out of range"),
        (c.AgentUsage(input_tokens=-(2**53)), "AgentUsage.input_tokens: integer out of range"),
        (c.ExecutePlanRequest(revision=2**31), "ExecutePlanRequest.revision: integer out of range"),
        (c.AgentUsage(model_calls="1"), "AgentUsage.model_calls: expected int, got str"),  # type: ignore[arg-type]
        (c.AgentUsage(model_calls=True), "AgentUsage.model_calls: expected int, got bool"),
        (c.AgentState(), "AgentState.status: unspecified enum value"),
        (
            c.ToolCallCompleted(tool_call_id="a\ud800"),
            "ToolCallCompleted.tool_call_id: lone surrogate in string",
        ),
        (
            c.AgentSnapshot(messages=[c.AgentMessage(role=c.MessageRole.USER, text="\udfff")]),
            "AgentSnapshot.messages[0].text: lone surrogate in string",
        ),
        (
            c.TurnCancellationRequest(turn_id="t", requested_at=datetime(2026, 1, 1)),
            "TurnCancellationRequest.requested_at: time must be timezone-aware UTC",
        ),
        (
            c.TurnCancellationRequest(
                turn_id="t", requested_at=datetime(2026, 1, 1, tzinfo=timezone(timedelta(hours=2)))
            ),
            "TurnCancellationRequest.requested_at: time must be timezone-aware UTC",
        ),
        (
            c.TurnSessionSettings(
                turn_id="t",
                session_settings=c.Struct(fields={"x": c.Value(number_value=float("nan"))}),
            ),
            "TurnSessionSettings.session_settings: number out of range",
        ),
        (
            c.AgentSnapshot(usage=c.AgentState()),  # type: ignore[arg-type]
            "AgentSnapshot.usage: expected AgentUsage, got AgentState",
        ),
    ],
)
def test_writer_refuses_values_outside_the_wire_format(value: object, message: str) -> None:
    with pytest.raises(c.WireFormatError) as raised:
        c.encode(value)
    assert str(raised.value) == message
    assert raised.value.type_name == message.split(".", 1)[0]


def test_unset_non_optional_fields_are_written_with_defaults() -> None:
    text = c.encode(c.AgentMessage(role=c.MessageRole.TOOL))
    assert text == (
        '{"sequence":0,"turn_id":"","role":"tool","text":null,"tool_call_id":null,"tool_name":null,'
        '"tool_arguments":null,"tool_output":null,"framework_item":"",'
        '"created_at":"1970-01-01T00:00:00.000Z"}'
    )


def test_errors_survive_pickling() -> None:
    import pickle

    error = c.WireFormatError("AgentState.status", 'unknown value "x"')
    copy = pickle.loads(pickle.dumps(error))
    assert (str(copy), copy.field_path, copy.type_name) == (
        str(error),
        "AgentState.status",
        "AgentState",
    )


def test_decode_refuses_non_text() -> None:
    with pytest.raises(c.WireFormatError, match=r"^AgentState: expected JSON text, got int$"):
        c.decode_agent_state(5)  # type: ignore[arg-type]
    with pytest.raises(c.WireFormatError, match=r"^AgentState: not valid JSON$"):
        c.decode_agent_state(b"\xff{}")
