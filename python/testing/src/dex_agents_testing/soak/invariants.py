"""The soak's invariants, checked from stored state, the messages and the effect files.

Every check names the session and the invariant it broke, and says what the
stored state shows instead, so a failure reads as a bug report.
"""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from dex_agents.results import OUTCOME_UNKNOWN_RESULT, USER_REJECTED_RESULT
from dex_agents_contracts import (
    AgentMessage,
    AgentSnapshot,
    AgentStatus,
    MessageRole,
    ToolEffect,
)

from dex_agents_testing.soak.agent import (
    INPUT_TOKENS,
    JOB_RESULT,
    OUTPUT_TOKENS,
    TOOL_EFFECTS,
    effect_path,
)
from dex_agents_testing.soak.driver import SessionResult, TurnRecord
from dex_agents_testing.soak.plans import PREFIX, calls_for

__all__ = ["FAILED_TURN_NOTE", "Violation", "check_session", "stray_effects"]

# The design's compact JSON results for abandoned and built-in calls.
_STEERED = '{"status":"cancelled","reason":"superseded_by_steered_user_message"}'
_CANCELLED = '{"status":"cancelled","reason":"turn_cancelled_by_user"}'
_FAILED_PREFIX = "The tool call failed: "
FAILED_TURN_NOTE = "[Dex] The previous turn failed after these tool calls ran:"


@dataclass(frozen=True)
class Violation:
    session_id: str
    invariant: str
    detail: str

    def __str__(self) -> str:
        return f"session {self.session_id}: {self.invariant}: {self.detail}"


def _allowed_results(record: TurnRecord, tool_call_id: str) -> set[str] | None:
    """The results the call may end with; None accepts any (checked elsewhere)."""
    plan = record.plan
    kind = plan.kind
    answered = json.dumps({"status": "answered", "answer": plan.answer()}, separators=(",", ":"))
    waited = json.dumps(
        {"status": "completed", "waited_seconds": 1, "reason": plan.tag}, separators=(",", ":")
    )
    table: dict[tuple[str, str], set[str]] = {
        ("tools", "w1"): {"upserted", OUTCOME_UNKNOWN_RESULT},
        ("tools", "c1"): {"charged", OUTCOME_UNKNOWN_RESULT},
        ("approve", "a1"): {"sent", OUTCOME_UNKNOWN_RESULT},
        ("reject", "a1"): {USER_REJECTED_RESULT},
        ("ask", "q1"): {answered},
        ("toolq", "s1"): {"surveyed|" + plan.answer(), OUTCOME_UNKNOWN_RESULT},
        ("wait", "d1"): {waited},
        ("steer", "a1"): {_STEERED},
        ("cancel", "d1"): {_CANCELLED},
        ("fail", "x1"): {OUTCOME_UNKNOWN_RESULT},
        ("task", "t1"): {JOB_RESULT, OUTCOME_UNKNOWN_RESULT},
    }
    return table.get((kind, tool_call_id))


def _failed_as_planned(record: TurnRecord, tool_call_id: str, output: str) -> bool:
    """A call of a tool that fails on every attempt never ends as a success."""
    if (record.plan.kind, tool_call_id) == ("fail", "f1"):
        return output.startswith(_FAILED_PREFIX)
    if (record.plan.kind, tool_call_id) == ("taskcancel", "t1"):
        return output != JOB_RESULT  # the job never finishes on its own
    return True


def _state(result: SessionResult, snapshot: AgentSnapshot) -> list[Violation]:
    sid = result.session_id
    found: list[str] = []
    if result.failure is not None:
        found.append(result.failure)
    state = snapshot.state
    if state is None:
        return [Violation(sid, "every turn ended", "the session has no state")]
    if state.turn_count != result.expected_turns:
        found.append(f"turn_count {state.turn_count}, the driver ran {result.expected_turns}")
    if state.active_turn_id is not None:
        found.append(f"turn {state.active_turn_id} is still active ({state.status.name})")
    elif state.status is not AgentStatus.WAITING_FOR_USER_MESSAGE:
        found.append(f"status {state.status.name} with no active turn")
    if snapshot.pending_interrupts:
        ids = [i.interrupt_id for i in snapshot.pending_interrupts]
        found.append(f"interrupts still pending: {ids}")
    if snapshot.queued_messages or snapshot.steered_messages:
        found.append("user messages still queued or steered")
    return [Violation(sid, "every turn ended", detail) for detail in found]


def _messages(result: SessionResult, messages: Sequence[AgentMessage]) -> list[Violation]:
    sid = result.session_id
    name = "every message exactly once and in order"
    found: list[Violation] = []
    sequences = [m.sequence for m in messages]
    if sequences != sorted(set(sequences)):
        found.append(Violation(sid, name, f"sequences not strictly increasing: {sequences}"))
    users = [m.text or "" for m in messages if m.role is MessageRole.USER]
    plans = [t for t in users if t.startswith(PREFIX)]
    if plans != result.sent:
        found.append(
            Violation(sid, name, f"user messages {plans} differ from those sent {result.sent}")
        )
    notes = [t for t in users if t.startswith(FAILED_TURN_NOTE)]
    others = [t for t in users if not t.startswith(PREFIX) and t not in notes]
    if others:
        found.append(Violation(sid, name, f"unexpected user messages: {others}"))
    failed = sum(1 for t in result.turns if t.failure is not None)
    if len(notes) > failed:
        found.append(
            Violation(sid, name, f"{len(notes)} turn-failure notes for {failed} failed turns")
        )
    texts = Counter(
        (m.turn_id, m.text)
        for m in messages
        if m.role is MessageRole.ASSISTANT and m.tool_call_id is None
    )
    expected: Counter[tuple[str, str | None]] = Counter()
    for record in result.turns:
        if record.failure is not None:
            continue  # a failed turn (its retries ran out) has no final answer
        if record.resolution == "steered" and record.steer is not None:
            steered_turn = f"turn-{int(record.turn_id.split('-')[1]) + 1}"
            expected[(steered_turn, record.steer.final_text())] += 1
        elif record.resolution != "cancelled":
            expected[(record.turn_id, record.plan.final_text())] += 1
    if texts != expected:
        extra = texts - expected
        missing = expected - texts
        found.append(
            Violation(sid, name, f"final answers: missing {dict(missing)}, extra {dict(extra)}")
        )
    return found


def _tool_calls(
    result: SessionResult, messages: Sequence[AgentMessage], effects_dir: Path
) -> list[Violation]:
    sid = result.session_id
    found: list[Violation] = []
    calls: dict[str, Counter[str]] = defaultdict(Counter)
    results: dict[str, dict[str, list[str]]] = defaultdict(lambda: defaultdict(list))
    for m in messages:
        if m.tool_call_id is None:
            continue
        if m.role is MessageRole.TOOL:
            results[m.turn_id][m.tool_call_id].append(m.tool_output or "")
        else:
            calls[m.turn_id][m.tool_call_id] += 1
    for record in result.turns:
        turn = record.turn_id
        wanted = {c.tool_call_id: c.tool_name for c in calls_for(record.plan, 0)}
        if record.failure is not None:
            # A turn that failed in its first model call asked for no tool at all.
            wanted = {i: n for i, n in wanted.items() if i in calls[turn]}
        if set(calls[turn]) != set(wanted) or any(n != 1 for n in calls[turn].values()):
            found.append(
                Violation(sid, "every tool call stored once", f"{turn}: calls {dict(calls[turn])}")
            )
        for call_id, tool in wanted.items():
            outputs = results[turn].get(call_id, [])
            if len(outputs) != 1:
                found.append(
                    Violation(
                        sid,
                        "every tool call has exactly one final record",
                        f"{turn} {call_id} ({tool}): {len(outputs)} results {outputs}",
                    )
                )
                continue
            output = outputs[0]
            allowed = _allowed_results(record, call_id)
            if not _failed_as_planned(record, call_id, output):
                found.append(
                    Violation(
                        sid,
                        "tool results as planned",
                        f"{turn} {call_id} ({tool}) of a tool that cannot succeed "
                        f"ended with {output!r}",
                    )
                )
            if allowed is not None and output not in allowed:
                invariant = "no interrupt lost" if record.resolution else "tool results as planned"
                found.append(
                    Violation(
                        sid,
                        invariant,
                        f"{turn} {call_id} ({tool}, {record.resolution or record.plan.kind}) "
                        f"ended with {output!r}, expected one of {sorted(allowed)}",
                    )
                )
            found.extend(
                _effects(
                    sid=sid,
                    turn=turn,
                    call_id=call_id,
                    tool=tool,
                    output=output,
                    effects_dir=effects_dir,
                )
            )
    return found


def _effects(
    *, sid: str, turn: str, call_id: str, tool: str, output: str, effects_dir: Path
) -> list[Violation]:
    effect = TOOL_EFFECTS.get(tool)
    if effect is None or effect is ToolEffect.READ:
        return []
    path = effect_path(effects_dir, sid, turn, call_id)
    runs = [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []
    where = f"{turn} {call_id} ({tool}) ran {len(runs)} time(s), result {output!r}"
    found: list[Violation] = []
    if effect is ToolEffect.NON_IDEMPOTENT_WRITE:
        if len(runs) > 1:
            found.append(Violation(sid, "no single-attempt tool body ran twice", where))
        ran_ok = output in ("charged", "sent")
        if ran_ok and len(runs) != 1:
            found.append(Violation(sid, "a succeeded call ran exactly once", where))
        if not ran_ok and output != OUTCOME_UNKNOWN_RESULT and runs:
            found.append(Violation(sid, "a call that never ran left no side effect", where))
    else:
        keys = {run["key"] for run in runs}
        if keys and keys != {f"{sid}/{turn}/{call_id}"}:
            found.append(
                Violation(sid, "one idempotency key per call", f"{where}, keys {sorted(keys)}")
            )
        if not output.startswith(_FAILED_PREFIX) and output != OUTCOME_UNKNOWN_RESULT and not runs:
            found.append(Violation(sid, "a succeeded call ran at least once", where))
    return found


def _usage(
    result: SessionResult, snapshot: AgentSnapshot, messages: Sequence[AgentMessage]
) -> list[Violation]:
    sid = result.session_id
    model_calls = set()
    for m in messages:
        if m.role is MessageRole.ASSISTANT:
            item = json.loads(m.framework_item)
            model_calls.add((m.turn_id, int(item["call"])))
    n = len(model_calls)
    usage = snapshot.usage
    got = (usage.model_calls, usage.input_tokens, usage.output_tokens) if usage else (0, 0, 0)
    want = (n, n * INPUT_TOKENS, n * OUTPUT_TOKENS)
    if got != want:
        return [
            Violation(
                sid,
                "usage sums match",
                f"usage (calls, in, out) {got}, the stored model calls make {want}",
            )
        ]
    return []


def check_session(
    result: SessionResult,
    snapshot: AgentSnapshot,
    messages: Sequence[AgentMessage],
    effects_dir: Path,
) -> list[Violation]:
    """Every invariant of one session."""
    return [
        *_state(result, snapshot),
        *_messages(result, messages),
        *_tool_calls(result, messages, effects_dir),
        *_usage(result, snapshot, messages),
    ]


def stray_effects(results: Sequence[SessionResult], effects_dir: Path) -> list[Violation]:
    """Side effects of calls no stored turn asked for (a body ran for a call that is gone)."""
    known = {
        effect_path(effects_dir, r.session_id, t.turn_id, c.tool_call_id).name
        for r in results
        for t in r.turns
        for c in calls_for(t.plan, 0)
    }
    return [
        Violation(path.name.split("__", 1)[0], "no side effect without a call", path.name)
        for path in sorted(effects_dir.glob("*.log"))
        if path.name not in known
    ]
