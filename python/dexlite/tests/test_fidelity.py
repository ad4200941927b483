"""Where dexlite answers as the Dex Server does (issue #15), through the real SDK.

A session that passes on dexlite must pass on the server: the FAIL-policy flow
timeout text, no error message after StopFlow TERMINATE or CANCEL, and (under
``--cancel-only-heartbeating``) a cancelled Step without a heartbeat timeout
that runs to its end while its result is discarded.
"""

from __future__ import annotations

import tempfile
import uuid
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import dex
import pytest
from dexlite.testing import DexliteProcess, free_port, wait_until
from helpers import fidelity
from helpers.flows import CHAT, TIMERS

pytestmark = pytest.mark.integration


def test_timed_out_flow_names_its_timeout(client: dex.Client, flow_id: str) -> None:
    options = dex.StartFlowOptions(
        timeout=timedelta(seconds=1), timeout_policy=dex.FlowTimeoutPolicy.FAIL
    )
    client.start_flow(TIMERS, flow_id, 3600, options)
    result = client.wait_for_flow(flow_id)
    assert result.status == dex.FlowStatus.FAILED
    assert result.error_type == dex.FlowErrorType.FLOW_TIMEOUT
    assert result.error_message == "Flow timed out after 1 seconds"


@pytest.mark.parametrize(
    ("stop", "status"),
    [
        (dex.StopType.TERMINATE, dex.FlowStatus.TERMINATED),
        (dex.StopType.CANCEL, dex.FlowStatus.CANCELED),
    ],
)
def test_stop_reason_is_no_error_message(
    client: dex.Client, flow_id: str, stop: dex.StopType, status: dex.FlowStatus
) -> None:
    client.start_flow(CHAT, flow_id, "x")
    client.stop_flow(flow_id, dex.StopFlowOptions(type=stop, reason="operator said so"))
    result = client.wait_for_flow(flow_id)
    assert result.status == status
    assert not result.error_message


def test_stop_fail_keeps_its_reason(client: dex.Client, flow_id: str) -> None:
    client.start_flow(CHAT, flow_id, "x")
    client.stop_flow(flow_id, dex.StopFlowOptions(type=dex.StopType.FAIL, reason="bye"))
    result = client.wait_for_flow(flow_id)
    assert result.status == dex.FlowStatus.FAILED
    assert result.error_message == "bye"


# -- cancelling a running Step -------------------------------------------------------


@pytest.fixture(params=[False, True], ids=["abort-all", "cancel-only-heartbeating"])
def heartbeat_only(request: pytest.FixtureRequest) -> bool:
    value: bool = request.param
    return value


@pytest.fixture
def async_client(tmp_root: Path, heartbeat_only: bool) -> Iterator[dex.Client]:
    """A dexlite of its own (with or without the option), an AsyncWorker and a Client."""
    extra = ("--cancel-only-heartbeating",) if heartbeat_only else ()
    db = tmp_root / f"fidelity-{uuid.uuid4().hex[:8]}.sqlite"
    with DexliteProcess(str(db), "--sync", "normal", *extra) as server:
        worker = fidelity.AsyncThreadWorker(server.address, free_port()).start()
        cache_dir = tempfile.TemporaryDirectory()
        cache = dex.open_blob_cache(
            dex.BlobCacheConfig(directory=cache_dir.name, max_bytes=1 << 24)
        )
        client = dex.Client(
            fidelity.ASYNC_REGISTRY,
            cache,
            dex.ClientOptions(server_address=server.address, worker_target=worker.target),
        )
        try:
            yield client
        finally:
            client.close()
            cache.close()
            cache_dir.cleanup()
            worker.stop()


def _cut(client: dex.Client, flow_id: str, kind: str) -> str:
    """Starts a flow whose Runner is cancelled by its sibling; returns the run's key."""
    key = uuid.uuid4().hex[:12]
    fidelity.prepare(key)
    client.start_flow(fidelity.FIDELITY, flow_id, f"{kind}:{key}")
    step_type = "QuietRunner" if kind == "quiet" else "Runner"
    # A cancelled execution counts as completed for WaitForStepCompletion.
    client.wait_for_step_completion(
        flow_id, dex.StepExecutionId(step_type, 1), dex.WaitForStepCompletionOptions()
    )
    return key


def test_cancelled_step_without_heartbeat_timeout(
    async_client: dex.Client, flow_id: str, heartbeat_only: bool
) -> None:
    key = _cut(async_client, flow_id, "quiet")
    if heartbeat_only:
        # The Dex Server lets it run: nothing reaches the handler until it ends...
        assert fidelity.RUNS[key] == "started"
        fidelity.RELEASE[key].set()
        wait_until(lambda: fidelity.RUNS[key] == "finished", what="the runner to finish")
    else:
        wait_until(lambda: fidelity.RUNS[key] == "cancelled", what="the runner to be aborted")
    # ...and its force_complete is discarded: the flow completes through Closer.
    async_client.invoke_rpc(fidelity.FIDELITY.send, flow_id, "the test")
    assert async_client.wait_for_flow(flow_id).single_output(str) == "closed by the test"


def test_cancelled_step_with_heartbeat_timeout_is_aborted(
    async_client: dex.Client, flow_id: str
) -> None:
    key = _cut(async_client, flow_id, "beating")
    wait_until(lambda: fidelity.RUNS[key] == "cancelled", what="the runner to be aborted")
    async_client.invoke_rpc(fidelity.FIDELITY.send, flow_id, "the test")
    assert async_client.wait_for_flow(flow_id).single_output(str) == "closed by the test"
