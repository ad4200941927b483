"""dex-agents: AI agent sessions that run durably on Dex.

One Flow execution is one session; every model call and every tool call is
its own Dex Step. See `AgentSessionFlow`.
"""

from __future__ import annotations

from dex_agents.client import AgentSessionClient
from dex_agents.codecs import (
    ContractCodec,
    ContractListCodec,
    OptionalContractCodec,
    StructCodec,
    agent_codec_registry,
)
from dex_agents.errors import (
    AgentSessionError,
    AgentSessionRunError,
    SessionAlreadyStartedError,
    SessionNotFoundError,
    UserError,
    ValueTooLarge,
)
from dex_agents.events import EventWriter
from dex_agents.options import AgentSessionOptions, CompactionPolicy
from dex_agents.results import (
    APPROVAL_DEADLINE_PASSED,
    OUTCOME_UNKNOWN_RESULT,
    TOOL_CALL_NOT_RUN_ERROR_PREFIX,
    USER_REJECTED_RESULT,
    is_final,
    model_visible_result,
    turn_failure_note,
)
from dex_agents.runner import (
    BUILT_IN_TOOL_NAMES,
    AgentFrameworkRunner,
    AgentTurnContext,
    AgentTurnOutcome,
    BuiltInToolName,
    ContextCompactionRunner,
    ContextSummaryRequest,
    ContextSummaryResult,
    DeferredToolCall,
    DeferredToolExecution,
    DeferredToolOutcome,
    FrameworkMessage,
    Heartbeat,
    ModelCallMetadata,
    PlanModeRunner,
    ResolvedToolPolicy,
    ToolCallsRequested,
    ToolExecutionError,
    ToolExecutionResult,
    ToolInputRequested,
    ToolPolicy,
    ToolTaskCancellation,
    ToolTaskCanceller,
    ToolTaskPending,
    ToolTaskPoll,
    ToolTaskPoller,
    ToolTaskPollOutcome,
    ToolTaskStarted,
    TurnCompleted,
    TurnContinued,
    UnfinishedTurnMessageBuilder,
    resolve_tool_policy,
)
from dex_agents.session import AgentSessionFlow
from dex_agents.worker import AgentWorker, agent_registry, run_worker

__all__ = [  # noqa: RUF022 - grouped by comment headers (docs/style.md)
    # sessions
    "AgentSessionFlow",
    "AgentSessionOptions",
    "CompactionPolicy",
    # runner protocol
    "AgentFrameworkRunner",
    "AgentTurnContext",
    "AgentTurnOutcome",
    "BUILT_IN_TOOL_NAMES",
    "BuiltInToolName",
    "ContextCompactionRunner",
    "ContextSummaryRequest",
    "ContextSummaryResult",
    "DeferredToolCall",
    "DeferredToolExecution",
    "DeferredToolOutcome",
    "EventWriter",
    "FrameworkMessage",
    "Heartbeat",
    "ModelCallMetadata",
    "PlanModeRunner",
    "ResolvedToolPolicy",
    "ToolCallsRequested",
    "ToolExecutionError",
    "ToolExecutionResult",
    "ToolInputRequested",
    "ToolPolicy",
    "ToolTaskCancellation",
    "ToolTaskCanceller",
    "ToolTaskPending",
    "ToolTaskPoll",
    "ToolTaskPollOutcome",
    "ToolTaskPoller",
    "ToolTaskStarted",
    "TurnCompleted",
    "TurnContinued",
    "UnfinishedTurnMessageBuilder",
    "resolve_tool_policy",
    # tool results and notes
    "APPROVAL_DEADLINE_PASSED",
    "OUTCOME_UNKNOWN_RESULT",
    "TOOL_CALL_NOT_RUN_ERROR_PREFIX",
    "USER_REJECTED_RESULT",
    "is_final",
    "model_visible_result",
    "turn_failure_note",
    # workers and clients
    "AgentSessionClient",
    "AgentWorker",
    "agent_registry",
    "run_worker",
    # codecs
    "ContractCodec",
    "ContractListCodec",
    "OptionalContractCodec",
    "StructCodec",
    "agent_codec_registry",
    # exceptions
    "AgentSessionError",
    "AgentSessionRunError",
    "SessionAlreadyStartedError",
    "SessionNotFoundError",
    "UserError",
    "ValueTooLarge",
]
