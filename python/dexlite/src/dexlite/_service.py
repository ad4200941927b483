"""Thin gRPC adapters: decode, call :class:`FlowOps`, encode, map errors in one place."""

from __future__ import annotations

import functools
import logging
import socket
from typing import TYPE_CHECKING, Any, TypeVar

import grpc
from dex.dexpb import dex_pb2 as pb
from dex.dexpb import dex_pb2_grpc
from google.protobuf import empty_pb2  # type: ignore[import-untyped,unused-ignore]

from . import _errors
from ._model import require_value

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

    from ._api import FlowOps
    from ._pull import PullHub

_LOGGER = logging.getLogger(__name__)
_R = TypeVar("_R")

SERVER_VERSION = "dexlite/0.1.0"


def _mapped(
    method: Callable[[Any, Any, grpc.ServicerContext], _R],
) -> Callable[[Any, Any, grpc.ServicerContext], _R]:
    """Turns ServiceError into its rich status and hides any traceback from the wire."""

    @functools.wraps(method)
    def wrapper(self: Any, request: Any, context: grpc.ServicerContext) -> _R:
        try:
            return method(self, request, context)
        except _errors.ServiceError as error:
            _errors.abort(context, error)
        except Exception:
            _LOGGER.exception("internal error in %s", method.__name__)
            _errors.abort(
                context, _errors.ServiceError(grpc.StatusCode.INTERNAL, "internal server error")
            )

    return wrapper


class FlowService(dex_pb2_grpc.FlowServiceServicer):
    """FlowService; methods not overridden answer UNIMPLEMENTED through the base class."""

    def __init__(self, ops: FlowOps) -> None:
        self._ops = ops

    @_mapped
    def GetServerInfo(
        self, request: empty_pb2.Empty, context: grpc.ServicerContext
    ) -> pb.ServerInfo:
        return pb.ServerInfo(
            server_version=SERVER_VERSION,
            minimum_supported_protocol_version=1,
            current_protocol_version=3,
        )

    @_mapped
    def HealthCheck(self, request: empty_pb2.Empty, context: grpc.ServicerContext) -> pb.HealthInfo:
        return pb.HealthInfo(condition="OK", hostname=socket.gethostname(), duration=0)

    @_mapped
    def SyncAttributeIndexes(
        self, request: pb.SyncAttributeIndexRequest, context: grpc.ServicerContext
    ) -> pb.SyncAttributeIndexResponse:
        with self._ops.state.tx() as conn:
            for key, kind in request.attribute_indexes.items():
                conn.execute(
                    "INSERT INTO indexes(key, type) VALUES (?,?) ON CONFLICT(key) DO UPDATE"
                    " SET type=excluded.type",
                    (key, kind),
                )
        return pb.SyncAttributeIndexResponse()

    @_mapped
    def LoadBlobs(
        self, request: pb.LoadBlobsRequest, context: grpc.ServicerContext
    ) -> pb.LoadBlobsResponse:
        return self._ops.load_blobs(request)

    @_mapped
    def StartFlow(
        self, request: pb.StartFlowRequest, context: grpc.ServicerContext
    ) -> pb.StartFlowResponse:
        return pb.StartFlowResponse(run_id=self._ops.start_flow(request))

    @_mapped
    def StopFlow(
        self, request: pb.StopFlowRequest, context: grpc.ServicerContext
    ) -> empty_pb2.Empty:
        self._ops.stop_flow(request)
        return empty_pb2.Empty()

    @_mapped
    def WaitForFlow(
        self, request: pb.WaitForFlowRequest, context: grpc.ServicerContext
    ) -> pb.FlowResult:
        return self._ops.wait_for_flow(request)

    @_mapped
    def GetFlowSummary(
        self, request: pb.GetFlowSummaryRequest, context: grpc.ServicerContext
    ) -> pb.GetFlowSummaryResponse:
        return self._ops.describe(request)

    @_mapped
    def SearchFlows(
        self, request: pb.SearchFlowsRequest, context: grpc.ServicerContext
    ) -> pb.SearchFlowsResponse:
        return self._ops.search(request)

    @_mapped
    def UpdateFlowConfig(
        self, request: pb.UpdateFlowConfigRequest, context: grpc.ServicerContext
    ) -> empty_pb2.Empty:
        self._ops.update_config(request)
        return empty_pb2.Empty()

    @_mapped
    def InvokeRPC(
        self, request: pb.InvokeRPCRequest, context: grpc.ServicerContext
    ) -> pb.InvokeRPCResponse:
        return pb.InvokeRPCResponse(output=self._ops.invoke_rpc(request))

    @_mapped
    def SkipTimer(
        self, request: pb.SkipTimerRequest, context: grpc.ServicerContext
    ) -> empty_pb2.Empty:
        self._ops.skip_timer(request)
        return empty_pb2.Empty()

    @_mapped
    def WaitForStepCompletion(
        self, request: pb.WaitForStepCompletionRequest, context: grpc.ServicerContext
    ) -> pb.WaitForStepCompletionResponse:
        self._ops.wait_for_step(request)
        return pb.WaitForStepCompletionResponse()

    @_mapped
    def WaitForAttribute(
        self, request: pb.WaitForAttributeRequest, context: grpc.ServicerContext
    ) -> pb.WaitForAttributeResponse:
        return pb.WaitForAttributeResponse(matched_value=self._ops.wait_for_attribute(request))

    @_mapped
    def PublishToChannel(
        self, request: pb.PublishToChannelRequest, context: grpc.ServicerContext
    ) -> empty_pb2.Empty:
        self._ops.publish(request)
        return empty_pb2.Empty()

    @_mapped
    def GetChannelMessages(
        self, request: pb.GetChannelMessagesRequest, context: grpc.ServicerContext
    ) -> pb.GetChannelMessagesResponse:
        return pb.GetChannelMessagesResponse(messages=self._ops.channel_messages(request))

    @_mapped
    def DeleteChannelMessage(
        self, request: pb.DeleteChannelMessageRequest, context: grpc.ServicerContext
    ) -> empty_pb2.Empty:
        self._ops.delete_message(request)
        return empty_pb2.Empty()

    @_mapped
    def GetAttributes(
        self, request: pb.GetAttributesRequest, context: grpc.ServicerContext
    ) -> pb.GetAttributesResponse:
        return pb.GetAttributesResponse(attributes=self._ops.get_attributes(request))

    @_mapped
    def SetAttributes(
        self, request: pb.SetAttributesRequest, context: grpc.ServicerContext
    ) -> empty_pb2.Empty:
        self._ops.set_attributes(request)
        return empty_pb2.Empty()

    @_mapped
    def GetHistoryEvents(
        self, request: pb.GetHistoryEventsRequest, context: grpc.ServicerContext
    ) -> pb.GetHistoryEventsResponse:
        return self._ops.history(request)

    @_mapped
    def WaitForHistoryEvent(
        self, request: pb.WaitForHistoryEventRequest, context: grpc.ServicerContext
    ) -> pb.WaitForHistoryEventResponse:
        return self._ops.wait_for_history(request)

    @_mapped
    def GetFlowState(
        self, request: pb.GetFlowStateRequest, context: grpc.ServicerContext
    ) -> pb.GetFlowStateResponse:
        return self._ops.flow_state(request)

    @_mapped
    def WriteStream(
        self, request: pb.WriteStreamRequest, context: grpc.ServicerContext
    ) -> empty_pb2.Empty:
        check_stream_key(request.flow_id, request.flow_type, request.stream_name)
        if not request.source:
            raise _errors.invalid("source is required")
        if request.stream_capacity_bytes <= 0:
            raise _errors.invalid("stream_capacity_bytes must be positive")
        if not request.HasField("value"):
            raise _errors.invalid("value is required")
        require_value(request.value, "value", self._ops.state.options.max_value_bytes)
        self._ops.state.streams.append(
            flow_type=request.flow_type,
            flow_id=request.flow_id,
            name=request.stream_name,
            capacity=request.stream_capacity_bytes,
            value=request.value,
            source=request.source,
        )
        return empty_pb2.Empty()

    @_mapped
    def ReadStream(
        self, request: pb.ReadStreamRequest, context: grpc.ServicerContext
    ) -> pb.ReadStreamResponse:
        check_stream_key(request.flow_id, request.flow_type, request.stream_name)
        limit = self._ops.state.options.max_wait_seconds
        wait = min(request.wait_time_seconds, limit) if request.wait_time_seconds > 0 else limit
        message = self._ops.state.streams.read(
            flow_type=request.flow_type,
            flow_id=request.flow_id,
            name=request.stream_name,
            token=request.resume_token,
            wait_seconds=wait,
        )
        return pb.ReadStreamResponse(message=message)

    @_mapped
    def ListStreamMessages(
        self, request: pb.ListStreamMessagesRequest, context: grpc.ServicerContext
    ) -> pb.ListStreamMessagesResponse:
        check_stream_key(request.flow_id, request.flow_type, request.stream_name)
        messages, token = self._ops.state.streams.list(
            flow_type=request.flow_type,
            flow_id=request.flow_id,
            name=request.stream_name,
            page_size=request.page_size,
            token=request.before_page_token,
        )
        return pb.ListStreamMessagesResponse(messages=messages, next_page_token=token)


def check_stream_key(flow_id: str, flow_type: str, name: str) -> None:
    for value, field in ((flow_id, "flow_id"), (flow_type, "flow_type"), (name, "stream_name")):
        if not value:
            raise _errors.invalid(f"{field} is required")


class WorkerTaskService(dex_pb2_grpc.WorkerTaskServiceServicer):
    """Pull-mode task streams."""

    def __init__(self, hub: PullHub) -> None:
        self._hub = hub

    def PollWorkerTask(
        self, request_iterator: Iterator[pb.PollWorkerTaskRequest], context: grpc.ServicerContext
    ) -> Iterator[pb.PollWorkerTaskResponse]:
        return self._hub.serve(request_iterator, context)
