"""Test support for dex_agents.http: uvicorn on loopback in a thread, an SSE reader, a
fold of UI chunks into a message (the AI SDK's rules for the parts these tests use)."""

from __future__ import annotations

import copy
import json
import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import httpx2
import uvicorn
from dex_agents import AgentSessionClient
from dex_agents.http import HttpLimits, create_app
from dex_agents_testing import wait_until
from starlette.applications import Starlette

__all__ = ["Served", "SseEvent", "fold_message", "serving", "sse_events", "ui_chunks"]


@dataclass
class Served:
    base_url: str
    app: Starlette

    @property
    def open_streams(self) -> int:
        return int(self.app.state.dex_agents.slots.open)


@contextmanager
def serving(
    client: AgentSessionClient, limits: HttpLimits | None = None, *, send_buffer: int | None = None
) -> Iterator[Served]:
    """The app on a free loopback port; `send_buffer` shrinks each connection's SO_SNDBUF."""
    app = create_app(client, limits=limits)
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    if send_buffer is not None:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, send_buffer)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    config = uvicorn.Config(app, log_level="warning", lifespan="on", timeout_graceful_shutdown=2)
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    wait_until(lambda: server.started or None, timeout=20, what="uvicorn to start")
    try:
        yield Served(f"http://127.0.0.1:{port}", app)
    finally:
        server.should_exit = True
        thread.join(20)
        sock.close()


@dataclass
class SseEvent:
    data: str
    id: str | None = None
    comments: list[str] = field(default_factory=list)


def sse_events(response: httpx2.Response) -> Iterator[SseEvent]:
    """Events of an SSE body as an EventSource reads them (data lines joined, ids kept)."""
    data: list[str] = []
    event_id: str | None = None
    comments: list[str] = []
    for line in response.iter_lines():
        if line == "":
            if data:
                yield SseEvent("\n".join(data), event_id, comments)
            data, event_id, comments = [], None, []
            continue
        name, _, value = line.partition(":")
        value = value[1:] if value.startswith(" ") else value
        if name == "":
            comments.append(value)
        elif name == "data":
            data.append(value)
        elif name == "id":
            event_id = value


def fold_message(chunks: list[dict[str, Any]]) -> dict[str, Any]:
    """One UIMessage from chunks, by the rules of ai@7's processUIMessageStream."""
    message: dict[str, Any] = {"id": None, "metadata": {}, "parts": []}
    parts: list[dict[str, Any]] = message["parts"]
    texts: dict[str, dict[str, Any]] = {}

    def tool(call_id: str) -> dict[str, Any]:
        return next(p for p in parts if p.get("toolCallId") == call_id)

    for chunk in chunks:
        kind = chunk["type"]
        if kind == "start":
            message["id"] = chunk.get("messageId") or message["id"]
            _merge(message["metadata"], chunk.get("messageMetadata") or {})
        elif kind == "message-metadata":
            _merge(message["metadata"], chunk["messageMetadata"])
        elif kind == "start-step":
            parts.append({"type": "step-start"})
        elif kind == "reset-step":
            last = max((i for i, p in enumerate(parts) if p["type"] == "step-start"), default=-1)
            del parts[last + 1 :]
        elif kind in ("text-start", "reasoning-start"):
            part = {"type": kind.split("-")[0], "text": "", "state": "streaming"}
            texts[chunk["id"]] = part
            parts.append(part)
        elif kind in ("text-delta", "reasoning-delta"):
            texts[chunk["id"]]["text"] += chunk["delta"]
        elif kind in ("text-end", "reasoning-end"):
            texts[chunk["id"]]["state"] = "done"
        elif kind == "tool-input-start":
            parts.append(
                {
                    "type": "dynamic-tool",
                    "toolName": chunk["toolName"],
                    "toolCallId": chunk["toolCallId"],
                    "state": "input-streaming",
                    "input": None,
                }
            )
        elif kind == "tool-input-available":
            tool(chunk["toolCallId"]).update(state="input-available", input=chunk["input"])
        elif kind == "tool-approval-request":
            part = tool(chunk["toolCallId"])
            part.update(state="approval-requested", approval={"id": chunk["approvalId"]})
        elif kind == "tool-approval-response":
            part = next(p for p in parts if p.get("approval", {}).get("id") == chunk["approvalId"])
            part["approval"]["approved"] = chunk["approved"]
            part["state"] = "approval-responded"
        elif kind == "tool-output-available":
            tool(chunk["toolCallId"]).update(state="output-available", output=chunk["output"])
        elif kind == "tool-output-error":
            tool(chunk["toolCallId"]).update(state="output-error", errorText=chunk["errorText"])
        elif kind == "tool-output-denied":
            tool(chunk["toolCallId"]).update(state="output-denied")
        elif kind == "steering-message":
            parts.append({"type": kind, "id": chunk["id"], "parts": chunk["parts"]})
        elif kind in ("finish", "finish-step", "error", "abort") or kind.startswith("data-"):
            continue
        else:
            raise AssertionError(f"unexpected chunk {chunk}")
    return message


def _merge(target: dict[str, Any], source: dict[str, Any]) -> None:
    """The AI SDK's deep merge of message metadata."""
    for key, value in source.items():
        if isinstance(value, dict) and isinstance(target.get(key), dict):
            _merge(target[key], value)
        else:
            target[key] = copy.deepcopy(value)


def ui_chunks(response: httpx2.Response) -> Iterator[tuple[dict[str, Any], str | None]]:
    """(chunk, token) pairs of a UI message stream until `[DONE]`."""
    for event in sse_events(response):
        if event.data == "[DONE]":
            return
        yield json.loads(event.data), event.id
