"""LangGraphRunner's declared capabilities on dexlite with a real Worker process.

Text deltas: the graph runs with `astream(stream_mode="messages")`, so the model's
answer reaches the session's AgentEvents as `text_delta` events, piece by piece,
from the RunModel Step that made the call.
"""

from __future__ import annotations

import json

from dex_agents_testing.history import assert_step_shape

from integration.lg_workers import App


def test_the_answer_streams_as_text_deltas_from_its_run_model_step(app: App) -> None:
    session = app.start("weather in Paris?")
    snapshot = app.wait_idle(session, 1)
    assert_step_shape(
        app.history(session), ["RunModel", "CallTool", "ResumeTurn", "RunModel"], turn=0
    )
    events = app.events(session, "turn_completed")
    deltas = [json.loads(e.payload)["text"] for e in events if e.type == "text_delta"]
    # The first model call only asked for the tool; the second answered in words.
    assert len(deltas) > 1
    assert "".join(deltas) == snapshot.messages[-1].text == "Results: get_weather=sunny in Paris"
