"""Matrix items 5, 6 and 9 with OpenAiAgentsRunner: a Worker SIGKILLed mid-Step.

Each test runs on a dexlite of its own (`private_app`); the Worker child process
is killed with its process group while a single-attempt tool or a model call
waits on a gate file, then a fresh Worker takes over.

| Item | Test |
|---|---|
| 5 | test_sigkill_during_single_attempt_tool_records_outcome_unknown |
| 6 | test_sigkill_during_run_model_reruns_only_that_model_call |
| 9 | test_async_durability_default_never_reruns_single_attempt_write |
"""

from __future__ import annotations

from dex import FlowConfig, StartFlowOptions, StepDurability
from dex_agents.runner import OUTCOME_UNKNOWN_RESULT
from dex_agents_testing import assert_step_shape, wait_until

from integration.oai_workers import App


def _kill_during_single_attempt_write(app: App, options: StartFlowOptions | None) -> None:
    session = app.start("charge me", options=options)
    wait_until(lambda: len(app.entries("tool", "charge")) == 1, what="the charge to start")
    app.restart_worker()  # SIGKILL mid-call, then a fresh Worker
    app.gate("charge").touch()  # a second run would now finish at once
    done = app.wait_idle(session, 1, timeout=60)
    assert len(app.entries("tool", "charge")) == 1
    resumed = app.entries("model")[-1]
    assert resumed["results"] == {"p1": OUTCOME_UNKNOWN_RESULT}
    assert done.messages[-1].text == f"Results: charge={OUTCOME_UNKNOWN_RESULT}"
    assert_step_shape(
        app.history(session),
        ["RunModel", "RecordToolOutcomeUnknown", "ResumeTurn", "RunModel"],
    )


def test_sigkill_during_single_attempt_tool_records_outcome_unknown(private_app: App) -> None:
    _kill_during_single_attempt_write(private_app, None)


def test_async_durability_default_never_reruns_single_attempt_write(private_app: App) -> None:
    options = StartFlowOptions(config_override=FlowConfig(step_durability=StepDurability.ASYNC))
    _kill_during_single_attempt_write(private_app, options)


def test_sigkill_during_run_model_reruns_only_that_model_call(private_app: App) -> None:
    app = private_app
    session = app.start("slow weather")
    wait_until(
        lambda: any(e["results"] for e in app.entries("model")), what="the second model call"
    )
    app.restart_worker()
    app.gate("model").touch()
    done = app.wait_idle(session, 1, timeout=60)
    assert done.state is not None
    assert done.state.last_turn_error is None, done.state.last_turn_error
    assert done.messages[-1].text == "Results: get_weather=sunny in Paris"
    models = app.entries("model")
    assert [bool(e["results"]) for e in models] == [False, True, True]
    assert len(app.entries("tool", "get_weather")) == 1
    assert_step_shape(app.history(session), ["RunModel", "CallTool", "ResumeTurn", "RunModel"])
