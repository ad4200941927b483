"""What tracing costs per Step: the same turns with tracing off and on, in one run.

One dexlite child and one Worker (in this process, on its own loop thread)
serving two Flow types with the same Stepwise agent: a zero-latency rule model
and one READ tool, so a turn is AwaitUserMessage -> RunModel -> CallTool ->
ResumeTurn -> RunModel (5 Steps, one activation). "plain" has no tracing;
"traced" emits every span into the OpenTelemetry SDK with a BatchSpanProcessor
and an exporter that drops the spans (what an OTLP exporter costs is its own
business, off the Step's thread). Turns alternate between the two sessions,
so machine noise hits both alike. Printed per Step: the client's turn latency
/ 5, and this process's CPU time (Worker and client; dexlite is a child) / 5.

Then the tracing calls alone: the hooks one turn makes (5 attempts, one root,
two chat spans, one tool span) on the same SDK pipeline, timed in a loop, per
Step. Goal: under 5% of a Step.

    bazel run //python/core:tracing_cost_bench -- --turns 200
"""

from __future__ import annotations

import argparse
import statistics
import time
import uuid
from collections.abc import Mapping, Sequence
from types import SimpleNamespace
from typing import Any

from dex_agents import (
    AgentSessionClient,
    AgentSessionFlow,
    AgentSessionOptions,
    ToolPolicy,
    TracingOptions,
)
from dex_agents.models import (
    ModelRequest,
    ModelResponse,
    ScriptedModelClient,
    ToolResultMessage,
    scripted_answer,
    scripted_tool_calls,
)
from dex_agents.stepwise import AgentDefinition, StepwiseRunner, tool
from dex_agents.tracing import SessionTracing
from dex_agents_contracts import AgentToolCall, AgentUsage, ToolEffect
from dex_agents_testing import dexlite_or, worker_in_thread
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SpanExporter, SpanExportResult

STEPS_PER_TURN = 5


class DroppingExporter(SpanExporter):
    """Counts spans and drops them."""

    def __init__(self) -> None:
        self.count = 0

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        self.count += len(spans)
        return SpanExportResult.SUCCESS


class RuleModel:
    def supports_forced_tool_choice(self, settings: Mapping[str, object]) -> bool:
        return True

    async def complete(self, request: ModelRequest) -> ModelResponse:
        messages = list(request.messages)
        if messages and isinstance(messages[-1], ToolResultMessage):
            entry = scripted_answer("done")
        else:
            entry = scripted_tool_calls((f"c{len(messages)}", "lookup", '{"key":"k"}'))
        return await ScriptedModelClient([entry], model_name="rule").complete(request)


@tool
def lookup(key: str) -> str:
    """Looks a key up.

    Args:
        key: The key.
    """
    return "value"


def build_flow(flow_type: str, tracing: TracingOptions | None) -> AgentSessionFlow:
    definition = AgentDefinition(model_resolver=lambda _: RuleModel(), tools=[lookup])
    return AgentSessionFlow(
        StepwiseRunner(definition),
        flow_type=flow_type,
        options=AgentSessionOptions(tool_policies={"lookup": ToolPolicy(effect=ToolEffect.READ)}),
        tracing=tracing,
    )


def measure_sessions(address: str, turns: int, warmup: int) -> dict[str, dict[str, float]]:
    exporter = DroppingExporter()
    provider = TracerProvider()
    provider.add_span_processor(BatchSpanProcessor(exporter))
    suffix = uuid.uuid4().hex[:6]
    flows = {
        "plain": build_flow(f"BenchPlain{suffix}", None),
        "traced": build_flow(f"BenchTraced{suffix}", TracingOptions(tracer_provider=provider)),
    }
    latency: dict[str, list[float]] = {name: [] for name in flows}
    cpu: dict[str, list[float]] = {name: [] for name in flows}
    with worker_in_thread(list(flows.values()), address):
        clients = {
            name: AgentSessionClient(flow, server_address=address) for name, flow in flows.items()
        }
        sessions = {name: f"bench-{name}-{suffix}" for name in flows}
        for name, client in clients.items():
            client.run_turn(sessions[name], "start", new_session=True)
        for index in range(warmup + turns):
            order = ("plain", "traced") if index % 2 == 0 else ("traced", "plain")
            for name in order:
                wall, process = time.perf_counter(), time.process_time()
                clients[name].run_turn(sessions[name], f"turn {index}")
                if index >= warmup:
                    latency[name].append((time.perf_counter() - wall) * 1000)
                    cpu[name].append((time.process_time() - process) * 1000)
        for client in clients.values():
            client.close()
    provider.shutdown()
    return {
        name: {
            "latency_ms": statistics.median(latency[name]) / STEPS_PER_TURN,
            "cpu_ms": statistics.mean(cpu[name]) / STEPS_PER_TURN,
        }
        for name in flows
    } | {"spans": {"count": float(exporter.count)}}


def measure_hooks(rounds: int) -> float:
    """Thread CPU microseconds per Step of the tracing calls one turn makes."""
    provider = TracerProvider()
    provider.add_span_processor(BatchSpanProcessor(DroppingExporter()))
    tracing = SessionTracing()
    tracing.configure(TracingOptions(tracer_provider=provider), default_agent_name="bench")
    context: Any = SimpleNamespace(
        flow_id="bench-session", run_id="run-1", step_execution_id="exec-1", attempt=1
    )
    record = AgentToolCall(tool_call_id="c1", turn_id="turn-1", tool_name="lookup", arguments="{}")
    usage = AgentUsage(model_calls=1, input_tokens=10, output_tokens=5)
    root: str | None = None
    started = time.thread_time()  # CPU of this thread: what a Step's thread pays
    for _ in range(rounds):
        with tracing.attempt(context, "AwaitUserMessage"):
            root = tracing.activation(previous=root, turn_id="turn-1", activation="user_message")
        for _ in range(2):
            with tracing.attempt(context, "RunModel"), tracing.model_call(root, "turn-1") as call:
                call.outcome(
                    metadata=None, usage=usage, references={"dex.agent.tool_call.ids": ["c1"]}
                )
        record.trace_context = root
        with tracing.attempt(context, "CallTool"), tracing.tool_call(record) as span:
            span.result("value")
        with tracing.attempt(context, "ResumeTurn"):
            pass
    elapsed = time.thread_time() - started
    provider.shutdown()
    return elapsed / rounds / STEPS_PER_TURN * 1e6


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--server", help="a running dexlite; default: start one")
    parser.add_argument("--turns", type=int, default=200, help="measured turns per variant")
    parser.add_argument("--warmup", type=int, default=20)
    parser.add_argument("--hook-rounds", type=int, default=20000)
    args = parser.parse_args()
    with dexlite_or(args.server, prefix="tracing-bench-") as address:
        results = measure_sessions(address, args.turns, args.warmup)
    plain, traced = results["plain"], results["traced"]
    print(
        f"Sessions on dexlite, {args.turns} turns each ({STEPS_PER_TURN} Steps a turn), per Step:"
    )
    print(f"{'variant':<8} {'latency ms (median)':>20} {'process CPU ms (mean)':>22}")
    for name in ("plain", "traced"):
        row = results[name]
        print(f"{name:<8} {row['latency_ms']:>20.3f} {row['cpu_ms']:>22.3f}")
    print(
        f"traced - plain: latency {traced['latency_ms'] - plain['latency_ms']:+.3f} ms "
        f"({(traced['latency_ms'] / plain['latency_ms'] - 1) * 100:+.1f}%), CPU "
        f"{traced['cpu_ms'] - plain['cpu_ms']:+.3f} ms "
        f"({(traced['cpu_ms'] / plain['cpu_ms'] - 1) * 100:+.1f}%); "
        f"{int(results['spans']['count'])} spans exported"
    )
    hook_us = measure_hooks(args.hook_rounds)
    share = hook_us / (plain["latency_ms"] * 1000) * 100
    print(
        f"The tracing calls alone: {hook_us:.1f} us thread CPU per Step = {share:.2f}% of a "
        f"plain Step's latency, {hook_us / (plain['cpu_ms'] * 10):.2f}% of its process CPU "
        f"(goal < 5%)"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
