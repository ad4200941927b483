"""RemoteRunner connects on first use: construction is plain, `describe()` asks once.

The runner service is a real grpc server in this process that counts its
`DescribeRunner` calls; an address nobody listens on stands for a sidecar
that is not up.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from concurrent import futures
from typing import Any

import grpc
import pytest
from dex_agents import (
    AgentSessionFlow,
    AgentSessionOptions,
    CompactionPolicy,
    RemoteRunnerUnavailableError,
    UserError,
)
from dex_agents._remote.methods import DESCRIBE_RUNNER, SERVICE
from dex_agents._remote.runner import RemoteRunner
from dex_agents._runner.declared import CAPABILITIES, declared_runner
from dex_agents_contracts import (
    DescribeRunnerResponse,
    RunnerCapabilities,
    RunnerCapabilityGap,
    RunnerFailure,
    RunnerSessionOptions,
    decode,
    encode,
)
from dex_agents_testing.processes import free_port

SERVED = "Served"


class CountingService:
    """Answers `DescribeRunner` with `answer` for SERVED, a failure otherwise."""

    def __init__(self, answer: DescribeRunnerResponse) -> None:
        self.answer = answer
        self.calls = 0

    def handler(self) -> grpc.GenericRpcHandler:
        def describe(request: Any, _: Any) -> DescribeRunnerResponse:
            self.calls += 1
            if request.flow_type != SERVED:
                return DescribeRunnerResponse(
                    failure=RunnerFailure(error_type="UnknownFlowTypeError", message="not served")
                )
            return self.answer

        return grpc.method_handlers_generic_handler(
            SERVICE,
            {
                DESCRIBE_RUNNER.name: grpc.unary_unary_rpc_method_handler(
                    describe,
                    request_deserializer=lambda data: decode(
                        DESCRIBE_RUNNER.request, data.decode("utf-8")
                    ),
                    response_serializer=lambda message: encode(message).encode("utf-8"),
                )
            },
        )


def _served(answer: DescribeRunnerResponse) -> Iterator[tuple[str, CountingService]]:
    service = CountingService(answer)
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=2))
    server.add_generic_rpc_handlers([service.handler()])
    port = free_port()
    server.add_insecure_port(f"127.0.0.1:{port}")
    server.start()
    try:
        yield f"127.0.0.1:{port}", service
    finally:
        server.stop(None)


DECLARED = RunnerCapabilities(
    text_deltas=True,
    tool_task_polls=True,
    plan_mode=True,
    gaps=[RunnerCapabilityGap(capability="compaction", reason="the sidecar's runner has none")],
)


@pytest.fixture
def declaring() -> Iterator[tuple[str, CountingService]]:
    yield from _served(
        DescribeRunnerResponse(
            capabilities=DECLARED,
            session_options=RunnerSessionOptions(
                plan_mode_enabled=True, built_in_tools=["write_todos"]
            ),
        )
    )


def test_construction_connects_nothing_and_describe_reports_an_absent_sidecar_clearly() -> None:
    address = f"127.0.0.1:{free_port()}"
    started = time.monotonic()
    runner = RemoteRunner(address, SERVED, connect_timeout=0.5)
    flow = AgentSessionFlow(runner, flow_type=SERVED)
    assert time.monotonic() - started < 0.5
    assert type(runner) is RemoteRunner
    assert flow.runner is runner
    with pytest.raises(RemoteRunnerUnavailableError) as raised:
        runner.describe()
    message = str(raised.value)
    assert f"runner {SERVED!r} at {address!r}: `DescribeRunner`" in message
    assert "the runner service is unreachable (no connection within 0.5 s)" in message
    runner.close()


def test_describe_asks_the_service_once_and_keeps_a_plain_capabilities_object(
    declaring: tuple[str, CountingService],
) -> None:
    address, service = declaring
    runner = RemoteRunner(address, SERVED)
    assert service.calls == 0
    assert runner.describe() == DECLARED
    assert isinstance(runner.describe(), RunnerCapabilities)
    options = runner.session_options
    assert options is not None
    assert options.plan_mode_enabled
    declared = declared_runner(runner)
    assert declared.tool_task_poller is runner
    assert declared.compaction_runner is None
    assert declared.unfinished_turn_builder is None
    assert service.calls == 1
    # The Flow validates plan mode against the declaration it already has.
    AgentSessionFlow(runner, flow_type=SERVED, options=options)
    assert service.calls == 1
    runner.close()


def test_options_the_declaration_lacks_are_refused_when_the_flow_is_built(
    declaring: tuple[str, CountingService],
) -> None:
    address, _ = declaring
    runner = RemoteRunner(address, SERVED)
    with pytest.raises(UserError, match="`compaction` needs a runner that declares compaction"):
        AgentSessionFlow(
            runner,
            flow_type=SERVED,
            options=AgentSessionOptions(compaction=CompactionPolicy(context_window_tokens=1000)),
        )
    runner.close()


def test_a_flow_type_the_service_does_not_serve_is_a_user_error(
    declaring: tuple[str, CountingService],
) -> None:
    address, _ = declaring
    runner = RemoteRunner(address, "Other")
    with pytest.raises(UserError, match="has no runner for flow type 'Other': not served"):
        runner.describe()
    runner.close()


def test_an_older_service_is_read_from_its_five_booleans() -> None:
    for address, _ in _served(DescribeRunnerResponse(polls_tool_tasks=True, compacts_context=True)):
        runner = RemoteRunner(address, SERVED)
        capabilities = runner.describe()
        assert [name for name in CAPABILITIES if getattr(capabilities, name)] == [
            "compaction",
            "tool_task_polls",
        ]
        reasons = {gap.capability: gap.reason for gap in capabilities.gaps}
        assert set(reasons) == set(CAPABILITIES) - {"compaction", "tool_task_polls"}
        assert all("predates declared capabilities" in reason for reason in reasons.values())
        runner.close()
