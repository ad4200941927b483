"""The UI chunks of an ended turn rebuilt from its stored messages.

Once the Stream has trimmed a turn's events, its committed messages are what is
left. They make the message convertAgentSnapshotToUIMessages makes of them: each
model call a step, tool calls dynamic tool parts with their stored results, a user
message inside the turn a `steering-message` starting the next step. What only
events carried (reasoning, usage, attempts, denials) is not in them.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from dex_agents_contracts import AgentMessage, MessageRole

from dex_agents.http._ui_translate import Chunk, message_id_of

__all__ = ["stored_turn_chunks"]


def _arguments(text: str | None) -> object:
    if not text:
        return {}
    try:
        return json.loads(text)
    except ValueError:
        return text


class _Rebuild:
    def __init__(self) -> None:
        self.out: list[Chunk] = []
        self.step_open = False
        self.tools: set[str] = set()

    def enter_step(self) -> None:
        if not self.step_open:
            self.out.append({"type": "start-step"})
            self.step_open = True

    def close_step(self) -> None:
        if self.step_open:
            self.out.append({"type": "finish-step"})
            self.step_open = False

    def tool_input(self, message: AgentMessage) -> None:
        call = message.tool_call_id or ""
        if call in self.tools:
            return
        self.tools.add(call)
        base = {"toolCallId": call, "toolName": message.tool_name or "", "dynamic": True}
        self.out.append({"type": "tool-input-start", **base})
        self.out.append(
            {"type": "tool-input-available", **base, "input": _arguments(message.tool_arguments)}
        )

    def assistant(self, message: AgentMessage) -> None:
        self.enter_step()
        if message.tool_call_id is not None:
            self.tool_input(message)
        elif message.text:
            part = f"stored-{message.sequence}:t"
            self.out.append({"type": "text-start", "id": part})
            self.out.append({"type": "text-delta", "id": part, "delta": message.text})
            self.out.append({"type": "text-end", "id": part})

    def tool_result(self, message: AgentMessage) -> None:
        self.close_step()
        call = message.tool_call_id or ""
        self.tool_input(message)
        self.out.append(
            {
                "type": "tool-output-available",
                "toolCallId": call,
                "output": message.tool_output or "",
                "dynamic": True,
            }
        )

    def steering(self, message: AgentMessage) -> None:
        self.close_step()
        self.out.append(
            {
                "type": "steering-message",
                "id": f"user_{message.sequence}",
                "parts": [{"type": "text", "text": message.text or ""}],
            }
        )


def stored_turn_chunks(
    turn_id: str, messages: Sequence[AgentMessage], error: str | None
) -> list[Chunk]:
    """`start`, the parts of `turn_id`'s stored messages, then `finish` (or `error`)."""
    rebuild = _Rebuild()
    rebuild.out.append(
        {
            "type": "start",
            "messageId": message_id_of(turn_id),
            "messageMetadata": {"turnId": turn_id},
        }
    )
    opening = True  # the user messages the turn starts with are the user's own message
    for message in sorted((m for m in messages if m.turn_id == turn_id), key=lambda m: m.sequence):
        if message.role is MessageRole.USER:
            if not opening:
                rebuild.steering(message)
            continue
        opening = False
        if message.role is MessageRole.TOOL:
            rebuild.tool_result(message)
        else:
            rebuild.assistant(message)
    rebuild.close_step()
    if error is not None:
        rebuild.out.append({"type": "error", "errorText": error})
    else:
        rebuild.out.append({"type": "finish", "finishReason": "stop"})
    return rebuild.out
