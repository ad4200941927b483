"""One turn's AgentEvents as AI SDK UI message stream chunks (ai@7, `v1`).

Pure: no I/O. What the events do not carry (tool arguments, outputs, errors) comes
from a `ToolLookup` the route backs with committed state, so the same events and
the same state always give the same chunks, which lets a reconnect replay a turn.
A RunModel Step execution is one AI SDK step; a later attempt of the open step
sends `reset-step` and restarts with part ids of its own attempt.

A steered turn ends with `turn_steered` and its steered messages start the next
turn in the Stream; the UI message goes on through that turn: one
`steering-message` per steered message, then the next turn's steps, so a steer
reads in the browser as the AI SDK's own streamed steering does.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from dex_agents_contracts import (
    AgentEvent,
    InterruptKind,
    ToolCallStatus,
    decode_interrupt_raised_payload,
    decode_interrupt_resolved_payload,
    decode_reasoning_delta_payload,
    decode_text_delta_payload,
    decode_tool_call_deferred_payload,
    decode_tool_call_finished_payload,
    decode_tool_call_started_payload,
    decode_turn_failed_payload,
    decode_usage_recorded_payload,
)

__all__ = [
    "Chunk",
    "SteeringLookup",
    "ToolFacts",
    "ToolLookup",
    "UiTurnTranslator",
    "message_id_of",
]

Chunk = dict[str, Any]

_MODEL_STEP = "RunModel-"
_ENDS = {
    "turn_completed": "stop",
    "turn_cancelled": "interrupted",
}
_FAILED = {ToolCallStatus.FAILED, ToolCallStatus.OUTCOME_UNKNOWN}


@dataclass(frozen=True, kw_only=True)
class ToolFacts:
    """What committed state says of one tool call."""

    tool_name: str
    arguments: str | None = None
    """JSON text of the arguments; None when state has no record of the call."""
    output: str | None = None
    error: str | None = None


ToolLookup = Callable[[str, AgentEvent], ToolFacts]
"""`(tool_call_id, event)`: the call's facts once `event`'s Step has committed."""

SteeringLookup = Callable[[AgentEvent], Sequence[tuple[str, str]]]
"""`turn_started` of a steered turn -> its steered messages as (UI message id, text)."""


def _no_steering(event: AgentEvent) -> Sequence[tuple[str, str]]:
    return ()


def message_id_of(turn_id: str) -> str:
    """One turn, one UI message: its id, the same on every response of the turn."""
    return f"msg_{turn_id}"


def _usage_json(value: object) -> dict[str, int]:
    fields = ("model_calls", "input_tokens", "output_tokens", "cached_input_tokens")
    return {name: int(getattr(value, name)) for name in (*fields, "reasoning_tokens")}


class UiTurnTranslator:
    """Feeds one turn's events in stream order and returns the chunks each one makes."""

    def __init__(
        self, turn_id: str, lookup: ToolLookup, steering: SteeringLookup = _no_steering
    ) -> None:
        self.turn_id = turn_id
        """The turn the UI message is named after (the first of a steered chain)."""
        self.current_turn = turn_id
        """The turn whose events it reads now: a later one once steering moved on."""
        self.message_id = message_id_of(turn_id)
        self._lookup = lookup
        self._steering = steering
        self.started = False
        self.done = False
        self.awaiting_steered = False
        """A committed `turn_steered` ended the current turn; its successor starts next."""
        self._step: str | None = None
        self._attempt = 0
        self._step_open = False
        self._parts = 0
        self._text: str | None = None
        self._reasoning: str | None = None
        self._tools: dict[str, str] = {}  # tool call id -> the step key that opened it
        self._approvals: dict[str, str] = {}  # pending interrupt id -> tool call id
        self._denied: set[str] = set()

    # --- what the route asks ----------------------------------------------------------

    @property
    def pending_approvals(self) -> frozenset[str]:
        return frozenset(self._approvals)

    def begin(
        self, tool_call_ids: Iterable[str] = (), approvals: Mapping[str, str] | None = None
    ) -> list[Chunk]:
        """`start` for a response that joins the turn midway (after an approval).

        The browser's message already has the parts of `tool_call_ids`, and
        `approvals` (interrupt id -> tool call id) were requested in it.
        """
        for tool_call_id in tool_call_ids:
            self._tools.setdefault(tool_call_id, "")
        self._approvals.update(approvals or {})
        return self._start()

    def follow(self, turn_id: str) -> None:
        """Read `turn_id` from now on, within the same message (a response that joins it)."""
        self.current_turn = turn_id

    def feed(self, event: AgentEvent) -> list[Chunk]:
        if self.done:
            return []
        if self.awaiting_steered and event.type == "turn_started" and event.turn_id:
            return self._steered_turn(event)
        if event.turn_id != self.current_turn:
            return []
        if event.type == "turn_started":
            return self._start()
        out = self._start() if not self.started else []
        handler = _HANDLERS.get(event.type)
        if handler is None:
            return out
        return out + handler(self, event)

    def end(self, event: AgentEvent) -> list[Chunk]:
        """The chunks of a turn end whose Step has committed (the route checks that).

        `turn_steered` finishes nothing: the steered turn it started follows.
        """
        out = self._close_step()
        if event.type == "turn_steered":
            self.awaiting_steered = True
            return out
        if event.type == "turn_failed":
            out.append(
                {"type": "error", "errorText": decode_turn_failed_payload(event.payload).error}
            )
        else:
            out.append({"type": "finish", "finishReason": _ENDS.get(event.type, "other")})
        self.done = True
        return out

    def end_unsteered(self) -> list[Chunk]:
        """A steered end that no steered turn followed (its message could not be stored)."""
        self.awaiting_steered = False
        out = self._close_step()
        out.append({"type": "finish", "finishReason": "other"})
        self.done = True
        return out

    def _steered_turn(self, event: AgentEvent) -> list[Chunk]:
        """The steered messages, each a `steering-message` before the step that reads them."""
        assert event.turn_id is not None
        self.awaiting_steered = False
        self.current_turn = event.turn_id
        out = self._start()
        for message_id, text in self._steering(event):
            out.append(
                {
                    "type": "steering-message",
                    "id": message_id,
                    "parts": [{"type": "text", "text": text}],
                }
            )
        return out

    def pause_for_approvals(self) -> list[Chunk]:
        """The turn waits only for approvals: finish so useChat can send the answers."""
        out = self._close_step()
        out.append({"type": "finish", "finishReason": "tool-calls"})
        self.done = True
        return out

    def end_from_state(self, error: str | None) -> list[Chunk]:
        """Committed state shows the turn ended, and its end event was not read."""
        out = self._close_step()
        if error is not None:
            out.append({"type": "error", "errorText": error})
        else:
            out.append({"type": "finish", "finishReason": "stop"})
        self.done = True
        return out

    # --- steps and parts --------------------------------------------------------------

    def _start(self) -> list[Chunk]:
        if self.started:
            return []
        self.started = True
        return [
            {
                "type": "start",
                "messageId": self.message_id,
                "messageMetadata": {"turnId": self.turn_id},
            }
        ]

    def _step_key(self) -> str:
        return f"{self._step}:{self._attempt}"

    def _enter_model(self, event: AgentEvent) -> list[Chunk] | None:
        """Chunks that put `event` into its model step; None for a superseded attempt."""
        step, attempt = event.step_execution_id, event.attempt
        if self._step_open and step == self._step:
            if attempt < self._attempt:
                return None
            if attempt == self._attempt:
                return []
            key = self._step_key()
            self._tools = {k: v for k, v in self._tools.items() if v != key}
            self._attempt, self._parts = attempt, 0
            self._text = self._reasoning = None
            return [{"type": "reset-step"}]
        out = self._close_step()
        self._step, self._attempt, self._step_open, self._parts = step, attempt, True, 0
        out.append({"type": "start-step"})
        return out

    def _close_step(self) -> list[Chunk]:
        out = self._end_parts()
        if self._step_open:
            out.append({"type": "finish-step"})
            self._step_open = False
        return out

    def _end_parts(self) -> list[Chunk]:
        out: list[Chunk] = []
        if self._text is not None:
            out.append({"type": "text-end", "id": self._text})
            self._text = None
        if self._reasoning is not None:
            out.append({"type": "reasoning-end", "id": self._reasoning})
            self._reasoning = None
        return out

    def _new_part(self, kind: str) -> str:
        self._parts += 1
        return f"{self._step_key()}:{kind}{self._parts}"

    def _context(self, event: AgentEvent) -> list[Chunk] | None:
        """Model-step events enter their step; any other Step's events close it."""
        if event.step_execution_id.startswith(_MODEL_STEP):
            return self._enter_model(event)
        return self._close_step()

    # --- events -----------------------------------------------------------------------

    def _delta(self, event: AgentEvent, kind: str) -> list[Chunk]:
        out = self._context(event)
        if out is None:
            return []
        if kind == "text":
            text = decode_text_delta_payload(event.payload).text
            if self._reasoning is not None:
                out.append({"type": "reasoning-end", "id": self._reasoning})
                self._reasoning = None
            if self._text is None:
                self._text = self._new_part("t")
                out.append({"type": "text-start", "id": self._text})
            out.append({"type": "text-delta", "id": self._text, "delta": text})
        else:
            text = decode_reasoning_delta_payload(event.payload).text
            if self._text is not None:
                out.append({"type": "text-end", "id": self._text})
                self._text = None
            if self._reasoning is None:
                self._reasoning = self._new_part("r")
                out.append({"type": "reasoning-start", "id": self._reasoning})
            out.append({"type": "reasoning-delta", "id": self._reasoning, "delta": text})
        return out

    def _text_delta(self, event: AgentEvent) -> list[Chunk]:
        return self._delta(event, "text")

    def _reasoning_delta(self, event: AgentEvent) -> list[Chunk]:
        return self._delta(event, "reasoning")

    def _tool_input(self, tool_call_id: str, tool_name: str, event: AgentEvent) -> list[Chunk]:
        if tool_call_id in self._tools:
            return []
        facts = self._lookup(tool_call_id, event)
        try:
            arguments = json.loads(facts.arguments) if facts.arguments else {}
        except ValueError:
            arguments = facts.arguments
        self._tools[tool_call_id] = self._step_key() if self._step_open else ""
        base = {"toolCallId": tool_call_id, "toolName": tool_name, "dynamic": True}
        return [
            {"type": "tool-input-start", **base},
            {"type": "tool-input-available", **base, "input": arguments},
        ]

    def _deferred(self, event: AgentEvent) -> list[Chunk]:
        out = self._context(event)
        if out is None:
            return []
        payload = decode_tool_call_deferred_payload(event.payload)
        out += self._end_parts()
        return out + self._tool_input(payload.tool_call_id, payload.tool_name, event)

    def _tool_started(self, event: AgentEvent) -> list[Chunk]:
        out = self._context(event)
        if out is None:
            return []
        payload = decode_tool_call_started_payload(event.payload)
        return (
            out
            + self._end_parts()
            + self._tool_input(payload.tool_call_id, payload.tool_name, event)
        )

    def _tool_finished(self, event: AgentEvent) -> list[Chunk]:
        out = self._context(event)
        if out is None:
            return []
        payload = decode_tool_call_finished_payload(event.payload)
        call = payload.tool_call_id
        out += self._end_parts() + self._tool_input(call, payload.tool_name, event)
        if payload.status is ToolCallStatus.REJECTED:
            if call not in self._denied:
                self._denied.add(call)
                out.append({"type": "tool-output-denied", "toolCallId": call})
            return out
        facts = self._lookup(call, event)
        if payload.status in _FAILED:
            error = facts.error or f"the tool call ended {payload.status.name.lower()}"
            out.append({"type": "tool-output-error", "toolCallId": call, "errorText": error})
        else:
            out.append(
                {
                    "type": "tool-output-available",
                    "toolCallId": call,
                    "output": facts.output,
                    "dynamic": True,
                }
            )
        return out

    def _interrupt_raised(self, event: AgentEvent) -> list[Chunk]:
        out = self._context(event)
        if out is None:
            return []
        payload = decode_interrupt_raised_payload(event.payload)
        out += self._end_parts()
        if payload.kind is InterruptKind.TOOL_APPROVAL:
            out += self._tool_input(payload.tool_call_id, payload.tool_name, event)
            self._approvals[payload.interrupt_id] = payload.tool_call_id
            out.append(
                {
                    "type": "tool-approval-request",
                    "approvalId": payload.interrupt_id,
                    "toolCallId": payload.tool_call_id,
                }
            )
            return out
        data = {
            "interruptId": payload.interrupt_id,
            "toolCallId": payload.tool_call_id,
            "question": payload.question,
            "choices": list(payload.choices),
            "allowsFreeText": payload.allows_free_text,
            "answered": False,
        }
        out.append({"type": "data-question", "id": payload.interrupt_id, "data": data})
        return out

    def _interrupt_resolved(self, event: AgentEvent) -> list[Chunk]:
        out = self._context(event)
        if out is None:
            return []
        payload = decode_interrupt_resolved_payload(event.payload)
        if payload.kind is not InterruptKind.TOOL_APPROVAL:
            return out
        call = self._approvals.pop(payload.interrupt_id, None)
        response: Chunk = {
            "type": "tool-approval-response",
            "approvalId": payload.interrupt_id,
            "approved": payload.approved,
        }
        if payload.rejection_message is not None:
            response["reason"] = payload.rejection_message
        out.append(response)
        if not payload.approved and call is not None and call not in self._denied:
            self._denied.add(call)
            out.append({"type": "tool-output-denied", "toolCallId": call})
        return out

    def _usage_recorded(self, event: AgentEvent) -> list[Chunk]:
        out = self._context(event)
        if out is None:
            return []
        recorded = decode_usage_recorded_payload(event.payload).recorded
        # Keyed by Step execution: the AI SDK merges metadata deeply, so every response
        # of the turn adds its model calls, and a retried attempt replaces its own.
        usage = {event.step_execution_id: _usage_json(recorded)}
        out.append({"type": "message-metadata", "messageMetadata": {"usage": usage}})
        return out

    def _plan_updated(self, event: AgentEvent) -> list[Chunk]:
        out = self._context(event)
        if out is None:
            return []
        out.append({"type": "data-plan", "id": "plan", "data": json.loads(event.payload)})
        return out

    def _timer_started(self, event: AgentEvent) -> list[Chunk]:
        out = self._context(event)
        if out is None:
            return []
        data = json.loads(event.payload)
        out.append(
            {"type": "data-timer", "id": data.get("tool_call_id"), "data": data, "transient": True}
        )
        return out


_HANDLERS: dict[str, Callable[[UiTurnTranslator, AgentEvent], list[Chunk]]] = {
    "text_delta": UiTurnTranslator._text_delta,
    "reasoning_delta": UiTurnTranslator._reasoning_delta,
    "tool_call_deferred": UiTurnTranslator._deferred,
    "tool_call_started": UiTurnTranslator._tool_started,
    "tool_call_finished": UiTurnTranslator._tool_finished,
    "interrupt_raised": UiTurnTranslator._interrupt_raised,
    "interrupt_resolved": UiTurnTranslator._interrupt_resolved,
    "usage_recorded": UiTurnTranslator._usage_recorded,
    "plan_updated": UiTurnTranslator._plan_updated,
    "timer_started": UiTurnTranslator._timer_started,
}
