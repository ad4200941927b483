"""The Step timeline of a session, built from its Flow history (pure: no Dex calls)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from dex.dexpb import dex_pb2 as pb

from dex_agents.history import TURN_START_STEPS

__all__ = ["TimelineEntry", "build_timeline"]

_IDLE_STEPS = TURN_START_STEPS | {"AwaitUserMessage"}
_STEP_KINDS = {
    "step_wait_for_completed": ("wait", False),
    "step_wait_for_failed": ("wait", True),
    "step_execute_completed": ("execute", False),
    "step_execute_failed": ("execute", True),
}


@dataclass
class TimelineEntry:
    """One commit of the run: a Step phase, an RPC, the close, or a Step still active."""

    at_seconds: float
    """Since the run started."""
    kind: str
    """`wait`, `execute`, `rpc`, `closed`, or `running` / `waiting` for active Steps."""
    name: str
    """The Step execution ID (`RunModel-3`), the RPC name, or the close status."""
    step_type: str = ""
    turn: int = 0
    """1-based turn the entry belongs to; 0 before the first turn."""
    duration_seconds: float | None = None
    attempts: int = 1
    failed: bool = False
    notes: list[str] = field(default_factory=list)


def _seconds(timestamp: object) -> float:
    return float(timestamp.seconds) + float(timestamp.nanos) / 1e9  # type: ignore[attr-defined]


def _failure_text(failure: pb.StepMethodFailure) -> str:
    details = failure.details
    text = failure.backend_error or details.original_worker_error_detail or details.detail
    error_type = details.original_worker_error_type
    if error_type and error_type not in text:
        text = f"{error_type}: {text}" if text else error_type
    return text.strip().splitlines()[0] if text.strip() else "no detail"


def _is_kill(text: str) -> bool:
    """The failures Dex records when a Worker went away mid-attempt."""
    lowered = text.lower()
    return "stream closed" in lowered or ("worker" in lowered and "lost" in lowered)


def _retry_note(attempts: int, failure: pb.StepMethodFailure | None) -> str | None:
    if attempts <= 1:
        return None
    if failure is None or not failure.ListFields():
        return f"retried: attempt {attempts}"
    text = _failure_text(failure)
    cause = "Worker killed or lost" if _is_kill(text) else "failed"
    previous = failure.attempt or attempts - 1
    return f"retried: attempt {previous} {cause} ({text}); attempt {attempts} committed"


def build_timeline(
    history: Sequence[pb.FlowHistoryEvent],
    active: Sequence[pb.ActiveStepExecutionState] = (),
    *,
    now_seconds: float | None = None,
) -> list[TimelineEntry]:
    """Entries in commit order, then the active Steps; `now_seconds` (epoch) ages those."""
    entries: list[TimelineEntry] = []
    origin: float | None = None
    turn = 0
    # A turn-start Step's Execute opens a turn only when a turn Step follows it (an idle
    # StartAgentSession moves straight on to AwaitUserMessage), so count turns then.
    opening: list[TimelineEntry] = []
    waits_ended: dict[str, float] = {}
    for event in history:
        kind = event.WhichOneof("payload")
        at = _seconds(event.event_time)
        if origin is None:
            origin = at
        if kind in _STEP_KINDS:
            phase, failed = _STEP_KINDS[kind]
            payload = getattr(event, kind)
            context = payload.context
            started = _seconds(context.started_time) if context.HasField("started_time") else at
            entry = TimelineEntry(
                at_seconds=started - origin,
                kind=phase,
                name=context.step_execution_id,
                step_type=context.step_type,
                duration_seconds=_seconds(context.duration)
                if context.HasField("duration")
                else None,
                attempts=max(1, context.final_attempt),
                failed=failed,
            )
            if phase == "execute" and not failed and context.step_type in TURN_START_STEPS:
                opening = [entry]
            elif opening and context.step_type not in _IDLE_STEPS:
                turn += 1
                for started_entry in opening:
                    started_entry.turn = turn
                opening = []
            elif opening:
                opening.append(entry)
            entry.turn = turn
            last = context.last_failure_info if context.HasField("last_failure_info") else None
            note = _retry_note(entry.attempts, last)
            if note:
                entry.notes.append(note)
            if failed:
                entry.notes.append(
                    f"failed after {entry.attempts} attempt(s): "
                    f"{_failure_text(payload.output.failure)}"
                )
            if phase == "wait":
                waits_ended[context.step_execution_id] = at
            elif context.step_execution_id in waits_ended:
                waited = started - waits_ended.pop(context.step_execution_id)
                entry.notes.append(f"waited {waited:.1f} s")
            entries.append(entry)
        elif kind == "rpc_execution_completed":
            entries.append(
                TimelineEntry(
                    at_seconds=at - origin,
                    kind="rpc",
                    name=event.rpc_execution_completed.rpc_name,
                    turn=turn,
                )
            )
        elif kind == "flow_closed":
            closed = event.flow_closed
            status = pb.FlowStatus.Name(closed.flow_status) if closed.flow_status else "closed"
            entry = TimelineEntry(at_seconds=at - origin, kind="closed", name=status, turn=turn)
            if closed.error_message:
                entry.notes.append(closed.error_message)
            entries.append(entry)
    for step in active:
        waiting = step.phase == pb.ACTIVE_STEP_PHASE_WAITING
        entry = TimelineEntry(
            at_seconds=(now_seconds - origin) if now_seconds and origin else 0.0,
            kind="waiting" if waiting else "running",
            name=step.step_execution_id,
            step_type=step.step_type,
            turn=turn,
        )
        if step.step_execution_id in waits_ended and now_seconds is not None:
            entry.notes.append(f"waiting {now_seconds - waits_ended[step.step_execution_id]:.1f} s")
        if step.HasField("last_failure_info") and step.last_failure_info.ListFields():
            text = _failure_text(step.last_failure_info)
            cause = "Worker killed or lost" if _is_kill(text) else "failed"
            entry.notes.append(f"attempt {step.last_failure_info.attempt or 1} {cause} ({text})")
        entries.append(entry)
    return entries
