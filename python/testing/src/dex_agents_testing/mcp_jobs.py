"""The `tasks` test server: `long_job` answers `tools/call` with a task handle.

It implements the server side of `io.modelcontextprotocol/tasks` as an
`MCPServer` extension. Task state lives in files beside the call log, so a
stateless HTTP server (and a stdio one, whose process ends with each request)
keeps it; the test completes a task by creating `<log>.done`, and makes the
server forget it by deleting the task directory. `<log>.hold` holds the answer
to a new `tools/call` until `<log>.release` exists, and `<log>.hold_poll` each
`tasks/get` until `<log>.release_poll` does. `ask_job`'s task asks one enum
field (`colour`) and completes with the answer `tasks/update` brings.

`JobsServer` runs it on its own over Streamable HTTP (`python -m
dex_agents_testing.mcp_jobs LOG PORT`), as the conformance suite's MCP-tasks
case and the core's MCP tests (through `servers.py --variant tasks`) use it.
Import this module only where the MCP SDK is installed.
"""

from __future__ import annotations

import asyncio
import datetime
import json
import subprocess
import sys
import time
import uuid
from pathlib import Path
from typing import Any

import uvicorn
from dex_agents.mcp import McpHttpServer, McpToolSource
from dexlite.testing import ChildProcess, accepts_connections, child_env, free_port
from mcp.server.extension import Extension, MethodBinding
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.server import require_client_extension
from mcp.shared.exceptions import MCPError
from mcp.types import CallToolRequestParams, RequestParams, ToolAnnotations
from pydantic import Field

from dex_agents_testing.processes import wait_until

__all__ = ["JobsServer", "build_tasks_server"]

TASKS = "io.modelcontextprotocol/tasks"
IDEMPOTENCY_KEY = "io.superdurable.dex/idempotencyKey"


class _TaskId(RequestParams):
    task_id: str = Field(alias="taskId")


class _Responses(_TaskId):
    input_responses: dict[str, Any] = Field(alias="inputResponses")


def _form(tool: str) -> dict[str, Any]:
    """`ask_job` asks one enum field; `ask_form` two fields, which no question can ask."""
    properties: dict[str, Any] = {"colour": {"type": "string", "enum": ["red", "blue"]}}
    if tool == "ask_form":
        properties = {"name": {"type": "string"}, "age": {"type": "integer"}}
    return {
        "method": "elicitation/create",
        "params": {
            "mode": "form",
            "message": "Which colour?" if tool == "ask_job" else "Who are you?",
            "requestedSchema": {"type": "object", "properties": properties},
        },
    }


def _now() -> str:
    return datetime.datetime.now(datetime.UTC).isoformat()


class _Tasks(Extension):
    identifier = TASKS

    def __init__(self, log: Path) -> None:
        self.log = log
        self.dir = log.with_suffix(".tasks")

    def _write_log(self, entry: dict[str, Any]) -> None:
        with self.log.open("a", encoding="utf-8") as out:
            out.write(json.dumps(entry) + "\n")

    def _wire(self, state: dict[str, Any]) -> dict[str, Any]:
        return {
            "taskId": state["taskId"],
            "status": state["status"],
            "createdAt": state["createdAt"],
            "lastUpdatedAt": _now(),
            "ttlMs": None,
            "pollIntervalMs": 200,
        }

    async def intercept_tool_call(
        self, params: CallToolRequestParams, ctx: Any, call_next: Any
    ) -> Any:
        if params.name not in ("long_job", "ask_job", "ask_form"):
            return await call_next(ctx)
        require_client_extension(ctx, TASKS)
        meta = params.meta or {}
        key = meta.get(IDEMPOTENCY_KEY) if isinstance(meta, dict) else None
        self.dir.mkdir(exist_ok=True)
        # The idempotency key drops a duplicate call: its task is the first call's.
        for path in sorted(self.dir.iterdir()):
            existing = json.loads(path.read_text(encoding="utf-8"))
            if key is not None and existing.get("key") == key:
                self._write_log({"tool": "long_job", "key": key, "task": existing["taskId"]})
                return {"resultType": "task", **self._wire(existing)}
        state: dict[str, Any] = {
            "taskId": uuid.uuid4().hex,
            "status": "working",
            "createdAt": _now(),
            "key": key,
        }
        if params.name in ("ask_job", "ask_form"):  # a task that needs input right away
            state["status"] = "input_required"
            state["inputRequests"] = {"confirm-1": _form(params.name)}
        (self.dir / state["taskId"]).write_text(json.dumps(state), encoding="utf-8")
        self._write_log({"tool": "long_job", "key": key, "task": state["taskId"]})
        await self._hold(".hold", ".release")
        return {"resultType": "task", **self._wire(state)}

    async def _hold(self, hold: str, release: str) -> None:
        """While `<log><hold>` exists, holds the answer until `<log><release>` does
        (or a minute passed), so the test can kill the caller mid-request."""
        if not self.log.with_suffix(hold).exists():
            return
        deadline = time.monotonic() + 60
        while not self.log.with_suffix(release).exists() and time.monotonic() < deadline:  # noqa: ASYNC110 - a file gate the test opens
            await asyncio.sleep(0.05)

    def _load(self, task_id: str) -> dict[str, Any]:
        path = self.dir / task_id
        if not path.exists():
            raise MCPError(-32602, f"unknown task {task_id!r}")
        state: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
        return state

    async def _get(self, ctx: Any, params: _TaskId) -> dict[str, Any]:
        """The task as it is when the request arrives: a `tasks/get` in the log
        answers "completed" only if `<log>.done` existed before it was logged."""
        state = self._load(params.task_id)
        wire = self._wire(state)
        if state["status"] == "input_required":
            wire["inputRequests"] = state["inputRequests"]
        if state["status"] == "completed":
            wire["result"] = state["result"]
        if state["status"] == "working" and self.log.with_suffix(".done").exists():
            wire["status"] = "completed"
            wire["result"] = {"content": [{"type": "text", "text": "job done"}], "isError": False}
        self._write_log({"tool": "tasks/get", "task": params.task_id})
        await self._hold(".hold_poll", ".release_poll")
        return wire

    async def _update(self, ctx: Any, params: _Responses) -> dict[str, Any]:
        """Takes the answer: accept completes with it, decline without it; with
        `<log>.slow` the task keeps listing the request (it has not got to it yet)."""
        state = self._load(params.task_id)
        self._write_log(
            {"tool": "tasks/update", "task": params.task_id, "responses": params.input_responses}
        )
        if self.log.with_suffix(".refuse").exists():
            raise MCPError(-32602, "tasks/update refused")
        if self.log.with_suffix(".slow").exists():
            return {}
        response: dict[str, Any] = next(iter(params.input_responses.values()), {})
        if response.get("action") == "accept":
            text = "chose " + json.dumps(response.get("content"), sort_keys=True)
        else:
            text = f"no choice ({response.get('action')})"
        state["status"] = "completed"
        state["result"] = {"content": [{"type": "text", "text": text}], "isError": False}
        (self.dir / params.task_id).write_text(json.dumps(state), encoding="utf-8")
        return {}

    async def _cancel(self, ctx: Any, params: _TaskId) -> dict[str, Any]:
        state = self._load(params.task_id)
        state["status"] = "cancelled"
        (self.dir / params.task_id).write_text(json.dumps(state), encoding="utf-8")
        self._write_log({"tool": "tasks/cancel", "task": params.task_id})
        return {}

    def methods(self) -> list[MethodBinding]:
        modern = frozenset({"2026-07-28"})
        return [
            MethodBinding("tasks/get", _TaskId, self._get, protocol_versions=modern),
            MethodBinding("tasks/cancel", _TaskId, self._cancel, protocol_versions=modern),
            MethodBinding("tasks/update", _Responses, self._update, protocol_versions=modern),
        ]


def add_tasks(server: MCPServer, log: Path) -> None:
    """Adds `long_job`; the extension answers its calls with tasks."""

    @server.tool(annotations=ToolAnnotations(idempotent_hint=True))
    async def long_job(ctx: Context) -> str:
        """A long job, run as an MCP task."""
        return "never reached: the tasks extension answers first"

    @server.tool(annotations=ToolAnnotations(idempotent_hint=True))
    async def ask_job(ctx: Context) -> str:
        """A job whose task asks the user a question first."""
        return "never reached: the tasks extension answers first"

    @server.tool(annotations=ToolAnnotations(idempotent_hint=True))
    async def ask_form(ctx: Context) -> str:
        """A job whose task asks for a two-field form."""
        return "never reached: the tasks extension answers first"


def build_tasks_server(log: Path) -> MCPServer:
    server = MCPServer("test-tasks", extensions=[_Tasks(log)])
    add_tasks(server, log)
    return server


class JobsServer(ChildProcess):
    """The tasks server over Streamable HTTP on a loopback port, logging to `log`."""

    def __init__(self, log: Path) -> None:
        self.log = log
        self.port = free_port()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/mcp"

    def source(self, name: str = "jobs") -> McpToolSource:
        """An McpToolSource over this server: its tools are `<name>__long_job` and so on."""
        return McpToolSource([McpHttpServer(name=name, url=self.url)])

    def start(self) -> JobsServer:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", __name__, str(self.log), str(self.port)],
            env=child_env(),
            start_new_session=True,
        )
        wait_until(
            lambda: accepts_connections(self.port),
            timeout=60,
            what=f"the MCP tasks server on port {self.port}",
        )
        return self


def _serve_http(log: str, port: int) -> None:
    app = build_tasks_server(Path(log)).streamable_http_app(stateless_http=True, json_response=True)
    uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning")


if __name__ == "__main__":
    _serve_http(sys.argv[1], int(sys.argv[2]))
