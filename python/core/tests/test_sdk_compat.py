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
from types import SimpleNamespace
from typing import Any, cast

from dex import AsyncContext, Step
from dex._async_worker_dispatcher import AsyncWorkerDispatcher, _AsyncStepOutputEmitter
from dex._invocation_context import InvocationContext
from dex_agents import _sdk_compat
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
