"""The protocol groups dexlite leaves out, and the exact error each one answers.

The README's "Not implemented" table quotes these answers; this test keeps it true.
"""

from __future__ import annotations

import dex
import grpc
import pytest
from dex.dexpb import dex_pb2 as pb
from dex.dexpb import dex_pb2_grpc
from dexlite import _conditions
from dexlite.testing import DexliteProcess
from helpers.flows import CHAT

pytestmark = pytest.mark.integration

_NOT_IMPLEMENTED = (grpc.StatusCode.UNIMPLEMENTED, "Method not implemented!")


def _error(call: object, request: object) -> tuple[grpc.StatusCode, str]:
    with pytest.raises(grpc.RpcError) as info:
        call(request)  # type: ignore[operator]
    error = info.value
    return error.code(), error.details()


def test_reset_and_continue_as_new_are_unimplemented(
    client: dex.Client, flow_id: str, dexlite_server: DexliteProcess
) -> None:
    client.start_flow(CHAT, flow_id, "x")
    with grpc.insecure_channel(dexlite_server.address) as channel:
        stub = dex_pb2_grpc.FlowServiceStub(channel)
        assert _error(stub.ResetFlow, pb.ResetFlowRequest(flow_id=flow_id)) == _NOT_IMPLEMENTED
        assert (
            _error(stub.TriggerContinueAsNew, pb.TriggerContinueAsNewRequest(flow_id=flow_id))
            == _NOT_IMPLEMENTED
        )
    client.stop_flow(flow_id)


def test_search_takes_only_equality_clauses(dexlite_server: DexliteProcess) -> None:
    with grpc.insecure_channel(dexlite_server.address) as channel:
        stub = dex_pb2_grpc.FlowServiceStub(channel)
        request = pb.SearchFlowsRequest(query="FlowType LIKE 'Chat%'")
        assert _error(stub.SearchFlows, request) == (
            grpc.StatusCode.INVALID_ARGUMENT,
            "query: unsupported clause \"FlowType LIKE 'Chat%'\"",
        )


def test_sub_flow_wait_is_an_invalid_worker_result() -> None:
    condition = pb.WaitingCondition(
        waiting_condition_type=pb.WAITING_CONDITION_TYPE_ALL_COMPLETED,
        sub_flow_conditions=[pb.SubFlowCondition()],
    )
    assert _conditions.validate(condition) == "sub_flow_conditions are not supported by dexlite"
