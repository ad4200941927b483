"""The AI SDK UI message stream of dex_agents.http over dexlite, Worker processes and
uvicorn on loopback: approvals, reconnects, a Worker SIGKILLed mid-RunModel, tokens."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx2
from dex_agents.http import HttpLimits, UiToken
from dex_agents_testing import DexliteProcess, wait_until
from helpers import Harness
from http_support import fold_message, serving, ui_chunks

FLOW = "http_flows:flow"
LIMITS = HttpLimits(poll_seconds=1, idle_timeout_seconds=30)
Chunks = list[tuple[dict[str, Any], str | None]]


def _user(text: str) -> dict[str, Any]:
    return {
        "id": "chat",
        "trigger": "submit-message",
        "messages": [{"id": "u1", "role": "user", "parts": [{"type": "text", "text": text}]}],
    }


@contextmanager
def _post(base: str, session: str, body: object) -> Iterator[httpx2.Response]:
    with httpx2.stream(
        "POST", f"{base}/sessions/{session}/ui-stream", json=body, timeout=60
    ) as response:
        yield response


def _get(base: str, session: str, token: str | None = None, *, exact: bool = False) -> Chunks:
    headers = {"Last-Event-ID": token} if token else {}
    query = "?exact=1" if exact else ""
    url = f"{base}/sessions/{session}/ui-stream{query}"
    with httpx2.stream("GET", url, headers=headers, timeout=60) as response:
        assert response.status_code == 200, response.read()
        return list(ui_chunks(response))


def _types(chunks: Chunks) -> list[str]:
    return [chunk["type"] for chunk, _ in chunks]


def _message(chunks: Chunks) -> dict[str, Any]:
    return fold_message([chunk for chunk, _ in chunks])


def test_approval_through_tool_approval_response(factory_harness: Callable[..., Harness]) -> None:
    h = factory_harness(FLOW)
    session = h.start()
    with serving(h.client, LIMITS) as served:
        base = served.base_url
        with _post(base, session, _user("approve:1")) as response:
            assert response.headers["x-vercel-ai-ui-message-stream"] == "v1"
            first = list(ui_chunks(response))
        assert _types(first) == [
            "start",
            "start-step",
            "message-metadata",
            "tool-input-start",
            "tool-input-available",
            "tool-approval-request",
            "finish-step",
            "finish",
        ]
        assert first[0][0]["messageId"] == "msg_turn-1"
        assert first[4][0]["input"] == {"target": "prod"}
        assert first[4][0]["dynamic"] is True
        assert first[5][0] == {
            "type": "tool-approval-request",
            "approvalId": "call-1",
            "toolCallId": "call-1",
        }
        assert first[-1][0]["finishReason"] == "tool-calls"
        answer = {"type": "tool-approval-response", "approvalId": "call-1", "approved": True}
        with _post(base, session, answer) as response:
            assert response.status_code == 200
            second = list(ui_chunks(response))
        # This browser sent the answer, so no tool-approval-response comes back.
        assert _types(second) == [
            "start",
            "tool-output-available",
            "start-step",
            "text-start",
            "text-delta",
            "message-metadata",
            "text-end",
            "finish-step",
            "finish",
        ]
        assert second[0][0]["messageId"] == "msg_turn-1"
        assert second[1][0]["output"] == "deployed to prod"
        assert second[-1][0]["finishReason"] == "stop"
        # useChat's addToolApprovalResponse puts the answer into the part itself.
        message = _message([*first, (answer, None), *second])
        tool_part = message["parts"][1]
        assert tool_part["state"] == "output-available"
        assert tool_part["approval"] == {"id": "call-1", "approved": True}
        assert [p["type"] for p in message["parts"]] == [
            "step-start",
            "dynamic-tool",
            "step-start",
            "text",
        ]
        assert message["parts"][3]["text"] == "deployed"
        assert sorted(message["metadata"]["usage"]) == ["RunModel-1", "RunModel-2"]
        # A reconnect with the last token replays the whole turn into the same message.
        assert _message(_get(base, session, second[-1][1])) == message
        # The interrupt is no longer pending.
        with _post(base, session, answer) as response:
            assert response.status_code == 409
            assert "no active turn" in response.read().decode()


def test_rejection_through_use_chat_approval_parts(
    factory_harness: Callable[..., Harness],
) -> None:
    h = factory_harness(FLOW)
    session = h.start()
    with serving(h.client, LIMITS) as served:
        base = served.base_url
        with _post(base, session, _user("approve:2")) as response:
            first = list(ui_chunks(response))
        part = fold_message([c for c, _ in first])["parts"][1]
        part["state"] = "approval-responded"
        part["approval"] = {"id": "call-2", "approved": False, "reason": "not today"}
        body = {
            "id": "chat",
            "trigger": "submit-message",
            "messages": [
                {"id": "msg_turn-1", "role": "assistant", "parts": [{"type": "step-start"}, part]}
            ],
        }
        with _post(base, session, body) as response:
            second = list(ui_chunks(response))
        assert second[1][0] == {"type": "tool-output-denied", "toolCallId": "call-2"}
        assert "tool-approval-response" not in _types(second)
        assert second[-1][0]["finishReason"] == "stop"
        assert _message(first + second)["parts"][1]["state"] == "output-denied"


def test_reconnect_from_every_token(factory_harness: Callable[..., Harness]) -> None:
    h = factory_harness(FLOW)
    session = h.start()
    with serving(h.client, LIMITS) as served:
        base = served.base_url
        with _post(base, session, _user("tool:1")) as response:
            whole = list(ui_chunks(response))
        assert "tool-output-available" in _types(whole)
        message = _message(whole)
        assert [p["type"] for p in message["parts"]] == [
            "step-start",
            "dynamic-tool",
            "step-start",
            "text",
        ]
        for index, (_, token) in enumerate(whole):
            assert token is not None
            assert _get(base, session, token) == whole  # the default replays the turn
            assert _get(base, session, token, exact=True) == whole[index + 1 :]


def test_worker_killed_mid_run_model_resets_the_step(
    private_dexlite: DexliteProcess, tmp_root: Path, tmp_path: Path
) -> None:
    h = Harness.create_from_factory(private_dexlite, tmp_root, FLOW, {"gate_dir": str(tmp_path)})
    try:
        session = h.start()
        with (
            serving(h.client, LIMITS) as served,
            _post(served.base_url, session, _user("kill:g1")) as response,
        ):
            chunks: Chunks = []
            stream = ui_chunks(response)
            for item in stream:
                chunks.append(item)
                if item[0].get("delta") == "answer ":
                    break
            wait_until(
                lambda: (tmp_path / "g1.streamed").exists() or None, timeout=30, what="marker"
            )
            h.restart_worker()
            chunks.extend(stream)
        types = _types(chunks)
        assert types.count("reset-step") == 1
        assert types.index("reset-step") > types.index("text-delta")
        assert chunks[-1][0] == {"type": "finish", "finishReason": "stop"}
        message = _message(chunks)
        assert [p["type"] for p in message["parts"]] == ["step-start", "text"]
        assert message["parts"][1]["text"] == "final answer"
        reset_at = types.index("reset-step")
        old_ids = {c["id"] for c, _ in chunks[:reset_at] if "id" in c}
        new_ids = {c["id"] for c, _ in chunks[reset_at:] if "id" in c}
        assert old_ids
        assert not old_ids & new_ids
        # The committed snapshot agrees, and a replay rebuilds the same message.
        assert h.snapshot(session).messages[-1].text == "final answer"
        with serving(h.client, LIMITS) as served:
            assert _message(_get(served.base_url, session, chunks[-1][1])) == message
    finally:
        h.close()


def test_bad_and_stale_ui_tokens_get_400(factory_harness: Callable[..., Harness]) -> None:
    h = factory_harness(FLOW)
    session = h.start("say hi")
    other = h.start("say there")
    h.wait_idle(session, 1)
    with serving(h.client, LIMITS) as served:
        base = served.base_url
        assert httpx2.get(f"{base}/sessions/{session}/ui-stream", timeout=30).status_code == 204
        token = UiToken(session_id=other, turn_id="turn-1", start="", position="1", chunk=0)
        cases = {
            "garbage": "does not start with 'u1.'",
            "u1.!!!": "is malformed",
            token.encode(): f"belongs to session {other!r}",
            UiToken(
                session_id=session, turn_id="turn-9", start="bad", position="1", chunk=0
            ).encode(): "position was refused and turn 'turn-9' has no retained events",
        }
        for text, error in cases.items():
            response = httpx2.get(
                f"{base}/sessions/{session}/ui-stream", headers={"Last-Event-ID": text}, timeout=30
            )
            assert response.status_code == 400, text
            assert error in response.json()["error"]
        # A position Dex refuses restarts the turn from its listed start.
        refused = UiToken(session_id=session, turn_id="turn-1", start="bad", position="1", chunk=0)
        replayed = _message(_get(base, session, refused.encode()))
        assert replayed["parts"][-1]["text"] == "ok hi"
        bad_bodies = [
            ({"messages": []}, "the body needs 'messages'"),
            ({"type": "tool-approval-response", "approved": True}, "'approvalId' is required"),
            (
                {"messages": [{"role": "system", "parts": []}]},
                "role 'system' is neither user nor assistant",
            ),
        ]
        for body, error in bad_bodies:
            with _post(base, session, body) as response:
                assert response.status_code == 400
                assert error in response.read().decode()
        assert served.open_streams == 0


def test_a_steered_turn_goes_on_in_its_message(
    private_dexlite: DexliteProcess, tmp_root: Path, tmp_path: Path
) -> None:
    h = Harness.create_from_factory(private_dexlite, tmp_root, FLOW, {"gate_dir": str(tmp_path)})
    try:
        session = h.start()
        with serving(h.client, LIMITS) as served:
            base = served.base_url
            with _post(base, session, _user("hold:s1")) as response:
                chunks: Chunks = []
                stream = ui_chunks(response)
                for item in stream:
                    chunks.append(item)
                    if item[0]["type"] == "tool-input-available":
                        break
                wait_until(
                    lambda: (tmp_path / "s1.started").exists() or None,
                    timeout=30,
                    what="the hold tool to start",
                )
                steered = httpx2.post(
                    f"{base}/sessions/{session}/steer", json={"text": "say going left"}, timeout=30
                )
                assert steered.json() == {"result": True}
                (tmp_path / "s1").touch()
                chunks.extend(stream)
            types = _types(chunks)
            assert types.count("start") == 1
            assert types.count("finish") == 1
            steering = [c for c, _ in chunks if c["type"] == "steering-message"]
            user = next(m for m in h.snapshot(session).messages if m.text == "say going left")
            assert user.turn_id == "turn-2"
            assert steering == [
                {
                    "type": "steering-message",
                    "id": f"user_{user.sequence}",
                    "parts": [{"type": "text", "text": "say going left"}],
                }
            ]
            # The steering message comes before the step of the model call that reads it.
            assert types[types.index("steering-message") + 1] == "start-step"
            assert chunks[-1][0] == {"type": "finish", "finishReason": "stop"}
            message = _message(chunks)
            assert message["id"] == "msg_turn-1"
            assert [p["type"] for p in message["parts"]] == [
                "step-start",
                "dynamic-tool",
                "steering-message",
                "step-start",
                "text",
            ]
            assert message["parts"][1]["output"] == "held"
            assert message["parts"][-1]["text"] == "ok going left"
            # A replay from any token, or of the steered turn, rebuilds the same message.
            assert _get(base, session, chunks[-1][1]) == chunks
            assert _get(base, session, chunks[3][1], exact=True) == chunks[4:]
            url = f"{base}/sessions/{session}/ui-stream?turn=turn-2"
            with httpx2.stream("GET", url, timeout=60) as response:
                assert list(ui_chunks(response)) == chunks
            snapshot = httpx2.get(f"{base}/sessions/{session}/snapshot", timeout=30).json()
            assert snapshot["steered_turns"] == ["turn-2"]
    finally:
        h.close()


def _turn_events(h: Harness, session: str, turn_id: str) -> int:
    page = h.client.client.list_stream_messages(session, h.client.flow.events, 1000)
    return sum(1 for m in page.messages if m.value.turn_id == turn_id)


def test_a_turn_whose_events_were_trimmed_is_rebuilt_from_stored_messages(
    factory_harness: Callable[..., Harness],
) -> None:
    h = factory_harness(FLOW, {"events_capacity_bytes": 4000})
    session = h.start()
    with serving(h.client, LIMITS) as served:
        base = served.base_url
        with _post(base, session, _user("tool:1")) as response:
            live = list(ui_chunks(response))
        assert live[-1][0] == {"type": "finish", "finishReason": "stop"}
        for n in range(2, 12):  # later turns push turn-1's events out of the Stream
            if _turn_events(h, session, "turn-1") == 0:
                break
            with _post(base, session, _user(f"say turn {n} of many words")) as response:
                assert list(ui_chunks(response))[-1][0]["type"] == "finish"
        assert _turn_events(h, session, "turn-1") == 0
        rebuilt = _get(base, session, live[-1][1])
        assert _types(rebuilt) == [
            "start",
            "start-step",
            "tool-input-start",
            "tool-input-available",
            "finish-step",
            "tool-output-available",
            "start-step",
            "text-start",
            "text-delta",
            "text-end",
            "finish-step",
            "finish",
        ]
        assert rebuilt[-1][0] == {"type": "finish", "finishReason": "stop"}
        before, after = _message(live), _message(rebuilt)
        assert after["id"] == before["id"] == "msg_turn-1"
        assert after["parts"] == before["parts"]
        # The same from ?turn=, from a token of the rebuilt chunks, exact or not.
        url = f"{base}/sessions/{session}/ui-stream?turn=turn-1"
        with httpx2.stream("GET", url, timeout=60) as response:
            assert list(ui_chunks(response)) == rebuilt
        assert _get(base, session, rebuilt[3][1]) == rebuilt
        assert _get(base, session, rebuilt[3][1], exact=True) == rebuilt[4:]
        # A live token cannot be placed among rebuilt chunks: exact replays them all.
        assert _get(base, session, live[2][1], exact=True) == rebuilt
        missing = httpx2.get(f"{base}/sessions/{session}/ui-stream?turn=turn-99", timeout=30)
        assert missing.status_code == 400
        assert "turn 'turn-99' has no retained events and no stored messages" in missing.text
        assert served.open_streams == 0


def test_an_approval_resolved_elsewhere_streams_its_tool_approval_response(
    factory_harness: Callable[..., Harness],
) -> None:
    h = factory_harness(FLOW)
    session = h.start()
    with serving(h.client, LIMITS) as served:
        base = served.base_url
        with _post(base, session, _user("approve:7")) as response:
            first = list(ui_chunks(response))
        assert first[-1][0]["finishReason"] == "tool-calls"
        # Another tab, or the RPC, answers; this browser reconnects to the turn.
        resolved = httpx2.post(
            f"{base}/sessions/{session}/resolve",
            json={"interrupt_id": "call-7", "approved": True},
            timeout=30,
        )
        assert resolved.json() == {"result": True}
        replay = _get(base, session, first[-1][1])
        types = _types(replay)
        assert types.index("tool-approval-request") < types.index("tool-approval-response")
        assert replay[types.index("tool-approval-response")][0] == {
            "type": "tool-approval-response",
            "approvalId": "call-7",
            "approved": True,
        }
        message = _message(replay)
        assert message["parts"][1]["state"] == "output-available"
        assert message["parts"][1]["approval"] == {"id": "call-7", "approved": True}
        assert message["parts"][-1]["text"] == "deployed"
