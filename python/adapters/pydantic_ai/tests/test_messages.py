"""Stored messages: pieces per tool call and result, joined back exactly on load."""

from __future__ import annotations

from datetime import UTC, datetime

from dex_agents_contracts import AgentMessage, MessageRole
from dex_agents_pydantic_ai._messages import (
    history_from_stored,
    to_framework_messages,
    usage_of,
)
from pydantic_ai import ModelMessagesTypeAdapter
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    TextPart,
    ThinkingPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from pydantic_ai.usage import RequestUsage


def _stored(messages: list[ModelMessage]) -> list[AgentMessage]:
    return [
        AgentMessage(
            sequence=i + 1,
            turn_id="turn-1",
            role=m.message_role,
            text=m.text,
            tool_call_id=m.tool_call_id,
            tool_name=m.tool_name,
            tool_arguments=m.tool_arguments,
            tool_output=m.tool_output,
            framework_item=m.framework_item,
            created_at=datetime.now(UTC),
        )
        for i, m in enumerate(to_framework_messages(messages))
    ]


def _dump(messages: list[ModelMessage]) -> bytes:
    return ModelMessagesTypeAdapter.dump_json(messages)


CONVERSATION: list[ModelMessage] = [
    ModelRequest(parts=[UserPromptPart(content="hi")], metadata={"app": 1}),
    ModelResponse(
        parts=[
            ThinkingPart(content="hmm"),
            TextPart(content="Let me look."),
            ToolCallPart("a", {"x": 1}, tool_call_id="c1"),
            TextPart(content="and"),
            ToolCallPart("b", {"y": 2}, tool_call_id="c2"),
            ToolCallPart("c", {}, tool_call_id="c3"),
        ],
        usage=RequestUsage(input_tokens=10, output_tokens=5),
        model_name="m",
        provider_response_id="resp-1",
        metadata={"app": "kept"},
    ),
    ModelRequest(
        parts=[
            ToolReturnPart("a", "A", tool_call_id="c1"),
            ToolReturnPart("b", {"n": 2}, tool_call_id="c2"),
            ToolReturnPart("c", "C", tool_call_id="c3"),
        ]
    ),
    ModelResponse(parts=[TextPart(content="Done.")]),
]


def test_pieces_join_back_exactly() -> None:
    stored = _stored(CONVERSATION)
    assert len(stored) == 8
    assert _dump(history_from_stored(stored)) == _dump(CONVERSATION)


def test_each_piece_has_display_fields() -> None:
    stored = _stored(CONVERSATION)
    assert [(m.role, m.tool_call_id, m.tool_name) for m in stored] == [
        (MessageRole.USER, None, None),
        (MessageRole.ASSISTANT, "c1", "a"),
        (MessageRole.ASSISTANT, "c2", "b"),
        (MessageRole.ASSISTANT, "c3", "c"),
        (MessageRole.TOOL, "c1", "a"),
        (MessageRole.TOOL, "c2", "b"),
        (MessageRole.TOOL, "c3", "c"),
        (MessageRole.ASSISTANT, None, None),
    ]
    assert stored[0].text == "hi"
    assert stored[1].text == "Let me look."
    assert stored[2].text == "and"
    assert stored[1].tool_arguments == '{"x":1}'
    assert [m.tool_output for m in stored[4:7]] == ["A", '{"n":2}', "C"]
    assert stored[7].text == "Done."


def test_a_piece_without_its_first_part_stands_alone() -> None:
    stored = _stored(CONVERSATION)[2:]  # retention deleted the first two messages
    history = history_from_stored(stored)
    assert isinstance(history[0], ModelResponse)
    assert history[0].metadata == {"app": "kept"}
    assert [type(m).__name__ for m in history] == [
        "ModelResponse",
        "ModelRequest",
        "ModelResponse",
    ]


def test_usage_sums_the_responses() -> None:
    responses = [m for m in CONVERSATION if isinstance(m, ModelResponse)]
    usage = usage_of(responses)
    assert (usage.model_calls, usage.input_tokens, usage.output_tokens) == (2, 10, 5)
