"""The issue's cases with AdkRunner on dexlite and a real Worker process.

An ADK sub-agent transfer (ADK runs `transfer_to_agent` and the next agent's
model call inside one RunModel Step, and the runner writes a
`google_adk.transfer` event; the next agent's tool still gets its own Step),
parallel function calls of one response as parallel Steps, and a
`before_tool_callback` that answers a call itself, so that tool never runs
and gets no Step while the other call of the response does.
"""

from __future__ import annotations

import json

from dex_agents_contracts import MessageRole
from dex_agents_google_adk import TRANSFER_EVENT

from integration.adk_app import BLOCKED
from integration.adk_workers import App


def test_a_sub_agent_transfer_runs_inside_run_model_and_its_tool_gets_a_step(app: App) -> None:
    session = app.start("refund order A-1")
    snapshot = app.wait_idle(session, 1)
    assert snapshot.messages[-1].text == "Billing: refunded A-1"
    (shape,) = app.shapes(session)
    # The first RunModel made two model calls: the transfer, then billing's call.
    assert shape == ["RunModel", "CallTool", "ResumeTurn", "RunModel"]
    models = app.entries("model")
    assert [m["agent"] for m in models] == ["assistant", "billing", "billing"]
    assert "transfer_to_agent" in models[0]["tools"]
    assert snapshot.usage is not None
    assert snapshot.usage.model_calls == 3
    assert len(app.entries("tool", "refund")) == 1
    events = app.events(session, TRANSFER_EVENT)
    assert json.loads(events[-1].payload) == {"from_agent": "assistant", "to_agent": "billing"}
    tool_names = [m.tool_name for m in snapshot.messages if m.role is MessageRole.ASSISTANT]
    assert tool_names[:2] == ["transfer_to_agent", "refund"]

    # The next turn goes on with billing, the agent that answered (ADK's own choice).
    assert app.client.send_user_message(session, "refund it again")
    app.wait_idle(session, 2)
    assert app.entries("model")[-1]["agent"] == "billing"


def test_parallel_function_calls_are_parallel_steps(app: App) -> None:
    session = app.start("parallel weather")
    snapshot = app.wait_idle(session, 1)
    (shape,) = app.shapes(session)
    assert shape == ["RunModel", "CallTool", "CallTool", "ResumeTurn", "RunModel"]
    keys = sorted(e["key"] for e in app.entries("tool", "get_weather"))
    assert keys == [f"{session}/turn-1/a1", f"{session}/turn-1/b1"]
    # Both calls came in one model response, and both results go back in one content.
    (second,) = [m for m in app.entries("model") if m["results"]]
    assert second["results"] == {"a1": "sunny in Oslo", "b1": "sunny in Lima"}
    assert snapshot.messages[-1].text == (
        "Results: get_weather=sunny in Oslo; get_weather=sunny in Lima"
    )


def test_a_before_tool_callback_short_circuits_its_tool(app: App) -> None:
    session = app.start("clean up my disk")
    snapshot = app.wait_idle(session, 1)
    (shape,) = app.shapes(session)
    # Only get_weather became a tool Step; the callback answered delete_files in RunModel.
    assert shape == ["RunModel", "CallTool", "ResumeTurn", "RunModel"]
    assert app.entries("tool", "delete_files") == []
    assert len(app.entries("tool", "get_weather")) == 1
    assert [e["name"] for e in app.entries("callback")] == ["delete_files", "get_weather"]
    (second,) = [m for m in app.entries("model") if m["results"]]
    assert second["results"] == {"d1": BLOCKED, "w1": "sunny in Paris"}
    outputs = {m.tool_name: m.tool_output for m in snapshot.messages if m.role is MessageRole.TOOL}
    assert outputs == {"delete_files": BLOCKED, "get_weather": "sunny in Paris"}
