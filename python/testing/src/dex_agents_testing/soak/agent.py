"""The soak session: a scripted model that follows each turn's plan, and tools that
count their side effects outside the system.

A Worker child builds it through `FactoryScenario` (`build_soak_flow`). Each tool
body appends one line per run to a file of its own call (`effects/`), with
O_APPEND, so runs of a SIGKILLed Worker still count and the checks can tell a
single-attempt tool that ran twice from one that ran once.
"""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from dex_agents import AgentSessionFlow, AgentSessionOptions, CompactionPolicy, ToolPolicy
from dex_agents._runner.capabilities import (
    ContextSummaryRequest,
    ContextSummaryResult,
    ToolTaskCancellation,
    ToolTaskPending,
    ToolTaskPoll,
    ToolTaskPollOutcome,
)
from dex_agents._runner.policies import BuiltInToolName
from dex_agents._runner.values import deferred_tool_call
from dex_agents.results import is_final, model_visible_result
from dex_agents.runner import (
    AgentTurnContext,
    AgentTurnOutcome,
    DeferredToolExecution,
    DeferredToolOutcome,
    FrameworkMessage,
    ToolCallsRequested,
    ToolExecutionError,
    ToolExecutionResult,
    ToolInputRequested,
    ToolTaskStarted,
    TurnCompleted,
)
from dex_agents_contracts import AgentToolCall, AgentUsage, MessageRole, ToolEffect

from dex_agents_testing.scripted import item_message
from dex_agents_testing.soak.plans import TurnPlan, calls_for, parse_plan
from dex_agents_testing.soak.tracing import TracedSessionFlow

__all__ = [
    "INPUT_TOKENS",
    "OUTPUT_TOKENS",
    "TOOL_EFFECTS",
    "SoakRunner",
    "build_soak_flow",
    "effect_path",
]

INPUT_TOKENS = 10
OUTPUT_TOKENS = 5
"""Every model call reports this usage, so the session's sums follow from its calls."""

TOOL_EFFECTS = {
    "lookup": ToolEffect.READ,
    "upsert": ToolEffect.IDEMPOTENT_WRITE,
    "survey": ToolEffect.IDEMPOTENT_WRITE,
    "charge": ToolEffect.NON_IDEMPOTENT_WRITE,
    "transfer": ToolEffect.NON_IDEMPOTENT_WRITE,
    "fetch": ToolEffect.READ,
    "debit": ToolEffect.NON_IDEMPOTENT_WRITE,
    "job": ToolEffect.IDEMPOTENT_WRITE,
}
FAILING_TOOLS = ("fetch", "debit")
"""Every attempt of these raises (not a ToolExecutionError), so their Steps' attempts
run out and the failure routes record them."""
JOB_RESULT = "job done"
TASK_POLL_SECONDS = 0.3
COMPACT_TOKENS = 10**6
"""The input estimate of a `compact` turn: far over the compaction trigger."""
_POLICIES = {
    "charge": ToolPolicy(effect=ToolEffect.NON_IDEMPOTENT_WRITE, requires_approval=False),
    "debit": ToolPolicy(effect=ToolEffect.NON_IDEMPOTENT_WRITE, requires_approval=False),
    "transfer": ToolPolicy(effect=ToolEffect.NON_IDEMPOTENT_WRITE, requires_approval=True),
}
_BUILT_INS: tuple[BuiltInToolName, ...] = ("ask_user", "durable_wait")
_OUTPUTS = {"lookup": "found", "upsert": "upserted", "charge": "charged", "transfer": "sent"}


def effect_path(effects_dir: str | Path, flow_id: str, turn_id: str, tool_call_id: str) -> Path:
    """The side-effect file of one tool call (flow IDs carry no `/`)."""
    return Path(effects_dir) / f"{flow_id}__{turn_id}__{tool_call_id}.log"


def _lines(path: Path) -> int:
    return len(path.read_text().splitlines()) if path.exists() else 0


def _append(path: Path, line: str) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(fd, (line + "\n").encode("utf-8"))
    finally:
        os.close(fd)


def _add_results(items: list[dict[str, Any]], records: Sequence[AgentToolCall]) -> None:
    """Appends a tool item for each final record the items do not answer yet."""
    answered = {item["tool_call_id"] for item in items if item["role"] == "tool"}
    for record in records:
        if record.tool_call_id not in answered and is_final(record.status):
            items.append(
                {
                    "role": "tool",
                    "tool_call_id": record.tool_call_id,
                    "tool_name": record.tool_name,
                    "output": model_visible_result(record),
                }
            )


def turn_plan(turn: AgentTurnContext) -> TurnPlan:
    """The plan of the turn's newest user message (a steered turn's is the steer)."""
    for message in reversed(turn.messages):
        if message.role is MessageRole.USER and message.turn_id == turn.turn_id:
            plan = parse_plan(message.text)
            if plan is not None:
                return plan
    return TurnPlan(kind="text", tag=f"{turn.flow_id}/{turn.turn_id}")


class SoakRunner:
    """A runner whose model follows the turn's plan; `model_seconds` and `tool_seconds`
    give calls a duration for kills to land in."""

    def __init__(self, effects_dir: str, *, model_seconds: float, tool_seconds: float) -> None:
        self.effects_dir = effects_dir
        self.model_seconds = model_seconds
        self.tool_seconds = tool_seconds

    def build_user_message(self, text: str) -> FrameworkMessage:
        return FrameworkMessage(
            role=MessageRole.USER,
            text=text,
            framework_item=json.dumps({"role": "user", "text": text}),
        )

    async def run_model_step(self, turn: AgentTurnContext) -> AgentTurnOutcome:
        state = json.loads(turn.framework_run_state or '{"call":0,"items":[]}')
        call = int(state["call"])
        items: list[dict[str, Any]] = list(state["items"])
        _add_results(items, turn.tool_calls)
        await asyncio.sleep(self.model_seconds)  # the model's latency (workload)
        usage = AgentUsage(model_calls=1, input_tokens=INPUT_TOKENS, output_tokens=OUTPUT_TOKENS)
        plan = turn_plan(turn)
        requested = calls_for(plan, call)
        if not requested:
            items.append({"role": "assistant", "text": plan.final_text(), "call": call})
            return TurnCompleted(
                new_messages=[item_message(i, sort_keys=True) for i in items], usage=usage
            )
        deferred = []
        for scripted in requested:
            arguments = json.dumps(scripted.arguments, separators=(",", ":"), sort_keys=True)
            effect = TOOL_EFFECTS.get(scripted.tool_name)
            deferred.append(
                deferred_tool_call(
                    tool_call_id=scripted.tool_call_id,
                    tool_name=scripted.tool_name,
                    arguments=arguments,
                    policy=turn.resolve_tool_policy(scripted.tool_name, effect),
                )
            )
            items.append(
                {
                    "role": "assistant",
                    "tool_call_id": scripted.tool_call_id,
                    "tool_name": scripted.tool_name,
                    "arguments": arguments,
                    "call": call,
                }
            )
        return ToolCallsRequested(
            framework_run_state=json.dumps({"call": call + 1, "items": items}),
            tool_calls=deferred,
            usage=usage,
        )

    def build_unfinished_turn_messages(self, turn: AgentTurnContext) -> Sequence[FrameworkMessage]:
        """The calls and final results of a steered, cancelled or failed turn."""
        if turn.framework_run_state is None:
            return []
        items: list[dict[str, Any]] = json.loads(turn.framework_run_state)["items"]
        _add_results(items, turn.tool_calls)
        return [item_message(item, sort_keys=True) for item in items]

    async def execute_deferred_tool_call(self, call: DeferredToolExecution) -> DeferredToolOutcome:
        record = call.tool_call
        name = record.tool_name
        if name not in TOOL_EFFECTS:
            raise ToolExecutionError(f"unknown tool {name!r}")
        if name == "survey" and not call.input_answers:
            return ToolInputRequested(question=f"rate {record.tool_call_id}?")
        await asyncio.sleep(self.tool_seconds)  # the tool's latency (workload)
        path = effect_path(self.effects_dir, call.flow_id, call.turn_id, record.tool_call_id)
        if name not in ("lookup", "fetch"):
            # The side effect, counted outside Dex: one line per run of the body.
            _append(path, json.dumps({"key": call.idempotency_key, "attempt": call.attempt}))
        if name in FAILING_TOOLS:
            raise RuntimeError(f"{name} fails on every attempt (soak workload)")
        if name == "job":
            return ToolTaskStarted(
                task_id=call.idempotency_key, poll_interval_seconds=TASK_POLL_SECONDS
            )
        if name == "survey":
            return ToolExecutionResult(output="surveyed|" + call.input_answers[-1].answer)
        return ToolExecutionResult(output=_OUTPUTS[name])

    async def poll_tool_task(self, poll: ToolTaskPoll) -> ToolTaskPollOutcome:
        """A job ends after its `polls` polls; `polls` 0 runs until cancel_turn."""
        record = poll.tool_call
        path = effect_path(self.effects_dir, poll.flow_id, record.turn_id, record.tool_call_id)
        polls_path = path.with_suffix(".polls")
        _append(polls_path, json.dumps({"key": poll.idempotency_key, "attempt": poll.attempt}))
        wanted = int(json.loads(record.arguments)["polls"])
        if wanted and _lines(polls_path) >= wanted:
            return ToolExecutionResult(output=JOB_RESULT)
        return ToolTaskPending(poll_interval_seconds=TASK_POLL_SECONDS)

    async def cancel_tool_task(self, cancellation: ToolTaskCancellation) -> None:
        record = cancellation.tool_call
        path = effect_path(
            self.effects_dir, cancellation.flow_id, record.turn_id, record.tool_call_id
        )
        _append(path.with_suffix(".cancel"), json.dumps({"key": cancellation.idempotency_key}))

    def estimate_input_tokens(self, turn: AgentTurnContext) -> int:
        return COMPACT_TOKENS if turn_plan(turn).kind == "compact" else 0

    def select_compaction_cutoff(
        self, turn: AgentTurnContext, retained_token_budget: int
    ) -> int | None:
        """Everything before the turn: a first turn has nothing to compact."""
        earlier = [m.sequence for m in turn.messages if m.turn_id != turn.turn_id]
        return max(earlier) if earlier else None

    async def summarize_context(self, request: ContextSummaryRequest) -> ContextSummaryResult:
        await asyncio.sleep(self.model_seconds)  # the summary call's latency (workload)
        return ContextSummaryResult(
            text=f"summary of {len(request.messages)} messages through {request.through_sequence}"
        )


def build_soak_flow(config: Mapping[str, Any]) -> AgentSessionFlow:
    """The FactoryScenario factory: config has flow_type, effects_dir, trace_dir and
    the model and tool latencies."""
    runner = SoakRunner(
        str(config["effects_dir"]),
        model_seconds=float(config["model_seconds"]),
        tool_seconds=float(config["tool_seconds"]),
    )
    options = AgentSessionOptions(
        tool_policies=_POLICIES,
        built_in_tools=_BUILT_INS,
        compaction=CompactionPolicy(context_window_tokens=1000),
    )
    flow = TracedSessionFlow(runner, flow_type=str(config["flow_type"]), options=options)
    flow.trace_dir = str(config["trace_dir"])
    return flow
