"""Fails loudly when the SDK under `dex_agents._sdk_compat` is not the one it was checked on.

Each private name `_sdk_compat` relies on is pinned here: the installed
version, the attributes, and the signatures. A failure means: read the new
SDK's code for the same spot, update `_sdk_compat`, then CHECKED_SDK_VERSION.
"""

from __future__ import annotations

import asyncio
import importlib
import importlib.metadata
import inspect
from pathlib import Path
from types import SimpleNamespace
from typing import Any, cast

from dex import AsyncContext, Step
from dex._async_worker_dispatcher import AsyncWorkerDispatcher, _AsyncStepOutputEmitter
from dex._invocation_context import InvocationContext
from dex_agents import AgentSessionFlow, _sdk_compat
from dex_agents.session._step_base import SessionStep, WaitingSessionStep
from dex_agents.session._steps.model import AwaitUserMessage, RunModel


def test_the_installed_sdk_is_the_checked_version() -> None:
    assert importlib.metadata.version("dex-python-sdk") == _sdk_compat.CHECKED_SDK_VERSION


def test_the_output_queue_is_where_step_output_queue_looks() -> None:
    # InvocationContext keeps the emitter it is given as `_output_emitter`...
    parameters = inspect.signature(InvocationContext.__init__).parameters
    assert "output_emitter" in parameters
    assert "self._output_emitter = output_emitter" in inspect.getsource(InvocationContext)
    # ...whose `queue` is the asyncio.Queue every output is put on.
    emitter = _AsyncStepOutputEmitter()
    assert isinstance(emitter.queue, asyncio.Queue)
    context = cast(AsyncContext, SimpleNamespace(_output_emitter=emitter))
    assert _sdk_compat.step_output_queue(context) is emitter.queue
    assert _sdk_compat.step_output_queue(cast(AsyncContext, SimpleNamespace())) is None


def test_the_drain_takes_outputs_with_the_methods_the_watch_wraps() -> None:
    drain = inspect.getsource(AsyncWorkerDispatcher._drain_outputs)
    assert "emitter.queue.get_nowait()" in drain
    assert "emitter.queue.get()" in drain
    assert "self.queue.put_nowait(output)" in inspect.getsource(_AsyncStepOutputEmitter)


def test_the_pull_stream_looks_up_the_sdk_version_by_module_name() -> None:
    pull_worker: Any = importlib.import_module("dex._pull_worker")
    assert callable(pull_worker.sdk_version)
    assert "sdk_version=sdk_version()" in inspect.getsource(pull_worker)
    original = pull_worker.sdk_version
    try:
        _sdk_compat.cache_pull_stream_sdk_version()
        cached = pull_worker.sdk_version
        assert hasattr(cached, "cache_info")
        assert cached() == original() == _sdk_compat.CHECKED_SDK_VERSION
        _sdk_compat.cache_pull_stream_sdk_version()  # idempotent
        assert pull_worker.sdk_version is cached
    finally:
        pull_worker.sdk_version = original


def test_session_steps_meet_the_sdk_handler_rules() -> None:
    # SessionStep relies on: a Step keeping Step.wait_for has no WaitFor, and the
    # input codec comes from the handler annotations.
    assert issubclass(SessionStep, Step)
    assert vars(Step)["wait_for"] is RunModel.wait_for
    assert vars(Step)["wait_for"] is not vars(AwaitUserMessage)["wait_for"]
    assert issubclass(AwaitUserMessage, WaitingSessionStep)
    for handler in (RunModel.execute, AwaitUserMessage.execute, AwaitUserMessage.wait_for):
        assert inspect.iscoroutinefunction(handler)
        hints = handler.__annotations__
        assert hints["context"] is AsyncContext
    assert AwaitUserMessage.execute.__annotations__["input"] is type(None)
    flow_source = inspect.getsource(importlib.import_module("dex.flow"))
    assert "type(step).wait_for is Step.wait_for" in flow_source
    assert "hints = get_type_hints(handler)" in flow_source


def _loading_requests(channel_count: int) -> list[Any]:
    """Each request kind the hydrator sees, loading many channels, as parsed off the wire."""
    from dex.dexpb import dex_pb2 as pb

    requests: list[Any] = []
    for kind in (
        pb.InvokeWaitForMethodRequest,
        pb.InvokeExecuteMethodRequest,
        pb.InvokeWorkerRPCRequest,
    ):
        request = kind()
        request.context.flow_id = "flow-1"
        if isinstance(request, pb.InvokeWorkerRPCRequest):
            request.input.string_value = "input"
        else:
            request.step_input.string_value = "input"
        for channel in range(channel_count):
            messages = request.loaded_channel_messages[f"Channel{channel}"].messages
            for index in range(2):
                message = messages.add(message_id=f"id-{channel}-{index}")
                message.value.string_value = f"text-{channel}-{index}"
        requests.append(kind.FromString(request.SerializeToString()))
    return requests


async def _hydrate(hydrator: Any, request: Any) -> Any:
    name = type(request).__name__
    if name == "InvokeWaitForMethodRequest":
        return await hydrator.wait_for_request(request)
    if name == "InvokeExecuteMethodRequest":
        return await hydrator.execute_request(request)
    return await hydrator.rpc_request(request)


def test_loaded_channel_messages_keep_their_own_values() -> None:
    # With 48 channels upb orders the request's map and the SDK's copy of it
    # differently in most processes; the SDK's own hydrator then hands values to
    # the wrong channels. Ours must pair every value with its own message id.
    hydrator = _sdk_compat.ChannelKeyedHydrator(cast(Any, None), cast(Any, None))
    for request in _loading_requests(48):
        result = asyncio.run(_hydrate(hydrator, request))
        assert result.context.flow_id == "flow-1"
        assert len(result.loaded_channel_messages) == 48
        for name, channel in result.loaded_channel_messages.items():
            assert len(channel.messages) == 2
            for message in channel.messages:
                expected = message.message_id.replace("id-", "text-")
                assert message.value.string_value == expected, (name, message.message_id)
                assert name == f"Channel{message.message_id.split('-')[1]}"


def test_one_loaded_channel_goes_straight_to_the_sdk() -> None:
    hydrator = _sdk_compat.ChannelKeyedHydrator(cast(Any, None), cast(Any, None))
    for request in _loading_requests(1):
        result = asyncio.run(_hydrate(hydrator, request))
        assert result == request


def test_the_sdk_hydrator_pairs_channel_values_by_two_map_iterations() -> None:
    # The bug ChannelKeyedHydrator works around: gather from `request`'s map,
    # write back through `result`'s. When this changes, re-check the workaround.
    from dex._async_value_hydrator import AsyncValueHydrator

    for method in ("wait_for_request", "execute_request", "rpc_request"):
        source = inspect.getsource(getattr(AsyncValueHydrator, method))
        assert "request.loaded_channel_messages.values()" in source
        assert "result.loaded_channel_messages.values()" in source
    worker_source = inspect.getsource(importlib.import_module("dex.async_worker"))
    assert "AsyncValueHydrator(self._flow_service, blob_cache)" in worker_source


def test_agent_workers_hydrate_with_the_channel_keyed_hydrator(tmp_path: Path) -> None:
    from dex_agents.worker import AgentWorker
    from dex_agents_testing import RunLog, ScriptedRunner

    async_worker: Any = importlib.import_module("dex.async_worker")
    original = async_worker.AsyncValueHydrator
    try:
        flow = AgentSessionFlow(
            ScriptedRunner([], [], RunLog(str(tmp_path / "log"))), flow_type="CompatAgent"
        )

        async def build() -> AgentWorker:  # AsyncWorker needs a running loop
            return AgentWorker([flow], server_address="127.0.0.1:1")

        worker = asyncio.run(build())
        assert async_worker.AsyncValueHydrator is _sdk_compat.ChannelKeyedHydrator
        _sdk_compat.key_loaded_channel_messages_by_name()  # idempotent
        assert async_worker.AsyncValueHydrator is _sdk_compat.ChannelKeyedHydrator
        worker.close_cache()
    finally:
        async_worker.AsyncValueHydrator = original
