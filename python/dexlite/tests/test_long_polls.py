"""Long polls whose callers gave up must not hold the server's threads.

Each long poll blocks a thread of dexlite's pool (512) for up to its wait. A
client whose deadline is shorter than the wait it asked for is common (a UI
reconnecting, a fuzzer, an SDK with its own deadline), so abandoned polls have
to end with their callers, or they starve every later RPC and hold shutdown
until the longest wait runs out.
"""

from __future__ import annotations

import grpc
import pytest
from dex.dexpb import dex_pb2 as pb
from dex.dexpb import dex_pb2_grpc
from dexlite.testing import DexliteProcess
from google.protobuf import empty_pb2

pytestmark = pytest.mark.integration

ABANDONED = 600  # more than the server's 512 threads
LONG_WAIT = 300  # dexlite's max_wait_seconds
CALLER_DEADLINE = 0.3


def _abandon_long_polls(stub: dex_pb2_grpc.FlowServiceStub) -> None:
    calls = [
        stub.ReadStream.future(
            pb.ReadStreamRequest(
                flow_type="Poller",
                flow_id=f"poller-{index}",
                stream_name="events",
                wait_time_seconds=LONG_WAIT,
            ),
            timeout=CALLER_DEADLINE,
        )
        for index in range(ABANDONED // 2)
    ] + [
        stub.WaitForFlow.future(
            pb.WaitForFlowRequest(flow_id="polled", wait_time_seconds=LONG_WAIT),
            timeout=CALLER_DEADLINE,
        )
        for _ in range(ABANDONED - ABANDONED // 2)
    ]
    for call in calls:
        assert call.exception() is not None
        assert call.code() == grpc.StatusCode.DEADLINE_EXCEEDED


def test_abandoned_long_polls_free_their_threads_and_shutdown_is_prompt() -> None:
    with DexliteProcess() as server:
        with grpc.insecure_channel(server.address) as channel:
            stub = dex_pb2_grpc.FlowServiceStub(channel)
            stub.StartFlow(
                pb.StartFlowRequest(
                    flow_id="polled", flow_type="Polled", start_step_type="Start", request_id="r"
                ),
                timeout=30,
            )
            _abandon_long_polls(stub)
            # Served by a freed thread: with the polls still waiting it would queue
            # behind them for minutes.
            assert stub.GetServerInfo(empty_pb2.Empty(), timeout=20).server_version
            with pytest.raises(grpc.RpcError) as timed_out:
                stub.ReadStream(
                    pb.ReadStreamRequest(
                        flow_type="Poller", flow_id="p", stream_name="s", wait_time_seconds=1
                    ),
                    timeout=20,
                )
            assert timed_out.value.code() == grpc.StatusCode.DEADLINE_EXCEEDED
            assert "long poll timed out" in (timed_out.value.details() or "")
        # SIGTERM ends it well inside stop_timeout: no thread waits out a 300 s poll.
        assert server.stop() == 0
