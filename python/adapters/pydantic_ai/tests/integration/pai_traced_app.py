"""A traced session around a Pydantic AI agent with its own instrumentation on (a
`WorkerApp` script).

The session's spans and the agent's go through one tracer provider to
`traced_spans(log_path)` (`dex_agents_testing.span_files`), so a test sees whether
the agent's spans land in the activation's trace: RunModel makes the stored root
current while the agent runs. The FunctionModel answers `hello`.
"""

from __future__ import annotations

import sys
from pathlib import Path

from dex_agents import AgentSessionFlow, TracingOptions
from dex_agents_pydantic_ai import PydanticAiRunner
from dex_agents_testing.conformance import serve
from dex_agents_testing.span_files import file_provider
from pydantic_ai import Agent, DeferredToolRequests
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.models.instrumented import InstrumentationSettings


def traced_spans(log_path: str | Path) -> Path:
    """Where the app's Worker writes its spans."""
    return Path(f"{log_path}.spans.jsonl")


def _answer(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    return ModelResponse(parts=[TextPart(content="hello")])


def build_flow(
    flow_type: str, log_path: str, interrupt_deadline_seconds: float | None = None
) -> AgentSessionFlow:
    provider = file_provider(str(traced_spans(log_path)))
    agent: Agent[None, str | DeferredToolRequests] = Agent(
        FunctionModel(_answer), output_type=[str, DeferredToolRequests]
    )
    agent.instrument = InstrumentationSettings(tracer_provider=provider, include_content=False)
    return AgentSessionFlow(
        PydanticAiRunner(agent),
        flow_type=flow_type,
        tracing=TracingOptions(tracer_provider=provider),
    )


if __name__ == "__main__":
    sys.exit(serve(sys.modules[__name__]))
