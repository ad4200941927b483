"""`PydanticAiRunner`: a Pydantic AI agent on the session Flow, in Step mode.

Each RunModel Step drives `Agent.iter` node by node and stops before a second
`ModelRequestNode` runs, so one Step makes one model call however the framework
continues. Every tool is deferred (see `_deferral`), so the run ends with
`DeferredToolRequests` before any tool runs; Dex runs each call in its own Step
and the next RunModel hands the results back through `DeferredToolResults`.
The session's enabled built-ins join the model's tools as external tools, so
their calls reach the session the same way (see `_built_ins`).
A framework retry (an output validator's `ModelRetry`, or arguments that fail
validation with nothing else to wait for) becomes `TurnContinued`: the next
model call is the next Step.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from typing import Any, Generic

from dex_agents import ToolPolicy, UserError
from dex_agents._runner.capabilities import ToolTaskCancellation, ToolTaskPoll, ToolTaskPollOutcome
from dex_agents._runner.heartbeats import DEFAULT_HEARTBEAT_INTERVAL_SECONDS
from dex_agents._runner.item_cache import DEFAULT_ITEM_CACHE_BYTES
from dex_agents._runner.plan_mode import is_planning, turn_built_ins, with_plan_note
from dex_agents._runner.values import Heartbeat
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
    ToolCallsRequested,
    ToolExecutionError,
    ToolExecutionResult,
    ToolRouter,
    TurnCompleted,
    TurnContinued,
    heartbeats,
    result_texts,
)
from dex_agents_contracts import AgentUsage, ToolEffect
from pydantic_ai import (
    Agent,
    AgentRun,
    CallToolsNode,
    DeferredToolRequests,
    DeferredToolResults,
    ModelRequestNode,
    ToolApproved,
)
from pydantic_ai.capabilities import AbstractCapability
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    RetryFeedbackPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from pydantic_ai.models.function import FunctionModel
from pydantic_graph import End
from typing_extensions import TypeVar

from dex_agents_pydantic_ai._built_ins import built_in_tool_definitions
from dex_agents_pydantic_ai._calls import stream_model_call
from dex_agents_pydantic_ai._capabilities import capabilities
from dex_agents_pydantic_ai._context import DEX_METADATA_KEY
from dex_agents_pydantic_ai._deferral import ApproveEveryTool, DeferEveryTool
from dex_agents_pydantic_ai._messages import (
    history_from_stored,
    new_item_cache,
    to_framework_message,
    to_framework_messages,
    usage_of,
    user_request,
)
from dex_agents_pydantic_ai._policies import framework_effect, tool_source_reference
from dex_agents_pydantic_ai._state import RunState
from dex_agents_pydantic_ai._task_sources import task_source_for

__all__ = ["PydanticAiRunner"]

DepsT = TypeVar("DepsT", default=None)


class PydanticAiRunner(Generic[DepsT]):
    """Runs a Pydantic AI `Agent` on `AgentSessionFlow`, one model call per RunModel Step.

    The agent's `output_type` must include `DeferredToolRequests`, because every tool
    call ends the model Step as a deferred request.

    Args:
        agent: The agent. Its model, instructions, output type and validators,
            toolsets and model settings are used as they are.
        tool_policies: Per-tool effect and approval; they win over the session's
            `tool_policies` and over tool metadata.
        default_tool_effect: Effect of a tool without a policy or metadata; None uses
            the session's `default_tool_effect`.
        deps_factory: Builds the agent's deps for each model call and tool call; the
            `DexRunInfo` carries the idempotency key in a tool Step. Without it the
            agent runs with `deps=None`.
        stream: Stream the model call and write `text_delta` / `reasoning_delta`
            events. None streams unless the model is a `FunctionModel` without a
            `stream_function`.
        max_consecutive_retries: A framework retry continues the turn in a new Step,
            which resets Pydantic AI's own retry count; after this many retries in a
            row the turn fails instead (None uses the retry budget Pydantic AI reports
            on the retry, at least 1).
        heartbeat_interval_seconds: How often a model call or tool call that is still
            running heartbeats its Step, which Dex fails after two minutes of silence.
        decoded_item_cache_bytes: How much stored message text the runner keeps decoded
            between Steps (see `DecodedItemCache`); 0 decodes every message every time.
    """

    def __init__(
        self,
        agent: Agent[DepsT, Any],
        *,
        tool_policies: Mapping[str, ToolPolicy] | None = None,
        default_tool_effect: ToolEffect | None = None,
        deps_factory: Callable[[DexRunInfo], DepsT] | None = None,
        stream: bool | None = None,
        max_consecutive_retries: int | None = None,
        heartbeat_interval_seconds: float = DEFAULT_HEARTBEAT_INTERVAL_SECONDS,
        decoded_item_cache_bytes: int = DEFAULT_ITEM_CACHE_BYTES,
    ) -> None:
        if not _accepts_deferred_requests(agent.output_type):
            raise UserError(
                "PydanticAiRunner needs `DeferredToolRequests` among the agent's output types, "
                "because every tool call ends the model Step as a deferred request: use "
                "`Agent(..., output_type=[<your output type>, DeferredToolRequests])`"
            )
        self.agent = agent
        self.tool_policies: Mapping[str, ToolPolicy] = dict(tool_policies or {})
        self.default_tool_effect = default_tool_effect
        self.deps_factory = deps_factory
        self.stream = stream
        self.max_consecutive_retries = max_consecutive_retries
        self.heartbeat_interval_seconds = heartbeat_interval_seconds
        self._decoded_items = new_item_cache(decoded_item_cache_bytes)

    # --- AgentFrameworkRunner --------------------------------------------------------

    @property
    def supports_plan_mode(self) -> bool:
        """Plan mode through the kit: the plan note before the turn, write_todos alone."""
        return True

    def describe(self) -> RunnerCapabilities:
        """What this adapter supports, each gap with its reason (docs/adapters.md)."""
        return capabilities()

    def build_user_message(self, text: str) -> FrameworkMessage:
        return to_framework_message(user_request(text))

    async def run_model_step(self, turn: AgentTurnContext) -> AgentTurnOutcome:
        state = RunState.decode(turn.framework_run_state)
        stored = history_from_stored(
            with_plan_note(turn, self.build_user_message), self._decoded_items
        )
        history: list[ModelMessage] = [*stored, *state.messages]
        results: DeferredToolResults | None = None
        if state.pending:
            texts: dict[str, Any] = dict(result_texts(state.pending, turn.tool_calls, strict=True))
            results = DeferredToolResults(calls=texts)
        deps = self._deps(DexRunInfo.of_model_step(turn))
        deferral = DeferEveryTool(
            built_ins=built_in_tool_definitions(turn_built_ins(turn)),
            hide_agent_tools=is_planning(turn),
        )

        responses: list[ModelResponse] = []
        retry_request: ModelRequest | None = None
        output: object = None
        async with self._iter(
            turn.flow_id, turn.heartbeat, history, results=results, deps=deps, capability=deferral
        ) as run:
            node = run.next_node
            model_calls = 0
            while not isinstance(node, End):
                if isinstance(node, ModelRequestNode):
                    if model_calls:
                        # The framework wants another model call: that is the next Step.
                        retry_request = node.request
                        break
                    model_calls += 1
                    if self._streams():
                        await stream_model_call(node, run.ctx, turn)
                elif isinstance(node, CallToolsNode) and model_calls:
                    # A resumed run first handles the stored response's deferred calls;
                    # only the response of this Step's model call counts.
                    responses.append(node.model_response)
                node = await run.next(node)
            else:
                output = node.data.output
            # Pydantic AI joins the trailing requests of a history into the one it sends,
            # so only its own count of new messages says where they start.
            turn_messages = [*state.messages, *run.new_messages()]

        usage = usage_of(responses)
        metadata = _metadata(responses)

        if retry_request is not None:
            return self._continue(turn_messages, retry_request, state, usage, metadata)
        if isinstance(output, DeferredToolRequests):
            pending, calls = self._deferred_calls(turn, output, responses, deferral)
            return ToolCallsRequested(
                framework_run_state=RunState(messages=turn_messages, pending=pending).encode(),
                tool_calls=calls,
                usage=usage,
                model_call_metadata=metadata,
            )
        return TurnCompleted(
            new_messages=to_framework_messages(turn_messages),
            usage=usage,
            model_call_metadata=metadata,
        )

    async def execute_deferred_tool_call(self, call: DeferredToolExecution) -> DeferredToolOutcome:
        record = call.tool_call
        source = task_source_for(self.agent.toolsets, record.tool_source_reference)
        if source is not None:  # e.g. MCP: the source runs it, and may start a task
            async with heartbeats(call.heartbeat, self.heartbeat_interval_seconds):
                return await source.execute_deferred_tool_call(call)
        info = DexRunInfo.of_tool_step(call)
        # A one-call history: the framework validates the arguments, builds the
        # RunContext and runs the tool exactly as in an ordinary run, and the run
        # is stopped before the model call that would follow.
        history: list[ModelMessage] = [
            ModelRequest(parts=[UserPromptPart(content="")]),
            ModelResponse(
                parts=[
                    ToolCallPart(
                        tool_name=record.tool_name,
                        args=record.arguments or None,
                        tool_call_id=record.tool_call_id,
                    )
                ]
            ),
        ]
        approvals = DeferredToolResults(
            approvals={record.tool_call_id: ToolApproved()},
            metadata={record.tool_call_id: {DEX_METADATA_KEY: info.to_json()}},
        )
        result: ToolReturnPart | None = None
        async with self._iter(
            call.flow_id,
            call.heartbeat,
            history,
            results=approvals,
            deps=self._deps(info),
            capability=ApproveEveryTool(),
        ) as run:
            node = run.next_node
            while not isinstance(node, End):
                if isinstance(node, ModelRequestNode):
                    result = _tool_return(node.request, record.tool_call_id)
                    break
                node = await run.next(node)
            else:
                if isinstance(node.data.output, DeferredToolRequests):
                    raise ToolExecutionError(
                        f"tool {record.tool_name!r} deferred itself (CallDeferred or "
                        "ApprovalRequired) inside its Dex tool Step; a tool run by "
                        "PydanticAiRunner must return its result"
                    )
        if result is None:
            raise ToolExecutionError(f"tool {record.tool_name!r} returned no result")
        if result.outcome == "success":
            return ToolExecutionResult(output=result.model_response_str())
        raise ToolExecutionError(result.model_response_str(wrap_if_error=False))

    # --- ToolTaskPoller and ToolTaskCanceller: the owning tool source's ------------

    async def poll_tool_task(self, poll: ToolTaskPoll) -> ToolTaskPollOutcome:
        source = task_source_for(self.agent.toolsets, poll.tool_call.tool_source_reference)
        if source is None:  # not a ToolExecutionError: the call is recorded by its effect
            name = poll.tool_call.tool_name
            raise RuntimeError(f"no toolset of this agent owns the task of {name!r}")
        return await source.poll_tool_task(poll)

    async def cancel_tool_task(self, cancellation: ToolTaskCancellation) -> None:
        reference = cancellation.tool_call.tool_source_reference
        source = task_source_for(self.agent.toolsets, reference)
        if source is not None:
            await source.cancel_tool_task(cancellation)

    # --- UnfinishedTurnMessageBuilder ------------------------------------------------

    def build_unfinished_turn_messages(self, turn: AgentTurnContext) -> Sequence[FrameworkMessage]:
        """The turn's unstored messages, with a tool result for every pending call."""
        state = RunState.decode(turn.framework_run_state)
        messages: list[ModelMessage] = list(state.messages)
        if state.pending:
            texts = result_texts(state.pending, turn.tool_calls, strict=False)
            parts = [
                ToolReturnPart(
                    tool_name=p.tool_name,
                    content=texts[p.tool_call_id],
                    tool_call_id=p.tool_call_id,
                )
                for p in state.pending
            ]
            messages.append(ModelRequest(parts=list(parts)))
        return to_framework_messages(messages)

    # --- helpers ---------------------------------------------------------------------

    @contextlib.asynccontextmanager
    async def _iter(
        self,
        flow_id: str,
        heartbeat: Heartbeat,
        history: list[ModelMessage],
        *,
        results: DeferredToolResults | None,
        deps: DepsT,
        capability: AbstractCapability[Any],
    ) -> AsyncIterator[AgentRun[DepsT, Any]]:
        """The agent's run over `history`, heartbeating the Step while it lasts."""
        async with (
            heartbeats(heartbeat, self.heartbeat_interval_seconds),
            self.agent.iter(
                message_history=history,
                deferred_tool_results=results,
                # The Flow ID, as the design's spans carry it (gen_ai.conversation.id).
                conversation_id=flow_id,
                deps=deps,
                capabilities=[capability],
            ) as run,
        ):
            yield run

    def _deps(self, info: DexRunInfo) -> DepsT:
        if self.deps_factory is None:
            return None  # type: ignore[return-value]  # an agent without deps_type takes None
        return self.deps_factory(info)

    def _streams(self) -> bool:
        if self.stream is not None:
            return self.stream
        model = self.agent.model
        return not (isinstance(model, FunctionModel) and model.stream_function is None)

    def _continue(
        self,
        turn_messages: list[ModelMessage],
        retry_request: ModelRequest,
        state: RunState,
        usage: AgentUsage,
        metadata: ModelCallMetadata | None,
    ) -> AgentTurnOutcome:
        retries = state.consecutive_retries + 1
        limit = self.max_consecutive_retries
        if limit is None:
            limit = _framework_retry_budget(retry_request)
        messages = [*turn_messages, retry_request]
        if retries > limit:
            return TurnCompleted(
                new_messages=to_framework_messages(messages),
                usage=usage,
                model_call_metadata=metadata,
                turn_error=(
                    f"Pydantic AI asked the model to redo its response more than {limit} "
                    f"time(s) in a row; last feedback: {_feedback_text(retry_request)}"
                ),
            )
        return TurnContinued(
            framework_run_state=RunState(messages=messages, consecutive_retries=retries).encode(),
            usage=usage,
            model_call_metadata=metadata,
        )

    def _deferred_calls(
        self,
        turn: AgentTurnContext,
        requests: DeferredToolRequests,
        responses: Sequence[ModelResponse],
        deferral: DeferEveryTool,
    ) -> tuple[list[PendingCall], list[DeferredToolCall]]:
        gated_ids = {part.tool_call_id for part in requests.approvals}
        wanted = {part.tool_call_id: part for part in [*requests.calls, *requests.approvals]}
        # The model's order, so deferral_order follows the response.
        ordered = [
            part
            for response in responses
            for part in response.parts
            if isinstance(part, ToolCallPart) and part.tool_call_id in wanted
        ]
        ordered.extend(p for i, p in wanted.items() if i not in {o.tool_call_id for o in ordered})
        router = ToolRouter(
            turn, tool_policies=self.tool_policies, default_tool_effect=self.default_tool_effect
        )
        calls: list[DeferredToolCall] = []
        for part in ordered:
            tool_def = deferral.seen.get(part.tool_name)
            # Pydantic AI's approval flag can only add an approval the effect would not ask for.
            gated = part.tool_call_id in gated_ids or (
                tool_def is not None and tool_def.kind == "unapproved"
            )
            calls.append(
                router.defer(
                    part.tool_call_id,
                    part.tool_name,
                    part.args_as_json_str(),
                    framework_effect=framework_effect(tool_def),
                    framework_requires_approval=True if gated else None,
                    tool_source_reference=tool_source_reference(tool_def),
                )
            )
        pending = [PendingCall(tool_call_id=c.tool_call_id, tool_name=c.tool_name) for c in calls]
        return pending, calls


def _accepts_deferred_requests(output_type: object) -> bool:
    if output_type is DeferredToolRequests:
        return True
    if isinstance(output_type, Sequence) and not isinstance(output_type, str):
        return any(_accepts_deferred_requests(item) for item in output_type)
    return False


def _tool_return(request: ModelRequest, tool_call_id: str) -> ToolReturnPart | None:
    for part in request.parts:
        if isinstance(part, ToolReturnPart) and part.tool_call_id == tool_call_id:
            return part
    return None


def _framework_retry_budget(request: ModelRequest) -> int:
    budgets = [
        part.retry.max_retries
        for part in request.parts
        if isinstance(part, ToolReturnPart | RetryFeedbackPart)
        and part.retry is not None
        and part.retry.max_retries is not None
    ]
    return max([1, *budgets])


def _feedback_text(request: ModelRequest) -> str:
    texts: list[str] = []
    for part in request.parts:
        if isinstance(part, ToolReturnPart):
            texts.append(part.model_response_str(wrap_if_error=False))
        elif isinstance(part, RetryFeedbackPart):
            texts.append(part.model_response())
    return "; ".join(texts) or "none"


def _metadata(responses: Sequence[ModelResponse]) -> ModelCallMetadata | None:
    if not responses:
        return None
    response = responses[-1]
    return ModelCallMetadata(
        request_model=response.model_name,
        response_model=response.model_name,
        provider_name=response.provider_name,
        response_id=response.provider_response_id,
        finish_reasons=[response.finish_reason] if response.finish_reason else [],
    )
