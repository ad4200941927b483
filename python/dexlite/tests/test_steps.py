"""Timers, locks, failure routes, retries, timeouts, heartbeats and streams (both modes)."""

from __future__ import annotations

import threading
from datetime import timedelta

import dex
import pytest
from dexlite.testing import wait_until
from helpers import flows
from helpers.flows import CHAT, LOCKS, OPS, TIMERS

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
            client.skip_timer(
                flow_id, dex.StepExecutionId("Sleeper", 1), dex.TimerId.by_condition_id("nap")
            )
        except dex.DexServiceError:
            return False  # the WaitFor result has not been committed yet
        return True

    wait_until(skipped, what="timer to become skippable")
    assert client.wait_for_flow(flow_id).single_output(str) == "fired=True got=[]"


def test_step_lock_blocks_rpc_then_releases(client: dex.Client, flow_id: str) -> None:
    flows.HOLDER_ENTERED.clear()
    flows.HOLDER_RELEASE.clear()
    client.start_flow(LOCKS, flow_id, -1)
    assert flows.HOLDER_ENTERED.wait(20)
    with pytest.raises(dex.RpcLockConflictError):
        client.invoke_rpc(LOCKS.deposit, flow_id, 10)
    flows.HOLDER_RELEASE.set()
    result = client.wait_for_flow(flow_id)
    assert sorted(c.decode(int) for c in result.completions) == [1, 2]


def test_steps_wait_for_each_others_locks(client: dex.Client, flow_id: str) -> None:
    """Two Holders read-modify-write one attribute; the lock serialises them (no lost update)."""
    client.start_flow(LOCKS, flow_id, 5)
    result = client.wait_for_flow(flow_id)
    assert sorted(c.decode(int) for c in result.completions) == [1, 2]


@pytest.mark.parametrize(
    ("step", "expected"),
    [
        ("boom", "recovered boom: builtins.RuntimeError: boom boom"),
        ("flaky", "attempt=2 checkpoint=7"),
        ("slow", "recovered slow: StartToClose: activity timeout"),
        ("stall", "recovered stall: Heartbeat: heartbeat timeout"),
        ("beating", "beat attempt=1"),
        ("later", "later attempt=2"),  # retry_after (1 s) replaces the 60 s backoff
    ],
)
def test_failure_routes_retries_timeouts_heartbeats(
    client: dex.Client, flow_id: str, step: str, expected: str
) -> None:
    client.start_flow(OPS, flow_id, None)
    client.invoke_rpc(OPS.run, flow_id, step)
    assert client.wait_for_flow(flow_id).single_output(str) == expected


def test_force_fail_decision(client: dex.Client, flow_id: str) -> None:
    client.start_flow(OPS, flow_id, None)
    client.invoke_rpc(OPS.run, flow_id, "failer")
    result = client.wait_for_flow(flow_id)
    assert result.status == dex.FlowStatus.FAILED
    assert result.error_type == dex.FlowErrorType.STEP_DECISION_FAILED
    assert result.error_message == "gave up on failer"


def test_ignore_already_started_with_same_request_id(client: dex.Client, flow_id: str) -> None:
    options = dex.StartFlowOptions(request_id="req-1", ignore_already_started=True)
    first = client.start_flow(CHAT, flow_id, "x", options)
    assert client.start_flow(CHAT, flow_id, "x", options) == first
    with pytest.raises(dex.FlowAlreadyStartedError):
        client.start_flow(CHAT, flow_id, "x", dex.StartFlowOptions(request_id="req-2"))
    assert client.describe_flow(flow_id).run_id == first
    client.stop_flow(flow_id)


def test_wait_for_attribute_match(client: dex.Client, flow_id: str) -> None:
    client.start_flow(CHAT, flow_id, "x")
    options = dex.WaitForAttributeOptions(request_timeout=timedelta(seconds=30))
    match = dex.AttributeMatch.greater_than_or_equal(7)
    result: list[int] = []
    waiter = threading.Thread(
        target=lambda: result.append(
            client.wait_for_attribute_match(flow_id, flows.balance, match, options)
        )
    )
    waiter.start()
    client.invoke_rpc(CHAT.set_balance, flow_id, 3)
    client.invoke_rpc(CHAT.set_balance, flow_id, 8)
    waiter.join(30)
    assert result == [8]
    equal = dex.AttributeMatch.equal_to(8)
    assert client.wait_for_attribute_match(flow_id, flows.balance, equal, options) == 8
    client.stop_flow(flow_id)


def test_value_too_large_is_a_clear_error(client: dex.Client, flow_id: str) -> None:
    client.start_flow(CHAT, flow_id, "x")
    with pytest.raises(dex.DexServiceError, match="value too large: input"):
        client.invoke_rpc(CHAT.send, flow_id, "x" * (3 * 1024 * 1024))
    client.stop_flow(flow_id)


def test_update_flow_config_and_search(client: dex.Client, flow_id: str) -> None:
    client.start_flow(CHAT, flow_id, "x")
    client.update_flow_config(flow_id, dex.FlowConfig(step_durability=dex.StepDurability.ASYNC))
    page = client.search_flows("FlowType = 'Chat' AND ExecutionStatus = 'Running'", 1000)
    assert flow_id in [entry.flow_id for entry in page.flows]
    client.invoke_rpc(CHAT.send, flow_id, "y")
    assert client.wait_for_flow(flow_id).single_output(str) == "x:y"
    with pytest.raises(dex.FlowNotActiveOrNotFoundError):
        client.update_flow_config(flow_id, dex.FlowConfig())


def test_stream_write_read_resume_list_and_trim(client: dex.Client, flow_id: str) -> None:
    client.start_flow(OPS, flow_id, None)
    client.invoke_rpc(OPS.run, flow_id, "writer")
    first = client.read_stream(flow_id, flows.marks, timeout=timedelta(seconds=20))
    assert (first.value, first.source) == ("m0", "#OpsWriter-1")
    second = client.read_stream(
        flow_id, flows.marks, first.resume_token, timeout=timedelta(seconds=20)
    )
    assert second.value == "m1"
    resumed = client.read_stream(
        flow_id, flows.marks, second.resume_token, timeout=timedelta(seconds=20)
    )
    assert resumed.value == "m2"
    client.write_stream(flow_id, flows.marks, "frontend#1", "from-client")
    after = client.read_stream(
        flow_id, flows.marks, resumed.resume_token, timeout=timedelta(seconds=20)
    )
    assert (after.value, after.source) == ("from-client", "frontend#1")
    page = client.list_stream_messages(flow_id, flows.marks, 2)
    assert [m.value for m in page.messages] == ["from-client", "m2"]
    older = client.list_stream_messages(flow_id, flows.marks, 10, page.next_page_token)
    assert [m.value for m in older.messages] == ["m1", "m0"]
    assert older.next_page_token == ""
    # progress has a 64-byte budget: the 40-byte "x" message was trimmed by the "y" one.
    # Both were written before the Step's result, so they are in once the flow is done.
    assert client.wait_for_flow(flow_id).single_output(str) == "writer"
    kept = client.list_stream_messages(flow_id, flows.progress, 10).messages
    assert [m.value[0] for m in kept] == ["y"]


def test_stream_trimming_keeps_a_steady_newest_window(client: dex.Client, flow_id: str) -> None:
    # Equal-sized writes into the 64-byte "progress" stream: once it is full, every
    # append trims exactly as much as it adds, so the kept count never drifts.
    kept_counts = []
    for n in range(30):
        client.write_stream(flow_id, flows.progress, "bench#1", f"w{n:02d}" * 3)
        kept = client.list_stream_messages(flow_id, flows.progress, 100).messages
        assert kept[0].value == f"w{n:02d}" * 3  # newest first
        assert [m.value for m in kept] == [f"w{i:02d}" * 3 for i in range(n, n - len(kept), -1)]
        kept_counts.append(len(kept))
    steady = kept_counts[-1]
    assert 1 < steady < 30
    assert kept_counts[10:] == [steady] * 20
