"""Condition kinds, sibling cancellation, WaitFor PROCEED, hard deletes, flow timeouts, raw APIs."""

from __future__ import annotations

from datetime import timedelta

import dex
import grpc
import pytest
from dex.dexpb import dex_pb2 as pb
from dex.dexpb import dex_pb2_grpc
from dexlite.testing import DexliteProcess, wait_until
from helpers.flows import FAN_OUT, FEATURES, TIMERS, secret

pytestmark = pytest.mark.integration


def _stub(server: DexliteProcess) -> tuple[grpc.Channel, dex_pb2_grpc.FlowServiceStub]:
    channel = grpc.insecure_channel(server.address)
    return channel, dex_pb2_grpc.FlowServiceStub(channel)


def test_any_combination_of_channel_map_instances(client: dex.Client, flow_id: str) -> None:
    client.start_flow(FEATURES, flow_id, "c")
    assert client.invoke_rpc(FEATURES.tool, flow_id, "a") >= 0
    assert client.invoke_rpc(FEATURES.tool, flow_id, "b") >= 0
    assert client.wait_for_flow(flow_id).single_output(str) == "r-a+r-b timer=False"


def test_at_least_consumes_everything_pending(client: dex.Client, flow_id: str) -> None:
    client.start_flow(FEATURES, flow_id, "c")
    client.invoke_rpc(FEATURES.send, flow_id, ["1", "2", "3"])
    client.invoke_rpc(FEATURES.go, flow_id, "greedy")
    assert client.wait_for_flow(flow_id).single_output(str) == "1,2,3"


def test_message_ids_pending_messages_and_deletes(client: dex.Client, flow_id: str) -> None:
    client.start_flow(FEATURES, flow_id, "c")
    client.invoke_rpc(FEATURES.send, flow_id, ["1", "2", "3"])
    pending = client.invoke_rpc(FEATURES.pending, flow_id)
    ids = [entry.split("=")[0] for entry in pending]
    assert [entry.split("=")[1] for entry in pending] == ["1", "2", "3"]
    assert ids == sorted(ids)  # time-ordered UUIDv7 message IDs, FIFO
    assert client.invoke_rpc(FEATURES.drop, flow_id, ids[1]) is True
    assert [e.split("=")[1] for e in client.invoke_rpc(FEATURES.pending, flow_id)] == ["1", "3"]
    with pytest.raises(dex.ChannelMessageNotFoundError):
        client.invoke_rpc(FEATURES.drop, flow_id, ids[1])
    client.stop_flow(flow_id)


def test_sibling_cancellation_and_dead_ends_keep_flow_running(
    client: dex.Client, flow_id: str, dexlite_server: DexliteProcess
) -> None:
    client.start_flow(FEATURES, flow_id, "c")
    client.invoke_rpc(FEATURES.go, flow_id, "fork")
    options = dex.WaitForStepCompletionOptions()
    for number in (1, 2):
        client.wait_for_step_completion(flow_id, dex.StepExecutionId("Idle2", number), options)
    channel, stub = _stub(dexlite_server)
    with channel:

        def settled() -> pb.GetFlowStateResponse | None:
            state = stub.GetFlowState(pb.GetFlowStateRequest(flow_id=flow_id))
            return None if state.active_step_executions else state

        state = wait_until(settled, what="no active steps")
        assert (
            state.flow_config.worker_target.address or state.flow_config.worker_target.is_pull_mode
        )
    assert client.describe_flow(flow_id).status == dex.FlowStatus.RUNNING  # dead ends only
    client.stop_flow(flow_id)
    assert client.wait_for_flow(flow_id).status == dex.FlowStatus.CANCELED


def test_wait_for_failure_proceeds_to_execute(client: dex.Client, flow_id: str) -> None:
    client.start_flow(FEATURES, flow_id, "c")
    client.invoke_rpc(FEATURES.go, flow_id, "proceed")
    assert client.wait_for_flow(flow_id).single_output(str) == "proceed failed=True wait exploded"


def test_hard_delete_attribute(
    client: dex.Client, flow_id: str, dexlite_server: DexliteProcess
) -> None:
    options = dex.StartFlowOptions().with_attribute(secret, "k-123")
    client.start_flow(FEATURES, flow_id, "c", options)
    client.invoke_rpc(FEATURES.go, flow_id, "secret")
    assert client.wait_for_flow(flow_id).single_output(str) == "k-123"
    channel, stub = _stub(dexlite_server)
    with channel:
        attrs = stub.GetAttributes(pb.GetAttributesRequest(flow_id=flow_id, all_keys=True))
    assert [kv.key for kv in attrs.attributes] == []


def test_get_attributes_and_flow_state_include_map_instances(
    client: dex.Client, flow_id: str, dexlite_server: DexliteProcess
) -> None:
    client.start_flow(FAN_OUT, flow_id, 3)
    client.wait_for_flow(flow_id)
    channel, stub = _stub(dexlite_server)
    with channel:
        attrs = stub.GetAttributes(pb.GetAttributesRequest(flow_id=flow_id, all_keys=True))
        state = stub.GetFlowState(pb.GetFlowStateRequest(flow_id=flow_id))
    expected = ["notes/0", "notes/1", "notes/2"]
    assert [kv.key for kv in attrs.attributes] == expected
    assert [kv.key for kv in state.attributes] == expected


def test_force_complete_if_channels_empty(client: dex.Client, flow_id: str) -> None:
    client.start_flow(FEATURES, flow_id, "c")
    client.invoke_rpc(FEATURES.check_empty, flow_id, 2)
    result = client.wait_for_flow(flow_id)
    assert result.single_output(str) == "empty"


@pytest.mark.parametrize(
    ("policy", "status"),
    [
        (dex.FlowTimeoutPolicy.FAIL, dex.FlowStatus.FAILED),
        (dex.FlowTimeoutPolicy.CANCEL, dex.FlowStatus.CANCELED),
    ],
)
def test_flow_timeout_policies(
    client: dex.Client, flow_id: str, policy: dex.FlowTimeoutPolicy, status: dex.FlowStatus
) -> None:
    client.start_flow(
        TIMERS,
        flow_id,
        3600,
        dex.StartFlowOptions(timeout=timedelta(seconds=1), timeout_policy=policy),
    )
    result = client.wait_for_flow(flow_id)
    assert result.status == status
    if status == dex.FlowStatus.FAILED:
        assert result.error_type == dex.FlowErrorType.FLOW_TIMEOUT


def test_flow_timeout_handler(client: dex.Client, flow_id: str) -> None:
    client.start_flow(FEATURES, flow_id, "c", dex.StartFlowOptions(timeout=timedelta(seconds=1)))
    assert client.wait_for_flow(flow_id).single_output(str) == "timed out"


def test_raw_channel_api_history_and_long_polls(
    client: dex.Client, flow_id: str, dexlite_server: DexliteProcess
) -> None:
    client.start_flow(FEATURES, flow_id, "c")
    channel, stub = _stub(dexlite_server)
    with channel:
        run_id = stub.GetFlowSummary(
            pb.GetFlowSummaryRequest(flow_id=flow_id)
        ).flow_execution_id.run_id
        stub.PublishToChannel(
            pb.PublishToChannelRequest(
                flow_id=flow_id,
                messages=[
                    pb.ChannelMessage(channel_name="inbox", value=pb.Value(string_value="raw"))
                ],
            )
        )
        (message,) = stub.GetChannelMessages(
            pb.GetChannelMessagesRequest(flow_id=flow_id, channel_name="inbox")
        ).messages
        assert message.message_id
        assert message.value.string_value == "raw"
        stub.DeleteChannelMessage(
            pb.DeleteChannelMessageRequest(
                flow_id=flow_id,
                channel_name="inbox",
                message_id=message.message_id,
                request_id="r1",
            )
        )
        # A replay of the same request succeeds and deletes nothing more.
        stub.DeleteChannelMessage(
            pb.DeleteChannelMessageRequest(
                flow_id=flow_id,
                channel_name="inbox",
                message_id=message.message_id,
                request_id="r1",
            )
        )
        with pytest.raises(grpc.RpcError) as info:
            stub.DeleteChannelMessage(
                pb.DeleteChannelMessageRequest(
                    flow_id=flow_id,
                    channel_name="inbox",
                    message_id=message.message_id,
                    request_id="r2",
                )
            )
        assert info.value.code() == grpc.StatusCode.NOT_FOUND
        with pytest.raises(grpc.RpcError) as info:
            stub.DeleteChannelMessage(
                pb.DeleteChannelMessageRequest(
                    flow_id=flow_id, channel_name="inbox", message_id="other", request_id="r1"
                )
            )
        assert info.value.code() == grpc.StatusCode.INVALID_ARGUMENT
        assert (info.value.details() or "") == (
            f"request_id 'r1' of flow {flow_id!r} already answered another "
            "DeleteChannelMessage request"
        )
        events = stub.GetHistoryEvents(
            pb.GetHistoryEventsRequest(flow_id=flow_id, run_id=run_id)
        ).events
        kinds = [e.WhichOneof("payload") for e in events]
        assert kinds[0] == "flow_started_or_continued"
        assert "channel_external_publish" in kinds
        assert kinds.count("channel_external_delete") == 1
        assert [e.event_id for e in events] == list(range(1, len(events) + 1))
        waited = stub.WaitForHistoryEvent(
            pb.WaitForHistoryEventRequest(flow_id=flow_id, run_id=run_id, next_internal_event_id=1)
        )
        assert waited.event_available
        client.stop_flow(flow_id)
        closed = stub.GetHistoryEvents(
            pb.GetHistoryEventsRequest(flow_id=flow_id, run_id=run_id)
        ).events
        assert closed[-1].WhichOneof("payload") == "flow_closed"
