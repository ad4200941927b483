"""A Streamable HTTP MCP server whose `tools/call` of a `fault_*` tool misbehaves.

`python faults.py --log calls.jsonl http --port 8123`. Every other request
(discover, listing, real tools) goes to the `basic` test server, so the source
connects normally and meets the fault exactly on the call. Each fault is one
row of the outcome table in the core README's MCP section.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
from collections.abc import Awaitable, Callable, MutableMapping
from pathlib import Path
from typing import Any

import uvicorn

# Run as a script: make the test helpers' package importable.
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from mcp_support.servers import build

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
App = Callable[[Scope, Receive, Send], Awaitable[None]]


def _response(status: int, content_type: str | None, body: bytes) -> list[Message]:
    headers = [(b"content-type", content_type.encode())] if content_type else []
    return [
        {"type": "http.response.start", "status": status, "headers": headers},
        {"type": "http.response.body", "body": body},
    ]


def _faults(request_id: object) -> dict[str, list[Message]]:
    error = {"jsonrpc": "2.0", "id": request_id, "error": {"code": -32099, "message": "busy"}}
    return {
        "fault_http500": _response(500, "text/plain", b"boom"),
        "fault_http404": _response(404, None, b""),
        "fault_http503_rpc": _response(503, "application/json", json.dumps(error).encode()),
        "fault_garbage": _response(200, "application/json", b"{not json"),
        "fault_wrong_type": _response(200, "text/html", b"<html></html>"),
        "fault_accepted": _response(202, None, b""),
        "fault_sse_no_result": _response(200, "text/event-stream", b": nothing\n\n"),
    }


def wrap(inner: App, log: Path) -> App:
    async def app(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] != "POST":
            await inner(scope, receive, send)
            return
        body = b""
        while True:
            message = await receive()
            body += message.get("body", b"")
            if not message.get("more_body"):
                break
        try:
            payload = json.loads(body)
        except ValueError:
            payload = {}
        name = (payload.get("params") or {}).get("name") if payload.get("method") else None
        if payload.get("method") == "tools/call" and str(name).startswith("fault_"):
            with log.open("a", encoding="utf-8") as out:
                out.write(json.dumps({"tool": name, "arguments": {}, "key": None}) + "\n")
            if name == "fault_hang":
                await asyncio.sleep(120)
            if name == "fault_kill":
                os._exit(3)
            for message in _faults(payload.get("id"))[str(name)]:
                await send(message)
            return
        replayed = False

        async def replay() -> Message:
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        await inner(scope, replay, send)

    return app


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--variant", default="basic")
    parser.add_argument("--log", required=True)
    sub = parser.add_subparsers(dest="transport", required=True)
    http = sub.add_parser("http")
    http.add_argument("--port", type=int, required=True)
    args = parser.parse_args()
    log = Path(args.log)
    server = build("basic", log)
    app = server.streamable_http_app(stateless_http=True, json_response=True)
    uvicorn.run(wrap(app, log), host="127.0.0.1", port=args.port, log_level="warning")


if __name__ == "__main__":
    main()
