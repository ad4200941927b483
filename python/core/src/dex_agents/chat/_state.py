"""What the chat shows, folded from AgentEvents and committed snapshots (pure: no I/O).

Live text follows the design's rule: grouped by Step execution, only the highest
attempt is kept (a retried RunModel drops the killed attempt's partial text), and
when a turn ends its live text gives way to the stored messages.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field

from dex_agents_contracts import (
    AgentEvent,
    AgentInterrupt,
    AgentMessage,
    AgentSnapshot,
    InterruptKind,
    MessageRole,
)

__all__ = [
    "TURN_END_EVENTS",
    "ChatState",
    "LivePart",
    "Output",
    "answer_line",
    "interrupt_prompt",
    "transcript_line",
]

TURN_END_EVENTS = frozenset({"turn_completed", "turn_failed", "turn_steered", "turn_cancelled"})


@dataclass(frozen=True)
class Output:
    """One line printed above the live area, with a rich style name."""

    text: str
    style: str = ""


@dataclass
class LivePart:
    step_execution_id: str
    attempt: int
    text: str = ""
    reasoning: str = ""


@dataclass
class ChatState:
    session_id: str = ""
    turn_id: str | None = None
    live: dict[str, LivePart] = field(default_factory=dict)
    """Live text of the active turn's Step executions, in first-seen order."""
    step: str | None = None
    """The Step execution the newest event came from."""
    step_since: float = 0.0
    tools: dict[str, str] = field(default_factory=dict)
    """Tool call ID to tool name, for the active turn."""
    pending: list[AgentInterrupt] = field(default_factory=list)
    """Interrupts committed state shows pending (the prompts)."""
    usage_line: str = ""
    problem: str | None = None
    """Why the chat cannot follow the session right now (a dropped server)."""
    closed: str | None = None

    # --- events ---------------------------------------------------------------------

    def apply(self, event: AgentEvent, now: float | None = None) -> list[Output]:
        """Folds one event in; returns the lines to print."""
        now = time.monotonic() if now is None else now
        payload = _payload(event)
        if event.step_execution_id and event.step_execution_id != self.step:
            self.step, self.step_since = event.step_execution_id, now
        kind = event.type
        if kind == "turn_started":
            self.turn_id = event.turn_id
            self.live.clear()
            self.tools.clear()
            return [Output(f"── {event.turn_id} ──", "dim")]
        if kind in ("text_delta", "reasoning_delta"):
            return self._delta(event, str(payload.get("text", "")), kind == "text_delta")
        if kind == "tool_call_deferred":
            name = str(payload.get("tool_name", ""))
            self.tools[str(payload.get("tool_call_id", ""))] = name
            approval = ", needs approval" if payload.get("requires_approval") else ""
            return [
                Output(
                    f"⚙ {name} [{payload.get('tool_call_id')}] "
                    f"({payload.get('effect', 'unclassified')}{approval})",
                    "cyan",
                )
            ]
        if kind == "tool_call_started":
            return [
                Output(
                    f"▶ {payload.get('tool_name')} [{payload.get('tool_call_id')}] running "
                    f"in {event.step_execution_id} (attempt {event.attempt})",
                    "cyan",
                )
            ]
        if kind == "tool_call_finished":
            status = str(payload.get("status", ""))
            mark = "✓" if status == "succeeded" else "✗"
            style = "green" if status == "succeeded" else "red"
            return [
                Output(
                    f"{mark} {payload.get('tool_name')} [{payload.get('tool_call_id')}] {status}",
                    style,
                )
            ]
        if kind == "interrupt_raised":
            what = payload.get("question") or payload.get("tool_name")
            return [Output(f"? {payload.get('kind', 'approval')} requested: {what}", "yellow")]
        if kind == "interrupt_resolved":
            return self._resolved(payload)
        if kind in TURN_END_EVENTS:
            return [self._turn_end_line(kind, payload)]
        if kind == "usage_recorded":
            session = payload.get("session")
            if isinstance(session, dict):
                self.usage_line = (
                    f"{session.get('model_calls', 0)} model calls, "
                    f"{session.get('input_tokens', 0)} in / "
                    f"{session.get('output_tokens', 0)} out tokens"
                )
            return []
        if kind == "plan_updated":
            return [
                Output(
                    f"plan revision {payload.get('revision')}: {payload.get('status')}, "
                    f"{payload.get('task_count', 0)} task(s) (/plan shows it, /execute runs it)",
                    "magenta",
                )
            ]
        if kind == "plan_execution_started":
            return [Output(f"executing plan revision {payload.get('revision')}", "magenta")]
        if kind == "timer_started":
            return [
                Output(
                    f"⏲ waiting until {payload.get('wait_until')} ({payload.get('reason', '')})",
                    "cyan",
                )
            ]
        if kind == "tool_task_started":
            return [
                Output(
                    f"▶ {payload.get('tool_name')} started task {payload.get('task_id')}", "cyan"
                )
            ]
        if kind in ("compaction_started", "compaction_finished"):
            return [
                Output(
                    f"{kind.replace('_', ' ')} (through {payload.get('through_sequence')})", "dim"
                )
            ]
        return [Output(f"{kind}: {event.payload}", "dim")]

    def _delta(self, event: AgentEvent, text: str, is_text: bool) -> list[Output]:
        key = event.step_execution_id or "step"
        part = self.live.get(key)
        out: list[Output] = []
        if part is not None and event.attempt < part.attempt:
            return out  # a late delta of a superseded attempt
        if part is None or event.attempt > part.attempt:
            if part is not None:
                out.append(
                    Output(
                        f"↻ {key} attempt {event.attempt}: the earlier attempt stopped "
                        f"(its partial text is dropped)",
                        "yellow",
                    )
                )
            part = LivePart(key, event.attempt)
            self.live[key] = part
        if is_text:
            part.text += text
        else:
            part.reasoning += text
        return out

    def _resolved(self, payload: dict[str, object]) -> list[Output]:
        interrupt_id = str(payload.get("interrupt_id", ""))
        self.pending = [i for i in self.pending if i.interrupt_id != interrupt_id]
        reason = payload.get("cancellation_reason")
        if reason:
            verdict = f"withdrawn ({reason})"
        elif payload.get("kind") == "question":
            verdict = "answered" if payload.get("answered") else "declined"
        else:
            verdict = "approved" if payload.get("approved") else "rejected"
        return [Output(f"{interrupt_id}: {verdict}", "yellow")]

    @staticmethod
    def _turn_end_line(kind: str, payload: dict[str, object]) -> Output:
        if kind == "turn_failed":
            return Output(f"turn failed: {payload.get('error')}", "bold red")
        if kind == "turn_steered":
            return Output("turn steered: the steered message starts the next turn", "yellow")
        if kind == "turn_cancelled":
            return Output("turn cancelled", "yellow")
        return Output("", "")

    # --- committed state ------------------------------------------------------------

    def add_pending(self, interrupt: AgentInterrupt) -> None:
        if all(i.interrupt_id != interrupt.interrupt_id for i in self.pending):
            self.pending.append(interrupt)

    def finish_turn(self, turn_id: str, snapshot: AgentSnapshot) -> list[Output]:
        """The turn's stored answer replaces its live text."""
        lines = [
            answer_line(m)
            for m in snapshot.messages
            if m.turn_id == turn_id and m.role is MessageRole.ASSISTANT and m.text
        ]
        if self.turn_id == turn_id:
            self.turn_id = None
            self.live.clear()
            self.step = None
        self.pending = list(snapshot.pending_interrupts)
        return lines

    def attach(self, snapshot: AgentSnapshot) -> list[Output]:
        """Resuming: the stored conversation so far, and what the session waits for."""
        lines = [transcript_line(m) for m in snapshot.messages[-20:]]
        state = snapshot.state
        if state is not None and state.active_turn_id:
            self.turn_id = state.active_turn_id
            lines.append(
                Output(f"{state.active_turn_id} is running ({state.status.name.lower()})", "dim")
            )
        for call in snapshot.tool_calls:
            self.tools[call.tool_call_id] = call.tool_name
            lines.append(
                Output(
                    f"⚙ {call.tool_name} [{call.tool_call_id}] {call.status.name.lower()}", "cyan"
                )
            )
        self.pending = list(snapshot.pending_interrupts)
        return lines

    # --- what the prompt acts on ----------------------------------------------------

    def first_pending(self) -> AgentInterrupt | None:
        return self.pending[0] if self.pending else None

    def busy(self) -> bool:
        return self.turn_id is not None


def answer_line(message: AgentMessage) -> Output:
    return Output(f"agent > {message.text}", "bold")


def transcript_line(message: AgentMessage) -> Output:
    if message.role is MessageRole.USER:
        return Output(f"you > {message.text}", "")
    if message.role is MessageRole.TOOL:
        return Output(f"  {message.tool_name} → {message.tool_output}", "dim")
    if message.tool_call_id:
        return Output(f"  calls {message.tool_name}({message.tool_arguments})", "dim")
    return answer_line(message)


def interrupt_prompt(interrupt: AgentInterrupt, now_epoch: float | None = None) -> str:
    """The prompt line of a pending approval or question, with its countdown."""
    now_epoch = time.time() if now_epoch is None else now_epoch
    if interrupt.deadline is not None:
        left = max(0, int(interrupt.deadline.timestamp() - now_epoch))
        countdown = f" — {left // 60}:{left % 60:02d} left"
    else:
        countdown = " — no deadline"
    if interrupt.kind is InterruptKind.QUESTION:
        choices = "".join(f"  {n}) {c}" for n, c in enumerate(interrupt.choices, 1))
        return f"? {interrupt.question}{choices}  (type the answer, /decline){countdown}"
    return (
        f"? approve {interrupt.tool_name}({interrupt.arguments}) [{interrupt.interrupt_id}]"
        f"  y = approve, n [reason] = reject{countdown}"
    )


def _payload(event: AgentEvent) -> dict[str, object]:
    try:
        value = json.loads(event.payload or "{}")
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}
