"""Following an MCP task: start it from `tools/call`, poll it, cancel it.

A Streamable HTTP server's task can be polled from any connection, so it
becomes `ToolTaskStarted` and `PollToolTask` Steps poll it, one `tasks/get`
each. A stdio server's task dies with its process (a new connection is a new
process), so it is polled on the call's own connection inside the tool Step,
with a heartbeat per poll, for a bounded wait; so is every task of a runner
that does not poll tasks.
"""

from __future__ import annotations

import json
import time
from collections.abc import Awaitable, Callable
from typing import Any

import anyio
from mcp import types
from mcp.client.session import ClientSession
from mcp.shared.exceptions import MCPError

from dex_agents._runner.capabilities import ToolTaskPending, ToolTaskPoll
from dex_agents._runner.values import ToolExecutionError, ToolExecutionResult
from dex_agents.mcp._errors import McpToolCallInterruptedError
from dex_agents.mcp._outcomes import flatten, result_text
from dex_agents.mcp._questions import Continuation
from dex_agents.mcp._tasks import (
    DetailedTask,
    TaskIdParams,
    TasksCancel,
    TasksGet,
    TasksUpdate,
    TaskUpdateParams,
    next_interval,
)

__all__ = [
    "DEFAULT_INLINE_TASK_WAIT_SECONDS",
    "TASK_STATUS_EVENT",
    "cancel_request",
    "get_request",
    "inline_poll",
    "input_required_error",
    "pending",
    "poll_failure",
    "settle",
    "update_request",
    "write_status_event",
]

TASK_STATUS_EVENT = "mcp.task_status"
"""The event a poll writes when the task's status changed."""
DEFAULT_INLINE_TASK_WAIT_SECONDS = 600.0
"""How long a tool Step follows a task on its own connection before it gives up."""


def get_request(task_id: str) -> TasksGet:
    return TasksGet(params=TaskIdParams.model_validate({"taskId": task_id}))


def cancel_request(task_id: str) -> TasksCancel:
    return TasksCancel(params=TaskIdParams.model_validate({"taskId": task_id}))


def update_request(task_id: str, responses: dict[str, Any]) -> TasksUpdate:
    return TasksUpdate(
        params=TaskUpdateParams.model_validate({"taskId": task_id, "inputResponses": responses})
    )


def input_required_error(tool: str, requests: object) -> ToolExecutionError:
    """The source answers no input request of a call; the text names what was asked."""
    asked = json.dumps(requests, sort_keys=True, default=str) if requests else "(unspecified)"
    return ToolExecutionError(f"MCP tool {tool!r} asked for input the session cannot give: {asked}")


def settle(
    server: str, tool: str, task: DetailedTask
) -> ToolExecutionResult | ToolExecutionError | None:
    """A terminal task's outcome, or None while it runs.

    Raises:
        McpToolCallInterruptedError: the task is cancelled (a cancel is eventually
            consistent, so whether it took effect is unknown).
    """
    if task.status == "completed":
        result = types.CallToolResult.model_validate(task.result or {"content": []})
        text = result_text(result)
        if result.is_error:
            return ToolExecutionError(text or f"MCP tool {tool!r} failed")
        return ToolExecutionResult(output=text)
    if task.status == "failed":
        error = task.error or {}
        return ToolExecutionError(
            f"MCP task of {tool!r} failed (JSON-RPC {error.get('code')}): {error.get('message')}"
        )
    if task.status == "cancelled":
        raise McpToolCallInterruptedError(server, tool, f"task {task.task_id!r} was cancelled")
    if task.status == "input_required":
        return input_required_error(tool, task.input_requests)
    return None


async def inline_poll(
    session: ClientSession,
    *,
    server: str,
    tool: str,
    task_id: str,
    interval_ms: int | None,
    heartbeat: Callable[[], Awaitable[None]],
    wait_seconds: float,
) -> ToolExecutionResult | ToolExecutionError:
    """Polls the task on the call's own connection until it ends or the wait runs out."""
    deadline = time.monotonic() + wait_seconds
    interval: float = next_interval(interval_ms, None)
    while True:
        await heartbeat()
        try:
            task = await session.send_request(get_request(task_id), DetailedTask)
        except MCPError as error:
            raise McpToolCallInterruptedError(server, tool, f"tasks/get failed: {error}") from None
        outcome = settle(server, tool, task)
        if outcome is not None:
            if isinstance(outcome, ToolExecutionError) and task.status == "input_required":
                await _cancel_quietly(session, task_id)
            return outcome
        if time.monotonic() + interval > deadline:
            await _cancel_quietly(session, task_id)
            raise McpToolCallInterruptedError(
                server, tool, f"task {task_id!r} did not end within {wait_seconds:g} s"
            )
        await anyio.sleep(interval)
        # Seconds, not the whole-second rule of Step intervals: this wait is in-process.
        interval = max(0.05, (task.poll_interval_ms or interval * 1000) / 1000)


async def _cancel_quietly(session: ClientSession, task_id: str) -> None:
    try:
        await session.send_request(cancel_request(task_id), types.EmptyResult)
    except Exception:  # best-effort: the call's outcome is already decided
        return


def poll_failure(server: str, tool: str, error: BaseException) -> McpToolCallInterruptedError:
    """Every poll failure is a Step failure: three failed polls go to the route by effect."""
    for leaf in flatten(error):
        if isinstance(leaf, MCPError) and leaf.code == -32602:
            return McpToolCallInterruptedError(
                server, tool, f"the server no longer knows the task: {leaf.message}"
            )
    return McpToolCallInterruptedError(server, tool, f"tasks/get failed: {error}")


def write_status_event(poll: ToolTaskPoll, task: DetailedTask) -> None:
    """Writes `mcp.task_status` when the status differs from the one the last poll saw."""
    if Continuation.decode(poll.tool_call.input_continuation).status != task.status:
        poll.events.write_raw(
            TASK_STATUS_EVENT,
            json.dumps(
                {"task_id": task.task_id, "status": task.status, "message": task.status_message}
            ),
        )


def pending(poll: ToolTaskPoll, task: DetailedTask) -> ToolTaskPending:
    """The next poll, and the status this one saw (so only a change writes an event).

    It names no request: a question seen again later is a new question.
    """
    write_status_event(poll, task)
    interval = next_interval(task.poll_interval_ms, poll.tool_call.task_poll_interval_seconds)
    continuation = Continuation(status=task.status).encode()
    return ToolTaskPending(poll_interval_seconds=interval, continuation=continuation)
