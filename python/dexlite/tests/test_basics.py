"""Core flows through the real SDK: channels, RPCs, fan-out, decisions (both worker modes)."""

from __future__ import annotations

import dex
import pytest

from helpers.flows import Chat, FanOut

pytestmark = pytest.mark.integration


def test_health_check(client: dex.Client) -> None:
    assert client.health_check()


def test_channel_wait_then_execute(client: dex.Client, flow_id: str) -> None:
    flow = Chat()
    client.start_flow(_flow(client, Chat), flow_id, "hello")
    assert client.invoke_rpc(flow.send, flow_id, "world") in (0, 1)
    result = client.wait_for_flow(flow_id)
    assert result.single_output(str) == "hello:world"


def _flow(client: dex.Client, kind: type[dex.Flow[object]]) -> dex.Flow[object]:
    from helpers.flows import FLOWS

    return next(f for f in FLOWS if isinstance(f, kind))
