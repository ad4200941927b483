"""Committed state the UI stream consults, read through the blocking Client.

Events are written while a Step runs and a retried Step can decide otherwise, so
what a chunk states for good (an end, tool arguments and results, a pause for
approvals) is read from state after the Step that wrote the event has committed.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from datetime import timedelta

from dex import StepExecutionId, WaitForStepCompletionOptions
from dex_agents_contracts import (
    AgentEvent,
    AgentMessage,
    AgentSnapshot,
    InterruptKind,
    MessageRole,
    ToolCallStatus,
    decode_turn_started_payload,
)

from dex_agents.client import AgentSessionClient
from dex_agents.http._ui_translate import ToolFacts

__all__ = ["TurnState"]

_LIST_PAGE = 100
_MAX_PAGES = 100
_COMMIT_WAIT_SECONDS = 60.0
_FINAL = {
    ToolCallStatus.REJECTED,
    ToolCallStatus.SUCCEEDED,
    ToolCallStatus.FAILED,
    ToolCallStatus.OUTCOME_UNKNOWN,
}


def _step(step_execution_id: str) -> StepExecutionId | None:
    step_type, _, number = step_execution_id.rpartition("-")
    if not step_type or not number.isdigit() or int(number) < 1:
        return None
    return StepExecutionId(step_type, int(number))


class TurnState:
    """Committed facts about one turn of one session, cached per stream."""

    def __init__(self, client: AgentSessionClient, session_id: str, turn_id: str) -> None:
        self.client = client
        self.session_id = session_id
        self.turn_id = turn_id
        """The turn the UI message is named after (the first of a steered chain)."""
        self.current = turn_id
        """The turn being read: a later one once steering moved the message on."""
        self._committed: set[str] = set()
        self._snapshot: AgentSnapshot | None = None
        self._messages: list[AgentMessage] | None = None

    # --- commits and snapshots ---------------------------------------------------------

    def wait_for_commit(self, step_execution_id: str) -> None:
        if step_execution_id in self._committed:
            return
        step = _step(step_execution_id)
        if step is not None:
            timeout = timedelta(seconds=math.ceil(_COMMIT_WAIT_SECONDS))
            self.client.client.wait_for_step_completion(
                self.session_id, step, WaitForStepCompletionOptions(request_timeout=timeout)
            )
        self._committed.add(step_execution_id)
        self._snapshot = None

    def snapshot(self, *, fresh: bool = False) -> AgentSnapshot:
        if fresh or self._snapshot is None:
            self._snapshot = self.client.get_snapshot(self.session_id)
        return self._snapshot

    def follow(self, turn_id: str) -> None:
        self.current = turn_id
        self._messages = None

    def turn_ended(self, *, fresh: bool = False) -> bool:
        state = self.snapshot(fresh=fresh).state
        return state is not None and state.active_turn_id != self.current

    def steering_settled(self) -> bool:
        """No steered turn can follow now: none is active and no steered message waits."""
        snapshot = self.snapshot(fresh=True)
        state = snapshot.state
        idle = state is None or state.active_turn_id is None
        return idle and not snapshot.steered_messages

    def ended_with(self, event: AgentEvent) -> bool:
        """Whether the turn has ended in committed state once `event`'s Step committed."""
        self.wait_for_commit(event.step_execution_id)
        return self.turn_ended()

    def at_tail(self, position: str) -> bool:
        """No event follows `position` now (asked without waiting)."""
        client = self.client
        page = client.client.list_stream_messages(self.session_id, client.flow.events, 1)
        return not page.messages or page.messages[0].resume_token == position

    def waits_only_for_approvals(self) -> bool:
        """The active turn waits for approvals and for nothing else."""
        snapshot = self.snapshot(fresh=True)
        state = snapshot.state
        if state is None or state.active_turn_id != self.current:
            return False
        pending = snapshot.pending_interrupts
        if not pending or any(i.kind is not InterruptKind.TOOL_APPROVAL for i in pending):
            return False
        return all(
            t.status in _FINAL or t.status is ToolCallStatus.AWAITING_APPROVAL
            for t in snapshot.tool_calls
            if t.turn_id == self.current
        )

    def approval_pending(self, interrupt_id: str) -> bool:
        snapshot = self.snapshot(fresh=True)
        return any(
            i.interrupt_id == interrupt_id and i.kind is InterruptKind.TOOL_APPROVAL
            for i in snapshot.pending_interrupts
        )

    def last_error(self) -> str | None:
        state = self.snapshot().state
        return state.last_turn_error if state is not None else None

    # --- tool facts ---------------------------------------------------------------------

    def tool_facts(self, tool_call_id: str, event: AgentEvent) -> ToolFacts:
        """Arguments and result from the turn's records, or its stored messages once it ended."""
        self.wait_for_commit(event.step_execution_id)
        snapshot = self.snapshot()
        for record in snapshot.tool_calls:
            if record.tool_call_id == tool_call_id and record.turn_id == self.current:
                return ToolFacts(
                    tool_name=record.tool_name,
                    arguments=record.arguments,
                    output=record.output,
                    error=record.error or record.rejection_message,
                )
        return self._facts_from_messages(tool_call_id, snapshot)

    def _stored(
        self, snapshot: AgentSnapshot, keep: Callable[[AgentMessage], bool]
    ) -> list[AgentMessage]:
        """Stored messages of the current turn that `keep` picks: the snapshot's, else all."""
        messages = [m for m in snapshot.messages if m.turn_id == self.current and keep(m)]
        if not messages:
            if self._messages is None:
                self._messages = self.client.all_messages(self.session_id)
            messages = [m for m in self._messages if m.turn_id == self.current and keep(m)]
        return messages

    def steered_messages(self, event: AgentEvent) -> list[tuple[str, str]]:
        """The user messages a steered turn opens with, as (UI message id, text).

        `event` is the turn's `turn_started`; the ids are those
        convertAgentSnapshotToUIMessages gives stored user messages.
        """
        self.wait_for_commit(event.step_execution_id)
        first = decode_turn_started_payload(event.payload).sequence
        messages = self._stored(self.snapshot(), lambda m: m.sequence >= first)
        opening: list[tuple[str, str]] = []
        for message in sorted(messages, key=lambda m: m.sequence):
            if message.role is not MessageRole.USER:
                break
            opening.append((f"user_{message.sequence}", message.text or ""))
        return opening

    def _facts_from_messages(self, tool_call_id: str, snapshot: AgentSnapshot) -> ToolFacts:
        messages = self._stored(snapshot, lambda m: m.tool_call_id == tool_call_id)
        call = next((m for m in messages if m.role is MessageRole.ASSISTANT), None)
        result = next((m for m in messages if m.role is MessageRole.TOOL), None)
        either = call or result
        return ToolFacts(
            tool_name=(either.tool_name or "") if either is not None else "",
            arguments=call.tool_arguments if call is not None else None,
            output=result.tool_output if result is not None else None,
        )

    # --- a turn whose events are gone ------------------------------------------------------

    def stored_turn(self) -> tuple[list[AgentMessage], str | None] | None:
        """The ended turn's stored messages and its error; None unless it ended and stored any.

        The error is the session's last_turn_error when this is the newest turn that
        stored messages: that is the only turn whose error committed state keeps.
        """
        snapshot = self.snapshot(fresh=True)
        state = snapshot.state
        if state is None or state.active_turn_id == self.turn_id:
            return None
        window = snapshot.messages
        mine = [m for m in window if m.turn_id == self.turn_id]
        if not mine or window[0].turn_id == self.turn_id:
            # The turn is older than the snapshot's window, or starts before it.
            everything = self.client.all_messages(self.session_id)
            mine = [m for m in everything if m.turn_id == self.turn_id]
            window = everything
        if not mine:
            return None
        newest = window[-1].turn_id == self.turn_id
        return mine, state.last_turn_error if newest else None

    # --- where the turn starts ----------------------------------------------------------

    def listed_start(self) -> str | None:
        """The Dex token to read the turn's `turn_started` from; None when not retained.

        Lists the Stream newest first, so a recent turn is found in one page.
        """
        chain = self.listed_chain()
        return chain[1] if chain is not None and chain[0] == self.turn_id else None

    def listed_chain(self) -> tuple[str, str] | None:
        """(first turn, Dex token to read it from) of the steered chain `turn_id` is in.

        A turn that a `turn_steered` right before its `turn_started` began continues
        the steered turn's UI message, so the message is named after the chain's
        first turn and read from there. None when `turn_id` has no retained events.
        """
        events = self.client.flow.events
        before = ""
        deadline = time.monotonic() + _COMMIT_WAIT_SECONDS
        wanted = self.turn_id
        found: str | None = None  # the turn whose turn_started was just met
        for _ in range(_MAX_PAGES):
            page = self.client.client.list_stream_messages(
                self.session_id, events, _LIST_PAGE, before
            )
            for message in page.messages:
                event = message.value
                if found is not None:
                    if event.type == "turn_steered" and event.turn_id:
                        wanted, found = event.turn_id, None
                        continue
                    return found, message.resume_token
                if event.type == "turn_started" and event.turn_id == wanted:
                    found = wanted
            if not page.next_page_token or time.monotonic() > deadline:
                break
            before = page.next_page_token
        return (found, "") if found is not None else None
