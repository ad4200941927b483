"""RemoteRunner's small methods wait on the event loop instead of blocking it.

The runner service here is a grpc.aio server on the very loop that calls it, and
each handler holds its answer until a second task on that loop lets it go. A
call that blocked the loop would starve both the server and that task, and fail
on its deadline; an awaited call lets them run and gets its answer.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

import grpc
import grpc.aio
from dex_agents import RemoteRunner
from dex_agents._remote.methods import (
    BUILD_UNFINISHED_TURN_MESSAGES,
    BUILD_USER_MESSAGE,
    DESCRIBE_RUNNER,
    ESTIMATE_INPUT_TOKENS,
    SELECT_COMPACTION_CUTOFF,
    SERVICE,
    Method,
)
from dex_agents._runner.awaitables import resolved
from dex_agents._runner.declared import declared_runner
from dex_agents.offline import FakeSession, stored_message
from dex_agents.runner import FrameworkMessage
from dex_agents_contracts import (
    BuildUnfinishedTurnMessagesResponse,
    BuildUserMessageResponse,
    DescribeRunnerResponse,
    EstimateInputTokensResponse,
    MessageRole,
    RunnerFrameworkMessage,
    SelectCompactionCutoffResponse,
    decode,
    encode,
)
from dex_agents_testing.processes import free_port

FLOW_TYPE = "HeldRunner"


class HeldService:
    """Answers each call only once `release` is set; `entered` says a call arrived."""

    def __init__(self) -> None:
        self.entered = asyncio.Event()
        self.release = asyncio.Event()

    async def hold(self) -> None:
        self.entered.set()
        await self.release.wait()

    def handler(self) -> grpc.GenericRpcHandler:
        def unary(method: Method[Any, Any], answer: Callable[[Any, Any], Awaitable[Any]]) -> Any:
            return grpc.unary_unary_rpc_method_handler(
                answer,
                request_deserializer=lambda data: decode(method.request, data.decode("utf-8")),
                response_serializer=lambda message: encode(message).encode("utf-8"),
            )

        async def describe(_: Any, __: Any) -> DescribeRunnerResponse:
            return DescribeRunnerResponse(
                builds_unfinished_turn_messages=True, compacts_context=True
            )

        async def user_message(request: Any, _: Any) -> BuildUserMessageResponse:
            await self.hold()
            return BuildUserMessageResponse(message=_wire_user(request.text))

        async def estimate(request: Any, _: Any) -> EstimateInputTokensResponse:
            await self.hold()
            return EstimateInputTokensResponse(input_tokens=10 * len(request.turn.messages))

        async def cutoff(request: Any, _: Any) -> SelectCompactionCutoffResponse:
            await self.hold()
            return SelectCompactionCutoffResponse(cutoff_sequence=request.retained_token_budget)

        async def unfinished(_: Any, __: Any) -> BuildUnfinishedTurnMessagesResponse:
            await self.hold()
            return BuildUnfinishedTurnMessagesResponse(messages=[_wire_user("unfinished")])

        return grpc.method_handlers_generic_handler(
            SERVICE,
            {
                DESCRIBE_RUNNER.name: unary(DESCRIBE_RUNNER, describe),
                BUILD_USER_MESSAGE.name: unary(BUILD_USER_MESSAGE, user_message),
                ESTIMATE_INPUT_TOKENS.name: unary(ESTIMATE_INPUT_TOKENS, estimate),
                SELECT_COMPACTION_CUTOFF.name: unary(SELECT_COMPACTION_CUTOFF, cutoff),
                BUILD_UNFINISHED_TURN_MESSAGES.name: unary(
                    BUILD_UNFINISHED_TURN_MESSAGES, unfinished
                ),
            },
        )


def _wire_user(text: str) -> RunnerFrameworkMessage:
    return RunnerFrameworkMessage(role=MessageRole.USER, framework_item=text, text=text)


async def _released_while_waiting(service: HeldService, call: Awaitable[Any]) -> Any:
    """Runs `call` while another task of this loop releases the held handler."""
    released_first: list[bool] = []

    async def release() -> None:
        await service.entered.wait()
        released_first.append(True)
        service.release.set()

    releaser = asyncio.create_task(release())
    result = await call
    await releaser
    assert released_first == [True]
    service.entered.clear()
    service.release.clear()
    return result


async def _scenario() -> None:
    port = free_port()
    server = grpc.aio.server()
    service = HeldService()
    server.add_generic_rpc_handlers([service.handler()])
    server.add_insecure_port(f"127.0.0.1:{port}")
    await server.start()
    try:
        runner = RemoteRunner(f"127.0.0.1:{port}", FLOW_TYPE, call_timeout=10.0)
        # describe() blocks by design, once; a Worker describes before its Steps run.
        # This service predates declared capabilities: fields 1-5 say what it has.
        declared = await asyncio.to_thread(declared_runner, runner)
        assert declared.compaction_runner is runner
        assert declared.unfinished_turn_builder is runner
        assert declared.tool_task_poller is None
        message = await _released_while_waiting(service, runner.build_user_message("hello"))
        assert message == FrameworkMessage(
            role=MessageRole.USER, framework_item="hello", text="hello"
        )
        session = FakeSession(runner)
        session.messages.append(stored_message(message, 1, session.turn_id))
        turn = session.context()
        tokens = await _released_while_waiting(
            service, resolved(runner.estimate_input_tokens(turn))
        )
        assert tokens == 10
        cutoff = await _released_while_waiting(
            service, resolved(runner.select_compaction_cutoff(turn, 7))
        )
        assert cutoff == 7
        built = await _released_while_waiting(
            service, resolved(runner.build_unfinished_turn_messages(turn))
        )
        assert [m.text for m in built] == ["unfinished"]
        runner.close()
    finally:
        await server.stop(None)


def test_the_small_runner_methods_leave_the_event_loop_free() -> None:
    asyncio.run(_scenario())
