"""TracingOptions, the Worker's tracing option, and SessionTracing without Dex.

The span shapes of real sessions are in test_session_tracing.py; these cover
what a session cannot easily reach: bad options, the API without an SDK, an
unsampled root, a missing `otel` extra.
"""

from __future__ import annotations

import asyncio
import logging
import sys
from types import SimpleNamespace
from typing import Any

import pytest
from dex_agents import AgentSessionFlow, AgentWorker, TracingOptions, UserError, agent_registry
from dex_agents.tracing import SessionTracing
from dex_agents_contracts import AgentToolCall, AgentUsage
from dex_agents_testing import ScriptedRunner
from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.sdk.trace.sampling import ALWAYS_OFF


def _context() -> Any:
    return SimpleNamespace(flow_id="s-1", run_id="r-1", step_execution_id="e-1", attempt=1)


def _tracing(provider: object, **options: Any) -> SessionTracing:
    tracing = SessionTracing()
    tracing.configure(TracingOptions(tracer_provider=provider, **options), default_agent_name="a")
    return tracing


def _sdk(sampler: Any = None) -> tuple[TracerProvider, InMemorySpanExporter]:
    exporter = InMemorySpanExporter()
    provider = TracerProvider(sampler=sampler) if sampler is not None else TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    return provider, exporter


def _flow(name: str, tracing: TracingOptions | None = None) -> AgentSessionFlow:
    return AgentSessionFlow(ScriptedRunner([], [], None), flow_type=name, tracing=tracing)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("options", "named"),
    [
        ({"conventions": "1.40"}, "`conventions`"),
        ({"agent_name": " "}, "`agent_name`"),
        ({"conventions": "1.36.0", "capture_content": True}, "`capture_content`"),
    ],
)
def test_bad_options_name_what_is_wrong(options: dict[str, Any], named: str) -> None:
    with pytest.raises(UserError, match=named):
        TracingOptions(**options)


def test_the_worker_traces_every_session_flow_without_options_of_its_own() -> None:
    own = TracingOptions(agent_name="own")
    plain, traced = _flow("Plain"), _flow("Own", own)
    worker_options = TracingOptions(agent_name="worker")

    async def build() -> None:  # the SDK's Worker needs a running loop
        worker = AgentWorker([plain, traced], server_address="127.0.0.1:1", tracing=worker_options)
        worker.close_cache()
        with pytest.raises(UserError, match="not a Registry"):
            AgentWorker(agent_registry([_flow("R")]), server_address="127.0.0.1:1", tracing=own)

    asyncio.run(build())
    assert plain.tracing_options is worker_options
    assert traced.tracing_options is own


def test_enable_tracing_without_the_extra_says_what_to_install(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, "opentelemetry.trace", None)
    with pytest.raises(UserError, match=r"install dex-agents\[otel\]"):
        _flow("NoOtel").enable_tracing(TracingOptions())
    _flow("Off").enable_tracing(TracingOptions(enabled=False))  # off never imports it


def test_the_api_without_an_sdk_gives_no_traceparent() -> None:
    tracing = _tracing(trace.NoOpTracerProvider())
    with tracing.attempt(_context(), "AwaitUserMessage"):
        assert tracing.activation(previous=None, turn_id="turn-1", activation="x") is None


def test_an_unsampled_root_is_stored_and_its_children_follow_its_decision() -> None:
    provider, exporter = _sdk(ALWAYS_OFF)
    tracing = _tracing(provider)
    with tracing.attempt(_context(), "AwaitUserMessage"):
        root = tracing.activation(previous=None, turn_id="turn-1", activation="x")
    assert root is not None
    assert not int(root.split("-")[3], 16) & 0x01
    with tracing.attempt(_context(), "RunModel"), tracing.model_call(root, "turn-1") as call:
        call.outcome(metadata=None, usage=AgentUsage(model_calls=1), references={})
    assert exporter.get_finished_spans() == ()


def test_a_sampled_root_parents_later_attempts_across_a_stored_traceparent() -> None:
    provider, exporter = _sdk()
    tracing = _tracing(provider)
    with tracing.attempt(_context(), "StartAgentSession"):
        first = tracing.activation(previous=None, turn_id=None, activation="session_start")
        again = tracing.activation(previous=None, turn_id="turn-1", activation="user_message")
    assert first is not None
    assert again == first  # one root per attempt; the turn joins it
    record = AgentToolCall(tool_call_id="c1", turn_id="turn-1", tool_name="t", trace_context=first)
    with (
        tracing.attempt(_context(), "CallTool"),
        pytest.raises(ValueError, match="boom"),
        tracing.tool_call(record),
    ):
        raise ValueError("boom")
    root_span, tool_span = exporter.get_finished_spans()
    assert root_span.attributes is not None
    assert root_span.attributes["dex.agent.turn.id"] == "turn-1"
    assert tool_span.parent is not None
    root_context = root_span.get_span_context()
    assert root_context is not None
    assert tool_span.parent.span_id == root_context.span_id
    assert tool_span.attributes is not None
    assert tool_span.attributes["error.type"] == "ValueError"
    assert tool_span.status.status_code is trace.StatusCode.ERROR


def test_without_an_attempt_or_when_disabled_every_hook_is_inert() -> None:
    off = SessionTracing()
    assert not off.enabled
    with off.attempt(_context(), "RunModel"), off.model_call(None, "turn-1") as call:
        call.outcome(metadata=None, usage=AgentUsage(), references={})
    assert off.activation(previous=None, turn_id=None, activation="x") is None
    on = _tracing(_sdk()[0])
    assert on.activation(previous=None, turn_id=None, activation="x") is None  # no attempt


def test_a_failing_tracer_is_logged_and_the_span_skipped(caplog: pytest.LogCaptureFixture) -> None:
    class Broken(trace.NoOpTracerProvider):
        def get_tracer(self, *args: Any, **kwargs: Any) -> trace.Tracer:
            tracer = trace.NoOpTracer()
            tracer.start_span = _raise  # type: ignore[method-assign]
            return tracer

    tracing = _tracing(Broken())
    with caplog.at_level(logging.WARNING, logger="dex_agents.tracing"):
        with tracing.attempt(_context(), "AwaitUserMessage"):
            assert tracing.activation(previous=None, turn_id=None, activation="x") is None
        with tracing.attempt(_context(), "RunModel"), tracing.model_call(None, "t") as call:
            call.outcome(metadata=None, usage=AgentUsage(), references={})
    assert [r.getMessage() for r in caplog.records] == [
        "tracing: the invoke_agent span was skipped after an OpenTelemetry error",
        "tracing: the chat span was skipped after an OpenTelemetry error",
    ]


def _raise(*args: Any, **kwargs: Any) -> Any:
    raise RuntimeError("broken tracer")
