"""The scripted Messages API answers as the real one: SSE events, JSON, errors, other paths."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from typing import Any

import pytest
from dex_agents_testing.fake_anthropic import (
    FakeMessagesServer,
    MessagesRequest,
    ScriptedReply,
    text_reply,
    tool_use_reply,
)


def _post(url: str, body: dict[str, Any]) -> tuple[str, bytes]:
    request = urllib.request.Request(
        url, data=json.dumps(body).encode(), headers={"Content-Type": "application/json"}
    )
    with urllib.request.urlopen(request, timeout=10) as response:
        return response.headers["Content-Type"], response.read()


def _respond(request: MessagesRequest) -> ScriptedReply:
    if request.tool_results():
        return text_reply("done", input_tokens=7, output_tokens=3)
    if request.user_texts() == ["fail"]:
        return ScriptedReply(error_status=500, error_message="boom", error_type="api_error")
    return tool_use_reply(("t1", "lookup", {"q": "x"}), text="looking")


def test_streamed_reply_has_the_api_event_sequence() -> None:
    with FakeMessagesServer(_respond) as server:
        kind, raw = _post(
            f"{server.base_url}/v1/messages?beta=true",
            {"model": "m", "stream": True, "messages": [{"role": "user", "content": "hi"}]},
        )
    assert kind == "text/event-stream"
    events = [
        json.loads(line[len("data: ") :])
        for line in raw.decode().splitlines()
        if line.startswith("data: ")
    ]
    assert [e["type"] for e in events] == [
        "message_start",
        "ping",
        "content_block_start",
        "content_block_delta",
        "content_block_stop",
        "content_block_start",
        "content_block_delta",
        "content_block_stop",
        "message_delta",
        "message_stop",
    ]
    assert events[3]["delta"] == {"type": "text_delta", "text": "looking"}
    assert events[5]["content_block"]["name"] == "lookup"
    assert json.loads(events[6]["delta"]["partial_json"]) == {"q": "x"}
    assert events[8]["delta"]["stop_reason"] == "tool_use"
    assert server.requests[0].user_texts() == ["hi"]


def test_plain_reply_reads_tool_results_and_reports_usage() -> None:
    messages = [
        {"role": "user", "content": [{"type": "text", "text": "hi"}]},
        {
            "role": "assistant",
            "content": [{"type": "tool_use", "id": "t1", "name": "lookup", "input": {}}],
        },
        {
            "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "42"}],
        },
    ]
    with FakeMessagesServer(_respond) as server:
        _, raw = _post(f"{server.base_url}/v1/messages", {"model": "m", "messages": messages})
    message = json.loads(raw)
    assert message["content"] == [{"type": "text", "text": "done"}]
    assert message["stop_reason"] == "end_turn"
    assert message["usage"] == {"input_tokens": 7, "output_tokens": 3}
    assert server.requests[0].tool_results() == [("t1", "42", False)]
    assert server.requests[0].tool_uses() == [("t1", "lookup", {})]


def test_errors_and_other_paths() -> None:
    with FakeMessagesServer(_respond) as server:
        with pytest.raises(urllib.error.HTTPError) as failed:
            _post(
                f"{server.base_url}/v1/messages",
                {"messages": [{"role": "user", "content": "fail"}]},
            )
        assert failed.value.code == 500
        assert json.loads(failed.value.read())["error"] == {"type": "api_error", "message": "boom"}
        with pytest.raises(urllib.error.HTTPError) as missing:
            _post(f"{server.base_url}/v1/other", {})
        assert missing.value.code == 404
        assert server.other_paths == ["POST /v1/other"]
