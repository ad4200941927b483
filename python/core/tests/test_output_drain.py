"""OutputDrainWatch against SDK 1.23.0's own output emitter and drain loop.

The tool Steps start a tool only once `written()` returned, so these tests pin
the SDK behaviour that promise rests on: the drain asks for the next output only
after the transport finished writing the previous one. A gated fake transport
decides when each write finishes.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from types import SimpleNamespace
from typing import Any, cast

import pytest
from dex import AsyncContext, StepOutput
from dex._async_worker_dispatcher import AsyncWorkerDispatcher, _AsyncStepOutputEmitter
from dex_agents.session._output_drain import OutputDrainWatch

DEADLINE_SECONDS = 5.0


def _output(name: str) -> StepOutput:
    """A named stand-in: the drain and the watch never look inside an output."""
    return cast(StepOutput, name)


def _context(emitter: _AsyncStepOutputEmitter | None) -> AsyncContext:
    return cast(AsyncContext, SimpleNamespace(_output_emitter=emitter))


async def _until(condition: Callable[[], bool]) -> None:
    """Yields to the loop until `condition` holds, failing past the deadline."""
    deadline = asyncio.get_running_loop().time() + DEADLINE_SECONDS
    while not condition():
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError("condition not reached before the deadline")
        await asyncio.sleep(0)


async def _spin(times: int = 50) -> None:
    for _ in range(times):
        await asyncio.sleep(0)


class GatedTransport:
    """Consumes the SDK's drain loop; each write finishes when the test opens its gate."""

    def __init__(self, emitter: _AsyncStepOutputEmitter, handler: asyncio.Task[Any]) -> None:
        self.log: list[str] = []
        self._gates: dict[str, asyncio.Event] = {}
        drain = AsyncWorkerDispatcher._drain_outputs(
            cast(AsyncWorkerDispatcher, None), emitter, handler
        )
        self.task = asyncio.create_task(self._consume(drain))

    def gate(self, output: str) -> asyncio.Event:
        return self._gates.setdefault(output, asyncio.Event())

    async def _consume(self, drain: Any) -> None:
        async for output in drain:
            self.log.append(f"writing {output}")
            await self.gate(output).wait()
            self.log.append(f"wrote {output}")


StepBody = Callable[[_AsyncStepOutputEmitter, list[str]], Awaitable[None]]


async def _drive(body: StepBody, check: Callable[[GatedTransport], Awaitable[None]]) -> list[str]:
    """Runs `body` as a Step handler drained into a GatedTransport while `check` opens
    the gates; the handler stays open until `check` returned, like a running tool."""
    emitter = _AsyncStepOutputEmitter()
    checked = asyncio.Event()

    async def step() -> None:
        await body(emitter, transport.log)
        await checked.wait()

    handler = asyncio.create_task(step())
    transport = GatedTransport(emitter, handler)
    await check(transport)
    checked.set()
    await asyncio.wait_for(asyncio.gather(handler, transport.task), DEADLINE_SECONDS)
    return transport.log


def test_written_waits_for_the_last_queued_write() -> None:
    async def body(emitter: _AsyncStepOutputEmitter, log: list[str]) -> None:
        with OutputDrainWatch(_context(emitter)) as watch:
            emitter.emit_nowait(_output("event"))
            await emitter.emit(_output("heartbeat"))
            await watch.written()
            log.append("written")

    async def check(transport: GatedTransport) -> None:
        await _until(lambda: "writing event" in transport.log)
        transport.gate("event").set()
        await _until(lambda: "writing heartbeat" in transport.log)
        await _spin()
        assert "written" not in transport.log  # the heartbeat's write has not finished
        transport.gate("heartbeat").set()
        await _until(lambda: "written" in transport.log)

    log = asyncio.run(_drive(body, check))
    assert log == [
        "writing event",
        "wrote event",
        "writing heartbeat",
        "wrote heartbeat",
        "written",
    ]


def test_outputs_waiting_at_entry_count_too() -> None:
    async def body(emitter: _AsyncStepOutputEmitter, log: list[str]) -> None:
        emitter.emit_nowait(_output("earlier"))
        with OutputDrainWatch(_context(emitter)) as watch:
            await watch.written()
            log.append("written")

    async def check(transport: GatedTransport) -> None:
        await _until(lambda: "writing earlier" in transport.log)
        await _spin()
        assert "written" not in transport.log
        transport.gate("earlier").set()
        await _until(lambda: "written" in transport.log)

    assert asyncio.run(_drive(body, check)) == ["writing earlier", "wrote earlier", "written"]


def test_the_queue_gets_its_own_methods_back() -> None:
    emitter = _AsyncStepOutputEmitter()
    with OutputDrainWatch(_context(emitter)):
        assert "get_nowait" in vars(emitter.queue)
    assert not {"put_nowait", "get_nowait", "get"} & set(vars(emitter.queue))
    after = _output("after")
    emitter.emit_nowait(after)
    assert emitter.queue.get_nowait() is after


@pytest.mark.parametrize("has_emitter", [False, True])
def test_nothing_to_wait_for_returns_at_once(has_emitter: bool) -> None:
    # No SDK output queue (not an SDK async Step context), or nothing queued.
    async def scenario() -> None:
        emitter = _AsyncStepOutputEmitter() if has_emitter else None
        with OutputDrainWatch(_context(emitter)) as watch:
            await asyncio.wait_for(watch.written(), DEADLINE_SECONDS)

    asyncio.run(scenario())
