"""The call model shared by the engine and both transports (listening, pull).

A call is described by :class:`CallSpec` and controlled through
:class:`CallHandle` (cancel, timeouts). Transports block the calling thread
until the call ends and return an :class:`Outcome`; they never touch the
database. Busy answers (listening ``RESOURCE_EXHAUSTED``, pull ``NO_CAPACITY``)
are retried inside the transport so they never spend a Step attempt. A Step call
is an attempt only while a Worker holds it: its timeouts count from
:meth:`CallHandle.begin`, and a call that goes back to the queue stops counting.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal, Protocol

import grpc
from dex.dexpb import dex_pb2 as pb

from ._errors import WorkerFailure

if TYPE_CHECKING:
    from collections.abc import Callable

    from google.protobuf.message import Message  # type: ignore[import-untyped,unused-ignore]

CallKind = Literal["wait_for", "execute", "rpc"]
CancelReason = Literal["cancelled", "StartToClose", "Heartbeat", "shutdown"]


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
    """Seconds the call may run once a Worker holds it; an RPC's queueing counts too."""
    on_frame: Callable[[Message], None] | None = None
    """Receives heartbeat and stream-write frames as they arrive."""
    sticky_worker: str = ""
    on_served_by: Callable[[str], None] | None = None
    on_hand_out: Callable[[], bool] | None = None
    """Runs right before a Worker can receive the call and returns once that is
    durable; False means it could not be stored, so the call is not sent yet."""


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
    held: bool = False
    """A Worker holds the call; a queued Step call has no timeout running."""
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
        self.held = True

    def requeue(self) -> None:
        """The Worker gave the call back without running it: no timeout runs while it waits."""
        self.held = False


def cancelled_failure(handle: CallHandle) -> WorkerFailure:
    """Normalises an engine-initiated cancellation into an attempt failure."""
    if handle.reason == "StartToClose":
        return WorkerFailure("activity timeout", "StartToClose", grpc.StatusCode.CANCELLED.value[0])
    if handle.reason == "Heartbeat":
        return WorkerFailure("heartbeat timeout", "Heartbeat", grpc.StatusCode.CANCELLED.value[0])
    return WorkerFailure("call cancelled", "CANCELLED", grpc.StatusCode.CANCELLED.value[0])


class Transport(Protocol):
    def invoke(self, spec: CallSpec, handle: CallHandle) -> Outcome: ...
