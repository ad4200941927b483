"""Dex service errors and their single mapping onto gRPC rich statuses.

Every FlowService failure leaves the server through :func:`abort`, so the SDK's
``translate_rpc_error`` always finds exactly one packed ``ServiceErrorResponse``.
"""

from __future__ import annotations

from typing import NoReturn

import grpc
from dex.dexpb import dex_pb2 as pb
from google.protobuf import any_pb2  # type: ignore[import-untyped,unused-ignore]
from google.rpc import status_pb2  # type: ignore[import-untyped,unused-ignore]
from grpc_status import rpc_status  # type: ignore[import-untyped,unused-ignore]


class ServiceError(Exception):
    """A failure that maps to one gRPC status plus a Dex sub-status."""

    def __init__(
        self,
        code: grpc.StatusCode,
        detail: str,
        sub_status: int = pb.ERROR_SUB_STATUS_UNCATEGORIZED,
        *,
        worker_error: WorkerFailure | None = None,
    ) -> None:
        super().__init__(detail)
        self.code = code
        self.detail = detail
        self.sub_status = sub_status
        self.worker_error = worker_error

    def to_status(self) -> status_pb2.Status:
        """Builds the rich status the SDK decodes."""
        response = pb.ServiceErrorResponse(sub_status=self.sub_status)  # type: ignore[arg-type]
        message = self.detail
        if self.worker_error is not None and self.worker_error.detail:
            failure = self.worker_error
            response.original_worker_error_detail = failure.detail
            response.original_worker_error_type = failure.error_type
            response.original_worker_error_status = failure.grpc_code
            response.original_worker_error_stack_trace = failure.stack_trace
            message = failure.detail
        else:
            response.detail = self.detail
            if self.worker_error is not None:
                response.original_worker_error_status = self.worker_error.grpc_code
        packed = any_pb2.Any()
        packed.Pack(response)
        return status_pb2.Status(code=self.code.value[0], message=message, details=[packed])


class WorkerFailure:
    """One failed worker call, normalised from a gRPC error or a pull error frame."""

    def __init__(
        self,
        detail: str,
        error_type: str,
        grpc_code: int,
        *,
        stack_trace: str = "",
        retry_after_seconds: int = 0,
        server_side: bool = False,
    ) -> None:
        self.detail = detail
        self.error_type = error_type
        self.grpc_code = grpc_code
        self.stack_trace = stack_trace
        self.retry_after_seconds = retry_after_seconds
        self.server_side = server_side

    def __repr__(self) -> str:
        return f"WorkerFailure({self.error_type!r}, {self.detail!r}, code={self.grpc_code})"


def invalid(detail: str) -> ServiceError:
    """A caller mistake; the message names the offending field."""
    return ServiceError(grpc.StatusCode.INVALID_ARGUMENT, detail)


def flow_not_found(flow_id: str) -> ServiceError:
    """Unknown flow, or a closed flow for operations that need a running one."""
    return ServiceError(
        grpc.StatusCode.NOT_FOUND,
        f"flow {flow_id!r} does not exist or is not running",
        pb.ERROR_SUB_STATUS_FLOW_NOT_EXISTS,
    )


def already_started(flow_id: str) -> ServiceError:
    return ServiceError(
        grpc.StatusCode.ALREADY_EXISTS,
        f"flow {flow_id!r} is already started",
        pb.ERROR_SUB_STATUS_FLOW_ALREADY_STARTED,
    )


def long_poll_timeout(what: str) -> ServiceError:
    return ServiceError(
        grpc.StatusCode.DEADLINE_EXCEEDED,
        f"long poll timed out waiting for {what}",
        pb.ERROR_SUB_STATUS_LONG_POLL_TIME_OUT,
    )


def caller_gone() -> ServiceError:
    """The caller cancelled, or its deadline passed, while a long poll waited for it."""
    return ServiceError(grpc.StatusCode.CANCELLED, "the caller stopped waiting for the long poll")


def lock_conflict() -> ServiceError:
    return ServiceError(
        grpc.StatusCode.ABORTED,
        "one or more attribute keys are locked",
        pb.ERROR_SUB_STATUS_WORKER_API_ERROR,
    )


def message_not_found(channel: str, message_id: str) -> ServiceError:
    return ServiceError(
        grpc.StatusCode.NOT_FOUND,
        f"channel message {message_id!r} not found in channel {channel!r}",
        pb.ERROR_SUB_STATUS_CHANNEL_MESSAGE_NOT_FOUND,
    )


def worker_api_error(failure: WorkerFailure) -> ServiceError:
    """A worker handler or transport failure during an RPC."""
    return ServiceError(
        grpc.StatusCode.FAILED_PRECONDITION,
        failure.detail or "worker API error",
        pb.ERROR_SUB_STATUS_WORKER_API_ERROR,
        worker_error=failure,
    )


def abort(context: grpc.ServicerContext, error: ServiceError) -> NoReturn:
    """Ends the call with the rich status of ``error``."""
    context.abort_with_status(rpc_status.to_status(error.to_status()))
    raise AssertionError("abort_with_status returned")  # pragma: no cover


def failure_from_rpc_error(error: grpc.RpcError) -> WorkerFailure:
    """Reads the worker's ``WorkerErrorResponse`` from the status trailer when present."""
    call: grpc.Call = error
    code: grpc.StatusCode = call.code()
    message: str = call.details() or code.name
    try:
        status = rpc_status.from_call(call)
    except (ValueError, TypeError):  # a malformed trailer is a plain transport error
        status = None
    if status is not None:
        for packed in status.details:
            worker = pb.WorkerErrorResponse()
            if packed.Is(worker.DESCRIPTOR):
                packed.Unpack(worker)
                return failure_from_worker_error(worker, message, code.value[0])
    return WorkerFailure(message, code.name, code.value[0])


def failure_from_worker_error(
    worker: pb.WorkerErrorResponse, fallback_detail: str, fallback_code: int
) -> WorkerFailure:
    return WorkerFailure(
        worker.detail or fallback_detail,
        worker.error_type or _code_name(worker.grpc_status or fallback_code),
        worker.grpc_status or fallback_code,
        stack_trace=worker.stack_trace,
        retry_after_seconds=worker.retry_after_seconds,
    )


def _code_name(value: int) -> str:
    for code in grpc.StatusCode:
        if code.value[0] == value:
            return str(code.name)
    return "UNKNOWN"


__all__ = [
    "ServiceError",
    "WorkerFailure",
    "abort",
    "already_started",
    "failure_from_rpc_error",
    "failure_from_worker_error",
    "flow_not_found",
    "invalid",
    "lock_conflict",
    "long_poll_timeout",
    "message_not_found",
    "worker_api_error",
]
