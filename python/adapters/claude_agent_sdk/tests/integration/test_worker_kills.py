"""Matrix items 5, 6 and 9: a Worker SIGKILLed during CallSingleAttemptTool (SYNC and
ASYNC durability) and during RunModel, each on a dexlite of its own."""

from __future__ import annotations

from dex_agents_testing.history import assert_step_shape
from dex_agents_testing.matrix import (  # the shared tests, collected here
    test_async_durability_default_never_reruns_single_attempt_write,
    test_sigkill_during_single_attempt_tool_records_outcome_unknown,
)
from dex_agents_testing.processes import wait_until

from integration.claude_workers import App

__all__ = [
    "test_async_durability_default_never_reruns_single_attempt_write",
    "test_sigkill_during_single_attempt_tool_records_outcome_unknown",
]


def test_sigkill_during_run_model_repeats_the_turn_and_its_inline_read(private_app: App) -> None:
    """The harness's item 6: the retried RunModel repeats the whole turn so far,
    the inline read included (at least once, as documented), and nothing else."""
    app = private_app
    session = app.start("slow weather")
    wait_until(
        lambda: any(e["results"] for e in app.entries("model")), what="the second model call"
    )
    app.restart_worker()
    app.gate("model").touch()
    done = app.wait_idle(session, 1, timeout=90)
    assert done.messages[-1].text == "Results: get_weather=sunny in Paris"
    models = app.entries("model")
    assert [bool(e["results"]) for e in models] == [False, True, False, True]
    assert len(app.entries("tool", "get_weather")) == 2
    assert_step_shape(app.history(session), ["RunModel"])
