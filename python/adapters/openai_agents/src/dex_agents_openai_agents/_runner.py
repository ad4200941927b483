"""`OpenAiAgentsRunner`: an OpenAI Agents SDK agent on the session Flow, in Step mode.

Every function tool of the agent graph is gated with `needs_approval` (see
`_gating`), so a run stops with `result.interruptions` right after the model
call that asked for tools, before any tool runs. The runner returns the SDK's
`RunState` JSON and one Dex tool call per interruption. The next RunModel
restores the state, approves each interruption whose record succeeded (or whose
outcome is unknown), while the gated tool body returns the stored result, and
rejects failed and rejected calls with the text the model should see; the SDK
then makes the next model call. A handoff is not a tool: the SDK runs it and
the next agent's model call in the same Step, and the runner reports it with an
`openai_agents.handoff` event. The session's enabled built-ins are gated tools of
every agent (see `_built_ins`): their calls reach the session the same way.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Generic

from agents import (
    Agent,
    HandoffOutputItem,
    InputGuardrailTripwireTriggered,
    MaxTurnsExceeded,
    ModelResponse,
    OutputGuardrailTripwireTriggered,
    RunConfig,
    RunContextWrapper,
    Runner,
    RunState,
    ToolApprovalItem,
    UserError,
)
from agents.result import RunResult, RunResultStreaming
from agents.run_config import DEFAULT_MAX_TURNS
from agents.tool import invoke_function_tool, maybe_invoke_function_tool_failure_error_function
from agents.tool_context import ToolContext
from dex_agents import ToolPolicy
from dex_agents._runner.built_ins import offered_built_ins, offering
from dex_agents._runner.call_results import result_text, with_stored_results
from dex_agents._runner.errors import TurnFailed
from dex_agents._runner.heartbeats import DEFAULT_HEARTBEAT_INTERVAL_SECONDS
from dex_agents._runner.item_cache import DEFAULT_ITEM_CACHE_BYTES
from dex_agents._runner.mcp_sources import McpSourceTasks
from dex_agents._runner.plan_mode import planning_turn, turn_built_ins
from dex_agents._runner.routing import declared_approval
from dex_agents.runner import (
    AgentTurnContext,
    AgentTurnOutcome,
    DeferredToolCall,
    DeferredToolExecution,
    DeferredToolOutcome,
    DexRunInfo,
    FrameworkMessage,
    ModelCallMetadata,
    PendingCall,
    RunnerCapabilities,
    RunStateError,
    ToolCallsRequested,
    ToolExecutionError,
    ToolExecutionResult,
    ToolRouter,
    TurnCompleted,
    heartbeats,
    result_texts,
    running,
    tool_output_text,
)
from dex_agents_contracts import AgentToolCall, ToolCallStatus, ToolEffect
from typing_extensions import TypeVar

from dex_agents_openai_agents._calls import write_delta
from dex_agents_openai_agents._capabilities import capabilities
from dex_agents_openai_agents._gating import GatedGraph
from dex_agents_openai_agents._items import (
    history_from_stored,
    new_item_cache,
    to_framework_messages,
    tool_output_item,
    usage_of,
    user_item,
)
from dex_agents_openai_agents._mcp_tools import McpTools
from dex_agents_openai_agents._plan_note import with_plan_note
from dex_agents_openai_agents._state import TurnState

if TYPE_CHECKING:
    from dex_agents.mcp import McpToolSource

__all__ = ["HANDOFF_EVENT", "OpenAiAgentsRunner"]

ContextT = TypeVar("ContextT", default=None)

HANDOFF_EVENT = "openai_agents.handoff"
"""The event a RunModel Step writes for each handoff the SDK ran in it."""

_APPROVED_STATUSES = (ToolCallStatus.SUCCEEDED, ToolCallStatus.OUTCOME_UNKNOWN)


class OpenAiAgentsRunner(McpSourceTasks, Generic[ContextT]):
    """Runs an OpenAI Agents SDK `Agent` on `AgentSessionFlow`, one model call per RunModel Step.

    Args:
        agent: The starting agent. Its model, instructions, tools, handoffs,
            guardrails and output type are used as they are; the runner gates a
            copy of every function tool, never the application's objects.
        tool_policies: Per-tool effect and approval; they win over the session's
            `tool_policies` and over the tool's own `needs_approval`.
        default_tool_effect: Effect of a tool without a policy; None uses the
            session's `default_tool_effect`.
        context_factory: Builds the SDK run context (`RunContextWrapper.context`) of
            each model call and tool call. Without it the context is None. It is
            never stored: the state JSON carries an empty context.
        run_config: The SDK `RunConfig` of every run (model provider, guardrails,
            tracing, ...).
        max_turns: The SDK's model-call budget of one Dex turn, counted across Steps.
        stream: Run the model call streamed and write `text_delta` /
            `reasoning_delta` events.
        heartbeat_interval_seconds: How often a model call or tool call that is still
            running heartbeats its Step, which Dex fails after two minutes of silence.
        decoded_item_cache_bytes: How much stored message text the runner keeps decoded
            between Steps (see `DecodedItemCache`); 0 decodes every message every time.
        mcp_sources: `McpToolSource`s whose tools join the starting agent's function
            tools, gated like the others; their calls run through the source in tool
            Steps (which may start a task that PollToolTask follows).
    """

    def __init__(
        self,
        agent: Agent[Any],
        *,
        tool_policies: Mapping[str, ToolPolicy] | None = None,
        default_tool_effect: ToolEffect | None = None,
        context_factory: Callable[[DexRunInfo], ContextT] | None = None,
        run_config: RunConfig | None = None,
        max_turns: int = DEFAULT_MAX_TURNS,
        stream: bool = True,
        heartbeat_interval_seconds: float = DEFAULT_HEARTBEAT_INTERVAL_SECONDS,
        decoded_item_cache_bytes: int = DEFAULT_ITEM_CACHE_BYTES,
        mcp_sources: Sequence[McpToolSource] = (),
    ) -> None:
        if not isinstance(agent, Agent):
            raise TypeError(f"OpenAiAgentsRunner needs an agents.Agent, got {type(agent).__name__}")
        if max_turns < 1:
            raise ValueError(f"max_turns must be at least 1, got {max_turns}")
        self.agent = agent
        self.tool_policies: Mapping[str, ToolPolicy] = dict(tool_policies or {})
        self.default_tool_effect = default_tool_effect
        self.context_factory = context_factory
        self.run_config = run_config
        self.max_turns = max_turns
        self.stream = stream
        self.heartbeat_interval_seconds = heartbeat_interval_seconds
        self._graph = GatedGraph(agent)
        self._decoded_items = new_item_cache(decoded_item_cache_bytes)
        self._mcp: McpTools = McpTools(mcp_sources)
        self._start_with_mcp: Agent[Any] | None = None

    # --- AgentFrameworkRunner --------------------------------------------------------

    @property
    def supports_plan_mode(self) -> bool:
        """Plan mode through the kit: the plan note before the turn (`_plan_note`), and
        write_todos alone in a planning turn (`_gating.hidden_while_planning`)."""
        return True

    def describe(self) -> RunnerCapabilities:
        """What this adapter supports, each gap with its reason (docs/adapters.md)."""
        return capabilities()

    def build_user_message(self, text: str) -> FrameworkMessage:
        (message,) = to_framework_messages([user_item(text)])
        return message

    async def run_model_step(self, turn: AgentTurnContext) -> AgentTurnOutcome:
        info = DexRunInfo.of_model_step(turn)
        context = self._context(info)
        previous = TurnState.decode(turn.framework_run_state)
        results: dict[str, str] = {}
        start = await self._start_agent()
        # An enabled built-in's name is reserved (the session routes its calls).
        offered_built_ins(
            turn.enabled_built_in_tools,
            [*self._graph.tools, *filter(self._mcp.listed, turn.enabled_built_in_tools)],
            owner="the agent graph",
        )
        run_input: list[Any] | RunState[Any, Agent[Any]]
        if previous is None:
            run_input = history_from_stored(turn.messages, self._decoded_items)
            seen_responses = seen_items = 0
        else:
            try:
                state = await RunState.from_json(
                    start,
                    previous.sdk_state,
                    context_override=context,
                    context_deserializer=lambda _data: context,
                )
            except UserError as error:
                raise TurnFailed(
                    "cannot resume the turn: the OpenAI Agents SDK refused the stored "
                    f"RunState: {error}"
                ) from error
            seen_responses, seen_items = previous.responses, previous.run_items
            results = _answer_interruptions(state, state.get_interruptions(), turn.tool_calls)
            run_input = state

        try:
            with (
                running(info),
                with_stored_results(results),
                offering(turn_built_ins(turn)),
                planning_turn(turn),
            ):
                result = await self._run(turn, start, run_input, context)
        except InputGuardrailTripwireTriggered as tripped:
            guardrail = tripped.guardrail_result
            raise _guardrail_failure(
                "input", guardrail.guardrail.get_name(), guardrail.output.output_info
            ) from tripped
        except OutputGuardrailTripwireTriggered as tripped:
            out = tripped.guardrail_result
            raise _guardrail_failure(
                "output", out.guardrail.get_name(), out.output.output_info
            ) from tripped
        except MaxTurnsExceeded as error:
            raise TurnFailed(f"OpenAI Agents SDK: {error}") from error

        responses = result.raw_responses[seen_responses:]
        usage = usage_of(responses)
        metadata = _metadata(result, responses)
        for item in result.new_items[seen_items:]:
            if isinstance(item, HandoffOutputItem):
                turn.events.write_raw(
                    HANDOFF_EVENT,
                    json.dumps(
                        {"from_agent": item.source_agent.name, "to_agent": item.target_agent.name}
                    ),
                )
        items = _turn_items(result)
        if result.interruptions:
            pending, calls = await self._deferred_calls(turn, result.interruptions, context)
            sdk_state = result.to_state().to_json(context_serializer=lambda _context: {})
            return ToolCallsRequested(
                framework_run_state=TurnState(
                    sdk_state=sdk_state,
                    pending=pending,
                    items=items,
                    responses=len(result.raw_responses),
                    run_items=len(result.new_items),
                ).encode(),
                tool_calls=calls,
                usage=usage,
                model_call_metadata=metadata,
            )
        return TurnCompleted(
            new_messages=to_framework_messages(items, _tool_names(turn)),
            usage=usage,
            model_call_metadata=metadata,
        )

    async def execute_deferred_tool_call(self, call: DeferredToolExecution) -> DeferredToolOutcome:
        record = call.tool_call
        source = self._mcp.owner(record.tool_source_reference)
        if source is not None:  # an MCP tool: the source runs it, and may start a task
            async with heartbeats(call.heartbeat, self.heartbeat_interval_seconds):
                return await source.execute_deferred_tool_call(call)
        tool = self._graph.tools.get(record.tool_name)
        if tool is None:
            raise ToolExecutionError(f"this agent has no function tool named {record.tool_name!r}")
        info = DexRunInfo.of_tool_step(call)
        context = ToolContext(
            context=self._context(info),
            tool_name=record.tool_name,
            tool_call_id=record.tool_call_id,
            tool_arguments=record.arguments,
        )
        # A copy without a failure formatter raises the body's error here, so the
        # tool's own formatter decides what the model sees (a `failed` record), and a
        # tool whose formatter is None fails the Step (retried by its effect).
        raising = dataclasses.replace(
            tool, _failure_error_function=None, _use_default_failure_error_function=False
        )
        try:
            with running(info):
                async with heartbeats(call.heartbeat, self.heartbeat_interval_seconds):
                    output = await invoke_function_tool(
                        function_tool=raising, context=context, arguments=record.arguments
                    )
        except Exception as error:
            text = await maybe_invoke_function_tool_failure_error_function(
                function_tool=tool, context=context, error=error
            )
            if text is None:
                raise
            raise ToolExecutionError(text) from error
        return ToolExecutionResult(output=tool_output_text(output))

    # --- UnfinishedTurnMessageBuilder ------------------------------------------------

    def build_unfinished_turn_messages(self, turn: AgentTurnContext) -> Sequence[FrameworkMessage]:
        """The turn's unstored items, with a function call output for every pending call."""
        try:
            state = TurnState.decode(turn.framework_run_state)
        except RunStateError:
            return []
        if state is None:
            return []
        texts = result_texts(state.pending, turn.tool_calls, strict=False)
        items = [*state.items, *(tool_output_item(i, text) for i, text in texts.items())]
        return to_framework_messages(items, _tool_names(turn))

    # --- helpers ---------------------------------------------------------------------

    async def _start_agent(self) -> Agent[Any]:
        """The gated starting agent, with the MCP sources' tools once they are listed."""
        if not self._mcp.sources:
            return self._graph.start
        if self._start_with_mcp is None:
            start = self._graph.start
            tools = await self._mcp.function_tools(taken=list(self._graph.tools))
            self._start_with_mcp = start.clone(tools=[*start.tools, *tools])
        return self._start_with_mcp

    async def _run(
        self,
        turn: AgentTurnContext,
        start: Agent[Any],
        run_input: list[Any] | RunState[Any, Agent[Any]],
        context: Any,
    ) -> RunResult | RunResultStreaming:
        run_config = with_plan_note(self.run_config, turn)
        async with heartbeats(turn.heartbeat, self.heartbeat_interval_seconds):
            if not self.stream:
                return await Runner.run(
                    start,
                    run_input,
                    context=context,
                    max_turns=self.max_turns,
                    run_config=run_config,
                )
            streamed = Runner.run_streamed(
                start,
                run_input,
                context=context,
                max_turns=self.max_turns,
                run_config=run_config,
            )
            async for event in streamed.stream_events():
                write_delta(event, turn.events)
            return streamed

    def _context(self, info: DexRunInfo) -> Any:
        return None if self.context_factory is None else self.context_factory(info)

    async def _deferred_calls(
        self, turn: AgentTurnContext, interruptions: Sequence[ToolApprovalItem], context: Any
    ) -> tuple[list[PendingCall], list[DeferredToolCall]]:
        router = ToolRouter(
            turn, tool_policies=self.tool_policies, default_tool_effect=self.default_tool_effect
        )
        calls: list[DeferredToolCall] = []
        for item in interruptions:
            name = item.name or item.tool_name or ""
            call_id = item.call_id or ""
            built_in = name in turn.enabled_built_in_tools
            mcp_tool = None if built_in or name in self._graph.tools else self._mcp.listed(name)
            if not built_in and name not in self._graph.tools and mcp_tool is None:
                raise ValueError(
                    f"the model's call of {name!r} needs approval but is not a function tool "
                    "of the agent; OpenAiAgentsRunner defers function tools only"
                )
            arguments = item.arguments or "{}"
            calls.append(
                router.defer(
                    call_id,
                    name,
                    arguments,
                    framework_requires_approval=await self._tool_requires_approval(
                        name, arguments, call_id, context
                    ),
                    sourced=mcp_tool,
                )
            )
        pending = [PendingCall(tool_call_id=c.tool_call_id, tool_name=c.tool_name) for c in calls]
        return pending, calls

    async def _tool_requires_approval(
        self, name: str, arguments: str, call_id: str, context: Any
    ) -> bool | None:
        """The tool's own `needs_approval` for this call: it can only add an approval."""
        declared = self._graph.requires_approval.get(name)
        if not callable(declared):
            return await declared_approval(declared)
        try:
            parsed = json.loads(arguments)
        except ValueError:
            return True  # the SDK asks for approval of arguments it cannot inspect
        return await declared_approval(
            declared, RunContextWrapper(context=context), parsed, call_id
        )


def _answer_interruptions(
    state: RunState[Any, Agent[Any]],
    interruptions: Sequence[ToolApprovalItem],
    records: Sequence[AgentToolCall],
) -> dict[str, str]:
    """Approves calls whose tool ran (their result is stored) and rejects the rest with
    the text the model sees; returns the stored results by tool call ID."""
    by_id = {record.tool_call_id: record for record in records}
    results: dict[str, str] = {}
    for item in interruptions:
        record = by_id.get(item.call_id or "")
        text = result_text(record)  # a record that is not final: that it never ran
        if record is not None and record.status in _APPROVED_STATUSES:
            results[record.tool_call_id] = text
            state.approve(item)
        else:
            state.reject(item, rejection_message=text)
    return results


def _turn_items(result: RunResult | RunResultStreaming) -> list[dict[str, Any]]:
    """The turn's input items so far: what the run added to its original input."""
    original = result.input
    start = len(original) if isinstance(original, list) else 1
    return [dict(item) for item in result.to_input_list()[start:]]


def _tool_names(turn: AgentTurnContext) -> dict[str, str]:
    return {r.tool_call_id: r.tool_name for r in turn.tool_calls}


def _guardrail_failure(kind: str, name: str, info: object) -> TurnFailed:
    detail = "" if info is None else f": {info}"
    return TurnFailed(f"{kind} guardrail {name!r} tripped its tripwire{detail}")


def _model_name(agent: Agent[Any]) -> str | None:
    model = agent.model
    if isinstance(model, str):
        return model
    name = getattr(model, "model", None)
    return name if isinstance(name, str) else None


def _metadata(
    result: RunResult | RunResultStreaming, responses: Sequence[ModelResponse]
) -> ModelCallMetadata:
    name = _model_name(result.last_agent)
    return ModelCallMetadata(
        request_model=name,
        response_model=name,
        provider_name="openai",
        response_id=responses[-1].response_id if responses else None,
    )
