"""The listening-mode transport: unary and streaming calls into a Worker's WorkerService."""

from __future__ import annotations

import threading
import time
from typing import TYPE_CHECKING

import grpc
from dex.dexpb import dex_pb2_grpc

from ._calls import CallHandle, CallSpec, Outcome, cancelled_failure
from ._errors import WorkerFailure, failure_from_rpc_error

if TYPE_CHECKING:
    from google.protobuf.message import Message  # type: ignore[import-untyped,unused-ignore]

_MAX_MESSAGE_BYTES = 16 * 1024 * 1024


class _Limiter:
    """FIFO-fair slot counter per worker address."""

    def __init__(self, slots: int) -> None:
        self._slots = slots
        self._cond = threading.Condition()
        self._queue: list[object] = []

    def acquire(self, timeout: float | None, handle: CallHandle) -> bool:
        """Waits for a slot up to `timeout` seconds (None: until cancelled)."""
        ticket = object()
        deadline = None if timeout is None else time.monotonic() + timeout
        with self._cond:
            self._queue.append(ticket)
            try:
                while self._slots <= 0 or self._queue[0] is not ticket:
                    remaining = 0.25 if deadline is None else deadline - time.monotonic()
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
        # An RPC's queueing counts toward its timeout; a Step waits for a slot for
        # as long as it takes, and its timeouts start when the Worker gets it.
        deadline = time.monotonic() + spec.timeout if spec.kind == "rpc" else None
        while True:
            remaining = None if deadline is None else deadline - time.monotonic()
            if handle.reason is not None:
                return Outcome(failure=cancelled_failure(handle))
            if (remaining is not None and remaining <= 0) or not limiter.acquire(remaining, handle):
                if _is_cancelled(handle):
                    return Outcome(failure=cancelled_failure(handle))
                return Outcome(
                    failure=WorkerFailure(
                        "deadline exceeded waiting for a worker slot",
                        "StartToClose",
                        grpc.StatusCode.DEADLINE_EXCEEDED.value[0],
                    )
                )
            budget = spec.timeout if deadline is None else deadline - time.monotonic()
            try:
                if spec.on_hand_out is not None and not spec.on_hand_out():
                    outcome, busy = Outcome(), True  # not stored yet: offer it again later
                else:
                    outcome, busy = self._call_once(stub, spec, handle, budget)
            finally:
                limiter.release()
            if not busy:
                return outcome
            handle.requeue()  # the Worker was busy: not an attempt
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
