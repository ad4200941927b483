"""The runner service's method table: paths and wire types of each RPC in runner.proto.

No stub is generated for Python (the contracts stay free of grpc); the table
here is checked against the proto by `tests/test_remote_runner_methods.py`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from dex_agents_contracts import (
    BuildUnfinishedTurnMessagesRequest,
    BuildUnfinishedTurnMessagesResponse,
    BuildUserMessageRequest,
    BuildUserMessageResponse,
    CancelToolTaskRequest,
    CancelToolTaskResponse,
    DescribeRunnerRequest,
    DescribeRunnerResponse,
    EstimateInputTokensRequest,
    EstimateInputTokensResponse,
    ExecuteDeferredToolCallRequest,
    ExecuteDeferredToolCallResponse,
    PollToolTaskRequest,
    PollToolTaskResponse,
    RunModelStepRequest,
    RunModelStepResponse,
    SelectCompactionCutoffRequest,
    SelectCompactionCutoffResponse,
    SummarizeContextRequest,
    SummarizeContextResponse,
)

__all__ = ["METHODS", "SERVICE", "Method"]

SERVICE = "dex.agents.v1.AgentFrameworkRunnerService"

RequestT = TypeVar("RequestT")
ResponseT = TypeVar("ResponseT")


@dataclass(frozen=True)
class Method(Generic[RequestT, ResponseT]):
    """One RPC: its name, wire types and whether the response streams."""

    name: str
    request: type[RequestT]
    response: type[ResponseT]
    streaming: bool

    @property
    def path(self) -> str:
        return f"/{SERVICE}/{self.name}"


DESCRIBE_RUNNER = Method("DescribeRunner", DescribeRunnerRequest, DescribeRunnerResponse, False)
BUILD_USER_MESSAGE = Method(
    "BuildUserMessage", BuildUserMessageRequest, BuildUserMessageResponse, False
)
RUN_MODEL_STEP = Method("RunModelStep", RunModelStepRequest, RunModelStepResponse, True)
EXECUTE_DEFERRED_TOOL_CALL = Method(
    "ExecuteDeferredToolCall",
    ExecuteDeferredToolCallRequest,
    ExecuteDeferredToolCallResponse,
    True,
)
POLL_TOOL_TASK = Method("PollToolTask", PollToolTaskRequest, PollToolTaskResponse, True)
CANCEL_TOOL_TASK = Method("CancelToolTask", CancelToolTaskRequest, CancelToolTaskResponse, True)
ESTIMATE_INPUT_TOKENS = Method(
    "EstimateInputTokens", EstimateInputTokensRequest, EstimateInputTokensResponse, False
)
SELECT_COMPACTION_CUTOFF = Method(
    "SelectCompactionCutoff", SelectCompactionCutoffRequest, SelectCompactionCutoffResponse, False
)
SUMMARIZE_CONTEXT = Method(
    "SummarizeContext", SummarizeContextRequest, SummarizeContextResponse, True
)
BUILD_UNFINISHED_TURN_MESSAGES = Method(
    "BuildUnfinishedTurnMessages",
    BuildUnfinishedTurnMessagesRequest,
    BuildUnfinishedTurnMessagesResponse,
    False,
)

METHODS: tuple[Method[Any, Any], ...] = (
    DESCRIBE_RUNNER,
    BUILD_USER_MESSAGE,
    RUN_MODEL_STEP,
    EXECUTE_DEFERRED_TOOL_CALL,
    POLL_TOOL_TASK,
    CANCEL_TOOL_TASK,
    ESTIMATE_INPUT_TOKENS,
    SELECT_COMPACTION_CUTOFF,
    SUMMARIZE_CONTEXT,
    BUILD_UNFINISHED_TURN_MESSAGES,
)
