"""Pull mode: ``WorkerTaskService.PollWorkerTask`` streams and task routing.

Workers open one bidirectional stream per idle slot and queue. The hub hands a
task to an idle stream whose Worker registered the Flow type, preferring the
Flow's sticky Worker, and relays the task frames back to the waiting caller.

A Step task is an attempt only once its Worker sent a frame for it. Until then
it waits in the queue as long as it takes: no Worker, busy Workers
(``NO_CAPACITY``, after which that Worker gets no Step tasks until one of its
tasks finishes or a short backoff passes), and a stream that closes before any
frame all offer the task again under the same attempt number. Only RPCs, whose
caller waits, give up after the dispatch wait (``NO_WORKER_AVAILABLE``), and a
name every connected Worker of the Flow type refuses fails at once.
"""

from __future__ import annotations

import itertools
import logging
import queue
import threading
import time
import uuid
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import grpc
from dex.dexpb import dex_pb2 as pb
from google.protobuf import timestamp_pb2  # type: ignore[import-untyped,unused-ignore]

from ._calls import CallHandle, CallSpec, Outcome, cancelled_failure
from ._errors import WorkerFailure, failure_from_worker_error

if TYPE_CHECKING:
    from collections.abc import Iterator

_LOGGER = logging.getLogger(__name__)
# After a NO_CAPACITY rejection a Worker gets no Step task until one of its tasks
# ends or this backoff passes: 1 ms, doubling per consecutive rejection, up to 50 ms.
# Most rejections are a race with the Worker's own bookkeeping right after a final
# frame, so the first retry must be quick.
_BUSY_BACKOFF_FIRST = 0.001
_BUSY_BACKOFF_MAX = 0.05
_FINAL_FRAMES = ("rpc", "worker_error")
_SETTLE_GRACE = 5.0
"""How long a closed stream's task waits for the reader to apply the frames that arrived."""
_HAND_OUT_RETRY = 0.5
"""Wait before offering a call again whose hand-out the disk refused to store."""
_QUEUE_RECHECK = 0.5
"""Longest sleep of a queued task between looks at the streams (a notify wakes it sooner)."""


@dataclass(eq=False)
class _Task:
    task_id: str
    seen_frames: bool = False
    events: queue.Queue[tuple[str, object]] = field(default_factory=queue.Queue)


@dataclass(eq=False)
class _Stream:
    number: int
    queue_name: str
    app_worker_id: str
    flow_types: frozenset[str]
    outbox: queue.Queue[pb.PollWorkerTaskResponse | None] = field(default_factory=queue.Queue)
    task: _Task | None = None
    closed: bool = False
    reader: threading.Thread | None = None


def _await_timeout(handle: CallHandle) -> float | None:
    if handle.deadline <= 0:
        return None
    return max(0.05, handle.deadline - time.monotonic() + 2.0)


class PullHub:
    """Registry of open pull streams and the pull-mode transport."""

    def __init__(self, *, dispatch_wait_seconds: float) -> None:
        self._dispatch_wait = dispatch_wait_seconds
        self._cond = threading.Condition()
        self._streams: list[_Stream] = []
        self._numbers = itertools.count(1)
        self._busy_until: dict[str, float] = {}
        self._rejections: dict[str, int] = {}
        self._closed = False

    # -- server side of the stream -------------------------------------------------

    def serve(
        self, requests: Iterator[pb.PollWorkerTaskRequest], context: grpc.ServicerContext
    ) -> Iterator[pb.PollWorkerTaskResponse]:
        """Runs one PollWorkerTask stream until the Worker half-closes or leaves."""
        first = next(requests, None)
        if first is None or first.WhichOneof("frame") != "register":
            context.abort(grpc.StatusCode.INVALID_ARGUMENT, "first frame must be register")
            return
        register = first.register
        if not register.queue or not register.app_worker_id:
            context.abort(
                grpc.StatusCode.INVALID_ARGUMENT, "register.queue and app_worker_id are required"
            )
            return
        stream = _Stream(
            number=next(self._numbers),
            queue_name=register.queue,
            app_worker_id=register.app_worker_id,
            flow_types=frozenset(register.flow_types),
        )
        with self._cond:
            if self._closed:
                context.abort(grpc.StatusCode.UNAVAILABLE, "server is shutting down")
                return
            self._streams.append(stream)
        reader = threading.Thread(
            target=self._read,
            args=(stream, requests),
            name="dexlite-pull-reader",
            daemon=True,
        )
        stream.reader = reader
        context.add_callback(lambda: self._close(stream))
        reader.start()
        yield pb.PollWorkerTaskResponse(
            registered=pb.PollWorkerTaskRegistered(supports_unknown_name_rejection=True)
        )
        with self._cond:
            self._cond.notify_all()
        try:
            while True:
                item = stream.outbox.get()
                if item is None:
                    return
                yield item
        finally:
            self._close(stream)

    def _read(self, stream: _Stream, requests: Iterator[pb.PollWorkerTaskRequest]) -> None:
        """Applies the Worker's frames; when they end, settles the stream's task."""
        try:
            for request in requests:
                kind = request.WhichOneof("frame")
                if kind == "task_frame":
                    self._on_frame(stream, request.task_frame)
                elif kind == "reject":
                    self._on_reject(stream, request.reject)
        except grpc.RpcError:
            pass  # the Worker left or the connection broke
        except Exception:  # a broken stream must never take the hub down
            _LOGGER.exception("pull stream reader failed")
        finally:
            self._close(stream)
            self._settle(stream, frames_complete=True)

    def _close(self, stream: _Stream) -> None:
        """Routes no more tasks to the stream and ends its response side.

        Its task is settled by the reader once every frame that reached dexlite
        was applied; a reader that does not end within `_SETTLE_GRACE` settles
        it as lost, which is never wrong.
        """
        with self._cond:
            if stream.closed:
                return
            stream.closed = True
            if stream in self._streams:
                self._streams.remove(stream)
            self._cond.notify_all()
        stream.outbox.put(None)
        reader = stream.reader
        if reader is not None and reader is not threading.current_thread():
            threading.Thread(
                target=self._settle_after_reader,
                args=(stream, reader),
                name="dexlite-pull-settle",
                daemon=True,
            ).start()

    def _settle_after_reader(self, stream: _Stream, reader: threading.Thread) -> None:
        reader.join(_SETTLE_GRACE)
        self._settle(stream, frames_complete=not reader.is_alive())

    def _settle(self, stream: _Stream, *, frames_complete: bool) -> None:
        """The stream's task goes back to the queue unless it sent a frame.

        A task that sent no frame never started its Step's work as far as Dex
        can know (a tool Step's first frame, tool_call_started, precedes the
        tool), whether the Worker half-closed, died or lost its connection. A
        task that sent frames was running and is lost: the attempt fails.
        Without every frame applied (`frames_complete` false) the task counts
        as lost.
        """
        with self._cond:
            task = stream.task
            stream.task = None
            self._cond.notify_all()
        if task is not None:
            unstarted = frames_complete and not task.seen_frames
            task.events.put(("unstarted", None) if unstarted else ("lost", None))

    def _on_frame(self, stream: _Stream, frame: pb.PollWorkerTaskFrame) -> None:
        with self._cond:
            task = _current(stream, frame.task_id)
            if task is None:
                return
            task.seen_frames = True
            kind = frame.WhichOneof("output")
            final = kind in _FINAL_FRAMES or (
                kind == "wait_for" and frame.wait_for.WhichOneof("output") == "result"
            )
            final = final or (kind == "execute" and frame.execute.WhichOneof("output") == "result")
            if final:
                stream.task = None
                self._busy_until.pop(stream.app_worker_id, None)
                self._rejections.pop(stream.app_worker_id, None)
                self._cond.notify_all()
        task.events.put(("frame", frame))

    def _on_reject(self, stream: _Stream, reject: pb.PollWorkerTaskReject) -> None:
        with self._cond:
            task = _current(stream, reject.task_id)
            if task is None:
                return
            stream.task = None
            if reject.reason == pb.POLL_WORKER_TASK_REJECT_REASON_NO_CAPACITY:
                worker = stream.app_worker_id
                count = self._rejections.get(worker, 0)
                self._rejections[worker] = count + 1
                backoff = min(_BUSY_BACKOFF_FIRST * 2**count, _BUSY_BACKOFF_MAX)
                self._busy_until[worker] = time.monotonic() + backoff
            self._cond.notify_all()
        task.events.put(("reject", reject.reason))

    def close(self) -> None:
        """Ends every stream; Workers reconnect to the next server."""
        with self._cond:
            self._closed = True
            streams = list(self._streams)
        for stream in streams:
            self._close(stream)

    # -- transport ---------------------------------------------------------------

    def _pick(self, spec: CallSpec, excluded: set[str]) -> _Stream | None:
        now = time.monotonic()
        best: _Stream | None = None
        for stream in self._streams:
            if stream.task is not None or stream.closed:
                continue
            if spec.flow_type not in stream.flow_types or stream.app_worker_id in excluded:
                continue
            if spec.kind != "rpc" and self._busy_until.get(stream.app_worker_id, 0.0) > now:
                continue
            if spec.sticky_worker and stream.app_worker_id == spec.sticky_worker:
                return stream
            if best is None:
                best = stream
        return best

    def invoke(self, spec: CallSpec, handle: CallHandle) -> Outcome:
        # An RPC's caller waits for it, so it gives up after the dispatch wait; a
        # Step waits in the queue until a Worker takes it (or it is cancelled).
        dispatch_deadline = (
            time.monotonic() + min(self._dispatch_wait, spec.timeout)
            if spec.kind == "rpc"
            else None
        )
        excluded: set[str] = set()
        while True:
            assigned = self._assign(spec, handle, excluded, dispatch_deadline)
            if isinstance(assigned, Outcome):
                return assigned
            stream, task = assigned
            result = self._await(spec, handle, stream, task)
            if isinstance(result, Outcome):
                return result
            handle.requeue()  # not run: back in the queue, no attempt spent
            if result == "unstarted":
                # Routine: a retiring idle stream half-closes across a task in flight.
                _LOGGER.debug(
                    "%s %s of %s back in the queue: its stream ended before any frame",
                    spec.kind,
                    spec.name,
                    stream.app_worker_id,
                )
            if result == "unknown":
                excluded.add(stream.app_worker_id)

    def _assign(
        self, spec: CallSpec, handle: CallHandle, excluded: set[str], deadline: float | None
    ) -> Outcome | tuple[_Stream, _Task]:
        """Reserves a stream, records the hand-out where the engine asks to, then sends."""
        while True:
            reserved = self._reserve(spec, handle, excluded, deadline)
            if isinstance(reserved, Outcome):
                return reserved
            stream, task, message = reserved
            if spec.on_hand_out is not None and not self._hand_out(spec, stream, task):
                if handle.wait(_HAND_OUT_RETRY):  # the disk refused it: a backoff, then again
                    return Outcome(failure=cancelled_failure(handle))
                continue
            withdrawn = False
            with self._cond:
                if stream.task is task and not stream.closed:
                    stream.outbox.put(pb.PollWorkerTaskResponse(task=message))
                elif stream.task is task:
                    stream.task = None  # closed before the task went out
                    withdrawn = True
            if withdrawn:
                task.events.put(("unstarted", None))  # otherwise the stream's settle did
            if spec.kind != "rpc":
                handle.begin(spec.timeout)
            if spec.on_served_by is not None:
                spec.on_served_by(stream.app_worker_id)
            return stream, task

    def _hand_out(self, spec: CallSpec, stream: _Stream, task: _Task) -> bool:
        """The engine's hand-out record, outside the hub's lock; a refusal frees the stream."""
        assert spec.on_hand_out is not None
        stored = False
        try:
            stored = spec.on_hand_out()
        finally:
            if not stored:
                with self._cond:
                    if stream.task is task:
                        stream.task = None
                        self._cond.notify_all()
        return stored

    def _reserve(
        self, spec: CallSpec, handle: CallHandle, excluded: set[str], deadline: float | None
    ) -> Outcome | tuple[_Stream, _Task, pb.PollWorkerTask]:
        with self._cond:
            while True:
                if handle.reason is not None:
                    return Outcome(failure=cancelled_failure(handle))
                if self._closed:
                    # Not committed: a stopping engine counts in-flight calls at restart.
                    return Outcome(
                        failure=WorkerFailure(
                            "server is shutting down",
                            "UNAVAILABLE",
                            grpc.StatusCode.UNAVAILABLE.value[0],
                        )
                    )
                stream = self._pick(spec, excluded)
                if stream is not None:
                    break
                capable = {s.app_worker_id for s in self._streams if spec.flow_type in s.flow_types}
                if excluded and capable and capable <= excluded:
                    # Every connected Worker of this flow type said it does not know the name.
                    return Outcome(
                        failure=WorkerFailure(
                            f"no pull worker registered {spec.kind} {spec.name!r}",
                            "UNKNOWN_STEP" if spec.kind != "rpc" else "UNKNOWN_RPC",
                            grpc.StatusCode.UNIMPLEMENTED.value[0],
                        )
                    )
                now = time.monotonic()
                remaining = _QUEUE_RECHECK if deadline is None else deadline - now
                if remaining <= 0:
                    return Outcome(
                        failure=WorkerFailure(
                            "no pull worker accepted the task within the dispatch wait",
                            "NO_WORKER_AVAILABLE",
                            grpc.StatusCode.UNAVAILABLE.value[0],
                        )
                    )
                backoffs = [until - now for until in self._busy_until.values() if until > now]
                self._cond.wait(min(remaining, _QUEUE_RECHECK, *backoffs))
            task = _Task(task_id=uuid.uuid4().hex)
            stream.task = task
        deadline_ts = timestamp_pb2.Timestamp()
        # The Worker enforces this deadline itself; a small grace lets the
        # server's own timeout (which fails the attempt) win the race.
        deadline_ts.FromNanoseconds(int((time.time() + spec.timeout + 2.0) * 1e9))
        message = pb.PollWorkerTask(task_id=task.task_id, deadline=deadline_ts)
        getattr(message, spec.kind).CopyFrom(spec.request)
        return stream, task, message

    def _await(
        self, spec: CallSpec, handle: CallHandle, stream: _Stream, task: _Task
    ) -> Outcome | str:
        def cancel() -> None:
            with self._cond:
                if stream.task is task and not stream.closed:
                    stream.outbox.put(
                        pb.PollWorkerTaskResponse(
                            cancel_task=pb.PollWorkerTaskCancelTask(task_id=task.task_id)
                        )
                    )
            task.events.put(("cancelled", None))

        handle.set_canceller(cancel)
        try:
            while True:
                try:
                    kind, payload = task.events.get(timeout=_await_timeout(handle))
                except queue.Empty:
                    # The Worker enforces the task deadline itself; this is the
                    # backstop for one that stopped answering (RPCs have no watchdog).
                    handle.cancel("StartToClose")
                    continue
                if kind == "cancelled":
                    return Outcome(failure=cancelled_failure(handle))
                if kind == "lost":
                    return Outcome(
                        failure=WorkerFailure(
                            "pull worker stream closed during the task",
                            "UNAVAILABLE",
                            grpc.StatusCode.UNAVAILABLE.value[0],
                        )
                    )
                if kind == "unstarted":
                    return "unstarted"
                if kind == "reject":
                    if payload in (
                        pb.POLL_WORKER_TASK_REJECT_REASON_UNSPECIFIED,
                        pb.POLL_WORKER_TASK_REJECT_REASON_NO_CAPACITY,
                    ):
                        return "busy"
                    return "unknown"
                assert isinstance(payload, pb.PollWorkerTaskFrame)
                outcome = self._on_task_frame(spec, handle, payload)
                if outcome is not None:
                    return outcome
        finally:
            handle.set_canceller(None)

    @staticmethod
    def _on_task_frame(
        spec: CallSpec, handle: CallHandle, frame: pb.PollWorkerTaskFrame
    ) -> Outcome | None:
        handle.touch()
        kind = frame.WhichOneof("output")
        if kind == "rpc":
            return Outcome(result=frame.rpc)
        if kind == "worker_error":
            if handle.reason is not None:
                return Outcome(failure=cancelled_failure(handle))
            error = frame.worker_error
            return Outcome(failure=failure_from_worker_error(error, error.detail, 2))
        output = frame.wait_for if kind == "wait_for" else frame.execute
        if output.WhichOneof("output") == "result":
            return Outcome(result=output.result)
        if spec.on_frame is not None:
            spec.on_frame(output)
        return None


def _current(stream: _Stream, task_id: str) -> _Task | None:
    """The stream's task if ``task_id`` names it; a stale or stray ID gets None."""
    task = stream.task
    if task is None or task.task_id != task_id:
        return None
    return task
