"""Reads one turn's events on a thread and emits its UI chunks, each with its token."""

from __future__ import annotations

import threading
from collections import Counter
from dataclasses import dataclass
from datetime import timedelta

from dex import DexServiceError, StreamMessage
from dex_agents_contracts import AgentEvent

from dex_agents.http._bridge import Emit
from dex_agents.http._cursor import EventCursor
from dex_agents.http._ui_state import TurnState
from dex_agents.http._ui_token import OpenParts, UiToken
from dex_agents.http._ui_translate import Chunk, UiTurnTranslator

__all__ = ["DONE", "TurnReader", "UiItem"]

UiItem = tuple[Chunk, str] | None
"""A chunk and its token, or None for the closing `[DONE]`."""

DONE: UiItem = None

_END_EVENTS = frozenset({"turn_completed", "turn_failed", "turn_steered", "turn_cancelled"})
_RECHECK_EVENTS = frozenset({"interrupt_raised", "interrupt_resolved", "tool_call_finished"})


class _Gone(Exception):
    """The browser went away."""


@dataclass
class TurnReader:
    """One response of one turn: reads from `read_from`, translates, tokens every chunk."""

    state: TurnState
    translator: UiTurnTranslator
    start: str
    read_from: str
    poll: timedelta
    joins_midway: tuple[tuple[str, ...], dict[str, str]] | None = None
    """A response after approvals: the turn's tool call ids and the approvals asked
    (interrupt id -> tool call id) the browser's message already shows."""
    skip_through: tuple[str, int] | None = None
    stored: list[Chunk] | None = None
    """The turn rebuilt from its stored messages: sent instead of reading events."""
    answered_here: frozenset[str] = frozenset()
    """Approvals this response's request resolved: the browser shows its own answer."""

    def __post_init__(self) -> None:
        self._counts: Counter[str] = Counter()
        self._parts = OpenParts()
        self._emit: Emit[UiItem] | None = None

    def run(self, emit: Emit[UiItem], stopped: threading.Event) -> None:
        self._emit = emit
        try:
            self._run(stopped)
            if not stopped.is_set():
                emit(DONE)
        except _Gone:
            return

    def _out(self, chunks: list[Chunk], position: str) -> None:
        assert self._emit is not None
        for chunk in chunks:
            index = self._counts[position]
            self._counts[position] += 1
            open_parts = self._parts.apply(chunk)
            if self.skip_through is not None:
                if self.skip_through == (position, index):
                    self.skip_through = None
                continue
            if (
                chunk["type"] == "tool-approval-response"
                and chunk["approvalId"] in self.answered_here
            ):
                # Counted but not sent, so the tokens after it match a replay's.
                continue
            token = UiToken(
                session_id=self.state.session_id,
                turn_id=self.state.turn_id,
                start=self.start,
                position=position,
                chunk=index,
                open_parts=open_parts,
            )
            if not self._emit((chunk, token.encode())):
                raise _Gone

    def _run(self, stopped: threading.Event) -> None:
        if self.stored is not None:
            # Every chunk is made at the same place, so tokens count them from `start`.
            self._out(self.stored, self.start)
            return
        translator, state = self.translator, self.state
        cursor = EventCursor(state.client, state.session_id, self.read_from)
        if self.joins_midway is not None:
            known, asked = self.joins_midway
            self._out(translator.begin(known, asked), cursor.after)
        check_step: str | None = None  # a Step whose commit may leave the turn paused
        while not translator.done and not stopped.is_set():
            if check_step is not None:
                # Everything the Step wrote is in the Stream once it has committed.
                state.wait_for_commit(check_step)
                check_step = None
                if state.at_tail(cursor.after):
                    self._idle(cursor.after)
                    continue
            messages = cursor.next(self.poll)
            if not messages:
                self._idle(cursor.after)
                continue
            for message in messages:
                check_step = self._take(message, check_step)
                if self.translator.done:  # the rest of the batch is past the turn's end
                    break

    def _take(self, message: StreamMessage[AgentEvent], check_step: str | None) -> str | None:
        """Translates one event; returns the Step whose commit to check for a pause."""
        translator, state = self.translator, self.state
        position, event = message.resume_token, message.value
        if translator.awaiting_steered:
            if event.type == "turn_started" and event.turn_id:
                state.follow(event.turn_id)
                self._out(translator.feed(event), position)
            elif event.turn_id:
                self._out(translator.end_unsteered(), position)
            return check_step
        if event.turn_id != state.current:
            return check_step
        if event.type in _END_EVENTS:
            if state.ended_with(event):
                self._out(translator.end(event), position)
            return check_step
        self._out(translator.feed(event), position)
        if event.type in _RECHECK_EVENTS and translator.pending_approvals:
            return event.step_execution_id
        return check_step

    def _idle(self, position: str) -> None:
        """Nothing new: pause for approvals, or end from state if the end was lost.

        The state is read after the cursor's last read, so it may show a Step that
        committed since (a tool call of the same response that finished): pausing or
        ending then would drop that Step's events from the message, so the events
        are read first (`at_tail`) and the question asked again.
        """
        translator, state = self.translator, self.state
        if translator.awaiting_steered:
            if state.steering_settled():
                self._out(translator.end_unsteered(), position)
        elif translator.pending_approvals and state.waits_only_for_approvals():
            if state.at_tail(position):
                self._out(translator.pause_for_approvals(), position)
        elif state.turn_ended(fresh=True) and state.at_tail(position):
            self._out(translator.begin(), position)
            self._out(translator.end_from_state(state.last_error()), position)


def refused_token(error: Exception) -> bool:
    return isinstance(error, DexServiceError) and error.code.name == "INVALID_ARGUMENT"
