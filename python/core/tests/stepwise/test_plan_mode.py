"""Plan mode: only write_todos in a planning turn, the plan note, planning_tool_choice."""

from __future__ import annotations

from dex_agents.models import (
    NamedToolChoice,
    ScriptedModelClient,
    UserMessage,
    scripted_answer,
    scripted_tool_calls,
)
from dex_agents.runner import ToolCallsRequested, TurnCompleted
from dex_agents.stepwise import AgentDefinition, StepwiseRunner, build_plan_note
from dex_agents_contracts import (
    AgentPlan,
    AgentPlanTask,
    ContextSummary,
    InteractionMode,
    PlanStatus,
    PlanTaskStatus,
    ToolCallStatus,
)
from stepwise_support import FakeSession

PLANNING_LINE = (
    "This turn only plans: write or revise the plan with write_todos, and do not do or "
    "claim any of its tasks. The user reviews the plan before it runs."
)


def search(query: str) -> str:
    return query


def planning_session(
    model: ScriptedModelClient, *, choice: str = "auto", plan: AgentPlan | None = None
) -> FakeSession:
    definition = AgentDefinition(
        tools=[search],
        model=model,
        planning_tool_choice="required" if choice == "required" else "auto",
    )
    session = FakeSession(runner=StepwiseRunner(definition))
    session.enabled_built_in_tools = ("write_todos",)
    session.interaction_mode = InteractionMode.PLANNING
    session.plan = plan
    return session


def active_plan() -> AgentPlan:
    return AgentPlan(
        revision=2,
        status=PlanStatus.ACTIVE,
        tasks=[
            AgentPlanTask(content="Find flights", status=PlanTaskStatus.COMPLETED),
            AgentPlanTask(content="Book hotel", status=PlanTaskStatus.IN_PROGRESS),
        ],
    )


def test_plan_note_texts() -> None:
    assert build_plan_note(None, InteractionMode.PLANNING) == (
        f"[Dex] There is no plan yet.\n{PLANNING_LINE}"
    )
    assert build_plan_note(None, InteractionMode.CHAT) is None
    cleared = AgentPlan(revision=3, status=PlanStatus.CLEARED)
    assert build_plan_note(cleared, InteractionMode.EXECUTING) is None
    assert build_plan_note(active_plan(), InteractionMode.EXECUTING) == (
        "[Dex] The current plan, revision 2, is active:\n"
        "- [completed] Find flights\n"
        "- [in_progress] Book hotel"
    )
    assert build_plan_note(active_plan(), InteractionMode.PLANNING) == (
        "[Dex] The current plan, revision 2, is active:\n"
        "- [completed] Find flights\n"
        f"- [in_progress] Book hotel\n{PLANNING_LINE}"
    )


def test_a_planning_turn_offers_only_write_todos_with_the_note_first() -> None:
    model = ScriptedModelClient([scripted_answer("Which dates?")])
    session = planning_session(model)
    session.start_turn("Plan my trip")
    session.run_model()
    request = model.requests[0]
    assert [t.name for t in request.tools] == ["write_todos"]
    assert request.tool_choice == "auto"
    assert request.messages == [
        UserMessage(text=f"[Dex] There is no plan yet.\n{PLANNING_LINE}"),
        UserMessage(text="Plan my trip"),
    ]


def test_the_note_goes_before_the_turns_messages_only() -> None:
    model = ScriptedModelClient([scripted_answer("Hi"), scripted_answer("On it.")])
    session = planning_session(model, plan=active_plan())
    session.interaction_mode = InteractionMode.CHAT
    session.start_turn("Hello")
    session.run_model()
    session.interaction_mode = InteractionMode.EXECUTING
    session.start_turn("Continue")
    session.run_model()
    texts = [getattr(m, "text", None) for m in model.requests[1].messages]
    assert texts[:2] == ["Hello", "Hi"]
    assert texts[2] is not None
    assert texts[2].startswith("[Dex] The current plan, revision 2, is active:")
    assert texts[3] == "Continue"


def test_required_forces_write_todos_on_the_first_call_without_a_draft() -> None:
    model = ScriptedModelClient(
        [scripted_tool_calls(("t1", "write_todos", '{"todos":[]}')), scripted_answer("Planned.")]
    )
    session = planning_session(model, choice="required")
    session.start_turn("Plan it")
    assert isinstance(session.run_model(), ToolCallsRequested)
    session.finish("t1", ToolCallStatus.SUCCEEDED, output='{"status":"cleared","revision":1}')
    session.run_model()
    assert model.requests[0].tool_choice == NamedToolChoice(name="write_todos")
    assert model.requests[1].tool_choice == "auto"


def test_required_is_not_forced_while_a_draft_exists() -> None:
    model = ScriptedModelClient([scripted_answer("Revise what?")])
    draft = AgentPlan(revision=1, status=PlanStatus.DRAFT)
    session = planning_session(model, choice="required", plan=draft)
    session.start_turn("Change the plan")
    session.run_model()
    assert model.requests[0].tool_choice == "auto"


def test_required_is_refused_for_a_client_without_forced_tool_choice() -> None:
    model = ScriptedModelClient([], forced_tool_choice=False)
    session = planning_session(model, choice="required")
    session.start_turn("Plan it")
    outcome = session.run_model()
    assert isinstance(outcome, TurnCompleted)
    assert outcome.turn_error is not None
    assert "supports_forced_tool_choice(settings) is true" in outcome.turn_error
    assert model.requests == []


def test_the_context_summary_starts_the_model_input() -> None:
    model = ScriptedModelClient([scripted_answer("Yes.")])
    session = FakeSession(runner=StepwiseRunner(AgentDefinition(model=model)))
    session.context_summary = ContextSummary(
        generation=1, first_sequence=1, last_sequence=10, text="We booked a flight."
    )
    session.start_turn("Did we?")
    session.run_model()
    assert model.requests[0].messages == [
        UserMessage(text="[Dex] Summary of the earlier conversation:\nWe booked a flight."),
        UserMessage(text="Did we?"),
    ]
