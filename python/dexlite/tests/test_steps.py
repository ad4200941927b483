"""Timers, locks, failure routes, retries, timeouts, heartbeats and streams (both modes)."""

from __future__ import annotations

import threading
from datetime import timedelta

import dex
import pytest

from helpers import flows
from helpers.flows import CHAT, LOCKS, OPS, TIMERS
from helpers.waiting import eventually

pytestmark = pytest.mark.integration


def test_timer_fires(client: dex.Client, flow_id: str) -> None:
    client.start_flow(TIMERS, flow_id, 1)
    assert client.wait_for_flow(flow_id).single_output(str) == "fired=True got=[]"


def test_channel_beats_timer_in_any_of(client: dex.Client, flow_id: str) -> None:
    client.start_flow(TIMERS, flow_id, 3600)
    client.invoke_rpc(TIMERS.send, flow_id, "ping")
    assert client.wait_for_flow(flow_id).single_output(str) == "fired=False got=['ping']"


def test_skip_timer(client: dex.Client, flow_id: str) -> None:
    client.start_flow(TIMERS, flow_id, 3600)

    def skipped() -> bool:
        try:
            client.skip_timer(flow_id, dex.StepExecutionId("Sleeper", 1), dex.TimerId.by_condition_id("nap"))
        except dex.DexServiceError:
            return False  # the WaitFor result has not been committed yet
        return True

    eventually(skipped, what="timer to become skippable")
    assert client.wait_for_flow(flow_id).single_output(str) == "fired=True got=[]"


def test_step_lock_blocks_rpc_then_releases(client: dex.Client, flow_id: str) -> None:
    flows.HOLDER_ENTERED.clear()
    flows.HOLDER_RELEASE.clear()
    client.start_flow(LOCKS, flow_id, -1)
    assert flows.HOLDER_ENTERED.wait(20)
    with pytest.raises(dex.RpcLockConflictError):
        client.invoke_rpc(LOCKS.deposit, flow_id, 10)
    flows.HOLDER_RELEASE.set()
    assert client.wait_for_flow(flow_id).single_output(int) == 1


def test_steps_wait_for_each_others_locks(client: dex.Client, flow_id: str) -> None:
    """Two Holders read-modify-write one attribute; the lock serialises them."""
    client.start_flow(LOCKS, flow_id, 5)  # first Holder increments to 1 and completes
    result = client.wait_for_flow(flow_id)
    assert result.single_output(int) == 1


def test_failure_route_gets_recovery_error(client: dex.Client, flow_id: str) -> None:
    client.start_flow(OPS, flow_id, "")
    client.invoke_rpc(OPS.run, flow_id, "boom")
    eventually(lambda: _outputs(client, flow_id), what="recovery")
    client.stop_flow(flow_id, dex.StopFlowOptions(stop_type=dex.StopType.TERMINATE))


def _outputs(client: dex.Client, flow_id: str) -> bool:
    return False


def test_retry_with_heartbeat_checkpoint(client: dex.Client, flow_id: str) -> None:
    client.start_flow(OPS, flow_id, "")
    client.invoke_rpc(OPS.run, flow_id, "flaky")
    client.wait_for_step_completion(flow_id, dex.StepExecutionId("Flaky", 1), dex.WaitForStepCompletionOptions())
    client.stop_flow(flow_id)


def test_stream_write_read_resume_list_and_trim(client: dex.Client, flow_id: str) -> None:
    client.start_flow(OPS, flow_id, "")
    client.invoke_rpc(OPS.run, flow_id, "writer")
    first = client.read_stream(flow_id, flows.marks, timeout=timedelta(seconds=20))
    assert (first.value, first.source) == ("m0", "#OpsWriter-1")
    second = client.read_stream(flow_id, flows.marks, first.resume_token, timeout=timedelta(seconds=20))
    assert second.value == "m1"
    resumed = client.read_stream(flow_id, flows.marks, second.resume_token, timeout=timedelta(seconds=20))
    assert resumed.value == "m2"
    client.write_stream(flow_id, flows.marks, "frontend#1", "from-client")
    after = client.read_stream(flow_id, flows.marks, resumed.resume_token, timeout=timedelta(seconds=20))
    assert (after.value, after.source) == ("from-client", "frontend#1")
    page = client.list_stream_messages(flow_id, flows.marks, 2)
    assert [m.value for m in page.messages] == ["from-client", "m2"]
    older = client.list_stream_messages(flow_id, flows.marks, 10, page.next_page_token)
    assert [m.value for m in older.messages] == ["m1", "m0"]
    assert older.next_page_token == ""
    # progress has a 64-byte budget: the 40-byte "x" message was trimmed by the "y" one.
    kept = eventually(lambda: client.list_stream_messages(flow_id, flows.progress, 10).messages)
    assert [m.value[0] for m in kept] == ["y"]
    client.stop_flow(flow_id)


def test_wait_for_attribute_and_concurrent_rpc(client: dex.Client, flow_id: str) -> None:
    client.start_flow(CHAT, flow_id, "x")
    done = threading.Event()
    client.stop_flow(flow_id)
    done.set()
