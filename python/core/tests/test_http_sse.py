"""dex_agents.http over dexlite and a Worker process, served by uvicorn on loopback:
the plain SSE with resume tokens, the snapshot, the RPC endpoints and the stream bounds."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import threading
from collections.abc import Callable
from typing import Any

import httpx2
import pytest
from dex_agents.http import HttpLimits
from dex_agents_contracts import MessageRole
from dex_agents_testing import child_env, free_port, wait_until
from helpers import Harness
from http_flows import CLI_FLOW_TYPE
from http_support import serving, sse_events

FLOW = "http_flows:flow"


Received = list[tuple[str | None, dict[str, Any]]]


def _read(
    base: str,
    session: str,
    after: str | None,
    until: Callable[[dict[str, Any]], bool],
    http: httpx2.Client | None = None,
) -> Received:
    headers = {"Last-Event-ID": after} if after else {}
    got: Received = []
    url = f"{base}/sessions/{session}/events"
    with (http or httpx2).stream("GET", url, headers=headers, timeout=30) as response:
        assert response.status_code == 200, response.read()
        assert response.headers["content-type"].startswith("text/event-stream")
        for event in sse_events(response):
            value = json.loads(event.data)
            got.append((event.id, value))
            if until(value):
                break
    return got


def _turn_end(value: dict[str, Any]) -> bool:
    return bool(value["type"] == "turn_completed")


def test_resume_from_every_id_gives_the_same_events(
    factory_harness: Callable[..., Harness],
) -> None:
    h = factory_harness(FLOW)
    session = h.start("tool:1")
    h.wait_idle(session, 1)
    with serving(h.client) as served:
        whole = _read(served.base_url, session, None, _turn_end)
        direct = [
            (token, event.type)
            for event, token in h.client.follow_events(
                session, until=lambda e: e.type == "turn_completed", deadline_seconds=30
            )
        ]
        assert [(i, v["type"]) for i, v in whole] == direct
        assert len(whole) >= 8
        for index, (token, _) in enumerate(whole[:-1]):
            assert _read(served.base_url, session, token, _turn_end) == whole[index + 1 :]


def test_after_query_resumes_like_last_event_id(factory_harness: Callable[..., Harness]) -> None:
    h = factory_harness(FLOW)
    session = h.start("say hi")
    h.wait_idle(session, 1)
    with serving(h.client) as served:
        whole = _read(served.base_url, session, None, _turn_end)
        token = whole[1][0]
        with httpx2.stream(
            "GET", f"{served.base_url}/sessions/{session}/events?after={token}", timeout=30
        ) as response:
            first = next(sse_events(response))
        assert first.id == whole[2][0]


def test_bad_tokens_get_400_before_the_stream(factory_harness: Callable[..., Harness]) -> None:
    h = factory_harness(FLOW)
    session = h.start("say hi")
    h.wait_idle(session, 1)
    with serving(h.client) as served:
        for bad in ("garbage", "1x", "7.5"):
            response = httpx2.get(
                f"{served.base_url}/sessions/{session}/events",
                headers={"Last-Event-ID": bad},
                timeout=30,
            )
            assert response.status_code == 400
            assert response.headers["content-type"] == "application/json"
            assert f"resume token {bad!r} was refused" in response.json()["error"]
        assert served.open_streams == 0


def test_snapshot_leaves_out_step_fields_and_names_the_token(
    factory_harness: Callable[..., Harness],
) -> None:
    h = factory_harness(FLOW)
    session = h.start("approve:1")
    h.client.wait_for_interrupt(session, "call-1")
    with serving(h.client) as served:
        body = httpx2.get(f"{served.base_url}/sessions/{session}/snapshot", timeout=30).json()
        snapshot = body["snapshot"]
        assert snapshot["messages"]
        assert snapshot["tool_calls"]
        for message in snapshot["messages"]:
            assert "framework_item" not in message
        (record,) = snapshot["tool_calls"]
        for name in (
            "tool_source_reference",
            "trace_context",
            "input_continuation",
            "input_answers",
            "task_answer_pending",
        ):
            assert name not in record
        assert record["arguments"] == '{"target":"prod"}'
        assert snapshot["pending_interrupts"][0]["interrupt_id"] == "call-1"
        # Events from the token are the ones after the snapshot's.
        assert h.client.resolve_interrupt(session, "call-1", approved=True)
        later = _read(served.base_url, session, body["resume_token"], _turn_end)
        assert later[0][1]["type"] == "interrupt_resolved"
        missing = httpx2.get(f"{served.base_url}/sessions/nobody/snapshot", timeout=30)
        assert missing.status_code == 404
        assert "'nobody' was not found" in missing.json()["error"]


def _post(base: str, session: str, name: str, body: object) -> httpx2.Response:
    content = body if isinstance(body, bytes) else json.dumps(body).encode()
    return httpx2.post(f"{base}/sessions/{session}/{name}", content=content, timeout=30)


def test_rpc_endpoints_answer_true_false_and_name_bad_fields(
    factory_harness: Callable[..., Harness],
) -> None:
    h = factory_harness(FLOW)
    session = h.start("approve:1")
    h.client.wait_for_interrupt(session, "call-1")
    with serving(h.client) as served:
        base = served.base_url
        ok = [
            ("resolve", {"interrupt_id": "nope", "approved": True}, False),
            ("answer", {"interrupt_id": "nope", "answer": "x"}, False),
            ("settings", {"session_settings": {"model": "m"}}, True),
            ("send", {"text": "   "}, False),
            ("cancel", {}, True),
            ("steer", {"text": "say steered"}, True),
        ]
        for name, body, expected in ok:
            response = _post(base, session, name, body)
            assert response.status_code == 200, (name, response.text)
            assert response.json() == {"result": expected}, name
        assert _post(base, session, "send", {"text": "say again"}).json() == {"result": True}
        bad = [
            ("send", {}, "send: field 'text' is required"),
            ("send", {"text": 3}, "send: field 'text' must be a string, got a number"),
            ("send", {"text": "x", "extra": 1}, "send: unknown field 'extra'"),
            ("steer", {"text": "a", "message_id": "b"}, "give exactly one of"),
            ("resolve", {"interrupt_id": "x"}, "resolve: field 'approved' is required"),
            ("resolve", {"interrupt_id": "x", "approved": "yes"}, "must be true or false"),
            ("answer", {"interrupt_id": "x"}, "answer: field 'answer' is required"),
            ("settings", {"session_settings": [1]}, "must be a JSON object"),
            ("cancel", {"turn_id": 5}, "cancel: field 'turn_id' must be a string or null"),
            ("send", b"{not json", "the request body is not JSON"),
            ("send", b"[1]", "must be a JSON object, got list"),
        ]
        for name, body, text in bad:
            response = _post(base, session, name, body)
            assert response.status_code == 400, (name, body)
            assert text in response.json()["error"], (name, response.json())
        missing = _post(base, "nobody", "send", {"text": "hi"})
        assert missing.status_code == 404


def test_rpc_endpoints_apply_a_client_request_id_once(
    factory_harness: Callable[..., Harness],
) -> None:
    h = factory_harness(FLOW)
    session = h.start("say hi")
    h.wait_idle(session, 1)
    with serving(h.client) as served:
        base = served.base_url
        once = {"text": "say once", "client_request_id": "http-send-1"}
        for _ in range(2):
            response = _post(base, session, "send", once)
            assert (response.status_code, response.json()) == (200, {"result": True})
        reused = _post(
            base, session, "send", {"text": "say other", "client_request_id": "http-send-1"}
        )
        assert reused.status_code == 409
        assert (
            "client request ID 'http-send-1' already answered a different request"
            in (reused.json()["error"])
        )
        malformed = _post(base, session, "cancel", {"client_request_id": "a/b"})
        assert malformed.status_code == 400
        assert "cancel: `client_request_id` 'a/b' may hold only" in malformed.json()["error"]
    done = h.wait_idle(session, 2)
    assert [m.text for m in done.messages if m.role is MessageRole.USER] == ["say hi", "say once"]


def test_max_streams_gets_503_and_frees_the_slot(factory_harness: Callable[..., Harness]) -> None:
    h = factory_harness(FLOW)
    session = h.start("say hi")
    h.wait_idle(session, 1)
    limits = HttpLimits(max_streams=2, poll_seconds=1)
    url = f"/sessions/{session}/events"
    with serving(h.client, limits) as served, httpx2.Client(base_url=served.base_url) as http:
        with http.stream("GET", url, timeout=30) as one, http.stream("GET", url, timeout=30) as two:
            assert one.status_code == two.status_code == 200
            refused = http.get(url, timeout=30)
            assert refused.status_code == 503
            assert refused.headers["retry-after"] == "1"
            assert "too many open streams (the limit is 2)" in refused.json()["error"]
            next(sse_events(one))
        wait_until(lambda: served.open_streams == 0 or None, timeout=30, what="slots freed")
        with http.stream("GET", url, timeout=30) as again:
            assert again.status_code == 200


def test_a_reader_that_stops_reading_stops_the_reads(
    factory_harness: Callable[..., Harness], monkeypatch: pytest.MonkeyPatch
) -> None:
    words = 600
    h = factory_harness(FLOW)
    session = h.start("say " + " ".join(["w" * 1000] * words))
    h.wait_idle(session, 1)
    reads = [0]
    original = h.client.read_event

    def counted(*args: Any, **kwargs: Any) -> Any:
        reads[0] += 1
        return original(*args, **kwargs)

    monkeypatch.setattr(h.client, "read_event", counted)
    limits = HttpLimits(queue_size=4, send_timeout_seconds=1.0, poll_seconds=1)
    with serving(h.client, limits, send_buffer=4096) as served:
        host, port = served.base_url.removeprefix("http://").split(":")
        stalled = socket.create_connection((host, int(port)))
        stalled.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        stalled.sendall(f"GET /sessions/{session}/events HTTP/1.1\r\nHost: x\r\n\r\n".encode())
        wait_until(lambda: served.open_streams == 1 or None, timeout=30, what="the stream")
        # The browser reads nothing: the send times out and the stream closes.
        wait_until(lambda: served.open_streams == 0 or None, timeout=60, what="send timeout")
        stalled.close()
    # ~600 KB of events; what was read is bounded by the queue and the socket buffers.
    assert reads[0] < words // 3, reads[0]


def _rss_bytes() -> int:
    with open("/proc/self/status", encoding="ascii") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    raise AssertionError("no VmRSS in /proc/self/status")


def test_200_clients_on_one_session_and_50_sessions_stay_bounded(
    factory_harness: Callable[..., Harness],
) -> None:
    """Every client reads a whole turn; the process grows by less than 256 MiB.

    The bound is loose on purpose: it covers the 250 client threads, their
    connections and the app's 276 reader threads in this process too. What it
    rules out is buffering per event or per stream beyond the queue.
    """
    h = factory_harness(FLOW)
    busy = h.start("say " + " ".join(["word"] * 200))
    others = [h.start("say hi") for _ in range(50)]
    h.wait_idle(busy, 1)
    for session in others:
        h.wait_idle(session, 1)
    limits = HttpLimits(max_streams=260, poll_seconds=1)
    readers = [busy] * 200 + others
    counts: dict[int, int] = {}
    before = _rss_bytes()
    pool = httpx2.Limits(max_connections=len(readers), max_keepalive_connections=0)
    with serving(h.client, limits) as served, httpx2.Client(limits=pool) as http:

        def read(index: int) -> None:
            counts[index] = len(_read(served.base_url, readers[index], None, _turn_end, http))

        threads = [threading.Thread(target=read, args=(i,)) for i in range(len(readers))]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(180)
        peak = _rss_bytes()
    assert len(counts) == len(readers)
    assert {counts[i] for i in range(200)} == {counts[0]}
    assert counts[0] > 200
    assert peak - before < 256 * 1024 * 1024, (before, peak)


def test_dex_agents_serve_runs_the_app(factory_harness: Callable[..., Harness]) -> None:
    h = factory_harness(FLOW, {"flow_type": CLI_FLOW_TYPE})
    session = h.start("say served")
    h.wait_idle(session, 1)
    port = free_port()
    args = ["serve", "--dex", h.server.address, "--flow", "http_flows:cli_flow"]
    process = subprocess.Popen(
        [sys.executable, "-m", "dex_agents.http._cli", *args, "--port", str(port)],
        env=child_env(),
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stderr is not None
        assert process.stderr.readline().strip() == f"serving on http://127.0.0.1:{port}"

        def snapshot() -> httpx2.Response | None:
            try:
                return httpx2.get(f"http://127.0.0.1:{port}/sessions/{session}/snapshot")
            except httpx2.TransportError:
                return None

        response = wait_until(snapshot, timeout=30, what="dex-agents serve")
        assert response.status_code == 200
        assert response.json()["snapshot"]["messages"][-1]["text"] == "ok served"
    finally:
        process.terminate()
        process.wait(30)
    bad = subprocess.run(
        [sys.executable, "-m", "dex_agents.http._cli", *args[:3], "--flow", "nowhere"],
        env=child_env(),
        capture_output=True,
        text=True,
        check=False,
    )
    assert bad.returncode != 0
    assert "--flow 'nowhere' must be 'module:name'" in bad.stderr
