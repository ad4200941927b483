"""A pull Worker stream the test drives by hand: it registers, then the test answers.

The SDK Worker always accepts, rejects or runs a task by its own rules; these
tests need the cases in between (a stream that takes a task and closes before
any frame, one that sends a heartbeat and then dies), so they speak
`WorkerTaskService.PollWorkerTask` directly.
"""

from __future__ import annotations

import queue
import threading
import time
import uuid

import grpc
from dex.dexpb import dex_pb2 as pb
from dex.dexpb import dex_pb2_grpc

__all__ = ["RawPullStream"]


class RawPullStream:
    """One registered stream for `flow_type`; every frame dexlite sends lands in a queue."""

    def __init__(self, address: str, flow_type: str) -> None:
        self._channel = grpc.insecure_channel(address)
        self._outgoing: queue.Queue[pb.PollWorkerTaskRequest | None] = queue.Queue()
        self._incoming: queue.Queue[pb.PollWorkerTaskResponse | None] = queue.Queue()
        self._outgoing.put(
            pb.PollWorkerTaskRequest(
                register=pb.PollWorkerTaskRegister(
                    queue=flow_type,
                    app_worker_id=f"raw-{uuid.uuid4().hex[:8]}",
                    flow_types=[flow_type],
                    sdk_name="python",
                    sdk_version="1.23.0",
                )
            )
        )
        stub = dex_pb2_grpc.WorkerTaskServiceStub(self._channel)
        self._call = stub.PollWorkerTask(iter(self._outgoing.get, None))
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()
        first = self._incoming.get(timeout=30)
        assert first is not None, "the stream ended before it registered"
        assert first.WhichOneof("frame") == "registered", first

    def _read(self) -> None:
        try:
            for response in self._call:
                self._incoming.put(response)
        except grpc.RpcError:
            pass  # the test closed the stream
        finally:
            self._incoming.put(None)

    def next_task(self, timeout: float = 30.0) -> pb.PollWorkerTask:
        """The next task dexlite hands this stream (pings are answered on the way)."""
        deadline = time.monotonic() + timeout
        while True:
            response = self._incoming.get(timeout=max(0.0, deadline - time.monotonic()))
            if response is None:
                raise AssertionError("the stream ended before a task came")
            kind = response.WhichOneof("frame")
            if kind == "task":
                return response.task
            if kind == "ping":
                self._outgoing.put(pb.PollWorkerTaskRequest(pong=pb.PollWorkerTaskPong()))

    def reject_busy(self, task: pb.PollWorkerTask) -> None:
        self._outgoing.put(
            pb.PollWorkerTaskRequest(
                reject=pb.PollWorkerTaskReject(
                    task_id=task.task_id,
                    reason=pb.POLL_WORKER_TASK_REJECT_REASON_NO_CAPACITY,
                )
            )
        )

    def heartbeat(self, task: pb.PollWorkerTask) -> None:
        """One Execute output frame: from now on dexlite counts the task as started."""
        self._outgoing.put(
            pb.PollWorkerTaskRequest(
                task_frame=pb.PollWorkerTaskFrame(
                    task_id=task.task_id,
                    execute=pb.InvokeExecuteMethodOutput(heartbeat=pb.StepMethodHeartbeat()),
                )
            )
        )

    def stream_write(self, task: pb.PollWorkerTask, stream_name: str, text: str) -> None:
        """A Stream write frame, which the test can read back once dexlite applied it."""
        self._outgoing.put(
            pb.PollWorkerTaskRequest(
                task_frame=pb.PollWorkerTaskFrame(
                    task_id=task.task_id,
                    execute=pb.InvokeExecuteMethodOutput(
                        stream_write=pb.StepStreamWrite(
                            stream_name=stream_name,
                            stream_capacity_bytes=1 << 16,
                            value=pb.Value(string_value=text),
                        )
                    ),
                )
            )
        )

    def close(self) -> None:
        """Drops the stream without a half-close, as a killed Worker's connection ends."""
        self._call.cancel()
        self._reader.join(10)
        self._channel.close()
