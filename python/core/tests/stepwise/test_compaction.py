"""Compaction: input estimates, cuts that keep tool calls with their results, summaries."""

from __future__ import annotations

from dex_agents._runner.capabilities import ContextCompactionRunner, ContextSummaryRequest
from dex_agents.models import (
    ModelSettings,
    ModelUsage,
    ScriptedModelClient,
    ScriptEntry,
    UserMessage,
    scripted_answer,
    scripted_tool_calls,
)
from dex_agents.offline import RecordingEventWriter, no_heartbeat
from dex_agents.stepwise import AgentDefinition, StepwiseRunner
from dex_agents_contracts import AgentUsage, ContextSummary, ToolCallStatus
from stepwise_support import FakeSession, run


def lookup(key: str) -> str:
    return "v" * 40


def one_token_per_character(text: str) -> int:
    return len(text)


def conversation(
    model: ScriptedModelClient, *, max_output_tokens: int | None = None
) -> FakeSession:
    """Two turns: a tool turn (5 messages) and a plain one (2 messages)."""
    definition = AgentDefinition(
        tools=[lookup],
        model=model,
        count_tokens=one_token_per_character,
        model_settings=ModelSettings(max_output_tokens=max_output_tokens),
    )
    session = FakeSession(runner=StepwiseRunner(definition))
    session.start_turn("first question")
    session.run_model()
    session.execute_and_record("a")
    session.run_model()
    session.start_turn("second question")
    session.run_model()
    return session


def two_turn_model(*more: ScriptEntry) -> ScriptedModelClient:
    return ScriptedModelClient(
        [
            scripted_tool_calls(("a", "lookup", '{"key":"k"}'), text="Looking."),
            scripted_answer("first answer"),
            scripted_answer("second answer"),
            *more,
        ]
    )


def test_runner_is_a_compaction_runner() -> None:
    session = conversation(two_turn_model())
    assert isinstance(session.runner, ContextCompactionRunner)
    assert [m.sequence for m in session.messages] == [1, 2, 3, 4, 5, 6, 7]


def test_estimate_grows_with_the_conversation() -> None:
    session = conversation(two_turn_model())
    full = session.runner.estimate_input_tokens(session.context())
    session.messages = session.messages[:1]
    assert 0 < session.runner.estimate_input_tokens(session.context()) < full


def test_cutoff_never_separates_a_tool_call_from_its_result() -> None:
    session = conversation(two_turn_model())
    cutoff = session.runner.select_compaction_cutoff
    # Messages: 1 user, 2 assistant "Looking.", 3 tool call a, 4 result a, 5 answer,
    # 6 user, 7 answer. Safe cuts: after 1, 4, 5 and 6 (never after 2 or 3).
    assert cutoff(session.context(), 10**6) == 1
    assert cutoff(session.context(), 0) == 6
    sizes = {m.sequence: len(m.framework_item) for m in session.messages}  # a token a character
    keep_from_5 = sum(v for k, v in sizes.items() if k >= 5)
    assert cutoff(session.context(), keep_from_5 + 5) == 4
    assert cutoff(session.context(), keep_from_5 - 1) == 5


def test_no_cut_with_a_single_message() -> None:
    session = conversation(two_turn_model())
    session.messages = session.messages[:1]
    assert session.runner.select_compaction_cutoff(session.context(), 0) is None


def summary_request(
    session: FakeSession, *, through: int, budget: int, previous: str | None = None
) -> ContextSummaryRequest:
    return ContextSummaryRequest(
        flow_id=session.flow_id,
        turn_id=session.turn_id,
        attempt=1,
        previous_summary=ContextSummary(
            generation=1, first_sequence=1, last_sequence=0, text=previous
        )
        if previous
        else None,
        messages=tuple(session.messages),
        through_sequence=through,
        events=RecordingEventWriter(),
        heartbeat=no_heartbeat,
        input_token_budget=budget,
    )


def test_summary_is_one_model_call_over_the_transcript() -> None:
    model = two_turn_model(scripted_answer("They asked twice.", usage=ModelUsage(input_tokens=50)))
    session = conversation(model)
    result = run(
        session.runner.summarize_context(
            summary_request(session, through=5, budget=100_000, previous="Earlier: hello.")
        )
    )
    assert result.text == "They asked twice."
    assert result.usage == AgentUsage(model_calls=1, input_tokens=50)
    request = model.requests[-1]
    assert not request.tools
    assert request.instructions is not None
    assert request.instructions.startswith("You summarize")
    assert request.messages[0] == UserMessage(
        text="[Dex] Summary of the earlier conversation:\nEarlier: hello."
    )
    transcript = request.messages[1]
    assert isinstance(transcript, UserMessage)
    assert transcript.text.splitlines() == [
        "User: first question",
        "Assistant: Looking.",
        'Assistant called tool lookup (a) with {"key":"k"}',
        f"Tool result of lookup (a): {'v' * 40}",
        "Assistant: first answer",
        "",
        "Summarize the conversation above for the agent that continues it.",
    ]


def test_summary_leaves_out_the_oldest_messages_that_do_not_fit() -> None:
    model = two_turn_model(scripted_answer("s1"), scripted_answer("s2"))
    session = conversation(model, max_output_tokens=50)
    # Room for the fixed texts and the last two lines only: the cut falls after message 4.
    run(session.runner.summarize_context(summary_request(session, through=5, budget=400)))
    note, transcript = model.requests[-1].messages
    assert note == UserMessage(
        text="[Dex] 4 earlier messages did not fit in this request and are left out."
    )
    assert isinstance(transcript, UserMessage)
    assert transcript.text.startswith("Assistant: first answer")

    # When nothing fits, only the newest safe tail is sent.
    run(session.runner.summarize_context(summary_request(session, through=7, budget=0)))
    note, transcript = model.requests[-1].messages
    assert note == UserMessage(
        text="[Dex] 6 earlier messages did not fit in this request and are left out."
    )
    assert isinstance(transcript, UserMessage)
    assert transcript.text.startswith("Assistant: second answer\n\n")


def test_the_one_message_note() -> None:
    """Reaches into `_compaction`: one message needs the singular text, rare to provoke."""
    from dex_agents.stepwise._compaction import left_out_note

    assert (
        left_out_note(1) == "[Dex] 1 earlier message did not fit in this request and is left out."
    )


def test_status_of_records_does_not_matter_for_estimates() -> None:
    model = ScriptedModelClient([scripted_tool_calls(("a", "lookup", "{}"))])
    definition = AgentDefinition(tools=[lookup], model=model)
    session = FakeSession(runner=StepwiseRunner(definition))
    session.start_turn("q")
    session.run_model()
    waiting = session.runner.estimate_input_tokens(session.context())
    session.finish("a", ToolCallStatus.SUCCEEDED, output="x" * 400)
    assert session.runner.estimate_input_tokens(session.context()) > waiting + 50
