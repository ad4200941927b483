"""`McpToolSource`: MCP servers' tools as agent tools, each call run in its tool Step."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Mapping, Sequence
from typing import cast

import anyio
from mcp import types
from mcp.client.session import ClientSession
from mcp.shared.exceptions import MCPError

from dex_agents._runner.capabilities import (
    ToolTaskCancellation,
    ToolTaskPoll,
    ToolTaskPollOutcome,
)
from dex_agents._runner.policies import ToolPolicy
from dex_agents._runner.values import (
    AgentTurnContext,
    DeferredToolCall,
    DeferredToolExecution,
    DeferredToolOutcome,
    Heartbeat,
    ToolExecutionError,
    ToolExecutionResult,
    ToolTaskStarted,
    deferred_tool_call,
)
from dex_agents.mcp._config import (
    DEFAULT_CALL_TIMEOUT_SECONDS,
    DEFAULT_HANDSHAKE_TIMEOUT_SECONDS,
    McpHttpServer,
    McpServerConfig,
)
from dex_agents.mcp._connection import Connector
from dex_agents.mcp._errors import McpToolCallInterruptedError
from dex_agents.mcp._listing import McpTool, list_server_tools, merge_listings
from dex_agents.mcp._naming import ToolReference, split_qualified_name
from dex_agents.mcp._outcomes import interrupted_or_failed, not_sent, result_text
from dex_agents.mcp._stepwise import stepwise_tool, stepwise_tool_for_reference
from dex_agents.mcp._task_calls import (
    DEFAULT_INLINE_TASK_WAIT_SECONDS,
    inline_poll,
    input_required_error,
)
from dex_agents.mcp._task_polls import cancel_task, poll_task
from dex_agents.mcp._tasks import (
    CALL_RESULT,
    TaskCheckpoint,
    TaskHandle,
    TasksExtension,
    next_interval,
)
from dex_agents.stepwise import Tool

__all__ = ["IDEMPOTENCY_KEY_META", "McpToolSource"]

IDEMPOTENCY_KEY_META = "io.superdurable.dex/idempotencyKey"
HEADER_MISMATCH = -32020
"""The JSON-RPC code of a server that wanted `Mcp-Param-*` headers the call lacked."""
"""The `_meta` key of `tools/call` that carries the call's idempotency key."""


class McpToolSource:
    """The tools of the Worker's MCP servers, named `<server>__<tool>`.

    Servers come from the Worker's configuration only. Tools are listed once per
    source and cached; every call opens its own connection inside the tool Step,
    with the call's idempotency key in `_meta`.
    """

    def __init__(
        self,
        servers: Sequence[McpServerConfig],
        *,
        trust_annotations: bool = True,
        handshake_timeout: float = DEFAULT_HANDSHAKE_TIMEOUT_SECONDS,
        call_timeout: float = DEFAULT_CALL_TIMEOUT_SECONDS,
        list_timeout: float = DEFAULT_HANDSHAKE_TIMEOUT_SECONDS,
        inline_task_wait: float = DEFAULT_INLINE_TASK_WAIT_SECONDS,
    ) -> None:
        """Configure the servers; nothing connects until `list_tools` or a call.

        Args:
            servers: `McpStdioServer` and `McpHttpServer` configurations, unique by name.
            trust_annotations: Map readOnlyHint / idempotentHint to effects; when
                False every MCP tool takes the session's default effect unless a
                `ToolPolicy` names it.
            handshake_timeout: Seconds to open a connection (spawn or connect, discover).
            call_timeout: Seconds a request may wait for its result; past it the
                call counts as interrupted.
            list_timeout: Seconds a server's listing may take once connected.
            inline_task_wait: Seconds a tool Step follows a task it cannot hand to
                `PollToolTask` (a stdio server's, or without a polling runner).
        """
        names = [server.name for server in servers]
        duplicates = sorted({name for name in names if names.count(name) > 1})
        if duplicates:
            raise ValueError(f"MCP server names must be unique; repeated: {duplicates!r}")
        self.servers: Mapping[str, McpServerConfig] = {s.name: s for s in servers}
        self.trust_annotations = trust_annotations
        self.call_timeout = call_timeout
        self.list_timeout = list_timeout
        self.inline_task_wait = inline_task_wait
        self._connector = Connector(handshake_timeout=handshake_timeout)
        self._tools: list[McpTool] | None = None
        self._listing: asyncio.Lock | None = None

    # --- listing ----------------------------------------------------------------------

    async def list_tools(
        self, *, taken: Sequence[str] = (), refresh: bool = False
    ) -> list[McpTool]:
        """Lists every server once (concurrently) and caches the result.

        An unlistable server, an unusable tool name and a name already taken (by
        `taken`, e.g. the agent's own tools, or an earlier server) are left out
        with a logged warning. A server left out is not listed again until
        `refresh`.
        """
        if self._tools is not None and not refresh:
            return list(self._tools)
        if self._listing is None:
            self._listing = asyncio.Lock()
        async with self._listing:
            if self._tools is None or refresh:
                listings = await asyncio.gather(
                    *(
                        list_server_tools(
                            self._connector,
                            server,
                            list_timeout=self.list_timeout,
                            trust_annotations=self.trust_annotations,
                        )
                        for server in self.servers.values()
                    )
                )
                self._tools = merge_listings(listings, taken=taken)
            return list(self._tools)

    @property
    def tools(self) -> Sequence[McpTool]:
        """The cached listing (empty before `list_tools`)."""
        return tuple(self._tools or ())

    def tool(self, name: str) -> McpTool | None:
        return next((tool for tool in self._tools or () if tool.name == name), None)

    # --- policies and deferral --------------------------------------------------------

    def merge_tool_policies(
        self, application_policies: Mapping[str, ToolPolicy] | None = None
    ) -> dict[str, ToolPolicy]:
        """A `ToolPolicy` per listed tool whose annotations imply an effect, with the
        application's own policies on top (an explicit ToolPolicy wins).

        Feed the result to an adapter's `tool_policies`; call it after `list_tools`.
        """
        merged: dict[str, ToolPolicy] = {
            tool.name: ToolPolicy(effect=tool.effect)
            for tool in self._tools or ()
            if tool.effect is not None
        }
        merged.update(application_policies or {})
        return merged

    def deferred_tool_call(
        self, turn: AgentTurnContext, *, tool_call_id: str, tool_name: str, arguments: str
    ) -> DeferredToolCall:
        """The call's deferral: the annotation effect as framework effect, under the
        session's policies, and the reference its tool Step calls by.

        Raises:
            KeyError: `tool_name` is not a listed tool of this source.
        """
        tool = self.tool(tool_name)
        if tool is None:
            raise KeyError(tool_name)
        return deferred_tool_call(
            tool_call_id=tool_call_id,
            tool_name=tool_name,
            arguments=arguments,
            policy=turn.resolve_tool_policy(tool_name, tool.effect),
            tool_source_reference=tool.reference,
        )

    # --- calls ------------------------------------------------------------------------

    async def call_tool(
        self,
        tool_name: str,
        arguments: Mapping[str, object] | str,
        *,
        idempotency_key: str,
        tool_source_reference: str | None = None,
    ) -> str:
        """Sends one `tools/call` on a new connection and returns the result's text.

        Call it only inside a tool Step. `tool_source_reference` (from the call's
        record) names the server and MCP tool without a listing; without it the
        name is split on its first `__`.

        Raises:
            ToolExecutionError: the tool failed (isError), the server refused the
                call with a JSON-RPC error, or the call was never sent.
            McpToolCallInterruptedError: the call went out without a result back.
        """
        outcome = await self._call(
            self._reference(tool_name, tool_source_reference),
            arguments,
            idempotency_key=idempotency_key,
            heartbeat=None,
            inline_tasks=True,
        )
        if isinstance(outcome, ToolExecutionResult):
            return outcome.output
        raise RuntimeError("a task handle reached call_tool")  # inline_tasks excludes it

    async def execute_deferred_tool_call(self, call: DeferredToolExecution) -> DeferredToolOutcome:
        """`execute_deferred_tool_call` for a runner whose tools are this source's.

        A task of a Streamable HTTP server, with a runner that polls tasks, is
        saved as the attempt's heartbeat checkpoint before anything else and
        returned as `ToolTaskStarted`; a retried attempt finds the checkpoint and
        returns the same task without calling again.
        """
        record = call.tool_call
        reference = self._reference(record.tool_name, record.tool_source_reference)
        server = self.servers[reference.server]
        pollable = isinstance(server, McpHttpServer) and call.supports_tool_tasks
        checkpoint = TaskCheckpoint.decode(call.heartbeat_checkpoint)
        if pollable and checkpoint is not None and checkpoint.server == server.name:
            return ToolTaskStarted(
                task_id=checkpoint.task_id, poll_interval_seconds=checkpoint.interval
            )
        outcome = await self._call(
            reference,
            record.arguments or "{}",
            idempotency_key=call.idempotency_key,
            heartbeat=call.heartbeat,
            inline_tasks=not pollable,
        )
        if isinstance(outcome, TaskHandle):
            interval = next_interval(outcome.poll_interval_ms, None)
            saved = TaskCheckpoint(server=server.name, task_id=outcome.task_id, interval=interval)
            await call.save_heartbeat_checkpoint(saved.encode())
            return ToolTaskStarted(task_id=outcome.task_id, poll_interval_seconds=interval)
        return outcome

    async def poll_tool_task(self, poll: ToolTaskPoll) -> ToolTaskPollOutcome:
        """One `tasks/get` of a started task (`ToolTaskPoller`).

        A task asking one simple form field becomes `ToolInputRequested`; the poll
        after its resolution sends it with `tasks/update` (see `_task_polls`).

        Raises:
            ToolExecutionError: the task failed, or asked for input the session
                cannot give.
            McpToolCallInterruptedError: the poll failed, the server no longer
                knows the task, or a resolution could not be sent; after three
                attempts the call is recorded by effect.
        """
        record = poll.tool_call
        reference = self._reference(record.tool_name, record.tool_source_reference)
        server = self.servers[reference.server]
        return await poll_task(
            self._connector, server, reference.tool, poll, call_timeout=self.call_timeout
        )

    async def cancel_tool_task(self, cancellation: ToolTaskCancellation) -> None:
        """Sends `tasks/cancel` for a task that cancel_turn abandoned (`ToolTaskCanceller`)."""
        record = cancellation.tool_call
        reference = self._reference(record.tool_name, record.tool_source_reference)
        if record.task_id:
            await self._cancel(self.servers[reference.server], record.task_id)

    async def _cancel(self, server: McpServerConfig, task_id: str) -> None:
        await cancel_task(self._connector, server, task_id, call_timeout=self.call_timeout)

    async def _call(
        self,
        reference: ToolReference,
        arguments: Mapping[str, object] | str,
        *,
        idempotency_key: str,
        heartbeat: Heartbeat | None,
        inline_tasks: bool,
    ) -> ToolExecutionResult | TaskHandle:
        server = self.servers[reference.server]
        # `_meta` is an open TypedDict (PEP 728) whose extra keys mypy cannot type yet.
        meta = cast("types.RequestParamsMeta", {IDEMPOTENCY_KEY_META: idempotency_key})
        request = types.CallToolRequest(
            params=types.CallToolRequestParams(
                name=reference.tool, arguments=_arguments(arguments), _meta=meta
            )
        )

        async def beat() -> None:
            if heartbeat is not None:
                await heartbeat()

        async def send(
            session: ClientSession,
        ) -> types.CallToolResult | TaskHandle | ToolExecutionResult | ToolExecutionError:
            # A raw send: `call_tool()` would follow a result with a hidden tools/list
            # on this fresh connection to revalidate the output schema.
            try:
                with anyio.fail_after(self.call_timeout):
                    answer = await session.send_request(request, CALL_RESULT)
            except MCPError as error:
                if error.code != HEADER_MISMATCH:
                    raise
                # The server wants `Mcp-Param-*` headers, which the SDK mirrors only
                # for a tool listed on this connection: list, then retry once.
                await _list_all(session, self.list_timeout)
                with anyio.fail_after(self.call_timeout):
                    answer = await session.send_request(request, CALL_RESULT)
            if isinstance(answer, TaskHandle) and inline_tasks:
                return await inline_poll(
                    session,
                    server=server.name,
                    tool=reference.tool,
                    task_id=answer.task_id,
                    interval_ms=answer.poll_interval_ms,
                    heartbeat=beat,
                    wait_seconds=self.inline_task_wait,
                )
            if isinstance(answer, types.InputRequiredResult):
                return input_required_error(reference.tool, answer.input_requests)
            return answer

        exchange = await self._connector.exchange(server, send, extensions=[TasksExtension()])
        if exchange.value is None:
            error = exchange.error or RuntimeError("no result")
            if exchange.phase == "connect":
                raise not_sent(server.name, reference.tool, error)
            if isinstance(error, McpToolCallInterruptedError | ToolExecutionError):
                raise error
            raise interrupted_or_failed(server.name, reference.tool, error)
        value = exchange.value
        if isinstance(value, ToolExecutionError):
            raise value
        if isinstance(value, ToolExecutionResult | TaskHandle):
            return value
        text = result_text(value)
        if value.is_error:
            raise ToolExecutionError(text or f"MCP tool {reference.tool!r} failed")
        return ToolExecutionResult(output=text)

    # --- Stepwise (dex_agents.stepwise.ToolSource) -------------------------------------

    async def stepwise_tools(self, taken: Sequence[str] = ()) -> Sequence[Tool]:
        """The listed tools as Stepwise tools (`AgentDefinition(tool_sources=[source])`)."""
        return [stepwise_tool(self.call_tool, tool) for tool in await self.list_tools(taken=taken)]

    def owns(self, tool_source_reference: str) -> bool:
        """Whether a call record's reference names a server of this source, so a
        runner hands it the call (`execute_deferred_tool_call`) and its task."""
        reference = ToolReference.decode(tool_source_reference)
        return reference is not None and reference.server in self.servers

    def stepwise_tool(self, tool_name: str, tool_source_reference: str) -> Tool | None:
        return stepwise_tool_for_reference(
            self.call_tool, self.servers, tool_name, tool_source_reference
        )

    async def aclose(self) -> None:
        """Closes the shared HTTP clients (stdio processes never outlive a request)."""
        await self._connector.aclose()

    def _reference(self, tool_name: str, tool_source_reference: str | None) -> ToolReference:
        reference: ToolReference | None = None
        if tool_source_reference:
            reference = ToolReference.decode(tool_source_reference)
        if reference is None:
            split = split_qualified_name(tool_name)
            reference = ToolReference(server=split[0], tool=split[1]) if split else None
        if reference is None:
            raise ToolExecutionError(f"{tool_name!r} names no MCP server tool")
        if reference.server not in self.servers:
            # Only the Worker's own configuration names servers.
            raise ToolExecutionError(
                f"MCP server {reference.server!r} is not configured on this Worker"
            )
        return reference


async def _list_all(session: ClientSession, seconds: float) -> None:
    with anyio.fail_after(seconds):
        page = await session.list_tools()
        while page.next_cursor:
            params = types.PaginatedRequestParams(cursor=page.next_cursor)
            page = await session.list_tools(params=params)


def _arguments(arguments: Mapping[str, object] | str) -> dict[str, object]:
    if isinstance(arguments, str):
        try:
            value = json.loads(arguments) if arguments.strip() else {}
        except ValueError:
            value = None
        if not isinstance(value, dict):
            raise ToolExecutionError("arguments must be a JSON object")
        return value
    return dict(arguments)
