"""SessionStep and WaitingSessionStep: the typed bases of the session Steps.

SDK 1.23.0 declares `Step.execute` and `Step.wait_for` as synchronous methods
taking `Context`; its AsyncWorker (Registry `allow_async_handlers=True`) also
runs coroutine handlers taking `AsyncContext`, which those signatures cannot
express, and mypy checks an override against every class above it. So the
async handlers are defined here, once, under the only two `type: ignore`s, and
a Step implements `run` (and a waiting Step `wait`), which no SDK method names.

The SDK reads a handler's parameter annotations to pick the input codec, so
each Step class gets its own `execute` / `wait_for` annotated with the input
type of its `run` (`__init_subclass__`). Only WaitingSessionStep defines
`wait_for`: the SDK treats a Step whose class keeps `Step.wait_for` as one
without a WaitFor.
"""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Callable, Coroutine
from typing import Any, ClassVar, TypeVar, get_type_hints

from dex import AsyncContext, Step, StepDecision, StepOptions, Wait, dead_end
from dex_agents_contracts import AgentToolCall, ToolCallStatus

from dex_agents.session._event_writer import StepEventWriter
from dex_agents.session._runtime import SessionRuntime

__all__ = ["RecordStep", "SessionStep", "WaitingRecordStep", "WaitingSessionStep"]

InputT = TypeVar("InputT")

_Handler = Callable[[Any, AsyncContext, Any], Coroutine[Any, Any, Any]]


class SessionStep(Step[InputT]):
    """A Step of the session Flow: it shares the Flow type's runtime and runs `run`."""

    def __init__(self, runtime: SessionRuntime) -> None:
        self._runtime = runtime

    @abstractmethod
    def get_step_options(self) -> StepOptions:
        """Every session Step sets its options (SYNC durability on both methods)."""

    @abstractmethod
    async def run(self, context: AsyncContext, input: InputT) -> StepDecision:
        """The Step's Execute."""

    # The SDK's sync signature cannot say "coroutine taking AsyncContext" (see above).
    async def execute(self, context: AsyncContext, input: InputT) -> StepDecision:  # type: ignore[override]
        with self._runtime.tracing.attempt(context, self.get_step_type()):
            return await self.run(context, input)

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        input_type = get_type_hints(cls.run).get("input")
        if input_type is None or isinstance(input_type, TypeVar):
            return  # an abstract base without a concrete input type
        handlers: dict[str, tuple[_Handler, type[object]]] = {
            "execute": (SessionStep.execute, StepDecision)
        }
        if issubclass(cls, WaitingSessionStep):
            handlers["wait_for"] = (WaitingSessionStep.wait_for, Wait)
        for name, (handler, returns) in handlers.items():
            setattr(cls, name, _annotated(handler, input_type, returns))


class WaitingSessionStep(SessionStep[InputT]):
    """A session Step with a WaitFor: it implements `wait` as well."""

    @abstractmethod
    async def wait(self, context: AsyncContext, input: InputT) -> Wait:
        """The Step's WaitFor."""

    async def wait_for(self, context: AsyncContext, input: InputT) -> Wait:  # type: ignore[override]
        return await self.wait(context, input)


def _annotated(handler: _Handler, input_type: object, returns: type[object]) -> _Handler:
    """A copy of `handler` whose annotations name the Step's concrete input type."""

    async def annotated(self: Any, context: AsyncContext, input: Any) -> Any:
        return await handler(self, context, input)

    annotated.__name__ = handler.__name__
    annotated.__qualname__ = handler.__qualname__
    annotated.__annotations__ = {"context": AsyncContext, "input": input_type, "return": returns}
    return annotated


# Defined after `_annotated`, which their class creation (`__init_subclass__`) calls.
class RecordStep(SessionStep[str]):
    """A Step about one tool call: its input is the call ID, its work `decide`.

    It acts only while the record still has `record_status`, the status that sent
    the call here; any other status means another Step settled the call (a retry
    after the commit, a cancelled turn), so it ends without writing anything.
    """

    record_status: ClassVar[ToolCallStatus]

    @abstractmethod
    async def decide(
        self, context: AsyncContext, record: AgentToolCall, events: StepEventWriter
    ) -> StepDecision:
        """The Step's Execute for a record in `record_status`, with the turn's events open."""

    async def run(self, context: AsyncContext, input: str) -> StepDecision:
        record = self._runtime.record_in(context, input, self.record_status)
        if record is None:
            return dead_end()
        with self._runtime.writer(context, record.turn_id) as events:
            return await self.decide(context, record, events)


class WaitingRecordStep(RecordStep, WaitingSessionStep[str]):
    """A RecordStep with a WaitFor."""
