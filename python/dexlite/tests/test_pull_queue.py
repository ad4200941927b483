"""Pull mode: a Step waits in the queue until a Worker runs it, and only a run is an attempt.

A hand-driven stream (helpers.raw_pull) plays the Worker that is busy, that takes
a task and vanishes before any frame, or that dies after one; a real SDK Worker
then runs what is left. The Step allows one attempt with a 1 s method timeout,
so any attempt spent on queueing, or any timeout counted while queued, would
send the Flow to its failure route instead of `ran on attempt 1`. A restart of
dexlite spends the attempt only of a call that reached a Worker.
"""

from __future__ import annotations

import tempfile
import time
import uuid
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import dex
import grpc
import pytest
from dex.dexpb import dex_pb2 as pb
from dex.dexpb import dex_pb2_grpc
from dexlite.testing import DexliteProcess
from helpers.raw_pull import RawPullStream
from helpers.workers import ThreadWorker

pytestmark = pytest.mark.integration

_DISPATCH_WAIT = 0.2
marks = dex.Stream("marks", str, 1 << 16)


class Once(dex.Step[str]):
    """One attempt with a 1 s method timeout; says which attempt ran it."""

    def get_step_options(self) -> dex.StepOptions | None:
        return dex.StepOptions(
            execute_retry=dex.RetryPolicy(maximum_attempts=1),
            execute_method_timeout=timedelta(seconds=1),
        ).on_execute_failure_proceed_to(Failed)

    def execute(self, context: dex.Context, input: str) -> dex.StepDecision:
        return dex.graceful_complete(f"ran on attempt {context.attempt}")


class Failed(dex.Step[str]):
    def execute(self, context: dex.Context, input: str) -> dex.StepDecision:
        error = context.recovery_error
        assert error is not None
        return dex.graceful_complete(f"failed: {error.error_type}: {error.detail}")


class PullQueue(dex.Flow[str]):
    def get_flow_type(self) -> str:
        return "PullQueue"

    def get_steps(self) -> dex.StepList[str]:
        return dex.StepList.start_step(Once()).other_steps(Failed())

    def get_persistence_schema(self) -> dex.PersistenceSchema:
        return dex.PersistenceSchema.of(marks)

    @dex.rpc
    def ping(self, context: dex.Context, text: str) -> dex.RPCResult[str]:
        return dex.RPCResult(text)


FLOW = PullQueue()
REGISTRY = dex.Registry((FLOW,))


@pytest.fixture
def server(tmp_root: Path) -> Iterator[DexliteProcess]:
    """A dexlite of its own with a short dispatch wait, so waiting past it is quick."""
    path = tmp_root / f"pull-queue-{uuid.uuid4().hex[:8]}.sqlite"
    process = DexliteProcess(str(path), "--pull-dispatch-wait", str(_DISPATCH_WAIT)).start()
    yield process
    process.stop()


@pytest.fixture
def client(server: DexliteProcess) -> Iterator[dex.Client]:
    with tempfile.TemporaryDirectory() as cache_dir:
        cache = dex.open_blob_cache(dex.BlobCacheConfig(directory=cache_dir, max_bytes=1 << 24))
        client = dex.Client(
            REGISTRY,
            cache,
            dex.ClientOptions(
                server_address=server.address, worker_target=dex.WorkerTarget(pull=True)
            ),
        )
        yield client
        client.close()
        cache.close()


def _finish_on_real_worker(server: DexliteProcess, client: dex.Client, flow_id: str) -> str:
    worker = ThreadWorker(server.address, "pull", registry=REGISTRY).start()
    try:
        result = client.wait_for_flow(flow_id, timeout=timedelta(seconds=60))
        return result.single_output(str)
    finally:
        worker.stop()


def _failed_attempts(server: DexliteProcess, flow_id: str) -> int:
    """Failed Execute attempts in the Flow's history (raw stub: the SDK reads no history)."""
    with grpc.insecure_channel(server.address) as channel:
        stub = dex_pb2_grpc.FlowServiceStub(channel)
        summary = stub.GetFlowSummary(pb.GetFlowSummaryRequest(flow_id=flow_id))
        events = stub.GetHistoryEvents(
            pb.GetHistoryEventsRequest(flow_id=flow_id, run_id=summary.flow_execution_id.run_id)
        ).events
    return sum(1 for e in events if e.WhichOneof("payload") == "step_execute_failed")


def test_a_step_outwaits_the_dispatch_wait_and_its_timeout_while_workers_are_busy(
    server: DexliteProcess, client: dex.Client
) -> None:
    busy = RawPullStream(server.address, FLOW.get_flow_type())
    flow_id = f"busy-{uuid.uuid4().hex[:8]}"
    client.start_flow(FLOW, flow_id, "x")
    first = time.monotonic()
    offers = 0
    # Every offer is answered NO_CAPACITY until they span the 1 s method timeout
    # and several dispatch waits: the Step must still be queued, not failed.
    while time.monotonic() - first < 1.5:
        busy.reject_busy(busy.next_task())
        offers += 1
    busy.close()
    assert offers > 1
    assert _finish_on_real_worker(server, client, flow_id) == "ran on attempt 1"
    assert _failed_attempts(server, flow_id) == 0


def test_a_stream_that_closes_before_any_frame_spends_no_attempt(
    server: DexliteProcess, client: dex.Client
) -> None:
    vanishing = RawPullStream(server.address, FLOW.get_flow_type())
    flow_id = f"vanish-{uuid.uuid4().hex[:8]}"
    client.start_flow(FLOW, flow_id, "x")
    vanishing.next_task()  # taken, then the connection drops with no frame sent
    vanishing.close()
    assert _finish_on_real_worker(server, client, flow_id) == "ran on attempt 1"
    assert _failed_attempts(server, flow_id) == 0


def test_a_stream_lost_after_a_frame_fails_the_attempt(
    server: DexliteProcess, client: dex.Client
) -> None:
    dying = RawPullStream(server.address, FLOW.get_flow_type())
    flow_id = f"dies-{uuid.uuid4().hex[:8]}"
    client.start_flow(FLOW, flow_id, "x")
    task = dying.next_task()
    dying.heartbeat(task)
    dying.stream_write(task, marks.name, "started")
    # The mark is readable once dexlite applied both frames: the task had started.
    mark = client.read_stream(flow_id, marks, timeout=timedelta(seconds=30))
    assert mark.value == "started"
    dying.close()
    output = _finish_on_real_worker(server, client, flow_id)
    assert output == "failed: UNAVAILABLE: pull worker stream closed during the task"
    assert _failed_attempts(server, flow_id) == 1


def test_an_rpc_still_gives_up_after_the_dispatch_wait(
    server: DexliteProcess, client: dex.Client
) -> None:
    flow_id = f"rpc-{uuid.uuid4().hex[:8]}"
    client.start_flow(FLOW, flow_id, "x")
    with pytest.raises(dex.WorkerInvocationError) as info:
        client.invoke_rpc(FLOW.ping, flow_id, "hello")
    assert "no pull worker accepted the task within the dispatch wait" in str(info.value)
    assert _finish_on_real_worker(server, client, flow_id) == "ran on attempt 1"


def test_a_single_attempt_step_still_queued_at_a_restart_spends_no_attempt(
    server: DexliteProcess, client: dex.Client
) -> None:
    flow_id = f"queued-{uuid.uuid4().hex[:8]}"
    client.start_flow(FLOW, flow_id, "x")  # committed: the Step waits for a Worker
    server.kill()
    server.restart()
    assert _finish_on_real_worker(server, client, flow_id) == "ran on attempt 1"
    assert _failed_attempts(server, flow_id) == 0


def test_a_single_attempt_step_a_worker_held_at_a_restart_spends_its_attempt(
    server: DexliteProcess, client: dex.Client
) -> None:
    holder = RawPullStream(server.address, FLOW.get_flow_type())
    flow_id = f"held-{uuid.uuid4().hex[:8]}"
    client.start_flow(FLOW, flow_id, "x")
    holder.next_task()  # it reached a Worker, which may have run it
    server.kill()
    holder.close()
    server.restart()
    output = _finish_on_real_worker(server, client, flow_id)
    assert output == "failed: ServerRestart: server restarted during the call"
    assert _failed_attempts(server, flow_id) == 1
