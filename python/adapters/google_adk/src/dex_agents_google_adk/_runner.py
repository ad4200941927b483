"""`AdkRunner`: a Google ADK agent on the session Flow, in Step mode.

Every function tool of the agent tree is replaced by a long-running stub (see
`_gating`), so a resumable ADK invocation pauses right after the model call
that asked for tools, before any tool runs. The runner returns the turn's
session events as its run state and one Dex tool call per pending call. The
next RunModel rebuilds the ADK session from the stored messages and those
events and resumes the same invocation (`invocation_id`) with one
`FunctionResponse` per call, each carrying the call's recorded result; ADK
then makes the next model call. A transfer to another agent is not a tool: ADK
runs it and the next agent's model call in the same Step, and the runner
reports it with a `google_adk.transfer` event. The session's enabled built-in
tools are deferred tools of every agent (see `_built_ins`), so their calls
reach the session the same way.
"""

from __future__ import annotations

import inspect
import json
import warnings
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, cast

from dex_agents import ToolPolicy
from dex_agents._runner.built_ins import offered_built_ins, offering
from dex_agents._runner.call_results import pending_records, result_text
from dex_agents._runner.errors import TurnFailed
from dex_agents._runner.heartbeats import DEFAULT_HEARTBEAT_INTERVAL_SECONDS
from dex_agents._runner.item_cache import DEFAULT_ITEM_CACHE_BYTES
from dex_agents._runner.mcp_sources import McpSourceTasks
from dex_agents._runner.routing import declared_approval
from dex_agents._runner.tool_values import arguments_text
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
    parse_tool_arguments,
    running,
    tool_output_text,
)
from dex_agents_contracts import AgentToolCall, MessageRole, ToolCallStatus, ToolEffect
from google.adk.agents import BaseAgent, InvocationContext, LlmAgent, RunConfig
from google.adk.agents.run_config import (  # type: ignore[attr-defined]  # ADK's documented path
    StreamingMode,
)
from google.adk.apps import App, ResumabilityConfig
from google.adk.events import Event
from google.adk.runners import Runner
from google.adk.sessions import InMemorySessionService, Session
from google.adk.tools.tool_confirmation import ToolConfirmation
from google.adk.tools.tool_context import ToolContext
from google.genai import types

from dex_agents_google_adk._built_ins import built_in_tools
from dex_agents_google_adk._capabilities import capabilities
from dex_agents_google_adk._context import collecting_arguments
from dex_agents_google_adk._events import (
    events_from_stored,
    is_model_response,
    new_event_cache,
    to_framework_messages,
    usage_of,
    user_event,
    write_partial,
)
from dex_agents_google_adk._gating import GatedTree
from dex_agents_google_adk._mcp_tools import McpTools
from dex_agents_google_adk._state import TurnState

if TYPE_CHECKING:
    from dex_agents.mcp import McpToolSource

__all__ = ["TRANSFER_EVENT", "AdkRunner"]

TRANSFER_EVENT = "google_adk.transfer"
"""The event a RunModel Step writes for each agent transfer ADK ran in it."""


class AdkRunner(McpSourceTasks):
    """Runs a Google ADK agent on `AgentSessionFlow`, one model call per RunModel Step.

    Args:
        agent: The root agent (an `LlmAgent`, or a workflow agent of them). Its
            model, instructions, sub-agents, callbacks and output schema are used as
            they are; the runner defers a copy of every function tool, never the
            application's objects.
        tool_policies: Per-tool effect and approval; they win over the session's
            `tool_policies` and over the tool's own `require_confirmation`.
        default_tool_effect: Effect of a tool without a policy; None uses the
            session's `default_tool_effect`.
        app_name: The ADK app name (`App.name`) of the per-Step session.
        user_id: The ADK user ID of the per-Step session.
        run_config: The ADK `RunConfig` of every invocation; None streams the model
            calls (`StreamingMode.SSE`), so their text and thoughts reach the session as
            `text_delta` / `reasoning_delta` events while the Step runs.
        heartbeat_interval_seconds: How often a model call or tool call that is still
            running heartbeats its Step, which Dex fails after two minutes of silence.
        decoded_item_cache_bytes: How much stored message text the runner keeps decoded
            between Steps (see `DecodedItemCache`); 0 decodes every message every time.
        mcp_sources: `McpToolSource`s whose tools join the root agent's tools, deferred
            like the others; their calls run through the source in tool Steps.
    """

    def __init__(
        self,
        agent: BaseAgent,
        *,
        tool_policies: Mapping[str, ToolPolicy] | None = None,
        default_tool_effect: ToolEffect | None = None,
        app_name: str = "dex_agents",
        user_id: str = "dex",
        run_config: RunConfig | None = None,
        heartbeat_interval_seconds: float = DEFAULT_HEARTBEAT_INTERVAL_SECONDS,
        decoded_item_cache_bytes: int = DEFAULT_ITEM_CACHE_BYTES,
        mcp_sources: Sequence[McpToolSource] = (),
    ) -> None:
        if not isinstance(agent, BaseAgent):
            raise TypeError(f"AdkRunner needs a google.adk agent, got {type(agent).__name__}")
        self.agent = agent
        self.tool_policies: Mapping[str, ToolPolicy] = dict(tool_policies or {})
        self.default_tool_effect = default_tool_effect
        self.app_name = app_name
        self.user_id = user_id
        self.run_config = run_config or RunConfig(streaming_mode=StreamingMode.SSE)
        self.heartbeat_interval_seconds = heartbeat_interval_seconds
        self._tree = GatedTree(agent, built_in_tools())
        self._events = new_event_cache(decoded_item_cache_bytes)
        self._mcp: McpTools = McpTools(mcp_sources)
        self._app: App | None = None

    # --- AgentFrameworkRunner --------------------------------------------------------

    def describe(self) -> RunnerCapabilities:
        """What this adapter supports, each gap with its reason (docs/adapters.md)."""
        return capabilities()

    def build_user_message(self, text: str) -> FrameworkMessage:
        (message,) = to_framework_messages([user_event(text)])
        return message

    async def run_model_step(self, turn: AgentTurnContext) -> AgentTurnOutcome:
        previous = TurnState.decode(turn.framework_run_state)
        app = await self._adk_app()
        # An enabled built-in's name is reserved (the session routes its calls).
        offered_built_ins(
            turn.enabled_built_in_tools,
            [*self._tree.tool_names(), *filter(self._mcp.listed, turn.enabled_built_in_tools)],
            owner="the agent tree",
        )
        stored = list(turn.messages)
        invocation_id: str | None
        if previous is None:
            if not stored or stored[-1].role is not MessageRole.USER:
                raise TurnFailed("the turn has no user message to start from")
            history = len(stored) - 1
            earlier: list[Event] = []
            new_message = self._events.decoded(stored[-1].framework_item).content
            invocation_id = None
        else:
            history = previous.history
            earlier = previous.events
            new_message = _results_message(previous.pending, turn.tool_calls)
            invocation_id = previous.invocation_id
        prefix = events_from_stored(stored[:history], self._events)

        service = InMemorySessionService()
        session = await service.create_session(
            app_name=self.app_name, user_id=self.user_id, session_id=turn.flow_id
        )
        for event in [*prefix, *earlier]:
            await service.append_event(session, event)
        runner = Runner(app=app, session_service=service)
        with collecting_arguments() as arguments, offering(turn.enabled_built_in_tools):
            async with heartbeats(turn.heartbeat, self.heartbeat_interval_seconds):
                async for event in runner.run_async(
                    user_id=self.user_id,
                    session_id=turn.flow_id,
                    invocation_id=invocation_id,
                    new_message=new_message,
                    run_config=self.run_config,
                ):
                    if event.partial:
                        write_partial(event, turn.events)
                    elif event.actions.transfer_to_agent:
                        turn.events.write_raw(
                            TRANSFER_EVENT,
                            json.dumps(
                                {
                                    "from_agent": event.author,
                                    "to_agent": event.actions.transfer_to_agent,
                                }
                            ),
                        )
        final = await service.get_session(
            app_name=self.app_name, user_id=self.user_id, session_id=turn.flow_id
        )
        assert final is not None
        turn_events = list(final.events[len(prefix) :])
        new_events = turn_events[len(earlier) :]
        usage = usage_of(new_events)
        metadata = self._metadata(new_events)
        pending = _pending_calls(turn_events, new_events)
        if pending:
            calls = await self._deferred_calls(turn, pending, arguments)
            return ToolCallsRequested(
                framework_run_state=TurnState(
                    invocation_id=pending[0][0].invocation_id,
                    history=history,
                    events=turn_events,
                    pending=[
                        PendingCall(tool_call_id=c.tool_call_id, tool_name=c.tool_name)
                        for c in calls
                    ],
                ).encode(),
                tool_calls=calls,
                usage=usage,
                model_call_metadata=metadata,
            )
        # The first event of the turn is ADK's copy of the user message, stored already.
        return TurnCompleted(
            new_messages=to_framework_messages(turn_events[1:]),
            usage=usage,
            model_call_metadata=metadata,
        )

    async def execute_deferred_tool_call(self, call: DeferredToolExecution) -> DeferredToolOutcome:
        record = call.tool_call
        source = self._mcp.owner(record.tool_source_reference)
        if source is not None:  # an MCP tool: the source runs it, and may start a task
            async with heartbeats(call.heartbeat, self.heartbeat_interval_seconds):
                return await source.execute_deferred_tool_call(call)
        real = self._tree.tools.get(record.tool_name)
        if real is None:
            raise ToolExecutionError(f"this agent has no function tool named {record.tool_name!r}")
        args = parse_tool_arguments(record.arguments)
        context = self._tool_context(call, real.agent)
        with running(DexRunInfo.of_tool_step(call)):
            async with heartbeats(call.heartbeat, self.heartbeat_interval_seconds):
                result = await real.tool.run_async(args=args, tool_context=context)
                if context.actions.requested_tool_confirmations:
                    raise ToolExecutionError(
                        f"tool {record.tool_name!r} asked for a confirmation inside its tool "
                        "Step; declare require_confirmation=True or a "
                        "ToolPolicy(requires_approval=True), which the session asks for first"
                    )
                for callback in real.agent.canonical_after_tool_callbacks:
                    # ADK calls these by keyword; their declared type names no parameters.
                    altered = cast(Any, callback)(
                        tool=real.tool, args=args, tool_context=context, tool_response=result
                    )
                    if inspect.isawaitable(altered):
                        altered = await altered
                    if altered is not None:
                        result = altered
                        break
        return ToolExecutionResult(output=tool_output_text(result))

    # --- UnfinishedTurnMessageBuilder ------------------------------------------------

    def build_unfinished_turn_messages(self, turn: AgentTurnContext) -> Sequence[FrameworkMessage]:
        """The turn's unstored events, with a function response for every pending call."""
        try:
            state = TurnState.decode(turn.framework_run_state)
        except RunStateError:
            return []
        if state is None:
            return []
        events = list(state.events[1:])
        if state.pending:
            events.append(
                Event(
                    author="user",
                    invocation_id=state.invocation_id,
                    content=_results_message(state.pending, turn.tool_calls),
                )
            )
        return to_framework_messages(events)

    # --- helpers ---------------------------------------------------------------------

    async def _adk_app(self) -> App:
        """The resumable app of the deferred tree, with the MCP sources' tools once listed."""
        if self._app is None:
            if self._mcp.sources:
                self._tree.add_root_tools(await self._mcp.adk_tools(self._tree.tool_names()))
            with warnings.catch_warnings():  # resumability is marked experimental
                warnings.simplefilter("ignore", UserWarning)
                self._app = App(
                    name=self.app_name,
                    root_agent=self._tree.root,
                    resumability_config=ResumabilityConfig(is_resumable=True),
                )
        return self._app

    def _tool_context(self, call: DeferredToolExecution, agent: LlmAgent) -> ToolContext:
        """A context for a tool Step: the call's ID, and a session of its own (see README)."""
        session = Session(id=call.flow_id, app_name=self.app_name, user_id=self.user_id)
        invocation = InvocationContext(
            session_service=InMemorySessionService(),
            invocation_id=f"dex-{call.turn_id}",
            agent=agent,
            session=session,
            run_config=self.run_config,
        )
        # A tool's own require_confirmation was the session's approval (AwaitToolApproval)
        # before this Step started, so the tool sees it as given.
        declared = self._tree.requires_approval.get(call.tool_call.tool_name)
        return ToolContext(
            invocation,
            function_call_id=call.tool_call.tool_call_id,
            tool_confirmation=ToolConfirmation(confirmed=True) if declared else None,
        )

    async def _deferred_calls(
        self,
        turn: AgentTurnContext,
        pending: list[tuple[Event, types.FunctionCall]],
        arguments: Mapping[str, dict[str, Any]],
    ) -> list[DeferredToolCall]:
        router = ToolRouter(
            turn, tool_policies=self.tool_policies, default_tool_effect=self.default_tool_effect
        )
        calls: list[DeferredToolCall] = []
        for _event, function_call in pending:
            name = function_call.name or ""
            call_id = function_call.id or ""
            args = arguments.get(call_id, dict(function_call.args or {}))
            calls.append(
                router.defer(
                    call_id,
                    name,
                    arguments_text(args),
                    framework_requires_approval=await declared_approval(
                        self._tree.requires_approval.get(name), **args
                    ),
                    sourced=None if name in self._tree.tools else self._mcp.listed(name),
                )
            )
        return calls

    def _metadata(self, events: Sequence[Event]) -> ModelCallMetadata:
        responses = [e for e in events if is_model_response(e)]
        last = responses[-1] if responses else None
        name = _model_name(self._tree.root.find_agent(last.author) if last else self._tree.root)
        finish = last.finish_reason if last is not None else None
        return ModelCallMetadata(
            request_model=name,
            response_model=(last.model_version if last is not None else None) or name,
            provider_name="gcp.gemini" if name and name.startswith("gemini") else None,
            finish_reasons=[finish.name.lower()] if finish is not None else [],
        )


def _pending_calls(
    turn_events: Sequence[Event], new_events: Sequence[Event]
) -> list[tuple[Event, types.FunctionCall]]:
    """The long-running calls of this Step's model responses that nothing answered yet."""
    answered = {
        response.id
        for event in turn_events
        for response in event.get_function_responses()
        if response.id
    }
    pending: list[tuple[Event, types.FunctionCall]] = []
    for event in new_events:
        long_running = event.long_running_tool_ids or set()
        for function_call in event.get_function_calls():
            if function_call.id in long_running and function_call.id not in answered:
                pending.append((event, function_call))
    return pending


def _response_of(record: AgentToolCall | None) -> dict[str, Any]:
    """What the model receives for a call, as ADK shapes a function's result."""
    text = result_text(record)
    if record is not None and record.status is ToolCallStatus.SUCCEEDED:
        try:
            value = json.loads(text)
        except ValueError:
            value = None
        if isinstance(value, dict):
            return value  # the tool returned an object, which ADK passes on as it is
    return {"result": text}


def _results_message(
    pending: Sequence[PendingCall], records: Sequence[AgentToolCall]
) -> types.Content:
    return types.Content(
        role="user",
        parts=[
            types.Part(
                function_response=types.FunctionResponse(
                    id=p.tool_call_id, name=p.tool_name, response=_response_of(record)
                )
            )
            for p, record in pending_records(pending, records, strict=False)
        ],
    )


def _model_name(agent: BaseAgent | None) -> str | None:
    while agent is not None:
        if isinstance(agent, LlmAgent) and agent.model:
            model = agent.model
            if isinstance(model, str):
                return model
            name = getattr(model, "model", None)
            return name if isinstance(name, str) else None
        agent = agent.parent_agent
    return None
