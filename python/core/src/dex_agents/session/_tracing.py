"""What the session's chat spans say about a model call, by reference or (opt-in) by content.

By reference: the range of stored message sequences the model read, the
sequence keys of the messages this call stores, and the tool call IDs it
requested; the spans never copy message text unless content capture is on.
"""

from __future__ import annotations

from dex_agents_contracts import AgentState, MessageRole

from dex_agents.runner import (
    AgentTurnContext,
    AgentTurnOutcome,
    FrameworkMessage,
    ToolCallsRequested,
    TurnCompleted,
)
from dex_agents.session._schema import sequence_key
from dex_agents.tracing._attributes import Attributes, content_json

__all__ = ["model_call_content", "model_call_references"]


def model_call_references(
    turn: AgentTurnContext, state: AgentState, outcome: AgentTurnOutcome
) -> Attributes:
    """Called before the outcome is stored: its messages take the next sequences."""
    references: Attributes = {"dex.agent.model_call.outcome": _outcome_name(outcome)}
    if turn.messages:
        references["dex.agent.input.first_sequence"] = turn.messages[0].sequence
        references["dex.agent.input.last_sequence"] = turn.messages[-1].sequence
    first = state.next_message_sequence
    if outcome.new_messages:
        references["dex.agent.output.message_sequences"] = [
            sequence_key(first + offset) for offset in range(len(outcome.new_messages))
        ]
    if isinstance(outcome, ToolCallsRequested):
        references["dex.agent.tool_call.ids"] = [call.tool_call_id for call in outcome.tool_calls]
    return references


def model_call_content(turn: AgentTurnContext, outcome: AgentTurnOutcome) -> Attributes:
    """The opt-in content: what the model read and what it answered, as conventions JSON."""
    output: list[FrameworkMessage] = list(outcome.new_messages)
    if isinstance(outcome, ToolCallsRequested):
        output += [
            FrameworkMessage(
                role=MessageRole.ASSISTANT,
                framework_item="",
                tool_call_id=call.tool_call_id,
                tool_name=call.tool_name,
                tool_arguments=call.arguments,
            )
            for call in outcome.tool_calls
        ]
    return {
        "gen_ai.input.messages": content_json(turn.messages),
        "gen_ai.output.messages": content_json(output),
    }


def _outcome_name(outcome: AgentTurnOutcome) -> str:
    if isinstance(outcome, TurnCompleted):
        return "turn_completed"
    if isinstance(outcome, ToolCallsRequested):
        return "tool_calls_requested"
    return "turn_continued"
