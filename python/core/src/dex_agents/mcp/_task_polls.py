"""One `PollToolTask` poll of an MCP task: read it, and hand a resolved question over once.

A task in input_required that asks one simple form field becomes a question.
The first attempt of the poll after its resolution heartbeats, re-reads the
task and sends the resolution with `tasks/update` only while the task still
lists the very request that was asked (same key, same fingerprint). A retried
attempt cannot tell whether an earlier one sent it, so it asks again. For
`SENT_WORKING_SECONDS` after a send, the still-listed request reads as the task
working on the answer.
"""

from __future__ import annotations

import time

import anyio
from dex_agents_contracts import QuestionResolution
from mcp import types
from mcp.client.session import ClientSession
from mcp.shared.exceptions import MCPError

from dex_agents._runner.capabilities import ToolTaskPending, ToolTaskPoll, ToolTaskPollOutcome
from dex_agents._runner.values import ToolExecutionError
from dex_agents.mcp._config import McpServerConfig
from dex_agents.mcp._connection import Connector
from dex_agents.mcp._errors import McpToolCallInterruptedError
from dex_agents.mcp._questions import (
    SENT_WORKING_SECONDS,
    Continuation,
    input_response,
    task_question,
)
from dex_agents.mcp._task_calls import (
    cancel_request,
    get_request,
    input_required_error,
    pending,
    poll_failure,
    settle,
    update_request,
    write_status_event,
)
from dex_agents.mcp._tasks import DetailedTask, TasksExtension

__all__ = ["cancel_task", "poll_task"]

_SENT_POLL_SECONDS = 1


async def poll_task(
    connector: Connector,
    server: McpServerConfig,
    tool: str,
    poll: ToolTaskPoll,
    *,
    call_timeout: float,
) -> ToolTaskPollOutcome:
    """One `tasks/get` (plus, once, a `tasks/update`); see the module docstring.

    Raises:
        ToolExecutionError: the task failed, or asked for input the session cannot give.
        McpToolCallInterruptedError: the poll failed, the server no longer knows the
            task, the task was cancelled, or a resolution could not be sent.
    """
    task_id = poll.tool_call.task_id or ""
    previous = Continuation.decode(poll.tool_call.input_continuation)
    answer = poll.pending_answer
    deliver = answer is not None and poll.attempt == 1
    if deliver:
        await poll.heartbeat()
    sent: list[float] = []
    update_failed: list[BaseException] = []

    async def read(session: ClientSession) -> DetailedTask:
        with anyio.fail_after(call_timeout):
            task = await session.send_request(get_request(task_id), DetailedTask)
        question = task_question(task.input_requests) if task.status == "input_required" else None
        if deliver and answer is not None and question is not None and previous.names(question):
            responses = {question.key: input_response(question, answer)}
            try:
                with anyio.fail_after(call_timeout):
                    await session.send_request(
                        update_request(task_id, responses), types.EmptyResult
                    )
            except (MCPError, TimeoutError, OSError) as error:
                update_failed.append(error)
            else:
                sent.append(time.time())
        return task

    exchange = await connector.exchange(server, read, extensions=[TasksExtension()])
    if exchange.value is None:
        raise poll_failure(server.name, tool, exchange.error or RuntimeError())
    task = exchange.value
    if update_failed:
        if answer is not None and answer.resolution is QuestionResolution.DECLINED:
            await cancel_task(connector, server, task_id, call_timeout=call_timeout)
        raise McpToolCallInterruptedError(
            server.name, tool, f"tasks/update failed: {update_failed[0]}"
        )
    if sent:
        question = task_question(task.input_requests)
        assert question is not None  # a send happened only for a listed question
        continuation = Continuation(
            status=task.status, key=question.key, fingerprint=question.fingerprint, sent_at=sent[0]
        )
        return ToolTaskPending(
            poll_interval_seconds=_SENT_POLL_SECONDS, continuation=continuation.encode()
        )
    if task.status == "input_required":
        return await _input_required(connector, server, tool, poll, task, previous, call_timeout)
    outcome = settle(server.name, tool, task)
    if outcome is None:
        return pending(poll, task)
    if isinstance(outcome, ToolExecutionError):
        raise outcome
    return outcome


async def _input_required(  # noqa: PLR0917 - one call site, every argument distinct
    connector: Connector,
    server: McpServerConfig,
    tool: str,
    poll: ToolTaskPoll,
    task: DetailedTask,
    previous: Continuation,
    call_timeout: float,
) -> ToolTaskPollOutcome:
    question = task_question(task.input_requests)
    if question is None:
        await cancel_task(connector, server, task.task_id, call_timeout=call_timeout)
        raise input_required_error(tool, task.input_requests)
    write_status_event(poll, task)
    recent = previous.sent_at is not None and time.time() - previous.sent_at < SENT_WORKING_SECONDS
    if poll.pending_answer is None and recent and previous.names(question):
        # The task has not taken the answer off its list yet: it is working on it.
        return ToolTaskPending(
            poll_interval_seconds=_SENT_POLL_SECONDS, continuation=previous.encode()
        )
    return question.asked(task.status)


async def cancel_task(
    connector: Connector, server: McpServerConfig, task_id: str, *, call_timeout: float
) -> None:
    """Sends `tasks/cancel`, best-effort: any answer, or none, is done."""

    async def cancel(session: ClientSession) -> types.EmptyResult:
        with anyio.fail_after(call_timeout):
            return await session.send_request(cancel_request(task_id), types.EmptyResult)

    await connector.exchange(server, cancel, extensions=[TasksExtension()])
