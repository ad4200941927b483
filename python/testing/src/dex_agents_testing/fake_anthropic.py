"""A scripted Anthropic Messages API on loopback, for harnesses that call the API themselves.

The Claude Agent SDK's bundled CLI makes its own model calls over HTTP, so no
in-process fake model can stand in for it; this server can. Point the CLI at
`base_url` (`ANTHROPIC_BASE_URL`, see `cli_environment`) and every
`POST /v1/messages` is answered by the `respond` callable from the request's
contents: a streamed reply as the real API sends it (`message_start`,
`content_block_start`/`_delta`/`_stop` with `text_delta`, `thinking_delta` and
`signature_delta`, or `input_json_delta`, `message_delta` with the stop reason and usage,
`message_stop`), or a plain JSON message when the request does not stream.
`respond` runs on the server's request thread and may block (a test gate).
"""

from __future__ import annotations

import json
import threading
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

__all__ = [
    "FakeMessagesServer",
    "MessagesRequest",
    "ScriptedReply",
    "ScriptedText",
    "ScriptedThinking",
    "ScriptedToolUse",
    "cli_environment",
    "text_reply",
    "tool_use_reply",
]


@dataclass(frozen=True)
class ScriptedText:
    text: str


@dataclass(frozen=True)
class ScriptedThinking:
    """Extended thinking, streamed as `thinking_delta` then its `signature_delta`."""

    thinking: str
    signature: str = "scripted-signature"


@dataclass(frozen=True)
class ScriptedToolUse:
    id: str
    name: str
    input: Mapping[str, object]


@dataclass(frozen=True)
class ScriptedReply:
    """One model response, or an API error when `error_status` is set."""

    blocks: Sequence[ScriptedThinking | ScriptedText | ScriptedToolUse] = ()
    stop_reason: str | None = None
    """None: `tool_use` when a block is a tool use, else `end_turn`."""
    input_tokens: int = 10
    output_tokens: int = 5
    error_status: int | None = None
    error_message: str = "scripted error"
    error_type: str = "invalid_request_error"

    @property
    def final_stop_reason(self) -> str:
        if self.stop_reason is not None:
            return self.stop_reason
        if any(isinstance(b, ScriptedToolUse) for b in self.blocks):
            return "tool_use"
        return "end_turn"


def text_reply(text: str, **kwargs: Any) -> ScriptedReply:
    return ScriptedReply(blocks=[ScriptedText(text)], **kwargs)


def tool_use_reply(*calls: tuple[str, str, Mapping[str, object]], text: str = "") -> ScriptedReply:
    """A response asking for tools, each call `(id, name, input)`, after an optional text."""
    blocks: list[ScriptedText | ScriptedToolUse] = [ScriptedText(text)] if text else []
    blocks.extend(ScriptedToolUse(id=i, name=n, input=args) for i, n, args in calls)
    return ScriptedReply(blocks=blocks)


def _content_blocks(content: object) -> list[dict[str, Any]]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    if isinstance(content, list):
        return [b for b in content if isinstance(b, dict)]
    return []


def _block_text(block: Mapping[str, Any]) -> str:
    content = block.get("content")
    if isinstance(content, str):
        return content
    return "".join(
        str(b.get("text", "")) for b in _content_blocks(content) if b.get("type") == "text"
    )


NO_RESPONSE = "No response requested."
"""What the Claude Code CLI puts as the model's answer to a user entry that got none
(tool results a client wrote into the transcript before resuming it)."""


@dataclass(frozen=True)
class MessagesRequest:
    """A `POST /v1/messages` body, with the views a scripted model answers from."""

    body: Mapping[str, Any]
    headers: Mapping[str, str] = field(default_factory=dict)
    """The HTTP headers, names lower-cased."""

    @property
    def retry_count(self) -> int:
        """The client's retry number of this request (the SDK's `x-stainless-retry-count`)."""
        return int(self.headers.get("x-stainless-retry-count") or 0)

    @property
    def model(self) -> str:
        return str(self.body.get("model", ""))

    @property
    def messages(self) -> list[Mapping[str, Any]]:
        messages = self.body.get("messages")
        return [m for m in messages if isinstance(m, dict)] if isinstance(messages, list) else []

    @property
    def tool_names(self) -> list[str]:
        tools = self.body.get("tools")
        if not isinstance(tools, list):
            return []
        return [str(t.get("name")) for t in tools if isinstance(t, dict)]

    def user_texts(self) -> list[str]:
        """The text blocks users sent, oldest first (tool results and reminders excluded)."""
        texts: list[str] = []
        for message in self.messages:
            if message.get("role") != "user":
                continue
            for block in _content_blocks(message.get("content")):
                text = block.get("text")
                if (
                    block.get("type") == "text"
                    and isinstance(text, str)
                    and not text.startswith("<system-reminder>")
                ):
                    texts.append(text)
        return texts

    def tool_uses(self) -> list[tuple[str, str, Mapping[str, Any]]]:
        """Every `(id, name, input)` the assistant asked for, oldest first."""
        uses: list[tuple[str, str, Mapping[str, Any]]] = []
        for message in self.messages:
            if message.get("role") != "assistant":
                continue
            for block in _content_blocks(message.get("content")):
                if block.get("type") == "tool_use":
                    uses.append((str(block.get("id")), str(block.get("name")), block["input"]))
        return uses

    def owes_answer(self) -> bool:
        """Whether tool results came back after the model's last response. The Claude Code
        CLI's stand-in answer to results a client wrote into the transcript itself
        ("No response requested.", see `NO_RESPONSE`) is no response of the model's."""
        messages = self.messages
        last = max(
            (
                i
                for i, m in enumerate(messages)
                if m.get("role") == "assistant"
                and [b.get("text") for b in _content_blocks(m.get("content"))] != [NO_RESPONSE]
            ),
            default=-1,
        )
        return bool(MessagesRequest({"messages": messages[last + 1 :]}).tool_results())

    def tool_results(self) -> list[tuple[str, str, bool]]:
        """Every `(tool_use_id, text, is_error)` sent back, oldest first."""
        results: list[tuple[str, str, bool]] = []
        for message in self.messages:
            if message.get("role") != "user":
                continue
            for block in _content_blocks(message.get("content")):
                if block.get("type") == "tool_result":
                    results.append(
                        (
                            str(block.get("tool_use_id")),
                            _block_text(block),
                            bool(block.get("is_error", False)),
                        )
                    )
        return results


def _sse(event: str, data: Mapping[str, object]) -> bytes:
    return f"event: {event}\ndata: {json.dumps(data)}\n\n".encode()


def _message(model: str, reply: ScriptedReply) -> dict[str, Any]:
    content: list[dict[str, Any]] = []
    for block in reply.blocks:
        if isinstance(block, ScriptedText):
            content.append({"type": "text", "text": block.text})
        elif isinstance(block, ScriptedThinking):
            content.append(
                {"type": "thinking", "thinking": block.thinking, "signature": block.signature}
            )
        else:
            content.append(
                {"type": "tool_use", "id": block.id, "name": block.name, "input": block.input}
            )
    return {
        "id": f"msg_{uuid.uuid4().hex[:24]}",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": content,
        "stop_reason": reply.final_stop_reason,
        "stop_sequence": None,
        "usage": {"input_tokens": reply.input_tokens, "output_tokens": reply.output_tokens},
    }


def _stream(model: str, reply: ScriptedReply) -> bytes:
    message = _message(model, reply)
    start = dict(message, content=[], stop_reason=None)
    start["usage"] = {"input_tokens": reply.input_tokens, "output_tokens": 1}
    out = [_sse("message_start", {"type": "message_start", "message": start})]
    out.append(_sse("ping", {"type": "ping"}))
    for index, block in enumerate(message["content"]):
        deltas: list[dict[str, Any]]
        if block["type"] == "text":
            opening: dict[str, Any] = {"type": "text", "text": ""}
            deltas = [{"type": "text_delta", "text": block["text"]}]
        elif block["type"] == "thinking":
            opening = {"type": "thinking", "thinking": "", "signature": ""}
            deltas = [
                {"type": "thinking_delta", "thinking": block["thinking"]},
                {"type": "signature_delta", "signature": block["signature"]},
            ]
        else:
            opening = {"type": "tool_use", "id": block["id"], "name": block["name"], "input": {}}
            deltas = [{"type": "input_json_delta", "partial_json": json.dumps(block["input"])}]
        out.append(
            _sse(
                "content_block_start",
                {"type": "content_block_start", "index": index, "content_block": opening},
            )
        )
        out.extend(
            _sse(
                "content_block_delta",
                {"type": "content_block_delta", "index": index, "delta": delta},
            )
            for delta in deltas
        )
        out.append(_sse("content_block_stop", {"type": "content_block_stop", "index": index}))
    out.append(
        _sse(
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": message["stop_reason"], "stop_sequence": None},
                "usage": {"output_tokens": reply.output_tokens},
            },
        )
    )
    out.append(_sse("message_stop", {"type": "message_stop"}))
    return b"".join(out)


@dataclass
class FakeMessagesServer:
    """The scripted API on 127.0.0.1; use as a context manager (or `start`/`stop`)."""

    respond: Callable[[MessagesRequest], ScriptedReply]
    requests: list[MessagesRequest] = field(default_factory=list)
    """Every messages request answered, in arrival order."""
    other_paths: list[str] = field(default_factory=list)
    """Requests for anything but the messages API (answered 404)."""
    _server: ThreadingHTTPServer | None = None
    _thread: threading.Thread | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def base_url(self) -> str:
        if self._server is None:
            raise RuntimeError("the fake Messages API is not started")
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    def start(self) -> FakeMessagesServer:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: object) -> None:
                return None

            def _send(self, status: int, content_type: str, body: bytes) -> None:
                self.send_response(status)
                self.send_header("Content-Type", content_type)
                self.send_header("Content-Length", str(len(body)))
                self.send_header("request-id", f"req_{uuid.uuid4().hex[:16]}")
                self.end_headers()
                self.wfile.write(body)

            def _not_found(self) -> None:
                with fake._lock:
                    fake.other_paths.append(f"{self.command} {self.path}")
                error = {"type": "error", "error": {"type": "not_found_error", "message": "no"}}
                self._send(404, "application/json", json.dumps(error).encode())

            def do_GET(self) -> None:
                self._not_found()

            def do_HEAD(self) -> None:
                self._not_found()

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length)
                path = self.path.split("?", 1)[0]
                if path == "/v1/messages/count_tokens":
                    self._send(200, "application/json", b'{"input_tokens": 10}')
                    return
                if path != "/v1/messages":
                    self._not_found()
                    return
                body = json.loads(raw or b"{}")
                headers = {k.lower(): v for k, v in self.headers.items()}
                request = MessagesRequest(body, headers)
                with fake._lock:
                    fake.requests.append(request)
                reply = fake.respond(request)
                if reply.error_status is not None:
                    error = {
                        "type": "error",
                        "error": {"type": reply.error_type, "message": reply.error_message},
                    }
                    self._send(reply.error_status, "application/json", json.dumps(error).encode())
                elif body.get("stream"):
                    self._send(200, "text/event-stream", _stream(request.model, reply))
                else:
                    message = _message(request.model, reply)
                    self._send(200, "application/json", json.dumps(message).encode())

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def __enter__(self) -> FakeMessagesServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def cli_environment(base_url: str) -> dict[str, str]:
    """What the Claude Code CLI needs to call only this server: its base URL, a
    placeholder key, and no telemetry, update checks or other traffic."""
    return {
        "ANTHROPIC_BASE_URL": base_url,
        "ANTHROPIC_API_KEY": "sk-fake-for-loopback",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "DISABLE_AUTOUPDATER": "1",
        "DISABLE_TELEMETRY": "1",
        "DISABLE_ERROR_REPORTING": "1",
    }
