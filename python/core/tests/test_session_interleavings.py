"""Random sequences of session RPCs with Worker processes SIGKILLed between them.

A Hypothesis state machine sends, steers (by text and by queued message ID),
deletes queued messages, resolves approvals, cancels turns and kills one of the
session's two Worker processes, in any order, against a real dexlite. The turns
run on their own meanwhile, so every interleaving of an RPC with the Steps is
fair game. Every turn asks for one approval-gated single-attempt write, which
keeps turns open long enough for steering to act on them.

The model of what must happen never depends on timing:
- right after each by-ID RPC, the snapshot shows it acted on the item it named
  and on no other (steered messages are only ones this test steered; a message
  deleted or steered is no longer queued);
- at the end, once the session has drained, every accepted message is stored
  exactly once, a deleted or refused one never, queued messages keep their
  order, and no single-attempt tool ran twice or ran after a rejection.

`DEX_AGENTS_FUZZ=long` runs 300 sequences instead of the suite's few.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field

import pytest
from dex import ChannelMessageNotFoundError
from dex_agents import AgentSessionClient
from dex_agents_contracts import (
    AgentSnapshot,
    AgentStatus,
    MessageRole,
    PendingUserMessage,
    ToolEffect,
)
from dex_agents_testing import (
    ModelReply,
    ScriptedTool,
    ScriptedToolCall,
    WorkerProcess,
    wait_until,
)
from helpers import Harness, HarnessFactory
from hypothesis import HealthCheck, Phase, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, rule, run_state_machine_as_test

LONG = os.environ.get("DEX_AGENTS_FUZZ") == "long"
SEQUENCES = settings(
    max_examples=300 if LONG else 6,
    stateful_step_count=25 if LONG else 14,
    derandomize=not LONG,
    database=None,
    deadline=None,
    suppress_health_check=list(HealthCheck),
    # Each step drives real processes: shrinking a failure would take many minutes,
    # and the printed sequence with the failing check already names the RPC.
    phases=(Phase.explicit, Phase.reuse, Phase.generate),
)
TURNS = 400
"""Scripted turns: each asks for approval of write `w<turn>`, then answers."""
SEND = ScriptedTool(name="send", effect=ToolEffect.NON_IDEMPOTENT_WRITE, output="sent")


def _script() -> list[list[ModelReply]]:
    return [
        [
            ModelReply(tool_calls=[ScriptedToolCall(tool_call_id=f"w{turn}", tool_name="send")]),
            ModelReply(text=f"answer {turn}"),
        ]
        for turn in range(1, TURNS + 1)
    ]


def _texts(pending: Sequence[PendingUserMessage]) -> list[str]:
    return [p.message.text for p in pending if p.message is not None and p.message.text]


@dataclass
class Sessions:
    """The session under test and the two Worker processes serving its Flow type."""

    harness: Harness
    spare: WorkerProcess
    started: int = 0

    def workers(self) -> list[WorkerProcess]:
        return [self.harness.worker, self.spare]


@dataclass
class Expected:
    """What the RPCs answered, and so what the drained session must show."""

    queued: list[str] = field(default_factory=list)
    """send_user_message texts, in the order they were sent."""
    steered_texts: list[str] = field(default_factory=list)
    moved: set[str] = field(default_factory=set)
    """Queued messages a steer by ID moved while a turn ran."""
    deleted: set[str] = field(default_factory=set)
    refused: set[str] = field(default_factory=set)
    approved: set[str] = field(default_factory=set)
    rejected: set[str] = field(default_factory=set)


class SessionInterleavings(RuleBasedStateMachine):
    """One new session per sequence; the Worker processes outlive sequences."""

    env: Sessions

    def __init__(self) -> None:
        super().__init__()
        self.env.started += 1
        self.session = self.env.harness.start()
        self.expected = Expected()
        self.count = 0

    @property
    def client(self) -> AgentSessionClient:
        return self.env.harness.client

    def _text(self, kind: str) -> str:
        self.count += 1
        return f"{kind}-{self.env.started}-{self.count}"

    def _snapshot(self) -> AgentSnapshot:
        return self.client.get_snapshot(self.session)

    # --- rules ---------------------------------------------------------------------

    @rule()
    def send(self) -> None:
        text = self._text("queued")
        assert self.client.send_user_message(self.session, text)
        self.expected.queued.append(text)

    @rule()
    def steer_with_text(self) -> None:
        text = self._text("steer")
        if self.client.steer_user_message(self.session, text=text):
            self.expected.steered_texts.append(text)
        else:
            self.expected.refused.add(text)

    def _act_on_a_queued_message(
        self, pick: int, act: Callable[[str], bool]
    ) -> tuple[AgentSnapshot, str, bool] | None:
        """The snapshot before, the text of the queued message `act` was given the ID
        of, and what `act` answered; None while nothing is queued."""
        before = self._snapshot()
        if not before.queued_messages:
            return None
        named = before.queued_messages[pick % len(before.queued_messages)]
        text = named.message.text if named.message is not None else None
        assert text is not None
        try:
            applied = act(named.message_id)
        except ChannelMessageNotFoundError:
            applied = False  # a turn took it between the RPC's read and its commit (design)
        return before, text, applied

    @rule(pick=st.integers(min_value=0, max_value=7))
    def steer_a_queued_message(self, pick: int) -> None:
        acted = self._act_on_a_queued_message(
            pick,
            lambda message_id: self.client.steer_user_message(self.session, message_id=message_id),
        )
        if acted is None:
            return
        _, text, moved = acted
        after = self._snapshot()
        steered_now = set(_texts(after.steered_messages))
        if moved and text not in _texts(after.queued_messages):
            self.expected.moved.add(text)
        # Only messages this test steered can be waiting as steered ones.
        allowed = self.expected.moved | set(self.expected.steered_texts)
        assert steered_now <= allowed, (
            f"steer of {text!r} by ID left {sorted(steered_now - allowed)} steered"
        )
        if not moved:
            assert text not in steered_now, f"a refused steer moved {text!r}"

    @rule(pick=st.integers(min_value=0, max_value=7))
    def delete_a_queued_message(self, pick: int) -> None:
        acted = self._act_on_a_queued_message(
            pick, lambda message_id: self.client.delete_queued_message(self.session, message_id)
        )
        if acted is None or not acted[2]:
            return
        before, text, _ = acted
        self.expected.deleted.add(text)
        after = self._snapshot()
        assert text not in _texts(after.queued_messages), f"{text!r} still queued"
        assert text not in _texts(after.steered_messages), f"{text!r} was steered"
        # The other messages queued before are still queued, or a turn took them.
        others = [t for t in _texts(before.queued_messages) if t != text]
        left = _texts(after.queued_messages)
        assert left == others[len(others) - len(left) :], (
            f"deleting {text!r} changed the queue {others} into {left}"
        )

    @rule(pick=st.integers(min_value=0, max_value=3), approve=st.booleans())
    def resolve_an_approval(self, pick: int, approve: bool) -> None:
        pending = self._snapshot().pending_interrupts
        if not pending:
            return
        interrupt = pending[pick % len(pending)]
        if self.client.resolve_interrupt(
            self.session, interrupt.interrupt_id, approved=approve, rejection_message="no"
        ):
            (self.expected.approved if approve else self.expected.rejected).add(
                interrupt.interrupt_id
            )

    @rule()
    def cancel_the_turn(self) -> None:
        self.client.cancel_turn(self.session)

    @rule(which=st.integers(min_value=0, max_value=1))
    def kill_a_worker(self, which: int) -> None:
        if which == 0:
            self.env.harness.restart_worker()
        else:
            self.env.spare.kill()
            self.env.spare = self.env.spare.start()

    # --- what must hold after every rule -----------------------------------------------

    @invariant()
    def nothing_deleted_or_refused_is_waiting(self) -> None:
        snapshot = self._snapshot()
        waiting = set(_texts(snapshot.queued_messages)) | set(_texts(snapshot.steered_messages))
        gone = self.expected.deleted | self.expected.refused
        assert not waiting & gone, f"{sorted(waiting & gone)} deleted or refused, still waiting"

    # --- the drained session --------------------------------------------------------------

    def teardown(self) -> None:
        # A steer while no turn runs queues its text, which a delete can then remove.
        sent = self.expected.queued + self.expected.steered_texts
        accepted = [t for t in sent if t not in self.expected.deleted]
        stored = self._drain(set(accepted))
        counts = Counter(stored)
        for text in accepted:
            assert counts[text] == 1, f"{text!r} stored {counts[text]} times: {stored}"
        for text in self.expected.deleted | self.expected.refused:
            assert counts[text] == 0, f"{text!r} was deleted or refused but stored: {stored}"
        assert set(counts) == set(accepted), f"stored {stored}, accepted {accepted}"
        # Messages that stayed in the queue keep the order they were sent in.
        stayed = [t for t in accepted if t in self.expected.queued and t not in self.expected.moved]
        assert [t for t in stored if t in stayed] == stayed, (stored, stayed)
        prefix = f"{self.session}/"
        runs = Counter(
            e["tool_call_id"]
            for e in self.env.harness.log.entries("tool")
            if str(e["key"]).startswith(prefix)
        )
        twice = {call for call, n in runs.items() if n > 1}
        assert not twice, f"single-attempt writes ran twice: {sorted(twice)}"
        ran_rejected = self.expected.rejected & set(runs)
        assert not ran_rejected, f"rejected writes ran: {sorted(ran_rejected)}"

    def _stored(self) -> list[str]:
        return [
            m.text
            for m in self.client.all_messages(self.session)
            if m.role is MessageRole.USER and m.text is not None and m.text.count("-") == 2
        ]

    def _drain(self, accepted: set[str]) -> list[str]:
        """Approves whatever asks until every accepted message is stored and the session
        is idle; the stored messages of this test, in order.

        A message a Step's wait consumed is in neither queue until that Step commits,
        so no snapshot alone says the session is drained: waiting for the accepted
        messages does, and a lost one fails here by name.
        """
        harness = self.env.harness
        seen: list[list[str]] = [[]]

        def drained() -> tuple[list[str]] | None:
            snapshot = self._snapshot()
            for interrupt in snapshot.pending_interrupts:
                harness.client.resolve_interrupt(
                    self.session, interrupt.interrupt_id, approved=True
                )
            stored = self._stored()
            seen[0] = stored
            idle = (
                snapshot.state is not None
                and snapshot.state.status is AgentStatus.WAITING_FOR_USER_MESSAGE
                and snapshot.state.active_turn_id is None
                and not snapshot.queued_messages
                and not snapshot.steered_messages
            )
            return (stored,) if idle and accepted <= set(stored) else None

        try:
            (stored,) = wait_until(drained, timeout=90, what="every accepted message stored")
        except AssertionError as error:
            missing = sorted(accepted - set(seen[0]))
            raise AssertionError(f"never stored: {missing}; stored: {seen[0]}") from error
        return stored


@pytest.fixture
def sessions(private_harness: HarnessFactory) -> Iterator[Sessions]:
    harness = private_harness(script=_script(), tools=[SEND])
    spare = WorkerProcess(harness.server.address, harness.scenario_path).start()
    yield Sessions(harness=harness, spare=spare)
    spare.stop()


def test_rpcs_act_on_what_they_name_under_any_interleaving_and_kills(sessions: Sessions) -> None:
    SessionInterleavings.env = sessions
    run_state_machine_as_test(SessionInterleavings, settings=SEQUENCES)
