"""Drives one session through its turns as a user would, across dexlite restarts.

The driver sends each plan's message, answers the approval or question the plan
asks for, steers or cancels, and waits for the turn to end, each wait on the
session's committed state with a deadline. An RPC that fails (dexlite may be
down) is sent again, under the client request ID of its first attempt, unless
the state shows it took effect: the session applies each ID once, so a lost
reply never doubles a message.
"""

from __future__ import annotations

import time
import uuid
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TypeVar

from dex import FlowNotFoundError
from dex_agents import AgentSessionClient
from dex_agents_contracts import AgentSnapshot, AgentStatus, ToolCallStatus

from dex_agents_testing.soak.plans import TurnPlan

__all__ = ["DriverFailure", "SessionDriver", "SessionResult", "TurnRecord"]

T = TypeVar("T")

_POLL_FIRST = 0.05
_POLL_MAX = 1.0


class DriverFailure(Exception):
    """The session did not reach a state it had to reach in time."""


@dataclass
class TurnRecord:
    """One plan the driver ran: the turn it started and what the driver did in it."""

    plan: TurnPlan
    turn_id: str = ""
    steer: TurnPlan | None = None
    resolution: str = ""
    """approved, rejected, answered, steered, cancelled, or "" (nothing to resolve, or
    the turn ended before it came to that)."""
    failure: str | None = None
    """The turn's last_turn_error: it ended as failed (its retries ran out)."""
    latency: float = 0.0


@dataclass
class SessionResult:
    session_id: str
    turns: list[TurnRecord] = field(default_factory=list)
    sent: list[str] = field(default_factory=list)
    """Every user message text the session accepted, in order (plans and steers)."""
    expected_turns: int = 0
    failure: str | None = None
    resent: list[str] = field(default_factory=list)
    """Messages sent again after an unanswered call (see SessionDriver._rpc)."""
    errors: Counter[str] = field(default_factory=Counter)
    """Client calls that raised (dexlite or a Worker was down), by exception type."""


class SessionDriver:
    def __init__(
        self,
        client: AgentSessionClient,
        session_id: str,
        plans: list[TurnPlan],
        *,
        steer_plans: dict[str, TurnPlan],
        deadline_seconds: float,
        enough: Callable[[], bool] = lambda: False,
    ) -> None:
        self.client = client
        self.enough = enough
        """Checked before each turn: True ends the session early (a timed run is over)."""
        self.plans = plans
        self.steer_plans = steer_plans
        self.deadline_seconds = deadline_seconds
        self.result = SessionResult(session_id)

    @property
    def session_id(self) -> str:
        return self.result.session_id

    def run(self) -> SessionResult:
        try:
            self._start()
            for plan in self.plans:
                if self.enough():
                    break
                self._turn(plan)
        except DriverFailure as failure:
            self.result.failure = str(failure)
        except Exception as error:  # a driver bug must fail the session, not vanish with its thread
            self.result.failure = f"session {self.session_id}: the driver raised {error!r}"
        return self.result

    # --- one turn -------------------------------------------------------------------

    def _start(self) -> None:
        def started() -> bool | None:
            try:
                self.client.client.describe_flow(self.session_id)
            except FlowNotFoundError:
                return False
            except Exception as error:  # dexlite is down: cannot tell yet
                self.result.errors[type(error).__name__] += 1
                return None
            return True

        self._rpc("start the session", lambda: self.client.start_session(self.session_id), started)
        self._wait("the session's state", lambda s: s.state is not None)

    def _turn(self, plan: TurnPlan) -> None:
        record = TurnRecord(plan)
        self.result.turns.append(record)
        began = time.monotonic()
        text = plan.message()
        request_id = _request_id()
        self._rpc(
            f"send {plan.tag}",
            lambda: self.client.send_user_message(
                self.session_id, text, client_request_id=request_id
            ),
            lambda: self._has_message(text),
        )
        self.result.sent.append(text)
        self.result.expected_turns += 1
        expected = self.result.expected_turns
        self._wait(
            f"turn of {plan.tag} to start",
            lambda s: (
                s.state is not None
                and (s.state.turn_count >= expected or s.state.active_turn_id is not None)
                and not s.queued_messages
            ),
        )
        record.turn_id = f"turn-{expected}"
        kind = plan.kind
        if kind in ("approve", "reject"):
            self._resolve(record, "a1", approve=kind == "approve")
        elif kind == "ask":
            self._answer(record, "q1")
        elif kind == "toolq":
            self._answer(record, "s1-input-")
        elif kind == "steer":
            self._steer(record)
        elif kind == "cancel":
            self._cancel(record, "d1", ToolCallStatus.WAITING_FOR_TIMER)
        elif kind == "taskcancel":
            self._cancel(record, "t1", ToolCallStatus.WAITING_FOR_TASK)
        final = self.result.expected_turns
        ended = self._wait(f"turn {final} ({plan.tag}) to end", lambda s: _idle_after(s, final))
        assert ended.state is not None
        record.failure = ended.state.last_turn_error
        record.latency = time.monotonic() - began

    def _in_turn(
        self, record: TurnRecord, what: str, check: Callable[[AgentSnapshot], bool]
    ) -> AgentSnapshot | None:
        """Waits for `check` during the record's turn; None once the turn ended (it failed)."""
        expected = self.result.expected_turns
        snapshot = self._wait(
            f"{what} of {record.plan.tag}", lambda s: check(s) or _idle_after(s, expected)
        )
        return snapshot if check(snapshot) else None

    def _pending(self, record: TurnRecord, prefix: str) -> str | None:
        """The ID of the turn's pending interrupt whose ID starts with `prefix`."""

        def pending(s: AgentSnapshot) -> bool:
            return any(i.interrupt_id.startswith(prefix) for i in s.pending_interrupts)

        snapshot = self._in_turn(record, f"interrupt {prefix}", pending)
        if snapshot is None:
            return None
        return next(
            i.interrupt_id for i in snapshot.pending_interrupts if i.interrupt_id.startswith(prefix)
        )

    def _refused(self, record: TurnRecord, what: str, reply: object) -> None:
        """A false reply is a lost interrupt or message, unless the turn ended (failed) first."""
        if reply is False and not self._wait_known(lambda: self._turn_over(record)):
            raise DriverFailure(f"session {self.session_id}: {what} was refused (false)")

    def _resolve(self, record: TurnRecord, interrupt_id: str, *, approve: bool) -> None:
        if self._pending(record, interrupt_id) is None:
            return
        what = f"resolve {interrupt_id} of {record.plan.tag}"
        request_id = _request_id()
        reply = self._rpc(
            what,
            lambda: self.client.resolve_interrupt(
                self.session_id, interrupt_id, approved=approve, client_request_id=request_id
            ),
            lambda: self._resolved(interrupt_id),
        )
        self._refused(record, what, reply)
        record.resolution = "approved" if approve else "rejected"

    def _answer(self, record: TurnRecord, prefix: str) -> None:
        interrupt_id = self._pending(record, prefix)
        if interrupt_id is None:
            return
        answer = record.plan.answer()
        what = f"answer {interrupt_id} of {record.plan.tag}"
        request_id = _request_id()
        reply = self._rpc(
            what,
            lambda: self.client.answer_question(
                self.session_id, interrupt_id, answer, client_request_id=request_id
            ),
            lambda: self._resolved(interrupt_id),
        )
        self._refused(record, what, reply)
        record.resolution = "answered"

    def _steer(self, record: TurnRecord) -> None:
        if self._pending(record, "a1") is None:
            return
        steer = self.steer_plans[record.plan.tag]
        text = steer.message()
        what = f"steer {record.plan.tag}"
        request_id = _request_id()
        reply = self._rpc(
            what,
            lambda: self.client.steer_user_message(
                self.session_id, text=text, client_request_id=request_id
            ),
            lambda: self._has_message(text),
        )
        if reply is False:
            # While no turn is active a steer is queued (true), so false is always lost.
            raise DriverFailure(f"session {self.session_id}: {what} was refused (false)")
        record.steer = steer
        record.resolution = "steered"
        self.result.sent.append(text)
        self.result.expected_turns += 1

    def _cancel(self, record: TurnRecord, tool_call_id: str, status: ToolCallStatus) -> None:
        """cancel_turn once `tool_call_id` waits in `status` (a durable wait, a task)."""
        waiting = self._in_turn(
            record,
            f"{tool_call_id} to wait",
            lambda s: any(
                t.tool_call_id == tool_call_id and t.status is status for t in s.tool_calls
            ),
        )
        if waiting is None:
            return
        turn_id = record.turn_id
        what = f"cancel {record.plan.tag}"
        request_id = _request_id()
        reply = self._rpc(
            what,
            lambda: self.client.cancel_turn(self.session_id, turn_id, client_request_id=request_id),
            lambda: self._turn_inactive(turn_id),
        )
        self._refused(record, what, reply)
        record.resolution = "cancelled"

    # --- state reads ----------------------------------------------------------------

    def _snapshot(self) -> AgentSnapshot | None:
        try:
            return self.client.get_snapshot(self.session_id)
        except Exception as error:  # dexlite is down or restarting: no state to read yet
            self.result.errors[type(error).__name__] += 1
            return None

    def _wait(self, what: str, check: Callable[[AgentSnapshot], bool]) -> AgentSnapshot:
        deadline = time.monotonic() + self.deadline_seconds
        delay = _POLL_FIRST
        while True:
            snapshot = self._snapshot()
            if snapshot is not None and check(snapshot):
                return snapshot
            if time.monotonic() > deadline:
                raise DriverFailure(
                    f"session {self.session_id}: gave up after {self.deadline_seconds} s "
                    f"waiting for {what}"
                )
            time.sleep(delay)  # polling interval of a condition wait
            delay = min(delay * 1.5, _POLL_MAX)

    def _has_message(self, text: str) -> bool | None:
        """Whether the session holds `text`; None when it cannot be read now."""
        snapshot = self._snapshot()
        if snapshot is None:
            return None
        pending = [
            m.message.text if m.message is not None else None
            for m in (*snapshot.queued_messages, *snapshot.steered_messages)
        ]
        if text in pending or any(m.text == text for m in snapshot.messages):
            return True
        try:
            return any(m.text == text for m in self.client.all_messages(self.session_id))
        except Exception as error:  # unreadable now
            self.result.errors[type(error).__name__] += 1
            return None

    def _resolved(self, interrupt_id: str) -> bool | None:
        snapshot = self._snapshot()
        if snapshot is None:
            return None
        return all(i.interrupt_id != interrupt_id for i in snapshot.pending_interrupts)

    def _wait_known(self, question: Callable[[], bool | None], deadline: float = 0.0) -> bool:
        """The answer to `question` once the state can be read (False past the deadline)."""
        deadline = deadline or time.monotonic() + self.deadline_seconds
        delay = _POLL_FIRST
        known = question()
        while known is None and time.monotonic() < deadline:
            time.sleep(delay)  # polling interval while dexlite restarts
            delay = min(delay * 1.5, _POLL_MAX)
            known = question()
        return bool(known)

    def _turn_over(self, record: TurnRecord) -> bool | None:
        snapshot = self._snapshot()
        if snapshot is None:
            return None
        return _idle_after(snapshot, int(record.turn_id.split("-")[1]))

    def _turn_inactive(self, turn_id: str) -> bool | None:
        snapshot = self._snapshot()
        if snapshot is None or snapshot.state is None:
            return None
        return snapshot.state.active_turn_id != turn_id

    def _rpc(
        self,
        what: str,
        call: Callable[[], object],
        took_effect: Callable[[], bool | None],
    ) -> object:
        """Calls until a reply comes, or until the state shows an unanswered call took effect.

        `took_effect` says None while the state cannot be read (dexlite restarts).
        `call` repeats one client request ID, so sending it again after a reply was
        lost is safe even when the state cannot show the effect yet (a committed
        message is in neither the queue nor the conversation while the
        AwaitUserMessage that took it has not committed). Every call sent again is
        noted in `result.resent`. Returns the reply, or None when the state showed
        the effect instead.
        """
        deadline = time.monotonic() + self.deadline_seconds
        last: Exception | None = None
        while time.monotonic() < deadline:
            try:
                reply = call()
            except Exception as error:
                self.result.errors[type(error).__name__] += 1
                last = error
            else:
                return reply
            if self._wait_known(took_effect, deadline):
                return None
            self.result.resent.append(what)
        raise DriverFailure(f"session {self.session_id}: could not {what}: {last!r}")


def _request_id() -> str:
    """The client request ID of one logical call, repeated by every retry of it."""
    return str(uuid.uuid4())


def _idle_after(snapshot: AgentSnapshot, turns: int) -> bool:
    """`turns` turns ended and the session waits for a user message."""
    state = snapshot.state
    return (
        state is not None
        and state.turn_count >= turns
        and state.active_turn_id is None
        and state.status is AgentStatus.WAITING_FOR_USER_MESSAGE
    )
