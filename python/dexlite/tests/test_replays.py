"""Replays by request ID through the real server: the first response again, nothing applied twice.

InvokeRPC, SetAttributes and DeleteChannelMessage remember their response under
the request ID in the transaction of their effect; StartFlow keeps its ID on the
run. The SDK sends a fresh request ID per call, so each test speaks the raw
protocol to send one twice. The window and a replay that overtakes its first
call are in test_replays_unit.py.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import dex
import grpc
import pytest
from dex.dexpb import dex_pb2 as pb
from dex.dexpb import dex_pb2_grpc
from dexlite.testing import DexliteProcess, wait_until
from helpers.flows import CHAT, TALLY

# Replays do not depend on how the Worker is reached; one mode keeps the file quick.
MODE = "pull"


@pytest.fixture
def mode() -> str:
    return MODE


@pytest.fixture
def stub(dexlite_server: DexliteProcess) -> Iterator[dex_pb2_grpc.FlowServiceStub]:
    with grpc.insecure_channel(dexlite_server.address) as channel:
        yield dex_pb2_grpc.FlowServiceStub(channel)


@pytest.fixture
def tally(client: dex.Client, flow_id: str) -> str:
    """A running Tally flow at 0."""
    client.start_flow(TALLY, flow_id, None)
    return flow_id


def _rpc(
    stub: dex_pb2_grpc.FlowServiceStub,
    flow_id: str,
    name: str,
    value: pb.Value,
    request_id: str,
    *,
    locks: tuple[str, ...] = (),
    transactional: bool = False,
) -> pb.Value:
    request = pb.InvokeRPCRequest(
        flow_id=flow_id,
        rpc_name=name,
        input=value,
        request_id=request_id,
        lock_attribute_keys=locks,
        is_transactional=transactional,
    )
    output: pb.Value = stub.InvokeRPC(request, timeout=60).output
    return output


def _add(stub: dex_pb2_grpc.FlowServiceStub, flow_id: str, amount: int, request_id: str) -> int:
    output = _rpc(stub, flow_id, "add", pb.Value(int_value=amount), request_id, locks=("tally",))
    return output.int_value


def _history(stub: dex_pb2_grpc.FlowServiceStub, flow_id: str) -> list[str]:
    run_id = stub.GetFlowSummary(pb.GetFlowSummaryRequest(flow_id=flow_id)).flow_execution_id.run_id
    events = stub.GetHistoryEvents(pb.GetHistoryEventsRequest(flow_id=flow_id, run_id=run_id))
    return [str(e.WhichOneof("payload")) for e in events.events]


def test_a_replayed_rpc_returns_its_first_output_and_applies_once(
    client: dex.Client, tally: str, stub: dex_pb2_grpc.FlowServiceStub
) -> None:
    assert _add(stub, tally, 5, "r1") == 5
    assert _add(stub, tally, 5, "r1") == 5
    assert client.invoke_rpc(TALLY.read, tally) == 5
    assert _add(stub, tally, 5, "r2") == 10
    assert _history(stub, tally).count("rpc_execution_completed") == 2


def test_a_plain_rpc_with_effects_is_remembered(
    client: dex.Client, tally: str, stub: dex_pb2_grpc.FlowServiceStub
) -> None:
    for _ in range(3):
        assert _rpc(stub, tally, "add_plain", pb.Value(int_value=2), "p1").int_value == 2
    assert client.invoke_rpc(TALLY.read, tally) == 2


@pytest.mark.parametrize(("name", "transactional"), [("read", False), ("peek", True)])
def test_an_rpc_without_effects_is_answered_afresh(
    tally: str, stub: dex_pb2_grpc.FlowServiceStub, name: str, transactional: bool
) -> None:
    """It changed nothing, so nothing was stored: its replay runs again."""
    none = pb.Value(null_value="NULL_VALUE")
    assert _rpc(stub, tally, name, none, "q1", transactional=transactional).int_value == 0
    assert _add(stub, tally, 4, "q2") == 4
    assert _rpc(stub, tally, name, none, "q1", transactional=transactional).int_value == 4


def test_a_request_id_with_another_request_is_refused(
    client: dex.Client, tally: str, stub: dex_pb2_grpc.FlowServiceStub
) -> None:
    assert _add(stub, tally, 5, "x1") == 5
    for name, value in [("add", pb.Value(int_value=6)), ("add_plain", pb.Value(int_value=5))]:
        with pytest.raises(grpc.RpcError) as info:
            _rpc(stub, tally, name, value, "x1", locks=("tally",))
        assert info.value.code() == grpc.StatusCode.INVALID_ARGUMENT
        assert f"request_id 'x1' of flow {tally!r} already answered another InvokeRPC" in (
            info.value.details() or ""
        )
    assert client.invoke_rpc(TALLY.read, tally) == 5


def test_a_failed_rpc_is_not_remembered(
    client: dex.Client, tally: str, stub: dex_pb2_grpc.FlowServiceStub
) -> None:
    key = pb.Value(string_value=f"fail-{uuid.uuid4().hex}")
    with pytest.raises(grpc.RpcError) as info:
        _rpc(stub, tally, "add_after_a_failure", key, "f1", locks=("tally",))
    assert info.value.code() == grpc.StatusCode.FAILED_PRECONDITION
    assert _rpc(stub, tally, "add_after_a_failure", key, "f1", locks=("tally",)).int_value == 1
    assert _rpc(stub, tally, "add_after_a_failure", key, "f1", locks=("tally",)).int_value == 1
    assert client.invoke_rpc(TALLY.read, tally) == 1


def test_a_replay_gets_its_answer_after_the_flow_closed(
    client: dex.Client, tally: str, stub: dex_pb2_grpc.FlowServiceStub
) -> None:
    assert _add(stub, tally, 7, "c1") == 7
    client.stop_flow(tally)
    assert _add(stub, tally, 7, "c1") == 7
    with pytest.raises(grpc.RpcError) as info:
        _add(stub, tally, 7, "c2")
    assert info.value.code() == grpc.StatusCode.NOT_FOUND


def test_set_attributes_replays_apply_once(
    client: dex.Client, tally: str, stub: dex_pb2_grpc.FlowServiceStub
) -> None:
    def write(value: int, request_id: str) -> None:
        stub.SetAttributes(
            pb.SetAttributesRequest(
                flow_id=tally,
                attributes=[pb.AttributeWrite(key="tally", value=pb.Value(int_value=value))],
                request_id=request_id,
            )
        )

    write(11, "s1")
    assert _add(stub, tally, 1, "s2") == 12
    write(11, "s1")  # a replay: the add after it stays
    assert client.invoke_rpc(TALLY.read, tally) == 12
    with pytest.raises(grpc.RpcError) as info:
        write(13, "s1")
    assert info.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "already answered another SetAttributes request" in (info.value.details() or "")
    assert _history(stub, tally).count("rpc_execution_completed") == 2


def test_a_replayed_start_returns_its_run_and_starts_no_other(
    client: dex.Client, flow_id: str, stub: dex_pb2_grpc.FlowServiceStub
) -> None:
    terminate = dex.StartFlowOptions(
        request_id="start-1",
        ignore_already_started=True,
        id_reuse_policy=dex.IdReusePolicy.ALLOW_TERMINATE_IF_RUNNING,
    )
    run_id = client.start_flow(TALLY, flow_id, None, terminate)
    # A replay must not terminate the run its first call started.
    assert client.start_flow(TALLY, flow_id, None, terminate) == run_id
    assert client.describe_flow(flow_id).status is dex.FlowStatus.RUNNING
    client.stop_flow(flow_id)
    wait_until(
        lambda: client.describe_flow(flow_id).status is not dex.FlowStatus.RUNNING or None,
        what="the stopped flow to close",
    )
    # Reuse is allowed once the run closed, but this is the same request again.
    replay = dex.StartFlowOptions(request_id="start-1", ignore_already_started=True)
    assert client.start_flow(TALLY, flow_id, None, replay) == run_id
    assert client.start_flow(TALLY, flow_id, None, dex.StartFlowOptions()) != run_id


def test_chat_send_replay_publishes_one_message(
    client: dex.Client, flow_id: str, stub: dex_pb2_grpc.FlowServiceStub
) -> None:
    """A plain RPC that publishes: the replay publishes nothing, so the Waiter's flow
    completes with the one message."""
    client.start_flow(CHAT, flow_id, "hi")
    text = pb.Value(string_value="once")
    first = _rpc(stub, flow_id, "send", text, "m1")
    assert _rpc(stub, flow_id, "send", text, "m1") == first
    assert client.wait_for_flow(flow_id).single_output(str) == "hi:once"
    assert _history(stub, flow_id).count("rpc_execution_completed") == 1
