"""The span pipeline of a traced test Worker: the SDK's in-memory exporter, plus a file.

Every span start and end is one JSON line in the file (`read_spans`), so a test
sees the spans of Workers it SIGKILLed and can tell a span left open. A Worker
imports this module only when it traces: it imports the OpenTelemetry SDK (a
test dependency, never one of dex-agents), and the package's `__init__` never does.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from opentelemetry.context import Context
from opentelemetry.sdk.trace import ReadableSpan, Span, SpanProcessor, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor, SpanExportResult
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import Tracer
from opentelemetry.trace import TracerProvider as ApiTracerProvider

__all__ = [
    "FileSpanExporter",
    "RaisingTracerProvider",
    "StartRecorder",
    "file_provider",
    "read_spans",
]

_lock = threading.Lock()


def _append(path: str, line: Mapping[str, object]) -> None:
    with _lock, open(path, "a", encoding="utf-8") as file:
        file.write(json.dumps(line) + "\n")


def _hex(value: int, width: int) -> str:
    return f"{value:0{width}x}"


class FileSpanExporter(InMemorySpanExporter):
    """The in-memory exporter, also writing each finished span as one JSON line."""

    def __init__(self, path: str) -> None:
        super().__init__()
        self._path = path

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        result = super().export(spans)
        for span in spans:
            context = span.get_span_context()
            assert context is not None
            parent = span.parent
            _append(
                self._path,
                {
                    "event": "end",
                    "pid": os.getpid(),
                    "name": span.name,
                    "kind": span.kind.name,
                    "trace_id": _hex(context.trace_id, 32),
                    "span_id": _hex(context.span_id, 16),
                    "sampled": bool(context.trace_flags & 0x01),
                    "parent_span_id": _hex(parent.span_id, 16) if parent else None,
                    "parent_trace_id": _hex(parent.trace_id, 32) if parent else None,
                    "parent_is_remote": bool(parent.is_remote) if parent else None,
                    "links": [
                        {
                            "trace_id": _hex(link.context.trace_id, 32),
                            "span_id": _hex(link.context.span_id, 16),
                        }
                        for link in span.links
                    ],
                    "attributes": {k: _plain(v) for k, v in (span.attributes or {}).items()},
                    "status": span.status.status_code.name,
                    "schema_url": span.instrumentation_scope.schema_url
                    if span.instrumentation_scope
                    else None,
                    "start": span.start_time,
                    "end": span.end_time,
                },
            )
        return result


def _plain(value: object) -> object:
    return list(value) if isinstance(value, tuple) else value


class StartRecorder(SpanProcessor):
    """Writes a line when a span starts: a start without an end is a span left open."""

    def __init__(self, path: str) -> None:
        self._path = path

    def on_start(self, span: Span, parent_context: Context | None = None) -> None:
        _append(
            self._path,
            {
                "event": "start",
                "pid": os.getpid(),
                "name": span.name,
                "span_id": _hex(span.get_span_context().span_id, 16),
            },
        )


class RaisingTracerProvider(ApiTracerProvider):
    """A provider whose tracer raises on every span: tracing must not fail a Step."""

    def get_tracer(self, *args: Any, **kwargs: Any) -> Tracer:
        return _RaisingTracer()


class _RaisingTracer(Tracer):
    def start_span(self, *args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("the tracer is broken")

    def start_as_current_span(self, *args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("the tracer is broken")


def file_provider(path: str) -> TracerProvider:
    """An SDK provider writing span starts and finished spans to `path`."""
    provider = TracerProvider()
    provider.add_span_processor(StartRecorder(path))
    provider.add_span_processor(SimpleSpanProcessor(FileSpanExporter(path)))
    return provider


def read_spans(path: str | Path) -> list[dict[str, Any]]:
    """Every line the Workers wrote to `path`, in order."""
    file = Path(path)
    if not file.exists():
        return []
    return [json.loads(line) for line in file.read_text(encoding="utf-8").splitlines() if line]
