"""Core flows through the real SDK in both worker modes: channels, RPCs, fan-out, errors."""

from __future__ import annotations

from datetime import timedelta

import dex
import grpc
import pytest
from dex.dexpb import dex_pb2 as pb
from dex.dexpb import dex_pb2_grpc
from dexlite.testing import DexliteProcess
from helpers.flows import CHAT, FAN_OUT, LOCKS

pytestmark = pytest.mark.integration


def history(server: DexliteProcess, flow_id: str) -> list[pb.FlowHistoryEvent]:
    """Raw-stub history: the SDK has no history API (spec §10)."""
    with grpc.insecure_channel(server.address) as channel:
        stub = dex_pb2_grpc.FlowServiceStub(channel)
        summary = stub.GetFlowSummary(pb.GetFlowSummaryRequest(flow_id=flow_id))
        response = stub.GetHistoryEvents(
            pb.GetHistoryEventsRequest(flow_id=flow_id, run_id=summary.flow_execution_id.run_id)
        )
        return list(response.events)


def executed(events: list[pb.FlowHistoryEvent]) -> list[str]:
    return [
        e.step_execute_completed.context.step_type
        for e in events
        if e.WhichOneof("payload") == "step_execute_completed"
    ]


def test_health_check(client: dex.Client) -> None:
    assert client.health_check()


def test_channel_wait_then_execute(client: dex.Client, flow_id: str) -> None:
    client.start_flow(CHAT, flow_id, "hello")
    assert client.invoke_rpc(CHAT.send, flow_id, "world") in (0, 1)
    result = client.wait_for_flow(flow_id)
    assert result.status == dex.FlowStatus.COMPLETED
    assert result.single_output(str) == "hello:world"


def test_rpc_cancels_waiting_step_and_starts_another(
    client: dex.Client, flow_id: str, dexlite_server: DexliteProcess
) -> None:
    client.start_flow(CHAT, flow_id, "hello")
    assert client.invoke_rpc(CHAT.interrupt, flow_id, "interrupted") is True
    client.wait_for_step_completion(
        flow_id, dex.StepExecutionId("Waiter", 1), dex.WaitForStepCompletionOptions()
    )
    assert client.wait_for_flow(flow_id).single_output(str) == "interrupted"
    events = history(dexlite_server, flow_id)
    assert executed(events) == ["Finish"]
    finish = next(e for e in events if e.WhichOneof("payload") == "step_execute_completed")
    assert finish.step_execute_completed.context.from_step_execution_id == "__rpc/interrupt"


def test_go_to_many_fan_out_of_50(
    client: dex.Client, flow_id: str, dexlite_server: DexliteProcess
) -> None:
    client.start_flow(FAN_OUT, flow_id, 50)
    result = client.wait_for_flow(flow_id, timeout=None)
    assert sorted(c.decode(int) for c in result.completions) == list(range(50))
    shape = executed(history(dexlite_server, flow_id))
    assert shape[0] == "Fan"
    assert shape.count("Leaf") == 50


def test_transactional_rpc_message_not_found_aborts_everything(
    client: dex.Client, flow_id: str
) -> None:
    client.start_flow(CHAT, flow_id, "x")
    with pytest.raises(dex.ChannelMessageNotFoundError):
        client.invoke_rpc(CHAT.drop, flow_id, "no-such-id")
    assert client.invoke_rpc(CHAT.read_balance, flow_id) == 0  # the write was not applied
    client.stop_flow(flow_id)


def test_errors_map_to_sdk_exceptions(client: dex.Client, flow_id: str) -> None:
    with pytest.raises(dex.FlowNotFoundError):
        client.wait_for_flow(flow_id)
    with pytest.raises(dex.FlowNotActiveOrNotFoundError):
        client.invoke_rpc(LOCKS.deposit, flow_id, 1)
    client.start_flow(CHAT, flow_id, "x")
    with pytest.raises(dex.FlowAlreadyStartedError):
        client.start_flow(CHAT, flow_id, "x")
    with pytest.raises(dex.LongPollTimeoutError):
        client.wait_for_flow(flow_id, timeout=timedelta(seconds=1))
    with pytest.raises(dex.WorkerInvocationError) as info:
        client.invoke_rpc(CHAT.explode, flow_id)
    assert "rpc exploded" in str(info.value)
    client.stop_flow(flow_id, dex.StopFlowOptions(type=dex.StopType.FAIL, reason="bye"))
    result = client.wait_for_flow(flow_id)
    assert result.status == dex.FlowStatus.FAILED
    with pytest.raises(dex.FlowNotActiveOrNotFoundError):
        client.invoke_rpc(LOCKS.deposit, flow_id, 1)


def test_malformed_requests_name_the_field(dexlite_server: DexliteProcess) -> None:
    with grpc.insecure_channel(dexlite_server.address) as channel:
        stub = dex_pb2_grpc.FlowServiceStub(channel)
        with pytest.raises(grpc.RpcError) as info:
            stub.StartFlow(pb.StartFlowRequest(flow_type="Chat", request_id="r"))
        assert info.value.code() == grpc.StatusCode.INVALID_ARGUMENT
        assert "flow_id" in info.value.details()
        with pytest.raises(grpc.RpcError) as info:
            stub.StartFlow(pb.StartFlowRequest(flow_id="a/b", flow_type="Chat", request_id="r"))
        assert info.value.code() == grpc.StatusCode.INVALID_ARGUMENT
        big = pb.Value(string_value="x" * (3 * 1024 * 1024))
        with pytest.raises(grpc.RpcError) as info:
            stub.StartFlow(
                pb.StartFlowRequest(
                    flow_id="big",
                    flow_type="Chat",
                    request_id="r",
                    start_step_type="Waiter",
                    step_input=big,
                )
            )
        assert info.value.code() == grpc.StatusCode.INVALID_ARGUMENT
        assert "value too large" in info.value.details()
        with pytest.raises(grpc.RpcError) as info:
            stub.TriggerContinueAsNew(pb.TriggerContinueAsNewRequest(flow_id="x"))
        assert info.value.code() == grpc.StatusCode.UNIMPLEMENTED


def test_attribute_map_load_selection(client: dex.Client, flow_id: str) -> None:
    client.start_flow(FAN_OUT, flow_id, 3)
    client.wait_for_flow(flow_id)
    assert client.invoke_rpc(FAN_OUT.count_notes, flow_id) == 3  # query-only RPC on a closed flow
    with pytest.raises(dex.WorkerInvocationError) as info:
        client.invoke_rpc(FAN_OUT.note_keys_unloaded, flow_id)
    assert "AttributeMapNotLoadedError" in (info.value.worker_error_type or "")


def test_unknown_rpc_name_is_a_worker_error(
    client: dex.Client, flow_id: str, dexlite_server: DexliteProcess
) -> None:
    client.start_flow(CHAT, flow_id, "x")
    with grpc.insecure_channel(dexlite_server.address) as channel:
        stub = dex_pb2_grpc.FlowServiceStub(channel)
        with pytest.raises(grpc.RpcError) as info:
            stub.InvokeRPC(
                pb.InvokeRPCRequest(
                    flow_id=flow_id,
                    rpc_name="nope",
                    request_id="r",
                    input=pb.Value(string_value="x"),
                    timeout_seconds=30,
                ),
                timeout=20,  # a pull rejection must not wait for the dispatch window
            )
    assert info.value.code() == grpc.StatusCode.FAILED_PRECONDITION
    client.stop_flow(flow_id)
