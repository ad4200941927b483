"""`LangGraphRunner`: a LangGraph graph (or a `create_agent` agent) in Step mode.

A RunModel Step runs the graph once, streamed (`stream_mode="messages"`), so
the model's text reaches the session as `text_delta` events. `DexStepMiddleware` turns every tool
call into an interrupt and pauses a second model call, so the invocation makes
one model call and runs no tool. The graph's checkpoint thread then goes into
FrameworkRunState; the next RunModel imports it into the shared
`DexCheckpointSaver` under a fresh thread ID and resumes with
`Command(resume={interrupt_id: result})`, the results taken from the final
tool call records. A tool Step runs the real LangChain tool once, outside the
graph, with the idempotency key in its config.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from dex_agents import ToolPolicy, UserError
from dex_agents._runner.built_ins import offered_built_ins
from dex_agents._runner.call_results import pending_records, result_text
from dex_agents._runner.heartbeats import DEFAULT_HEARTBEAT_INTERVAL_SECONDS
from dex_agents._runner.mcp_sources import McpSourceTasks
from dex_agents.runner import (
    AgentTurnContext,
    AgentTurnOutcome,
    DeferredToolCall,
    DeferredToolExecution,
    DeferredToolOutcome,
    FrameworkMessage,
    McpSources,
    ModelCallMetadata,
    RunnerCapabilities,
    ToolCallsRequested,
    ToolExecutionError,
    ToolExecutionResult,
    ToolRouter,
    TurnCompleted,
    TurnContinued,
    heartbeats,
    parse_tool_arguments,
    result_texts,
    running,
    tool_output_text,
)
from dex_agents_contracts import AgentToolCall, ToolEffect
from langchain_core.messages import AIMessage, BaseMessage, ToolMessage
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import BaseTool, ToolException
from langgraph.graph.state import CompiledStateGraph
from langgraph.prebuilt import ToolNode
from langgraph.types import Command, Interrupt

from dex_agents_langgraph._capabilities import capabilities
from dex_agents_langgraph._messages import (
    history_from_stored,
    to_framework_message,
    usage_of,
    user_message,
)
from dex_agents_langgraph._middleware import (
    NEXT_MODEL_CALL_KEY,
    TOOL_CALL_KEY,
    step_scope,
)
from dex_agents_langgraph._saver import DexCheckpointSaver
from dex_agents_langgraph._state import InterruptedCall, RunState
from dex_agents_langgraph._streaming import run_streamed
from dex_agents_langgraph._tool_context import DexToolContext

if TYPE_CHECKING:
    from dex_agents.mcp import McpTool, McpToolSource

__all__ = ["LangGraphRunner"]

_MESSAGES_KEY = "messages"


class LangGraphRunner(McpSourceTasks):
    """Runs a compiled LangGraph graph on `AgentSessionFlow`, one model call per RunModel Step.

    The graph keeps its conversation under the `messages` state key (as
    `create_agent` and `MessagesState` do), is compiled with
    `checkpointer=DexCheckpointSaver()`, and turns every tool call into an
    interrupt: `create_agent(..., middleware=[DexStepMiddleware()])`, or a plain
    graph's node calling `defer_tool_call`.

    Args:
        graph: The compiled graph or agent.
        tools: Tools that run in tool Steps besides those of the graph's `ToolNode`s
            (which are found by themselves); a name given here wins.
        tool_policies: Per-tool effect and approval; they win over the session's.
        default_tool_effect: Effect of a tool without a policy; None uses the
            session's `default_tool_effect`.
        mcp_sources: `McpToolSource`s whose tools the graph offers (built with
            `langchain_mcp_tools`); their calls run through the source in tool Steps.
        recursion_limit: LangGraph's super-step limit for one Step's invocation.
        heartbeat_interval_seconds: How often a running model call or tool heartbeats.
    """

    def __init__(
        self,
        graph: CompiledStateGraph[Any, Any, Any, Any],
        *,
        tools: Sequence[BaseTool] = (),
        tool_policies: Mapping[str, ToolPolicy] | None = None,
        default_tool_effect: ToolEffect | None = None,
        mcp_sources: Sequence[McpToolSource] = (),
        recursion_limit: int = 50,
        heartbeat_interval_seconds: float = DEFAULT_HEARTBEAT_INTERVAL_SECONDS,
    ) -> None:
        if not isinstance(graph.checkpointer, DexCheckpointSaver):
            raise UserError(
                "LangGraphRunner keeps the graph's checkpoint in the session, so the graph "
                "must be compiled with `checkpointer=DexCheckpointSaver()` "
                "(e.g. `create_agent(..., checkpointer=DexCheckpointSaver())`)"
            )
        self.graph = graph
        self.saver: DexCheckpointSaver = graph.checkpointer
        self.tools: dict[str, BaseTool] = {**_graph_tools(graph), **{t.name: t for t in tools}}
        self.tool_policies: Mapping[str, ToolPolicy] = dict(tool_policies or {})
        self.default_tool_effect = default_tool_effect
        self._mcp: McpSources[McpTool] = McpSources(mcp_sources)
        self.recursion_limit = recursion_limit
        self.heartbeat_interval_seconds = heartbeat_interval_seconds

    # --- AgentFrameworkRunner --------------------------------------------------------

    def describe(self) -> RunnerCapabilities:
        """What this adapter supports, each gap with its reason (docs/adapters.md)."""
        return capabilities()

    def build_user_message(self, text: str) -> FrameworkMessage:
        return to_framework_message(user_message(text))

    async def run_model_step(self, turn: AgentTurnContext) -> AgentTurnOutcome:
        state = RunState.decode(turn.framework_run_state)
        thread_id = f"dex/{turn.flow_id}/{turn.turn_id}/{uuid.uuid4().hex}"
        config: RunnableConfig = {
            "configurable": {"thread_id": thread_id},
            "recursion_limit": self.recursion_limit,
        }
        graph_input: Any
        if state.thread is None:
            history = history_from_stored(turn.messages)
            graph_input = {_MESSAGES_KEY: history}
            input_count = seen_count = len(history)
        else:
            self.saver.import_thread(thread_id, state.thread)
            graph_input = Command(resume=_resume_values(state, turn.tool_calls))
            input_count, seen_count = state.input_count, state.seen_count
        try:
            with step_scope(self._built_in_specs(turn)):
                async with heartbeats(turn.heartbeat, self.heartbeat_interval_seconds):
                    await run_streamed(self.graph, graph_input, config, turn.events)
            snapshot = await self.graph.aget_state(config)
            messages: list[BaseMessage] = list(snapshot.values.get(_MESSAGES_KEY, []))
            interrupts = [i for task in snapshot.tasks for i in task.interrupts]
            responses = [m for m in messages[seen_count:] if isinstance(m, AIMessage)]
            usage = usage_of(responses)
            metadata = _metadata(responses)
            if not interrupts:
                return TurnCompleted(
                    new_messages=[to_framework_message(m) for m in messages[input_count:]],
                    usage=usage,
                    model_call_metadata=metadata,
                )
            pending, calls, continues = self._deferred(turn, interrupts, messages)
            next_state = RunState(
                thread=self.saver.export_thread(thread_id, latest_only=True),
                pending=pending,
                continue_interrupts=continues,
                input_count=input_count,
                seen_count=len(messages),
            ).encode()
            if not calls:
                return TurnContinued(
                    framework_run_state=next_state, usage=usage, model_call_metadata=metadata
                )
            return ToolCallsRequested(
                framework_run_state=next_state,
                tool_calls=calls,
                usage=usage,
                model_call_metadata=metadata,
            )
        finally:
            self.saver.delete_thread(thread_id)

    async def execute_deferred_tool_call(self, call: DeferredToolExecution) -> DeferredToolOutcome:
        record = call.tool_call
        source = self._mcp.owner(record.tool_source_reference)
        if source is not None:  # an MCP tool: the source runs it, and may start a task
            async with heartbeats(call.heartbeat, self.heartbeat_interval_seconds):
                return await source.execute_deferred_tool_call(call)
        tool = self.tools.get(record.tool_name)
        if tool is None:
            raise ToolExecutionError(f"no tool named {record.tool_name!r} in this graph")
        arguments = parse_tool_arguments(record.arguments)
        context = DexToolContext.of_tool_step(call)
        tool_call = {
            "type": "tool_call",
            "id": record.tool_call_id,
            "name": record.tool_name,
            "args": arguments,
        }
        try:
            with running(context):
                async with heartbeats(call.heartbeat, self.heartbeat_interval_seconds):
                    output = await tool.ainvoke(tool_call, context.config())
        except ToolException as error:
            raise ToolExecutionError(str(error)) from error
        if isinstance(output, ToolMessage):
            if output.status == "error":
                raise ToolExecutionError(str(output.text))
            return ToolExecutionResult(output=str(output.text))
        return ToolExecutionResult(output=tool_output_text(output))

    # --- UnfinishedTurnMessageBuilder ------------------------------------------------

    def build_unfinished_turn_messages(self, turn: AgentTurnContext) -> Sequence[FrameworkMessage]:
        """The turn's messages so far, with a tool result for every pending call."""
        state = RunState.decode(turn.framework_run_state)
        if state.thread is None:
            return ()
        thread_id = f"dex/{turn.flow_id}/{turn.turn_id}/{uuid.uuid4().hex}"
        self.saver.import_thread(thread_id, state.thread)
        try:
            snapshot = self.graph.get_state({"configurable": {"thread_id": thread_id}})
        finally:
            self.saver.delete_thread(thread_id)
        messages: list[BaseMessage] = list(snapshot.values.get(_MESSAGES_KEY, []))
        answered = {m.tool_call_id for m in messages if isinstance(m, ToolMessage)}
        unanswered = [p for p in state.pending if p.tool_call_id not in answered]
        texts = result_texts(unanswered, turn.tool_calls, strict=False)
        messages.extend(
            ToolMessage(
                content=texts[p.tool_call_id], tool_call_id=p.tool_call_id, name=p.tool_name
            )
            for p in unanswered
        )
        return [to_framework_message(m) for m in messages[state.input_count :]]

    # --- helpers ---------------------------------------------------------------------

    def _built_in_specs(self, turn: AgentTurnContext) -> tuple[dict[str, Any], ...]:
        """The enabled built-ins as OpenAI function specs; their names are reserved."""
        offered = offered_built_ins(turn.enabled_built_in_tools, self.tools, owner="the graph")
        return tuple(
            {
                "type": "function",
                "function": {
                    "name": definition.name,
                    "description": definition.description,
                    "parameters": dict(definition.parameters),
                },
            }
            for definition in offered
        )

    def _deferred(
        self,
        turn: AgentTurnContext,
        interrupts: Sequence[Interrupt],
        messages: Sequence[BaseMessage],
    ) -> tuple[list[InterruptedCall], list[DeferredToolCall], list[str]]:
        order = {
            call["id"]: index
            for message in messages
            if isinstance(message, AIMessage)
            for index, call in enumerate(message.tool_calls)
        }
        tool_interrupts: list[tuple[Interrupt, Mapping[str, Any]]] = []
        continues: list[str] = []
        for item in interrupts:
            value = item.value
            if isinstance(value, Mapping) and isinstance(value.get(TOOL_CALL_KEY), Mapping):
                tool_interrupts.append((item, value[TOOL_CALL_KEY]))
            elif isinstance(value, Mapping) and value.get(NEXT_MODEL_CALL_KEY):
                continues.append(item.id)
            else:
                raise UserError(
                    "the graph paused on an interrupt LangGraphRunner cannot answer: "
                    f"{value!r:.200}; in Step mode only tool calls may interrupt "
                    "(DexStepMiddleware or defer_tool_call), and questions to the "
                    "user go through the session's ask_user"
                )
        tool_interrupts.sort(key=lambda pair: order.get(str(pair[1].get("id")), len(order)))
        router = ToolRouter(
            turn, tool_policies=self.tool_policies, default_tool_effect=self.default_tool_effect
        )
        pending: list[InterruptedCall] = []
        calls: list[DeferredToolCall] = []
        for item, call in tool_interrupts:
            tool_call_id, tool_name = str(call.get("id") or ""), str(call.get("name") or "")
            arguments = json.dumps(call.get("args") or {}, separators=(",", ":"))
            calls.append(
                router.defer(
                    tool_call_id, tool_name, arguments, sourced=self._mcp.listed(tool_name)
                )
            )
            pending.append(
                InterruptedCall(
                    tool_call_id=tool_call_id, tool_name=tool_name, interrupt_id=item.id
                )
            )
        return pending, calls, continues


def _resume_values(state: RunState, records: Sequence[AgentToolCall]) -> dict[str, object]:
    """Each pending interrupt's answer: a call's model-visible result, or go on."""
    values: dict[str, object] = dict.fromkeys(state.continue_interrupts, True)
    for call, record in pending_records(state.pending, records, strict=True):
        values[call.interrupt_id] = result_text(record)
    return values


def _graph_tools(graph: CompiledStateGraph[Any, Any, Any, Any]) -> dict[str, BaseTool]:
    tools: dict[str, BaseTool] = {}
    for node in graph.nodes.values():
        bound = getattr(node, "bound", None)
        if isinstance(bound, ToolNode):
            tools.update(bound.tools_by_name)
    return tools


def _metadata(responses: Sequence[AIMessage]) -> ModelCallMetadata | None:
    if not responses:
        return None
    response = responses[-1]
    info = response.response_metadata or {}
    model = info.get("model_name") or info.get("model")
    finish = info.get("finish_reason") or info.get("stop_reason")
    return ModelCallMetadata(
        request_model=model,
        response_model=model,
        provider_name=info.get("model_provider"),
        response_id=response.id,
        finish_reasons=[str(finish)] if finish else [],
    )
