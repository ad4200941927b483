"""`StepwiseRunner`: dex_agents' own agent loop, one model call per RunModel Step."""

from __future__ import annotations

import inspect
import json
from collections.abc import Sequence

from dex_agents_contracts import (
    AgentToolCall,
    AgentUsage,
    PlanStatus,
    ReasoningDeltaPayload,
    TextDeltaPayload,
)

from dex_agents._runner.built_ins import BUILT_IN_TOOL_DEFINITIONS
from dex_agents._runner.call_results import pending_records, result_text
from dex_agents._runner.capabilities import (
    ContextSummaryRequest,
    ContextSummaryResult,
    ToolTaskCancellation,
    ToolTaskPoll,
    ToolTaskPollOutcome,
)
from dex_agents._runner.plan_mode import build_plan_note, is_planning, turn_built_ins
from dex_agents._runner.values import deferred_tool_call
from dex_agents.models import (
    ModelClient,
    ModelDelta,
    ModelRequest,
    ModelResponse,
    ModelToolChoice,
    ModelUsage,
    NamedToolChoice,
    ToolDefinition,
)
from dex_agents.runner import (
    AgentTurnContext,
    AgentTurnOutcome,
    DeferredToolCall,
    DeferredToolExecution,
    DeferredToolOutcome,
    DexRunInfo,
    FrameworkMessage,
    RunnerCapabilities,
    ToolCallsRequested,
    ToolExecutionError,
    ToolExecutionResult,
    ToolRouter,
    TurnCompleted,
    TurnContinued,
    declare_capabilities,
    running,
)
from dex_agents.stepwise._compaction import build_summary_messages, estimate_items, select_cutoff
from dex_agents.stepwise._continuation import (
    MAX_CONSECUTIVE_CONTINUATIONS,
    TurnContinuation,
    TurnContinuationContext,
    TurnContinuationDecision,
)
from dex_agents.stepwise._definition import AgentDefinition, InstructionContext
from dex_agents.stepwise._errors import InvalidModelResponseError
from dex_agents.stepwise._items import (
    AssistantItem,
    Item,
    ToolCallItem,
    ToolResultItem,
    UserItem,
    item_from_message,
    item_to_message,
    items_to_model_messages,
)
from dex_agents.stepwise._sources import TaskToolSource
from dex_agents.stepwise._state import RunState
from dex_agents.stepwise._tools import Tool, ToolContext

__all__ = ["SUMMARY_PREFIX", "StepwiseRunner"]

SUMMARY_PREFIX = "[Dex] Summary of the earlier conversation:"
_WRITE_TODOS = "write_todos"


class StepwiseRunner:
    """Runs an `AgentDefinition` on the session Flow.

    Each `run_model_step` makes one model call and defers every tool call it asks
    for; the turn's unstored items travel in the run state, and stored messages
    replay from their `framework_item`, so nothing re-runs and application code
    needs no determinism.
    """

    def __init__(self, definition: AgentDefinition) -> None:
        self.definition = definition
        self._source_tools: tuple[Tool, ...] | None = None

    @property
    def supports_plan_mode(self) -> bool:
        return True

    def describe(self) -> RunnerCapabilities:
        return declare_capabilities(
            supported=[
                "text_deltas",
                "reasoning_deltas",
                "usage",
                "built_in_tools",
                "mcp_sources",
                "mcp_tasks",
                "plan_mode",
                "compaction",
                "parallel_deferred_calls",
                "tool_cancellation",
                "tracing",
                "unfinished_turn_messages",
                "tool_task_polls",
                "tool_task_cancels",
            ],
            unsupported={
                "structured_output": "the loop's final answer is the model's text; "
                "AgentDefinition declares no output type",
                "handoffs": "one AgentDefinition per runner; the loop has no handoff",
            },
        )

    # --- AgentFrameworkRunner --------------------------------------------------------

    def build_user_message(self, text: str) -> FrameworkMessage:
        return item_to_message(UserItem(text=text))

    async def run_model_step(self, turn: AgentTurnContext) -> AgentTurnOutcome:
        await self._list_sources()
        state = RunState.decode(turn.framework_run_state)
        pending: list[Item] = [*state.items, *_results_for(state, turn.tool_calls, strict=True)]
        continuations = state.consecutive_continuations
        decision = state.after_tool_calls
        if decision == "end":
            return TurnCompleted(new_messages=_messages(pending))
        if isinstance(decision, TurnContinuation):
            if continuations > MAX_CONSECUTIVE_CONTINUATIONS:
                return TurnCompleted(
                    new_messages=_messages(pending), turn_error=_too_many_continuations()
                )
            pending.append(UserItem(text=decision.message))

        client = self.definition.resolve_model(turn.session_settings)
        offered = self._offered_tools(turn)
        tool_choice = self._tool_choice(turn, offered, client)
        if tool_choice is None:
            return TurnCompleted(
                new_messages=[],
                turn_error=(
                    "planning_tool_choice='required' needs a model client whose "
                    f"supports_forced_tool_choice(settings) is true; {type(client).__name__} "
                    "refuses a forced tool choice for these settings"
                ),
            )
        request = ModelRequest(
            instructions=await self.definition.render_instructions(
                InstructionContext(
                    session_settings=turn.session_settings,
                    flow_id=turn.flow_id,
                    turn_id=turn.turn_id,
                    interaction_mode=turn.interaction_mode,
                )
            ),
            messages=items_to_model_messages(self._model_input(turn, pending)),
            tools=offered,
            tool_choice=tool_choice,
            settings=self.definition.model_settings,
            session_settings=turn.session_settings,
            on_delta=lambda delta: _write_delta(turn, delta),
        )
        response = await client.complete(request)
        usage = _agent_usage(response.usage)
        answer = AssistantItem(text=response.text, reasoning=response.reasoning)

        if response.tool_calls:
            calls = self._deferred_calls(turn, pending, response)
            items: list[Item] = [*pending]
            if response.text or response.reasoning:
                items.append(answer)
            items.extend(
                ToolCallItem(
                    tool_call_id=call.tool_call_id,
                    tool_name=call.tool_name,
                    arguments=call.arguments,
                )
                for call in calls
            )
            after = await self._decide(turn, response, continuations)
            # A response with tool calls and no continuation breaks the run of continuations.
            in_a_row = continuations + 1 if isinstance(after, TurnContinuation) else 0
            return ToolCallsRequested(
                framework_run_state=RunState(
                    items=items, consecutive_continuations=in_a_row, after_tool_calls=after
                ).encode(),
                tool_calls=calls,
                usage=usage,
                model_call_metadata=response.metadata,
            )

        finished = [*pending, answer]
        after = await self._decide(turn, response, continuations)
        if isinstance(after, TurnContinuation):
            if continuations + 1 > MAX_CONSECUTIVE_CONTINUATIONS:
                return TurnCompleted(
                    new_messages=_messages(finished),
                    usage=usage,
                    model_call_metadata=response.metadata,
                    turn_error=_too_many_continuations(),
                )
            return TurnContinued(
                framework_run_state=RunState(consecutive_continuations=continuations + 1).encode(),
                new_messages=_messages([*finished, UserItem(text=after.message)]),
                usage=usage,
                model_call_metadata=response.metadata,
            )
        return TurnCompleted(
            new_messages=_messages(finished), usage=usage, model_call_metadata=response.metadata
        )

    async def execute_deferred_tool_call(self, call: DeferredToolExecution) -> DeferredToolOutcome:
        """Runs the call's tool; a call a `TaskToolSource` owns goes to that source
        whole, so it may start a task that `PollToolTask` follows."""
        record = call.tool_call
        source = self._task_source(record.tool_source_reference)
        if source is not None:
            return await source.execute_deferred_tool_call(call)
        tool = self._tool_for_call(record.tool_name, record.tool_source_reference)
        if tool is None:
            known = ", ".join(t.name for t in self._tools()) or "none"
            raise ToolExecutionError(
                f"unknown tool {record.tool_name!r}; this agent's tools are: {known}"
            )
        context = ToolContext(
            flow_id=call.flow_id,
            turn_id=call.turn_id,
            tool_call_id=record.tool_call_id,
            idempotency_key=call.idempotency_key,
            attempt=call.attempt,
            events=call.events,
            heartbeat=call.heartbeat,
            tool_source_reference=record.tool_source_reference,
        )
        with running(DexRunInfo.of_tool_step(call)):
            return ToolExecutionResult(output=await tool.invoke(record.arguments, context))

    # --- ToolTaskPoller and ToolTaskCanceller: the owning source's ------------------

    async def poll_tool_task(self, poll: ToolTaskPoll) -> ToolTaskPollOutcome:
        source = self._task_source(poll.tool_call.tool_source_reference)
        if source is None:
            # Not a ToolExecutionError: the call is recorded by its effect.
            raise RuntimeError(
                f"no tool source of this agent owns the task of {poll.tool_call.tool_name!r}"
            )
        return await source.poll_tool_task(poll)

    async def cancel_tool_task(self, cancellation: ToolTaskCancellation) -> None:
        source = self._task_source(cancellation.tool_call.tool_source_reference)
        if source is not None:
            await source.cancel_tool_task(cancellation)

    # --- UnfinishedTurnMessageBuilder ------------------------------------------------

    def build_unfinished_turn_messages(self, turn: AgentTurnContext) -> Sequence[FrameworkMessage]:
        """The turn's unstored items, with a result for every tool call they hold."""
        state = RunState.decode(turn.framework_run_state)
        return _messages([*state.items, *_results_for(state, turn.tool_calls, strict=False)])

    # --- ContextCompactionRunner ----------------------------------------------------

    def estimate_input_tokens(self, turn: AgentTurnContext) -> int:
        """The next model input's size: messages, string instructions and tool schemas."""
        count = self.definition.count_tokens
        state = RunState.decode(turn.framework_run_state)
        pending: list[Item] = [*state.items, *_results_for(state, turn.tool_calls, strict=False)]
        if isinstance(state.after_tool_calls, TurnContinuation):
            pending.append(UserItem(text=state.after_tool_calls.message))
        total = estimate_items(self._model_input(turn, pending), count)
        if isinstance(self.definition.instructions, str):
            total += count(self.definition.instructions)
        for definition in self._offered_tools(turn):
            total += count(
                json.dumps(
                    {
                        "name": definition.name,
                        "description": definition.description,
                        "parameters": dict(definition.parameters),
                    }
                )
            )
        return total

    def select_compaction_cutoff(
        self, turn: AgentTurnContext, retained_token_budget: int
    ) -> int | None:
        """Cuts only between model responses whose tool calls all have stored results."""
        return select_cutoff(turn.messages, retained_token_budget, self.definition.count_tokens)

    async def summarize_context(self, request: ContextSummaryRequest) -> ContextSummaryResult:
        """One model call that folds the previous summary and the messages into a new one."""
        definition = self.definition
        count = definition.count_tokens
        budget = (
            request.input_token_budget
            - (definition.model_settings.max_output_tokens or 0)
            - count(definition.summary_instructions)
        )
        messages = build_summary_messages(
            previous_summary=request.previous_summary.text if request.previous_summary else None,
            messages=[m for m in request.messages if m.sequence <= request.through_sequence],
            budget=budget,
            count=count,
        )
        client = definition.resolve_model(request.session_settings)
        response = await client.complete(
            ModelRequest(
                instructions=definition.summary_instructions,
                messages=messages,
                settings=definition.model_settings,
                session_settings=request.session_settings,
            )
        )
        return ContextSummaryResult(
            text=response.text or "",
            usage=_agent_usage(response.usage),
            model_call_metadata=response.metadata,
        )

    # --- helpers ---------------------------------------------------------------------

    def _offered_tools(self, turn: AgentTurnContext) -> list[ToolDefinition]:
        built_ins = [BUILT_IN_TOOL_DEFINITIONS[name] for name in turn_built_ins(turn)]
        for tool in self._tools():
            if tool.name in turn.enabled_built_in_tools:
                raise ValueError(
                    f"tool {tool.name!r} uses the name of an enabled built-in tool, "
                    "which the session reserves"
                )
        if is_planning(turn):
            return built_ins
        return [*(t.definition for t in self._tools()), *built_ins]

    def _tool_choice(
        self, turn: AgentTurnContext, offered: Sequence[ToolDefinition], client: ModelClient
    ) -> ModelToolChoice | None:
        """`auto`, or write_todos forced; None when the client refuses the forced choice."""
        forced = (
            self.definition.planning_tool_choice == "required"
            and is_planning(turn)
            and turn.framework_run_state is None
            and (turn.plan is None or turn.plan.status != PlanStatus.DRAFT)
            and any(d.name == _WRITE_TODOS for d in offered)
        )
        if not forced:
            return "auto"
        if not client.supports_forced_tool_choice(turn.session_settings):
            return None
        return NamedToolChoice(name=_WRITE_TODOS)

    def _model_input(self, turn: AgentTurnContext, pending: Sequence[Item]) -> list[Item]:
        """Summary, stored history with the plan note before the turn, then unstored items."""
        items: list[Item] = []
        if turn.context_summary is not None:
            items.append(UserItem(text=f"{SUMMARY_PREFIX}\n{turn.context_summary.text}"))
        note = build_plan_note(turn.plan, turn.interaction_mode)
        for message in turn.messages:
            if note is not None and message.turn_id == turn.turn_id:
                items.append(UserItem(text=note))
                note = None
            items.append(item_from_message(message))
        if note is not None:
            items.append(UserItem(text=note))
        items.extend(pending)
        return items

    async def _list_sources(self) -> None:
        """Lists the tool sources once per runner (that is, per Worker process)."""
        if self._source_tools is not None or not self.definition.tool_sources:
            return
        taken = [t.name for t in self.definition.agent_tools]
        listed: list[Tool] = []
        for source in self.definition.tool_sources:
            tools = await source.stepwise_tools([*taken, *(t.name for t in listed)])
            listed.extend(t for t in tools if t.name not in taken)
        self._source_tools = tuple(listed)

    def _tools(self) -> tuple[Tool, ...]:
        """The agent's own tools, then the sources' (once listed)."""
        return (*self.definition.agent_tools, *(self._source_tools or ()))

    def _task_source(self, reference: str | None) -> TaskToolSource | None:
        if reference:
            for source in self.definition.tool_sources:
                if isinstance(source, TaskToolSource) and source.owns(reference):
                    return source
        return None

    def _tool_for_call(self, name: str, reference: str | None) -> Tool | None:
        """A sourced call's tool comes from its reference, so its Step needs no listing."""
        if reference:
            for source in self.definition.tool_sources:
                tool = source.stepwise_tool(name, reference)
                if tool is not None:
                    return tool
        return self.definition.tool_named(name)

    def _deferred_calls(
        self, turn: AgentTurnContext, pending: Sequence[Item], response: ModelResponse
    ) -> list[DeferredToolCall]:
        """The session's `tool_policies` win, then the tool's own policy, then the default."""
        router = ToolRouter(turn, taken_ids=_turn_tool_call_ids(turn, pending))
        calls: list[DeferredToolCall] = []
        for call in response.tool_calls:
            call_id, name = call.tool_call_id, call.tool_name
            problem = router.claim_id(name, call_id)
            if problem is not None:
                raise InvalidModelResponseError(problem, tool_call_id=call_id, tool_name=name)
            built_in = name in turn.enabled_built_in_tools
            known = None if built_in else next((t for t in self._tools() if t.name == name), None)
            if known is None and not built_in:
                offered = [t.name for t in self._tools()]
                offered.extend(turn.enabled_built_in_tools)
                raise InvalidModelResponseError(
                    f"the model called tool {name!r} (ID {call_id!r}), which this agent does "
                    f"not have; its tools are: {', '.join(offered) or 'none'}",
                    tool_call_id=call_id,
                    tool_name=name,
                )
            declared = known.policy if known is not None else None
            calls.append(
                deferred_tool_call(
                    tool_call_id=call_id,
                    tool_name=name,
                    arguments=call.arguments,
                    policy=router.policy(
                        name,
                        framework_effect=declared.effect if declared else None,
                        framework_requires_approval=declared.requires_approval
                        if declared
                        else None,
                    ),
                    tool_source_reference=known.source_reference if known else None,
                )
            )
        return calls

    async def _decide(
        self, turn: AgentTurnContext, response: ModelResponse, continuations: int
    ) -> TurnContinuationDecision:
        hook = self.definition.decide_turn_continuation
        if hook is None:
            return None
        result = hook(
            TurnContinuationContext(
                flow_id=turn.flow_id,
                turn_id=turn.turn_id,
                text=response.text,
                tool_calls=tuple(response.tool_calls),
                consecutive_continuations=continuations,
                session_settings=turn.session_settings,
            )
        )
        if inspect.isawaitable(result):
            result = await result
        if not response.tool_calls and result == "end":
            return None
        return result


def _turn_tool_call_ids(turn: AgentTurnContext, pending: Sequence[Item]) -> set[str]:
    ids = {record.tool_call_id for record in turn.tool_calls}
    ids.update(item.tool_call_id for item in pending if isinstance(item, ToolCallItem))
    for message in turn.messages:
        if message.turn_id == turn.turn_id and message.tool_call_id:
            ids.add(message.tool_call_id)
    return ids


def _results_for(
    state: RunState, records: Sequence[AgentToolCall], *, strict: bool
) -> list[ToolResultItem]:
    """Result items for the state's unanswered calls, from the turn's records (strict in
    RunModel, where every record is final; see `pending_records`)."""
    return [
        ToolResultItem(
            tool_call_id=call.tool_call_id, tool_name=call.tool_name, output=result_text(record)
        )
        for call, record in pending_records(state.unanswered_tool_calls(), records, strict=strict)
    ]


def _messages(items: Sequence[Item]) -> list[FrameworkMessage]:
    return [item_to_message(item) for item in items]


def _agent_usage(usage: ModelUsage) -> AgentUsage:
    return AgentUsage(
        model_calls=1,
        input_tokens=usage.input_tokens,
        output_tokens=usage.output_tokens,
        cached_input_tokens=usage.cached_input_tokens,
        reasoning_tokens=usage.reasoning_tokens,
    )


def _write_delta(turn: AgentTurnContext, delta: ModelDelta) -> None:
    if delta.kind == "text":
        turn.events.write(TextDeltaPayload(text=delta.text))
    else:
        turn.events.write(ReasoningDeltaPayload(text=delta.text))


def _too_many_continuations() -> str:
    return (
        f"the turn was continued more than {MAX_CONSECUTIVE_CONTINUATIONS} times in a row "
        "by decide_turn_continuation"
    )
