"""Built-in tool calls that RunModel settles itself: write_todos and invalid arguments."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any

from built_in_factories import raw_arguments, scripted_config
from dex_agents_contracts import PlanStatus, PlanTaskStatus, ToolEffect
from dex_agents_testing import ModelReply, ScriptedTool, ScriptedToolCall, assert_step_shape
from helpers import Harness

FACTORY = "built_in_factories:build_scripted_flow"
FactoryHarness = Callable[..., Harness]
ALL_BUILT_INS = ("ask_user", "durable_wait", "write_todos")


def _todos(*tasks: tuple[str, str]) -> dict[str, Any]:
    return {"todos": [{"content": content, "status": status} for content, status in tasks]}


def _write(tool_call_id: str, *tasks: tuple[str, str]) -> ScriptedToolCall:
    return ScriptedToolCall(
        tool_call_id=tool_call_id, tool_name="write_todos", arguments=_todos(*tasks)
    )


def _payloads(h: Harness, session: str, event_type: str, turns: int) -> list[dict[str, Any]]:
    events = h.events(session, "turn_completed", count=turns)
    return [json.loads(e.payload) for e in events if e.type == event_type]


def test_write_todos_replaces_the_plan_in_run_model(factory_harness: FactoryHarness) -> None:
    script = [
        [
            ModelReply(tool_calls=[_write("w1", ("draft", "completed"), ("ship", "in_progress"))]),
            ModelReply(text="planned"),
        ],
        [
            ModelReply(tool_calls=[_write("w2", ("draft", "completed"), ("ship", "completed"))]),
            ModelReply(text="all done"),
        ],
        [ModelReply(tool_calls=[_write("w3")]), ModelReply(text="cleared")],
    ]
    h = factory_harness(FACTORY, scripted_config(script, built_in_tools=["write_todos"]))
    session = h.start("plan it")
    first = h.wait_idle(session, 1)
    assert first.plan is not None
    assert first.plan.revision == 1
    assert first.plan.status is PlanStatus.ACTIVE
    assert [(t.content, t.status) for t in first.plan.tasks] == [
        ("draft", PlanTaskStatus.COMPLETED),
        ("ship", PlanTaskStatus.IN_PROGRESS),
    ]
    # No tool Step: the call settles in RunModel's commit, and ResumeTurn counts it.
    assert_step_shape(h.history(session), ["RunModel", "ResumeTurn", "RunModel"])
    (resumed,) = h.log.entries("model", turn="turn-1", call=1)
    assert resumed["tool_results"] == {"w1": '{"status":"updated","revision":1,"task_count":2}'}
    assert h.log.count("tool") == 0

    assert h.client.send_user_message(session, "finish")
    second = h.wait_idle(session, 2)
    assert second.plan is not None
    assert (second.plan.revision, second.plan.status) == (2, PlanStatus.COMPLETED)

    assert h.client.send_user_message(session, "forget it")
    third = h.wait_idle(session, 3)
    assert third.plan is not None
    assert (third.plan.revision, third.plan.status, list(third.plan.tasks)) == (
        3,
        PlanStatus.CLEARED,
        [],
    )
    (cleared,) = h.log.entries("model", turn="turn-3", call=1)
    assert cleared["tool_results"] == {"w3": '{"status":"cleared","revision":3}'}

    events = h.events(session, "turn_completed", count=3)
    types = [e.type for e in events]
    assert types.count("tool_call_deferred") == 3
    assert types.count("tool_call_finished") == 3
    assert [json.loads(e.payload) for e in events if e.type == "plan_updated"] == [
        {"revision": 1, "status": "active", "task_count": 2},
        {"revision": 2, "status": "completed", "task_count": 2},
        {"revision": 3, "status": "cleared", "task_count": 0},
    ]
    deferred = [json.loads(e.payload) for e in events if e.type == "tool_call_deferred"]
    assert deferred[0] == {
        "tool_call_id": "w1",
        "tool_name": "write_todos",
        "effect": "read",
        "requires_approval": False,
    }
    # Each deferral comes before its record's end.
    first_turn = types[: types.index("turn_completed") + 1]
    assert first_turn.index("tool_call_deferred") < first_turn.index("plan_updated")
    assert first_turn.index("plan_updated") < first_turn.index("tool_call_finished")


INVALID_CALLS: Sequence[tuple[str, str, str]] = [
    # (tool name, argument text, the record's error)
    ("ask_user", "not json", "invalid ask_user arguments: arguments must be a JSON object"),
    ("ask_user", "[1]", "invalid ask_user arguments: arguments must be a JSON object"),
    (
        "ask_user",
        '{"question": NaN}',
        "invalid ask_user arguments: arguments must be a JSON object",
    ),
    (
        "ask_user",
        '{"question": "q", "zeta": 1, "beta": 2, "\u00e9": 3}',
        'invalid ask_user arguments: unknown argument "beta"',
    ),
    (
        # Code point order, not UTF-16 order: U+FF21 sorts before U+1F600.
        "ask_user",
        '{"question": "q", "\U0001f600": 1, "\uff21": 2}',
        'invalid ask_user arguments: unknown argument "\uff21"',
    ),
    ("ask_user", "{}", "invalid ask_user arguments: question must be a non-blank string"),
    (
        "ask_user",
        '{"question": "q", "choices": "a"}',
        "invalid ask_user arguments: choices must be a list of strings",
    ),
    (
        "ask_user",
        '{"question": "q", "allows_free_text": "yes"}',
        "invalid ask_user arguments: allows_free_text must be a boolean",
    ),
    (
        "ask_user",
        '{"question": "q", "choices": null, "allows_free_text": false}',
        "invalid ask_user arguments: allows_free_text is false but there are no choices",
    ),
    (
        "durable_wait",
        '{"seconds": Infinity, "reason": "r"}',
        "invalid durable_wait arguments: arguments must be a JSON object",
    ),
    (
        "durable_wait",
        '{"seconds": 0, "reason": "r"}',
        "invalid durable_wait arguments: seconds must be at least 1",
    ),
    (
        "durable_wait",
        '{"seconds": 61, "reason": "r"}',
        "invalid durable_wait arguments: seconds must be at most 60",
    ),
    (
        "durable_wait",
        '{"seconds": 1.5, "reason": "r"}',
        "invalid durable_wait arguments: seconds must be an integer",
    ),
    (
        "durable_wait",
        '{"seconds": true, "reason": "r"}',
        "invalid durable_wait arguments: seconds must be an integer",
    ),
    (
        "durable_wait",
        '{"seconds": 5, "reason": null}',
        "invalid durable_wait arguments: reason must be a string",
    ),
    (
        "durable_wait",
        '{"seconds": 5, "reason": "r", "until": 1}',
        'invalid durable_wait arguments: unknown argument "until"',
    ),
]

INVALID_TODOS: Sequence[tuple[str, str]] = [
    ("nope", "invalid todos: arguments must be a JSON object"),
    (
        '{"todos": [{"content": "a", "status": NaN}]}',
        "invalid todos: arguments must be a JSON object",
    ),
    ('{"todos": "x"}', "invalid todos: todos must be a list"),
    ('{"todos": [1]}', "invalid todos: todos[0] must be an object"),
    (
        '{"todos": [{"content": "a", "status": "pending", "b": 1, "a": 2}]}',
        'invalid todos: todos[0] has unknown field "a"',
    ),
    (
        '{"todos": [{"content": "a", "status": "pending"}, {"content": " ", "status": "pending"}]}',
        "invalid todos: todos[1].content must be a non-blank string",
    ),
    (
        '{"todos": [{"content": "a", "status": "done"}]}',
        "invalid todos: todos[0].status must be pending, in_progress or completed",
    ),
    ('{"todos": [], "z": 1, "y": 2}', 'invalid todos: unknown argument "y"'),
]


def test_invalid_built_in_calls_fail_in_run_model(factory_harness: FactoryHarness) -> None:
    # One response with every invalid ask_user and durable_wait call; then one
    # write_todos per turn, since two write_todos in a response fail together.
    calls = [
        raw_arguments(f"c{index}", name, text)
        for index, (name, text, _) in enumerate(INVALID_CALLS)
    ]
    script: list[list[ModelReply]] = [[ModelReply(tool_calls=calls), ModelReply(text="sorry")]]
    script.extend(
        [ModelReply(tool_calls=[raw_arguments("t", "write_todos", text)]), ModelReply(text="no")]
        for text, _ in INVALID_TODOS
    )
    h = factory_harness(
        FACTORY,
        scripted_config(script, built_in_tools=ALL_BUILT_INS, max_durable_wait_seconds=60),
    )
    session = h.start("try them")
    h.wait_idle(session, 1)
    assert_step_shape(h.history(session), ["RunModel", "ResumeTurn", "RunModel"])
    (resumed,) = h.log.entries("model", turn="turn-1", call=1)
    assert resumed["tool_results"] == {
        f"c{index}": f"The tool call failed: {error}"
        for index, (_, _, error) in enumerate(INVALID_CALLS)
    }
    for turn, (_, error) in enumerate(INVALID_TODOS, start=2):
        assert h.client.send_user_message(session, f"todos {turn}")
        snapshot = h.wait_idle(session, turn)
        (seen,) = h.log.entries("model", turn=f"turn-{turn}", call=1)
        assert seen["tool_results"] == {"t": f"The tool call failed: {error}"}, turn
        assert snapshot.plan is None
    finished = _payloads(h, session, "tool_call_finished", 1 + len(INVALID_TODOS))
    assert len(finished) == len(INVALID_CALLS) + len(INVALID_TODOS)
    assert {p["status"] for p in finished} == {"failed"}


def test_two_write_todos_in_one_response_both_fail(factory_harness: FactoryHarness) -> None:
    script = [
        [
            ModelReply(tool_calls=[_write("w1", ("a", "pending")), _write("w2", ("b", "pending"))]),
            ModelReply(text="oops"),
        ]
    ]
    h = factory_harness(FACTORY, scripted_config(script, built_in_tools=["write_todos"]))
    session = h.start("plan")
    snapshot = h.wait_idle(session, 1)
    assert snapshot.plan is None
    (resumed,) = h.log.entries("model", call=1)
    repeated = "The tool call failed: write_todos was called more than once in one response"
    assert resumed["tool_results"] == {"w1": repeated, "w2": repeated}
    assert _payloads(h, session, "plan_updated", 1) == []


def test_disabled_built_in_name_is_an_ordinary_tool(factory_harness: FactoryHarness) -> None:
    script = [
        [
            ModelReply(
                tool_calls=[
                    ScriptedToolCall(
                        tool_call_id="a1", tool_name="ask_user", arguments={"anything": 1}
                    ),
                    _write("w1", ("a", "pending")),
                ]
            ),
            ModelReply(text="done"),
        ]
    ]
    tools = [
        ScriptedTool(name="ask_user", effect=ToolEffect.READ, output="my own ask_user"),
        ScriptedTool(name="write_todos", effect=ToolEffect.READ, output="my own todos"),
    ]
    # Only durable_wait is enabled, so both names belong to the application's tools.
    h = factory_harness(
        FACTORY, scripted_config(script, tools=tools, built_in_tools=["durable_wait"])
    )
    session = h.start("go")
    snapshot = h.wait_idle(session, 1)
    assert snapshot.plan is None
    assert_step_shape(
        h.history(session), ["RunModel", ("CallTool", "CallTool"), "ResumeTurn", "RunModel"]
    )
    (resumed,) = h.log.entries("model", call=1)
    assert resumed["tool_results"] == {"a1": "my own ask_user", "w1": "my own todos"}
    assert h.log.count("tool") == 2


def test_valid_and_invalid_records_keep_their_deferral_order(
    factory_harness: FactoryHarness,
) -> None:
    lookup = ScriptedTool(name="lookup", effect=ToolEffect.READ, output="42")
    script = [
        [
            ModelReply(
                tool_calls=[
                    raw_arguments("bad", "ask_user", "{"),
                    ScriptedToolCall(tool_call_id="r1", tool_name="lookup"),
                    _write("w1", ("a", "pending")),
                ]
            ),
            ModelReply(text="done"),
        ]
    ]
    h = factory_harness(
        FACTORY, scripted_config(script, tools=[lookup], built_in_tools=ALL_BUILT_INS)
    )
    session = h.start("go")
    snapshot = h.wait_idle(session, 1)
    assert snapshot.plan is not None
    assert snapshot.plan.revision == 1
    assert_step_shape(h.history(session), ["RunModel", "CallTool", "ResumeTurn", "RunModel"])
    (resumed,) = h.log.entries("model", call=1)
    assert resumed["tool_results"] == {
        "bad": "The tool call failed: invalid ask_user arguments: arguments must be a JSON object",
        "r1": "42",
        "w1": '{"status":"updated","revision":1,"task_count":1}',
    }
    events = h.events(session, "turn_completed")
    finished = [json.loads(e.payload) for e in events if e.type == "tool_call_finished"]
    assert {(p["tool_call_id"], p["status"]) for p in finished} == {
        ("bad", "failed"),
        ("r1", "succeeded"),
        ("w1", "succeeded"),
    }


def test_null_optional_ask_user_arguments_are_absent(factory_harness: FactoryHarness) -> None:
    text = '{"question": "Which city?", "choices": null, "allows_free_text": null}'
    script = [
        [ModelReply(tool_calls=[raw_arguments("q1", "ask_user", text)]), ModelReply(text="ok")]
    ]
    h = factory_harness(FACTORY, scripted_config(script, built_in_tools=ALL_BUILT_INS))
    session = h.start("ask me")
    waiting = h.wait_snapshot(
        session, lambda s: bool(s.pending_interrupts), what="the ask_user question"
    )
    (interrupt,) = waiting.pending_interrupts
    assert (interrupt.interrupt_id, interrupt.question) == ("q1", "Which city?")
    assert list(interrupt.choices) == []
    assert interrupt.allows_free_text is True
    (record,) = waiting.tool_calls
    assert (record.effect, record.requires_approval) == (ToolEffect.READ, False)
    assert h.client.answer_question(session, "q1", "Paris")
    h.wait_idle(session, 1)
    assert_step_shape(
        h.history(session), ["RunModel", "AwaitQuestionAnswer", "ResumeTurn", "RunModel"]
    )
    (resumed,) = h.log.entries("model", call=1)
    assert resumed["tool_results"] == {"q1": '{"status":"answered","answer":"Paris"}'}
