"""Plan mode on a Stepwise session: planning turns, execute_plan and executing turns."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from dex_agents_contracts import AgentSnapshot, InteractionMode, PlanStatus, PlanTaskStatus
from dex_agents_testing import assert_step_shape, wait_until
from helpers import Harness
from plan_flows import APPROVAL_PREFIX

FACTORY = "plan_flows:flow"
FactoryHarness = Callable[..., Harness]
PLANNING_LINE = (
    "This turn only plans: write or revise the plan with write_todos, and do not do or "
    "claim any of its tasks. The user reviews the plan before it runs."
)
APPROVAL_1 = (
    "[Dex] The user approved plan revision 1. Execute it and keep the task statuses "
    "current with write_todos."
)
PLANNING_REJECTION = "The tool call was not run: a planning turn can only call write_todos."


def _tasks(snapshot: AgentSnapshot) -> list[tuple[str, PlanTaskStatus]]:
    assert snapshot.plan is not None
    return [(t.content, t.status) for t in snapshot.plan.tasks]


def _mode(snapshot: AgentSnapshot) -> InteractionMode:
    assert snapshot.state is not None
    return snapshot.state.interaction_mode


def _draft(h: Harness, tasks: str = "alpha,beta") -> str:
    """A session whose first turn, a planning one, wrote a draft (revision 1)."""
    session = h.start()
    assert h.client.send_user_message(session, f"plan:{tasks}", plan_mode=True)
    snapshot = h.wait_idle(session, 1)
    assert snapshot.plan is not None
    assert (snapshot.plan.revision, snapshot.plan.status) == (1, PlanStatus.DRAFT)
    return session


def test_planning_turn_drafts_and_execute_plan_runs_it(factory_harness: FactoryHarness) -> None:
    h = factory_harness(FACTORY)
    session = _draft(h)
    planned = h.snapshot(session)
    assert _mode(planned) is InteractionMode.PLANNING
    assert _tasks(planned) == [("alpha", PlanTaskStatus.PENDING), ("beta", PlanTaskStatus.PENDING)]
    first, second = h.log.entries("model_call")[:2]
    # A planning turn offers only write_todos, and shows the note before its message.
    assert first["tools"] == ["write_todos"]
    assert first["tool_choice"] == "auto"
    assert first["texts"] == [f"[Dex] There is no plan yet.\n{PLANNING_LINE}", "plan:alpha,beta"]
    assert second["texts"][0] == (
        f"[Dex] The current plan, revision 1, is draft:\n- [pending] alpha\n- [pending] beta\n"
        f"{PLANNING_LINE}"
    )
    assert_step_shape(h.history(session), ["RunModel", "ResumeTurn", "RunModel"])

    assert h.client.execute_plan(session, 1)
    done = h.wait_idle(session, 2)
    assert _mode(done) is InteractionMode.EXECUTING
    assert done.plan is not None
    assert (done.plan.revision, done.plan.status) == (3, PlanStatus.COMPLETED)
    assert _tasks(done) == [("alpha", PlanTaskStatus.COMPLETED), ("beta", PlanTaskStatus.COMPLETED)]
    approval = next(m for m in done.messages if m.turn_id == "turn-2")
    assert approval.text == APPROVAL_1
    assert [m.text for m in done.messages][-1] == "executed"
    executing = [e for e in h.log.entries("model_call") if e["command"].startswith(APPROVAL_PREFIX)]
    assert len(executing) == 3
    assert executing[0]["tools"] == ["lookup", "ask_user", "durable_wait", "write_todos"]
    # Outside a planning turn the note has no planning line; the approval made it active.
    assert executing[0]["texts"][-2:] == [
        "[Dex] The current plan, revision 1, is active:\n- [pending] alpha\n- [pending] beta",
        APPROVAL_1,
    ]
    assert_step_shape(
        h.history(session),
        ["RunModel", "ResumeTurn", "RunModel", "ResumeTurn", "RunModel"],
        turn=1,
    )

    events = h.events(session, "turn_completed", count=2)
    second_turn = events[[e.type for e in events].index("turn_completed") + 1 :]
    types = [e.type for e in second_turn]
    assert types[:3] == ["plan_updated", "turn_started", "plan_execution_started"]
    assert json.loads(second_turn[0].payload) == {
        "revision": 1,
        "status": "active",
        "task_count": 2,
    }
    assert json.loads(second_turn[2].payload) == {"revision": 1}
    assert second_turn[1].turn_id == second_turn[2].turn_id == "turn-2"
    plans = [json.loads(e.payload) for e in events if e.type == "plan_updated"]
    assert plans == [
        {"revision": 1, "status": "draft", "task_count": 2},
        {"revision": 1, "status": "active", "task_count": 2},
        {"revision": 2, "status": "active", "task_count": 2},
        {"revision": 3, "status": "completed", "task_count": 2},
    ]
    # A completed plan, or an older revision, cannot be executed.
    assert not h.client.execute_plan(session, 3)
    assert not h.client.execute_plan(session, 1)


def test_a_draft_keeps_turns_planning_and_they_refuse_other_calls(
    factory_harness: FactoryHarness,
) -> None:
    h = factory_harness(FACTORY)
    session = _draft(h)
    # No plan_mode on the message: the draft alone makes the turn a planning one.
    assert h.client.send_user_message(session, "mixed")
    revised = h.wait_idle(session, 2)
    assert _mode(revised) is InteractionMode.PLANNING
    assert revised.plan is not None
    assert (revised.plan.revision, revised.plan.status) == (2, PlanStatus.DRAFT)
    assert _tasks(revised) == [("only", PlanTaskStatus.PENDING)]
    resumed = h.log.entries("model_call", command="mixed")[1]
    assert resumed["texts"][-3:] == [
        PLANNING_REJECTION,
        PLANNING_REJECTION,
        '{"status":"updated","revision":2,"task_count":1}',
    ]
    assert_step_shape(h.history(session), ["RunModel", "ResumeTurn", "RunModel"], turn=1)
    events = h.events(session, "turn_completed", count=2)
    finished = {
        json.loads(e.payload)["tool_call_id"]: json.loads(e.payload)["status"]
        for e in events
        if e.type == "tool_call_finished"
    }
    assert finished == {
        "plan-1": "succeeded",
        "m-lookup": "rejected",
        "m-ask": "rejected",
        "m-todos": "succeeded",
    }

    # A planning turn may answer in text and leave the draft as it is.
    assert h.client.send_user_message(session, "what do you need?")
    asked = h.wait_idle(session, 3)
    assert _mode(asked) is InteractionMode.PLANNING
    assert asked.plan is not None
    assert asked.plan.revision == 2
    assert asked.messages[-1].text == "ok"


def test_execute_plan_refusals(factory_harness: FactoryHarness, tmp_path: Path) -> None:
    h = factory_harness(FACTORY, {"gate_dir": str(tmp_path)})
    session = h.start()
    h.wait_idle(session, 0)
    assert not h.client.execute_plan(session, 1)  # no plan yet
    assert not h.client.send_user_message(session, "   ", plan_mode=True)
    assert h.client.send_user_message(session, "plan:one", plan_mode=True)
    h.wait_idle(session, 1)
    assert not h.client.execute_plan(session, 0)
    assert not h.client.execute_plan(session, -1)
    assert not h.client.execute_plan(session, 2)  # not the plan's revision

    # While a turn runs, the session does not wait for a user message.
    assert h.client.send_user_message(session, "hold:busy")
    h.wait_snapshot(
        session,
        lambda s: s.state is not None and s.state.active_turn_id == "turn-2",
        what="the held turn",
    )
    assert not h.client.execute_plan(session, 1)
    (tmp_path / "busy").touch()
    idle = h.wait_idle(session, 2)
    assert idle.plan is not None
    assert idle.plan.status is PlanStatus.DRAFT

    # A cleared plan cannot be executed.
    assert h.client.send_user_message(session, "clear")
    cleared = h.wait_idle(session, 3)
    assert cleared.plan is not None
    assert (cleared.plan.revision, cleared.plan.status) == (2, PlanStatus.CLEARED)
    assert not h.client.execute_plan(session, 2)


def test_second_approval_is_refused_before_the_first_commits(
    factory_harness: FactoryHarness, tmp_path: Path
) -> None:
    gate = tmp_path / "approval"
    h = factory_harness(FACTORY, {"approval_gate": str(gate)})
    session = _draft(h)
    assert h.client.execute_plan(session, 1)
    # AwaitUserMessage consumed the approval, but its Execute cannot commit yet.
    wait_until(lambda: h.log.count("approval_held") >= 1, what="the held approval")
    held = h.snapshot(session)
    assert held.state is not None
    assert held.state.active_turn_id is None
    assert not h.client.execute_plan(session, 1)
    gate.touch()
    done = h.wait_idle(session, 2)
    assert _mode(done) is InteractionMode.EXECUTING
    assert not h.client.execute_plan(session, 1)
    events = h.events(session, "turn_completed", count=2)
    assert [e.type for e in events].count("plan_execution_started") == 1


def test_plan_mode_message_needs_plan_mode(factory_harness: FactoryHarness) -> None:
    h = factory_harness(FACTORY, {"plan_mode_enabled": False})
    session = h.start()
    h.wait_idle(session, 0)
    assert not h.client.send_user_message(session, "plan:a", plan_mode=True)
    assert h.client.send_user_message(session, "hello")
    snapshot = h.wait_idle(session, 1)
    assert _mode(snapshot) is InteractionMode.CHAT
    assert snapshot.plan is None
    assert not h.client.execute_plan(session, 1)
    (seen,) = h.log.entries("model_call")
    assert seen["texts"] == ["hello"]  # no plan note outside plan mode without a plan
