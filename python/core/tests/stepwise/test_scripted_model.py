"""ScriptedModelClient: script order, recorded requests, errors, gates, a clear end."""

from __future__ import annotations

import asyncio

import pytest
from dex_agents.models import (
    ModelClient,
    ModelDelta,
    ModelRequest,
    ScriptedError,
    ScriptedModelClient,
    ScriptedResponse,
    ScriptExhaustedError,
    UserMessage,
    scripted_answer,
)
from stepwise_support import run


def request(text: str, deltas: list[ModelDelta] | None = None) -> ModelRequest:
    return ModelRequest(
        instructions=None,
        messages=[UserMessage(text=text)],
        on_delta=deltas.append if deltas is not None else None,
    )


def test_answers_in_order_and_records_requests() -> None:
    client = ScriptedModelClient([scripted_answer("one"), scripted_answer("two")])
    assert isinstance(client, ModelClient)
    first = run(client.complete(request("a")))
    second = run(client.complete(request("b")))
    assert (first.text, second.text) == ("one", "two")
    assert [r.messages for r in client.requests] == [
        [UserMessage(text="a")],
        [UserMessage(text="b")],
    ]
    assert client.remaining == 0


def test_requests_can_go_unrecorded() -> None:
    client = ScriptedModelClient([scripted_answer("one")], record_requests=False)
    assert run(client.complete(request("a"))).text == "one"
    assert client.requests == []
    assert client.remaining == 0


def test_running_out_of_script_is_a_clear_error() -> None:
    client = ScriptedModelClient([scripted_answer("only")])
    run(client.complete(request("a")))
    with pytest.raises(ScriptExhaustedError, match="no entry for model call #2: the script has 1"):
        run(client.complete(request("b")))


def test_a_scripted_error_is_raised() -> None:
    client = ScriptedModelClient([ScriptedError(error=TimeoutError("slow")), scripted_answer("ok")])
    with pytest.raises(TimeoutError, match="slow"):
        run(client.complete(request("a")))
    assert run(client.complete(request("a"))).text == "ok"


def test_text_streams_word_by_word_and_joins_back() -> None:
    deltas: list[ModelDelta] = []
    client = ScriptedModelClient([scripted_answer("It is  sunny today", reasoning="Look.")])
    run(client.complete(request("a", deltas)))
    assert deltas[0] == ModelDelta(kind="reasoning", text="Look.")
    assert [d.text for d in deltas[1:]] == ["It ", "is ", " ", "sunny ", "today"]
    assert "".join(d.text for d in deltas[1:]) == "It is  sunny today"


def test_a_gate_holds_the_call_until_opened() -> None:
    async def scenario() -> list[str]:
        gate = asyncio.Event()
        client = ScriptedModelClient([ScriptedResponse(text="late", gate=gate.wait)])
        call = asyncio.ensure_future(client.complete(request("a")))
        await asyncio.sleep(0.01)
        states = ["done" if call.done() else "waiting"]
        gate.set()
        states.append((await call).text or "")
        return states

    assert run(scenario()) == ["waiting", "late"]
