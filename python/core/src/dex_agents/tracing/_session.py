"""SessionTracing: what the session Steps call; inert until a Worker enables tracing.

Disabled, every method returns at once and OpenTelemetry is never imported.
Enabled, each Step attempt gets an `_Attempt` (a context variable: Steps run
concurrently as separate tasks), which owns the attempt's root span, if the
attempt is an activation, and ends it when the attempt ends. Chat and tool
spans are written when their call returns, inside the attempt. Any error from
OpenTelemetry is logged and that span skipped: tracing never fails a Step.
"""

from __future__ import annotations

import contextvars
import importlib
import logging
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from types import TracebackType
from typing import TYPE_CHECKING, Any

from dex_agents_contracts import AgentToolCall, AgentUsage

from dex_agents._runner.values import ModelCallMetadata
from dex_agents.tracing._attributes import (
    Attributes,
    StepIdentity,
    chat_attributes,
    root_attributes,
    tool_attributes,
)
from dex_agents.tracing._options import TracingOptions
from dex_agents.tracing._profiles import ConventionProfile, profile_for

if TYPE_CHECKING:
    from dex import AsyncContext

    from dex_agents.tracing._otel import OtelEmitter

__all__ = ["ModelCallTrace", "SessionTracing", "ToolCallTrace"]

_log = logging.getLogger("dex_agents.tracing")
_VERSION = "0.1.0"


@dataclass
class _Attempt:
    step: StepIdentity
    start_ns: int
    """When the attempt began: the root covers the whole activation Step."""
    root: Any = None
    root_traceparent: str | None = None
    activated: bool = False


_CURRENT: contextvars.ContextVar[_Attempt | None] = contextvars.ContextVar(
    "dex_agents_tracing_attempt", default=None
)


@dataclass
class _Enabled:
    emitter: OtelEmitter
    profile: ConventionProfile
    agent_name: str
    capture_content: bool


class SessionTracing:
    """One Flow type's tracing; `configure` turns it on (the Worker or the Flow calls it)."""

    def __init__(self) -> None:
        self._on: _Enabled | None = None

    @property
    def enabled(self) -> bool:
        return self._on is not None

    @property
    def capture_content(self) -> bool:
        return self._on is not None and self._on.capture_content

    def configure(self, options: TracingOptions | None, *, default_agent_name: str) -> None:
        """Enable tracing with `options` (None or `enabled=False` turns it off)."""
        if options is None or not options.enabled:
            self._on = None
            return
        # The only place OpenTelemetry gets imported (by `_otel`).
        otel = importlib.import_module("dex_agents.tracing._otel")
        emitter_type: type[OtelEmitter] = otel.OtelEmitter
        profile = profile_for(options.conventions)
        self._on = _Enabled(
            emitter=emitter_type(options.tracer_provider, profile.schema_url, _VERSION),
            profile=profile,
            agent_name=options.agent_name or default_agent_name,
            capture_content=options.capture_content,
        )

    # --- attempts and activations ------------------------------------------------

    @contextmanager
    def attempt(self, context: AsyncContext, step_type: str) -> Iterator[None]:
        """Scope of one Step attempt: a root started in it ends when it ends."""
        on = self._on
        if on is None:
            yield
            return
        current = _Attempt(
            StepIdentity(
                flow_id=context.flow_id,
                run_id=str(context.run_id),
                step_type=step_type,
                step_execution_id=str(context.step_execution_id),
                attempt=int(context.attempt),
            ),
            time.time_ns(),
        )
        token = _CURRENT.set(current)
        error: str | None = None
        try:
            yield
        except BaseException as raised:
            error = type(raised).__qualname__
            raise
        finally:
            _CURRENT.reset(token)
            if current.root is not None:
                _guarded(lambda: on.emitter.end(current.root, error), "invoke_agent")

    def activation(
        self,
        *,
        previous: str | None,
        turn_id: str | None,
        activation: str,
        tool_call_id: str | None = None,
    ) -> str | None:
        """Start this attempt's `invoke_agent` root (once); its traceparent, or None."""
        on, current = self._on, _CURRENT.get()
        if on is None or current is None:
            return None
        if current.activated:
            if turn_id is not None and current.root is not None:
                _guarded(
                    lambda: on.emitter.set_attributes(current.root, {"dex.agent.turn.id": turn_id}),
                    "invoke_agent",
                )
            return current.root_traceparent
        current.activated = True
        attributes = root_attributes(
            on.profile,
            current.step,
            agent_name=on.agent_name,
            turn_id=turn_id,
            activation=activation,
            tool_call_id=tool_call_id,
        )

        def start() -> None:
            current.root, current.root_traceparent = on.emitter.start_root(
                f"invoke_agent {on.agent_name}",
                attributes,
                client=on.profile.root_is_client,
                previous=previous,
                start_ns=current.start_ns,
            )

        _guarded(start, "invoke_agent")
        return current.root_traceparent

    # --- model and tool calls ----------------------------------------------------

    def model_call(self, parent: str | None, turn_id: str) -> ModelCallTrace:
        """A `chat` span for the model call about to run (no-op when disabled)."""
        current = _CURRENT.get()
        if self._on is None or current is None:
            return _NO_MODEL_CALL
        return ModelCallTrace(self._on, current, parent, turn_id)

    def tool_call(self, record: AgentToolCall) -> ToolCallTrace:
        """An `execute_tool` span under the record's root (no-op when disabled)."""
        current = _CURRENT.get()
        if self._on is None or current is None:
            return _NO_TOOL_CALL
        return ToolCallTrace(self._on, current, record)


@dataclass
class ModelCallTrace:
    """`with trace:` around the call; `trace.outcome(...)` once it returned."""

    _on: _Enabled | None
    _attempt: _Attempt | None
    _parent: str | None
    _turn_id: str
    _start_ns: int = 0
    _metadata: ModelCallMetadata | None = None
    _usage: AgentUsage | None = None
    _extra: Attributes = field(default_factory=dict)
    _token: object | None = None

    def __enter__(self) -> ModelCallTrace:
        on = self._on
        if on is not None:
            self._start_ns = time.time_ns()
            self._token = _guarded(lambda: on.emitter.attach(self._parent), "chat")
        return self

    def outcome(
        self,
        *,
        metadata: ModelCallMetadata | None,
        usage: AgentUsage,
        references: Attributes,
        content: Callable[[], Attributes] | None = None,
    ) -> None:
        """What the call returned; `content` is only called with content capture on."""
        on = self._on
        if on is None:
            return
        self._metadata, self._usage = metadata, usage
        self._extra.update(references)
        if content is not None and on.capture_content:
            captured = _guarded(content, "chat")
            if captured:
                self._extra.update(captured)

    def __exit__(
        self,
        kind: type[BaseException] | None,
        value: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        on, attempt = self._on, self._attempt
        if on is None or attempt is None:
            return
        end_ns = time.time_ns()
        _guarded(lambda: on.emitter.detach(self._token), "chat")
        usage = self._usage
        client = usage is not None and usage.model_calls == 1
        metadata = self._metadata

        def emit() -> None:
            attributes = chat_attributes(
                on.profile,
                attempt.step,
                agent_name=on.agent_name,
                turn_id=self._turn_id,
                metadata=metadata,
                usage=usage if client else None,
            )
            attributes.update(self._extra)
            model = metadata.request_model if metadata is not None else None
            on.emitter.emit(
                f"chat {model}" if model else "chat",
                attributes,
                client=client,
                parent=self._parent,
                start_ns=self._start_ns,
                end_ns=end_ns,
                error_type=kind.__qualname__ if kind is not None else None,
            )

        _guarded(emit, "chat")


@dataclass
class ToolCallTrace:
    """`with trace:` around the tool call; `trace.result(...)` with its output."""

    _on: _Enabled | None
    _attempt: _Attempt | None
    _record: AgentToolCall | None
    _start_ns: int = 0
    _extra: Attributes = field(default_factory=dict)
    _token: object | None = None

    def __enter__(self) -> ToolCallTrace:
        on, record = self._on, self._record
        if on is not None and record is not None:
            self._start_ns = time.time_ns()
            self._token = _guarded(lambda: on.emitter.attach(record.trace_context), "execute_tool")
            if on.capture_content:
                self._extra["gen_ai.tool.call.arguments"] = record.arguments
        return self

    def result(self, output: str | None) -> None:
        if self._on is not None and self._on.capture_content and output is not None:
            self._extra["gen_ai.tool.call.result"] = output

    def __exit__(
        self,
        kind: type[BaseException] | None,
        value: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        on, attempt, record = self._on, self._attempt, self._record
        if on is None or attempt is None or record is None:
            return
        end_ns = time.time_ns()
        _guarded(lambda: on.emitter.detach(self._token), "execute_tool")

        def emit() -> None:
            attributes = tool_attributes(
                on.profile, attempt.step, agent_name=on.agent_name, record=record
            )
            attributes.update(self._extra)
            on.emitter.emit(
                f"execute_tool {record.tool_name}",
                attributes,
                client=False,
                parent=record.trace_context,
                start_ns=self._start_ns,
                end_ns=end_ns,
                error_type=kind.__qualname__ if kind is not None else None,
            )

        _guarded(emit, "execute_tool")


_NO_MODEL_CALL = ModelCallTrace(None, None, None, "")
_NO_TOOL_CALL = ToolCallTrace(None, None, None)


def _guarded(action: Callable[[], Any], span: str) -> Any:
    """Run one tracing action; an error is logged and the span skipped, never raised."""
    try:
        return action()
    except Exception:
        _log.warning(
            "tracing: the %s span was skipped after an OpenTelemetry error", span, exc_info=True
        )
        return None
