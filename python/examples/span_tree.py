"""The demo's `--trace`: collect a turn's spans in memory and print them as a tree.

The OpenTelemetry SDK here is the example's choice (dex-agents needs only the
API); a real application would add an OTLP exporter instead (python/core/README.md).
"""

from __future__ import annotations

from collections.abc import Sequence

from dex_agents import TracingOptions
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

__all__ = ["SpanCollector"]

_SHOWN = (
    "dex.step.type",
    "dex.step.attempt",
    "gen_ai.provider.name",
    "gen_ai.usage.input_tokens",
    "gen_ai.usage.output_tokens",
    "gen_ai.tool.call.id",
    "dex.agent.activation",
)


class SpanCollector:
    """An SDK provider whose finished spans stay in memory until printed."""

    def __init__(self) -> None:
        self.exporter = InMemorySpanExporter()
        self.provider = TracerProvider()
        self.provider.add_span_processor(SimpleSpanProcessor(self.exporter))

    def options(self) -> TracingOptions:
        return TracingOptions(tracer_provider=self.provider)

    def print_tree(self) -> None:
        spans = sorted(self.exporter.get_finished_spans(), key=lambda s: s.start_time or 0)
        print("\nSpans (one trace per activation; the roots are linked)")
        for root in (s for s in spans if s.parent is None):
            _print(root, spans, depth=1)

    def shutdown(self) -> None:
        self.provider.shutdown()


def _print(span: ReadableSpan, spans: Sequence[ReadableSpan], *, depth: int) -> None:
    context = span.get_span_context()
    assert context is not None
    attributes = span.attributes or {}
    shown = " ".join(f"{key}={attributes[key]}" for key in _SHOWN if key in attributes)
    took = ((span.end_time or 0) - (span.start_time or 0)) / 1e6
    print(f"{'  ' * depth}{span.name} [{span.kind.name}] {took:.1f} ms  {shown}")
    if depth == 1:
        print(f"{'  ' * (depth + 1)}trace {context.trace_id:032x}")
        for link in span.links:
            print(f"{'  ' * (depth + 1)}linked to the root of trace {link.context.trace_id:032x}")
    for child in spans:
        if child.parent is not None and child.parent.span_id == context.span_id:
            _print(child, spans, depth=depth + 1)
