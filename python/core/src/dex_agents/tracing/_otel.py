"""The one module that imports OpenTelemetry; loaded only when tracing is enabled.

Spans are plain starts and ends with explicit nanosecond times: a chat or tool
span is created when its Step attempt ends, back-dated to when the work began,
so a Worker killed mid-call never leaves a span open.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from typing import Any

from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.context import Context
from opentelemetry.trace import Link, Span, SpanKind, Status, StatusCode
from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

from dex_agents.tracing._attributes import AttributeValue

__all__ = ["OtelEmitter"]

_PROPAGATOR = TraceContextTextMapPropagator()
_SCOPE = "dex_agents"


def _context_of(traceparent: str | None) -> Context | None:
    """The remote parent context a stored traceparent names, or None if it names none."""
    if not traceparent:
        return None
    return _parsed(traceparent)


@functools.lru_cache(maxsize=1024)
def _parsed(traceparent: str) -> Context | None:
    """Parsing costs more than a span's attributes; a Worker sees each root many times.

    Contexts are immutable, so sharing one between Steps is safe.
    """
    extracted = _PROPAGATOR.extract({"traceparent": traceparent})
    if not trace.get_current_span(extracted).get_span_context().is_valid:
        return None
    return extracted


class OtelEmitter:
    """Starts and ends spans on one tracer; every call may raise (the caller logs)."""

    def __init__(self, tracer_provider: Any, schema_url: str, version: str) -> None:
        self._tracer = trace.get_tracer(
            _SCOPE, version, tracer_provider=tracer_provider, schema_url=schema_url
        )

    def start_root(
        self,
        name: str,
        attributes: Mapping[str, AttributeValue],
        *,
        client: bool,
        previous: str | None,
        start_ns: int,
    ) -> tuple[Span, str | None]:
        """A new trace's root, linked to the previous root; and its traceparent, if valid."""
        linked = _context_of(previous)
        links = [Link(trace.get_current_span(linked).get_span_context())] if linked else []
        span = self._tracer.start_span(
            name,
            context=Context(),
            kind=SpanKind.CLIENT if client else SpanKind.INTERNAL,
            attributes=attributes,
            links=links,
            start_time=start_ns,
        )
        carrier: dict[str, str] = {}
        _PROPAGATOR.inject(carrier, context=trace.set_span_in_context(span))
        return span, carrier.get("traceparent")

    def emit(
        self,
        name: str,
        attributes: Mapping[str, AttributeValue],
        *,
        client: bool,
        parent: str | None,
        start_ns: int,
        end_ns: int,
        error_type: str | None,
    ) -> None:
        """A finished span under the stored root `parent` (a new trace without one)."""
        span = self._tracer.start_span(
            name,
            context=_context_of(parent) or Context(),
            kind=SpanKind.CLIENT if client else SpanKind.INTERNAL,
            attributes=attributes,
            start_time=start_ns,
        )
        self.end(span, error_type, end_ns=end_ns)

    @staticmethod
    def end(span: Span, error_type: str | None, *, end_ns: int | None = None) -> None:
        if error_type is not None:
            span.set_attribute("error.type", error_type)
            span.set_status(Status(StatusCode.ERROR))
        span.end(end_time=end_ns)

    @staticmethod
    def set_attributes(span: Span, attributes: Mapping[str, AttributeValue]) -> None:
        span.set_attributes(attributes)

    @staticmethod
    def attach(traceparent: str | None) -> object | None:
        """Make the stored root current, so a framework's own spans nest under it."""
        parent = _context_of(traceparent)
        return otel_context.attach(parent) if parent is not None else None

    @staticmethod
    def detach(token: object | None) -> None:
        if token is not None:
            otel_context.detach(token)  # type: ignore[arg-type]


def is_sampled(traceparent: str) -> bool:
    """Bit 0x01 of the flags (the random-trace-id bit 0x02 may be set too)."""
    parts: Sequence[str] = traceparent.split("-")
    return len(parts) == 4 and bool(int(parts[3], 16) & 0x01)
