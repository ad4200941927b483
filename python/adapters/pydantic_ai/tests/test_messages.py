"""Stored messages: pieces per tool call and result, joined back exactly on load."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from dex_agents.runner import FrameworkItemError
from dex_agents_contracts import AgentMessage, MessageRole
from dex_agents_pydantic_ai._messages import (
    history_from_stored,
    new_item_cache,
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
            role=m.role,
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


def test_a_cached_history_is_the_same_history_and_decodes_only_new_messages() -> None:
    cache = new_item_cache()
    stored = _stored(CONVERSATION)
    first = history_from_stored(stored[:5], cache)
    assert cache.misses == 5
    # Joining pieces builds new messages: the cached first pieces stay as stored.
    assert _dump(history_from_stored(stored[:5], cache)) == _dump(first)
    assert _dump(history_from_stored(stored, cache)) == _dump(CONVERSATION)
    assert (cache.hits, cache.misses) == (10, 8)


def test_a_change_to_a_loaded_message_does_not_reach_the_next_load() -> None:
    cache = new_item_cache()
    stored = _stored(CONVERSATION)
    history = history_from_stored(stored, cache)
    history[-1].metadata = {"set": "by the framework"}
    assert _dump(history_from_stored(stored, cache)) == _dump(CONVERSATION)


def test_a_broken_item_names_its_sequence_with_or_without_the_cache() -> None:
    stored = _stored(CONVERSATION)
    stored[3].framework_item = '{"kind": "not a message"}'
    for cache in (None, new_item_cache()):
        with pytest.raises(FrameworkItemError, match="stored message 4 is not a Pydantic AI"):
            history_from_stored(stored, cache)
