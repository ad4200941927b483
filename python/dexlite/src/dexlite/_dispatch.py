"""Calls into Workers: the shared call model and the listening-mode transport.

A call is described by :class:`CallSpec` and controlled through
:class:`CallHandle` (cancel, timeouts). Transports block the calling thread
until the call ends and return an :class:`Outcome`; they never touch the
database. Busy answers (listening ``RESOURCE_EXHAUSTED``, pull ``NO_CAPACITY``)
are retried inside the transport so they never spend a Step attempt.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal, Protocol

import grpc
from dex.dexpb import dex_pb2 as pb
from dex.dexpb import dex_pb2_grpc

from ._errors import WorkerFailure, failure_from_rpc_error

if TYPE_CHECKING:
    from collections.abc import Callable

    from google.protobuf.message import Message  # type: ignore[import-untyped,unused-ignore]

CallKind = Literal["wait_for", "execute", "rpc"]
CancelReason = Literal["cancelled", "StartToClose", "Heartbeat", "shutdown"]

_MAX_MESSAGE_BYTES = 16 * 1024 * 1024


@dataclass(kw_only=True)
class CallSpec:
    """One worker invocation."""

    kind: CallKind
    request: Message
    target: pb.WorkerTarget
    flow_type: str
    name: str
    """Step type or RPC name; pull routing rejects unknown names with it."""
    timeout: float
    """Seconds from now until the whole call (including queueing) must end."""
    on_frame: Callable[[Message], None] | None = None
    """Receives heartbeat and stream-write frames as they arrive."""
    sticky_worker: str = ""
    on_served_by: Callable[[str], None] | None = None


@dataclass(kw_only=True)
class Outcome:
    """Final result frame (or unary response), or a failure."""

    result: Message | None = None
    failure: WorkerFailure | None = None


@dataclass
class CallHandle:
    """Lets the engine cancel an in-flight call and watch its liveness."""

    deadline: float = 0.0
    heartbeat_timeout: float = 0.0
    last_frame: float = field(default_factory=time.monotonic)
    reason: CancelReason | None = None
    _cancel: Callable[[], object] | None = None
    _event: threading.Event = field(default_factory=threading.Event)
    _guard: threading.Lock = field(default_factory=threading.Lock)

    def set_canceller(self, cancel: Callable[[], object] | None) -> None:
        with self._guard:
            self._cancel = cancel
            fire = self.reason is not None
        if fire and cancel is not None:
            cancel()

    def cancel(self, reason: CancelReason) -> None:
        with self._guard:
            if self.reason is None:
                self.reason = reason
            cancel = self._cancel
        self._event.set()
        if cancel is not None:
            cancel()

    def wait(self, seconds: float) -> bool:
        """Sleeps up to ``seconds``; returns True when cancelled meanwhile."""
        return self._event.wait(seconds)

    def touch(self) -> None:
        self.last_frame = time.monotonic()

    def begin(self, timeout: float) -> None:
        """The call reached a Worker: timeouts count from now, not from queueing."""
        now = time.monotonic()
        self.last_frame = now
        self.deadline = now + timeout


def cancelled_failure(handle: CallHandle) -> WorkerFailure:
    """Normalises an engine-initiated cancellation into an attempt failure."""
    if handle.reason == "StartToClose":
        return WorkerFailure("activity timeout", "StartToClose", grpc.StatusCode.CANCELLED.value[0])
    if handle.reason == "Heartbeat":
        return WorkerFailure("heartbeat timeout", "Heartbeat", grpc.StatusCode.CANCELLED.value[0])
    return WorkerFailure("call cancelled", "CANCELLED", grpc.StatusCode.CANCELLED.value[0])


class Transport(Protocol):
    def invoke(self, spec: CallSpec, handle: CallHandle) -> Outcome: ...


class _Limiter:
    """FIFO-fair slot counter per worker address (spec §1.2)."""

    def __init__(self, slots: int) -> None:
        self._slots = slots
        self._cond = threading.Condition()
        self._queue: list[object] = []

    def acquire(self, timeout: float, handle: CallHandle) -> bool:
        ticket = object()
        deadline = time.monotonic() + timeout
        with self._cond:
            self._queue.append(ticket)
            try:
                while self._slots <= 0 or self._queue[0] is not ticket:
                    remaining = deadline - time.monotonic()
                    if remaining <= 0 or handle.reason is not None:
                        return False
                    self._cond.wait(min(remaining, 0.25))
                self._slots -= 1
                return True
            finally:
                self._queue.remove(ticket)
                self._cond.notify_all()

    def release(self) -> None:
        with self._cond:
            self._slots += 1
            self._cond.notify_all()


class ListeningTransport:
    """Calls a listening Worker's WorkerService, one channel per address."""

    def __init__(self, *, slots_per_target: int, busy_retry_seconds: float = 0.2) -> None:
        self._slots = slots_per_target
        self._busy_retry = busy_retry_seconds
        self._guard = threading.Lock()
        self._channels: dict[str, tuple[grpc.Channel, dex_pb2_grpc.WorkerServiceStub]] = {}
        self._limiters: dict[str, _Limiter] = {}

    def _stub(self, address: str) -> tuple[dex_pb2_grpc.WorkerServiceStub, _Limiter]:
        with self._guard:
            if address not in self._channels:
                channel = grpc.insecure_channel(
                    address,
                    options=[
                        ("grpc.max_receive_message_length", _MAX_MESSAGE_BYTES),
                        ("grpc.max_send_message_length", _MAX_MESSAGE_BYTES),
                    ],
                )
                stub = dex_pb2_grpc.WorkerServiceStub(channel)
                self._channels[address] = (channel, stub)
                self._limiters[address] = _Limiter(self._slots)
            return self._channels[address][1], self._limiters[address]

    def invoke(self, spec: CallSpec, handle: CallHandle) -> Outcome:
        address = spec.target.address
        stub, limiter = self._stub(address)
        deadline = time.monotonic() + spec.timeout
        while True:
            remaining = deadline - time.monotonic()
            if handle.reason is not None:
                return Outcome(failure=cancelled_failure(handle))
            if remaining <= 0 or not limiter.acquire(remaining, handle):
                if _is_cancelled(handle):
                    return Outcome(failure=cancelled_failure(handle))
                return Outcome(
                    failure=WorkerFailure(
                        "deadline exceeded waiting for a worker slot",
                        "StartToClose",
                        grpc.StatusCode.DEADLINE_EXCEEDED.value[0],
                    )
                )
            try:
                outcome, busy = self._call_once(stub, spec, handle, deadline - time.monotonic())
            finally:
                limiter.release()
            if not busy:
                return outcome
            if handle.wait(self._busy_retry):
                return Outcome(failure=cancelled_failure(handle))

    def _call_once(
        self,
        stub: dex_pb2_grpc.WorkerServiceStub,
        spec: CallSpec,
        handle: CallHandle,
        remaining: float,
    ) -> tuple[Outcome, bool]:
        timeout = max(remaining, 0.001)
        if spec.kind != "rpc":
            handle.begin(spec.timeout)
            timeout = spec.timeout + 1.0  # the engine's watchdog fails the attempt first
        try:
            if spec.kind == "rpc":
                future = stub.InvokeWorkerRPC.future(spec.request, timeout=timeout)
                handle.set_canceller(future.cancel)
                return Outcome(result=future.result()), False
            method = (
                stub.InvokeWaitForMethod if spec.kind == "wait_for" else stub.InvokeExecuteMethod
            )
            call = method(spec.request, timeout=timeout)
            handle.set_canceller(call.cancel)
            result: Message | None = None
            for frame in call:
                handle.touch()
                if result is not None:
                    return Outcome(failure=_violation("frame after the result frame")), False
                if frame.WhichOneof("output") == "result":
                    result = frame.result
                elif spec.on_frame is not None:
                    spec.on_frame(frame)
            if result is None:
                return Outcome(failure=_violation("stream ended without a result frame")), False
            return Outcome(result=result), False
        except grpc.FutureCancelledError:
            return Outcome(failure=cancelled_failure(handle)), False
        except grpc.RpcError as error:
            if handle.reason is not None:
                return Outcome(failure=cancelled_failure(handle)), False
            code = error.code()
            if code == grpc.StatusCode.RESOURCE_EXHAUSTED and "Concurrent RPC limit" in str(
                error.details()
            ):
                return Outcome(), True
            if code == grpc.StatusCode.DEADLINE_EXCEEDED:
                return Outcome(
                    failure=WorkerFailure("activity timeout", "StartToClose", code.value[0])
                ), False
            return Outcome(failure=failure_from_rpc_error(error)), False

    def close(self) -> None:
        with self._guard:
            for channel, _ in self._channels.values():
                channel.close()
            self._channels.clear()


def _is_cancelled(handle: CallHandle) -> bool:
    """Reads the flag through a call so type narrowing does not go stale across waits."""
    return handle.reason is not None


def _violation(detail: str) -> WorkerFailure:
    return WorkerFailure(f"protocol violation: {detail}", "ProtocolViolation", 13, server_side=True)
