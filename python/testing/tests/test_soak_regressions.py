"""Bugs the soak found, each pinned by a test of its fix.

Crash-only losses of a bookkeeping Step's attempts wedged the session: when
ApplyTurnControl or FinishTurnCancellation lost all three of its attempts to
crashes (a SIGKILLed Worker, a dexlite restart), the Step had no failure route,
its branch ended, and the turn stayed active for good: no steered or queued
message ever started a turn again. RECOVERY_RETRY now retries them until the
server's total duration, so the attempt after the kills ends the turn. The
soak met both (long run of 2026-12-03, seed 11: soak-074 ApplyTurnControl-1,
soak-028 FinishTurnCancellation-2, each attempt 1 "pull worker stream closed",
attempts 2 and 3 "server restarted").
Here the Worker SIGKILLs dexlite as each Execute attempt of the Step begins (an
armed kill, see dex_agents_testing.soak.tracing), three times in a row, and
dexlite restarts each time. (Killing the Worker itself at that point did not
wedge the session in our runs: dexlite handed the same attempt out again.)
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from dex import DexServiceError, WorkerTarget
from dex_agents import AgentSessionClient, SessionUnavailableError
from dex_agents_contracts import AgentSnapshot, AgentStatus, ToolCallStatus
from dex_agents_testing import wait_until
from dex_agents_testing.soak.agent import build_soak_flow
from dex_agents_testing.soak.cluster import Cluster
from dex_agents_testing.soak.plans import TurnPlan
from dex_agents_testing.soak.tracing import arm_path

SID = "soak-regression"
_KILLS = 3  # as many attempts as the Step had before RECOVERY_RETRY was unbounded


class WedgedSessionError(AssertionError):
    """The turn never ended: the bug these tests pin."""


class _Session:
    def __init__(self, root: Path) -> None:
        self.traces = root / "traces"
        (root / "effects").mkdir()
        self.traces.mkdir()
        config = {
            "flow_type": "SoakRegression",
            "effects_dir": str(root / "effects"),
            "trace_dir": str(self.traces),
            "model_seconds": 0.0,
            "tool_seconds": 0.0,
        }
        self.cluster = Cluster(root, 1, config)
        self.cluster.start()
        self.client = AgentSessionClient(
            build_soak_flow(config),
            server_address=self.cluster.address,
            worker_target=WorkerTarget(pull=True),
        )
        self.client.start_session(SID)

    def snapshot(
        self, check: Callable[[AgentSnapshot], bool], what: str, *, timeout: float = 60
    ) -> AgentSnapshot:
        def probe() -> AgentSnapshot | None:
            snapshot = self.client.get_snapshot(SID)
            return snapshot if check(snapshot) else None

        return wait_until(probe, timeout=timeout, what=what)

    def arm(self, step_type: str) -> None:
        """The next `step_type` to begin SIGKILLs dexlite (a Dex Server crash mid-Step)."""
        staged = self.traces / "arm.staged"
        pgid = self.cluster.dexlite_pid()
        arm = {"step_type": step_type, "phase": "execute", "pgid": pgid, "delay": 0.0}
        staged.write_text(json.dumps(arm))
        os.replace(staged, arm_path(self.traces))

    def kill_every_attempt(self, step_type: str) -> None:
        """Each attempt of `step_type` that begins SIGKILLs dexlite, which then restarts."""
        for kill in range(_KILLS):
            claimed = wait_until(
                lambda: next(iter(self.traces.glob("claimed-*.json")), None),
                timeout=60,
                what=f"attempt {kill + 1} of {step_type} to begin",
            )
            claimed.unlink()
            wait_until(lambda: not self.cluster.dexlite_alive(), what="dexlite to die")
            self.cluster.kill_dexlite()  # reaps it
            self.cluster.restart_dexlite()
            if kill + 1 < _KILLS:
                self.arm(step_type)

    def during_kills(self, call: Callable[[], bool]) -> None:
        """An RPC whose commit starts the armed Step, so dexlite may die before it replies.

        The reply is not needed: the armed Step beginning (kill_every_attempt's
        first claim) proves the RPC committed. When dexlite dies first, the client
        retries while it is down (it restarts only after this returns) and then
        says the session was unavailable; either way the call is over.
        """
        with contextlib.suppress(DexServiceError, SessionUnavailableError):
            assert call()

    def wait_ended(self, turns: int, what: str) -> AgentSnapshot:
        try:
            return self.snapshot(_idle_after(turns), what, timeout=30)
        except AssertionError as error:
            raise WedgedSessionError(str(error)) from error

    def close(self) -> None:
        self.client.close()
        self.cluster.stop()


@pytest.fixture
def session(tmp_path: Path) -> Iterator[_Session]:
    made = _Session(tmp_path)
    yield made
    made.close()


def _idle_after(turns: int) -> Callable[[AgentSnapshot], bool]:
    def idle(s: AgentSnapshot) -> bool:
        return (
            s.state is not None
            and s.state.turn_count >= turns
            and s.state.active_turn_id is None
            and s.state.status is AgentStatus.WAITING_FOR_USER_MESSAGE
        )

    return idle


def test_steered_turn_ends_after_apply_turn_control_loses_every_attempt_to_crashes(
    session: _Session,
) -> None:
    plan = TurnPlan(kind="steer", tag=f"{SID}.1")
    steer = TurnPlan(kind="text", tag=f"{SID}.1s")
    assert session.client.send_user_message(SID, plan.message())
    session.snapshot(lambda s: bool(s.pending_interrupts), "the approval of a1")
    session.arm("ApplyTurnControl")
    session.during_kills(lambda: session.client.steer_user_message(SID, text=steer.message()))
    session.kill_every_attempt("ApplyTurnControl")
    done = session.wait_ended(2, "the steered turn to end")
    assert done.messages[-1].text == steer.final_text()


def test_cancelled_turn_ends_after_finish_turn_cancellation_loses_every_attempt_to_crashes(
    session: _Session,
) -> None:
    plan = TurnPlan(kind="cancel", tag=f"{SID}.1")
    assert session.client.send_user_message(SID, plan.message())
    session.snapshot(
        lambda s: any(t.status is ToolCallStatus.WAITING_FOR_TIMER for t in s.tool_calls),
        "the durable wait",
    )
    session.arm("FinishTurnCancellation")
    session.during_kills(lambda: session.client.cancel_turn(SID, "turn-1"))
    session.kill_every_attempt("FinishTurnCancellation")
    session.wait_ended(1, "the cancelled turn to end")
