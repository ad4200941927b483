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

from . import _caller, _errors
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
            with _caller.serving(context.is_active):
                return method(self, request, context)
        except _errors.ServiceError as error:
            _errors.abort(context, error)
        except Exception:
            _LOGGER.exception("internal error in %s", method.__name__)
            _errors.abort(
                context, _errors.ServiceError(grpc.StatusCode.INTERNAL, "internal server error")
            )

    return wrapper


def _empty(_: object) -> empty_pb2.Empty:
    return empty_pb2.Empty()


def _delegate(
    name: str, op: str, respond: Callable[[Any], Any] | None = None
) -> Callable[[Any, Any, grpc.ServicerContext], Any]:
    """A servicer method that hands its request to ``FlowOps.<op>`` and wraps the answer.

    Most FlowService methods are exactly that; building them from one place keeps
    their error mapping (:func:`_mapped`) identical. ``respond`` turns the op's return
    value into the response message; without it the op already returns one.
    """

    def method(self: FlowService, request: Any, context: grpc.ServicerContext) -> Any:
        result = getattr(self._ops, op)(request)
        return result if respond is None else respond(result)

    method.__name__ = method.__qualname__ = name
    return _mapped(method)


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

    LoadBlobs = _delegate("LoadBlobs", "load_blobs")
    StartFlow = _delegate(
        "StartFlow", "start_flow", lambda run_id: pb.StartFlowResponse(run_id=run_id)
    )
    StopFlow = _delegate("StopFlow", "stop_flow", _empty)
    WaitForFlow = _delegate("WaitForFlow", "wait_for_flow")
    GetFlowSummary = _delegate("GetFlowSummary", "describe")
    SearchFlows = _delegate("SearchFlows", "search")
    UpdateFlowConfig = _delegate("UpdateFlowConfig", "update_config", _empty)
    InvokeRPC = _delegate(
        "InvokeRPC", "invoke_rpc", lambda output: pb.InvokeRPCResponse(output=output)
    )
    SkipTimer = _delegate("SkipTimer", "skip_timer", _empty)
    WaitForStepCompletion = _delegate(
        "WaitForStepCompletion", "wait_for_step", lambda _: pb.WaitForStepCompletionResponse()
    )
    WaitForAttribute = _delegate(
        "WaitForAttribute",
        "wait_for_attribute",
        lambda value: pb.WaitForAttributeResponse(matched_value=value),
    )
    PublishToChannel = _delegate("PublishToChannel", "publish", _empty)
    GetChannelMessages = _delegate(
        "GetChannelMessages",
        "channel_messages",
        lambda found: pb.GetChannelMessagesResponse(messages=found),
    )
    DeleteChannelMessage = _delegate("DeleteChannelMessage", "delete_message", _empty)
    GetAttributes = _delegate(
        "GetAttributes", "get_attributes", lambda found: pb.GetAttributesResponse(attributes=found)
    )
    SetAttributes = _delegate("SetAttributes", "set_attributes", _empty)
    GetHistoryEvents = _delegate("GetHistoryEvents", "history")
    WaitForHistoryEvent = _delegate("WaitForHistoryEvent", "wait_for_history")
    GetFlowState = _delegate("GetFlowState", "flow_state")

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
