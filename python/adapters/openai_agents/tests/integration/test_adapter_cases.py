"""The issue's cases with OpenAiAgentsRunner on dexlite and a real Worker process.

A handoff (the SDK runs it and the next agent's model call inside one RunModel
Step, and the runner writes an `openai_agents.handoff` event), an input
guardrail tripwire and an output guardrail (each a turn failure with the
guardrail's text), and a RunState schema version the SDK refuses (a clear turn
failure without a retry). Parallel tool calls as parallel Steps and the
session's built-in tools are the conformance suite's (test_session_integration.py).
"""

from __future__ import annotations

import json
from pathlib import Path

from dex_agents_contracts import MessageRole
from dex_agents_openai_agents import HANDOFF_EVENT
from dex_agents_testing import DexliteProcess

from integration.oai_workers import App


def test_a_handoff_runs_inside_run_model_and_the_next_agent_s_tool_gets_its_step(
    app: App,
) -> None:
    session = app.start("refund order A-1")
    snapshot = app.wait_idle(session, 1)
    assert snapshot.messages[-1].text == "Billing: refunded A-1"
    (shape,) = app.shapes(session)
    # The first RunModel made two model calls (the handoff and billing's call).
    assert shape == ["RunModel", "CallTool", "ResumeTurn", "RunModel"]
    models = app.entries("model")
    assert len(models) == 3
    assert "refund" not in models[0]["tools"]  # the assistant's call, which hands off
    assert "refund" in models[1]["tools"]  # billing's call, in the same RunModel Step
    assert snapshot.usage is not None
    assert snapshot.usage.model_calls == 3
    assert len(app.entries("tool", "refund")) == 1
    events = app.events(session, HANDOFF_EVENT)
    assert json.loads(events[-1].payload) == {"from_agent": "assistant", "to_agent": "billing"}
    tool_names = [m.tool_name for m in snapshot.messages if m.role is MessageRole.ASSISTANT]
    assert tool_names[:2] == ["transfer_to_billing", "refund"]


def test_an_input_guardrail_tripwire_fails_the_turn_with_its_text(app: App) -> None:
    session = app.start("what is the admin password?")
    failed = app.wait_idle(session, 1)
    assert failed.state is not None
    assert failed.state.last_turn_error == (
        "input guardrail 'no_passwords' tripped its tripwire: the message asks for a password"
    )
    assert app.entries("tool") == []
    assert app.shapes(session)[0][0] == "RunModel"


def test_an_output_guardrail_checks_the_answer(app: App) -> None:
    session = app.start("shout at me")
    failed = app.wait_idle(session, 1)
    assert failed.state is not None
    assert failed.state.last_turn_error == (
        "output guardrail 'no_shouting' tripped its tripwire: the answer shouts"
    )
    assert app.client.send_user_message(session, "hello")
    fine = app.wait_idle(session, 2)
    assert fine.state is not None
    assert fine.state.last_turn_error is None
    assert fine.messages[-1].text is not None
    assert fine.messages[-1].text.startswith("I have seen")


def test_a_run_state_schema_the_sdk_refuses_fails_the_turn_clearly(
    dexlite: DexliteProcess, tmp_path: Path
) -> None:
    app = App(dexlite, tmp_path, factory="build_stale_state_flow")
    app.start_worker()
    try:
        session = app.start("weather in Paris?")
        failed = app.wait_idle(session, 1)
        assert failed.state is not None
        error = failed.state.last_turn_error or ""
        assert error.startswith(
            "cannot resume the turn: the OpenAI Agents SDK refused the stored RunState: "
        )
        assert "schema version is not supported" in error
        # The tool ran once, and the resumed RunModel failed without a retry.
        assert len(app.entries("tool", "get_weather")) == 1
        assert len(app.entries("model")) == 1
        assert failed.messages[-1].text is not None
        assert "get_weather" in failed.messages[-1].text  # the turn-failure note
    finally:
        app.stop()
