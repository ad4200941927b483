"""The `io.modelcontextprotocol/tasks` extension (2026-07-28), which mcp 2.3.0 does not implement.

A server may answer `tools/call` with a task handle instead of a result; the
task is then followed with `tasks/get` and ended with `tasks/cancel`. The
models here are the extension's flat wire shapes (`ttlMs`, `pollIntervalMs`),
not the SDK's 2025-11-25 `Task` types.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import Annotated, Any, Literal

from mcp import types
from mcp.client.extension import ClaimContext, ClientExtension, ResultClaim
from pydantic import ConfigDict, Discriminator, Field, Tag, TypeAdapter

__all__ = [
    "CALL_RESULT",
    "TASKS_EXTENSION",
    "DetailedTask",
    "TaskCheckpoint",
    "TaskHandle",
    "TaskIdParams",
    "TaskUpdateParams",
    "TasksCancel",
    "TasksExtension",
    "TasksGet",
    "TasksUpdate",
    "next_interval",
]

TASKS_EXTENSION = "io.modelcontextprotocol/tasks"
_MAX_INTERVAL_SECONDS = 60


class TaskHandle(types.Result):
    """What `tools/call` returns when the server made the call a task."""

    model_config = ConfigDict(populate_by_name=True, extra="allow")
    result_type: Literal["task"] = Field("task", alias="resultType")
    task_id: str = Field(alias="taskId")
    status: str
    poll_interval_ms: int | None = Field(None, alias="pollIntervalMs")


class DetailedTask(types.Result):
    """What `tasks/get` returns: the status, plus the result, error or input requests."""

    model_config = ConfigDict(populate_by_name=True, extra="allow")
    task_id: str = Field(alias="taskId")
    status: str
    status_message: str | None = Field(None, alias="statusMessage")
    poll_interval_ms: int | None = Field(None, alias="pollIntervalMs")
    result: dict[str, Any] | None = None
    error: dict[str, Any] | None = None
    input_requests: dict[str, Any] | None = Field(None, alias="inputRequests")


class TaskIdParams(types.RequestParams):
    task_id: str = Field(alias="taskId")


class TasksGet(types.Request[TaskIdParams, Literal["tasks/get"]]):
    method: Literal["tasks/get"] = "tasks/get"
    name_param = "taskId"  # tasks/* over HTTP must mirror the task ID into Mcp-Name


class TaskUpdateParams(TaskIdParams):
    input_responses: dict[str, Any] = Field(alias="inputResponses")


class TasksUpdate(types.Request[TaskUpdateParams, Literal["tasks/update"]]):
    method: Literal["tasks/update"] = "tasks/update"
    name_param = "taskId"


class TasksCancel(types.Request[TaskIdParams, Literal["tasks/cancel"]]):
    method: Literal["tasks/cancel"] = "tasks/cancel"
    name_param = "taskId"


async def _refuse_inline(handle: TaskHandle, context: ClaimContext) -> types.CallToolResult:
    """Durable code follows a task in its own Steps; the SDK must never wait for one."""
    raise RuntimeError("an MCP task handle is not resolved inside the request")


class TasksExtension(ClientExtension):
    """Declares the tasks extension on every modern request and claims the task result."""

    identifier = TASKS_EXTENSION

    def claims(self) -> list[ResultClaim[Any]]:
        return [ResultClaim(result_type="task", model=TaskHandle, resolve=_refuse_inline)]


def _kind(value: object) -> str:
    result_type = (
        value.get("resultType") if isinstance(value, dict) else getattr(value, "result_type", None)
    )
    return {"task": "task", "input_required": "input"}.get(str(result_type), "done")


CALL_RESULT: TypeAdapter[types.CallToolResult | TaskHandle | types.InputRequiredResult] = (
    TypeAdapter(
        Annotated[
            Annotated[types.CallToolResult, Tag("done")]
            | Annotated[TaskHandle, Tag("task")]
            | Annotated[types.InputRequiredResult, Tag("input")],
            Discriminator(_kind),
        ]
    )
)
"""`tools/call`'s three answers: a result, a task handle, or a request for input."""


def next_interval(server_ms: int | None, previous_seconds: float | None) -> int:
    """The design's poll interval: the server's, rounded up to whole seconds, or, when
    that is shorter, double the previous interval, up to a minute."""
    server = max(1, math.ceil(server_ms / 1000)) if server_ms else 1
    if previous_seconds is None:
        return min(server, _MAX_INTERVAL_SECONDS)
    doubled = min(int(previous_seconds) * 2, _MAX_INTERVAL_SECONDS)
    return min(max(server, doubled), 24 * 3600)


@dataclass(frozen=True, kw_only=True)
class TaskCheckpoint:
    """The heartbeat checkpoint of an attempt that started a task: a retried attempt
    returns this task instead of calling the tool again."""

    server: str
    task_id: str
    interval: int

    _MARK = "dex_agents.mcp/task"

    def encode(self) -> str:
        return json.dumps(
            {"kind": self._MARK, "server": self.server, "task": self.task_id, "i": self.interval},
            separators=(",", ":"),
        )

    @classmethod
    def decode(cls, text: str | None) -> TaskCheckpoint | None:
        """The checkpoint, or None for none or another writer's (read only our own)."""
        if not text:
            return None
        try:
            value = json.loads(text)
        except ValueError:
            return None
        if not isinstance(value, dict) or value.get("kind") != cls._MARK:
            return None
        server, task, interval = value.get("server"), value.get("task"), value.get("i")
        if not (isinstance(server, str) and isinstance(task, str) and isinstance(interval, int)):
            return None
        return cls(server=server, task_id=task, interval=interval)
