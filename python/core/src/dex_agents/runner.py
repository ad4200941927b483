"""The one import for adapter authors: the runner protocol and what every adapter needs.

A runner makes exactly one model call per `run_model_step` and runs no tool it
can defer; the session runs every tool call in its own Step through
`execute_deferred_tool_call`. Everything that crosses this boundary is plain
data (plus the event writer and heartbeat callbacks), so a runner in another
process can implement it behind a service.

A runner declares what it supports with `describe()` (`DescribedRunner`), built
with `declare_capabilities`: every capability of `RunnerCapabilities` either
supported or given the reason it is not. The session calls an optional
method only when its capability is declared; the methods are the protocols
`UnfinishedTurnMessageBuilder`, `ToolTaskPoller`, `ToolTaskCanceller` and
`ContextCompactionRunner`. A runner without `describe()` gets the capabilities
its methods imply.

The kit every adapter builds on: the Step a tool runs in (`DexRunInfo`,
`dex_run_info`, `running`), routing a response's calls to their policies
(`ToolRouter`), the results of paused calls (`PendingCall`, `result_texts`,
`stored_result`), tool values as text, the versioned run-state envelope
(`RunStateFormat`) and the shared errors (`RunStateError`, `FrameworkItemError`).

Besides the protocol: the rules an adapter applies to what the model asked for
(tool-call IDs, effects and policies), the texts the model sees for final tool
calls, the cache of decoded framework items, and `FakeSession` with its doubles
for an adapter's offline suite. What an application author declares
(`ToolPolicy`, `UserError`, ...) is imported from `dex_agents`.
"""

from __future__ import annotations

from dex_agents_contracts import RunnerCapabilities

from dex_agents._runner.built_ins import (
    BUILT_IN_TOOL_DEFINITIONS,
    ReservedToolNameError,
    offered_built_ins,
)
from dex_agents._runner.call_results import (
    PendingCall,
    failed_turn_messages,
    pending_records,
    result_text,
    result_texts,
    stored_result,
    with_stored_results,
)
from dex_agents._runner.capabilities import (
    ContextCompactionRunner,
    ContextSummaryRequest,
    ContextSummaryResult,
    PlanModeRunner,
    ToolTaskCancellation,
    ToolTaskCanceller,
    ToolTaskPending,
    ToolTaskPoll,
    ToolTaskPoller,
    ToolTaskPollOutcome,
    UnfinishedTurnMessageBuilder,
)
from dex_agents._runner.declared import DescribedRunner, declare_capabilities
from dex_agents._runner.errors import FrameworkItemError, RunStateError
from dex_agents._runner.heartbeats import DEFAULT_HEARTBEAT_INTERVAL_SECONDS, heartbeats
from dex_agents._runner.item_cache import DEFAULT_ITEM_CACHE_BYTES, DecodedItemCache
from dex_agents._runner.mcp_sources import McpSources
from dex_agents._runner.policies import (
    BUILT_IN_TOOL_NAMES,
    BUILT_IN_TOOL_POLICY,
    DEFAULT_REQUIRES_APPROVAL,
    TOOL_EFFECTS_BY_NAME,
    BuiltInToolName,
    ResolvedToolPolicy,
    default_tool_effect,
    resolve_tool_policy,
    tool_effect_from_annotations,
    tool_effect_named,
)
from dex_agents._runner.protocol import (
    AgentFrameworkRunner,
    AgentTurnContext,
    AgentTurnOutcome,
    DeferredToolCall,
    DeferredToolExecution,
    DeferredToolOutcome,
    FrameworkMessage,
    Heartbeat,
    ModelCallMetadata,
    ToolCallsRequested,
    ToolExecutionError,
    ToolExecutionResult,
    ToolInputRequested,
    ToolTaskStarted,
    TurnCompleted,
    TurnContinued,
)
from dex_agents._runner.routing import SourcedTool, ToolRouter, declared_approval
from dex_agents._runner.run_info import DexRunInfo, dex_run_info, running
from dex_agents._runner.run_state import RunStateFormat, framework_version
from dex_agents._runner.tool_call_ids import invalid_tool_call_ids, model_tool_call_id_problem
from dex_agents._runner.tool_values import arguments_text, parse_tool_arguments, tool_output_text
from dex_agents.events import EventWriter
from dex_agents.offline import (
    FakeSession,
    NullEventWriter,
    RecordingEventWriter,
    no_checkpoint,
    no_heartbeat,
    run_sync,
    stored_message,
)
from dex_agents.results import (
    APPROVAL_DEADLINE_PASSED,
    NO_RESULT_TEXT,
    OUTCOME_UNKNOWN_RESULT,
    TOOL_CALL_NOT_RUN_ERROR_PREFIX,
    USER_REJECTED_RESULT,
    is_final,
    model_visible_result,
    tool_call_status_text,
    turn_failure_note,
)

__all__ = [  # noqa: RUF022 - grouped by comment headers (docs/style.md)
    # the protocol
    "AgentFrameworkRunner",
    "AgentTurnContext",
    "AgentTurnOutcome",
    "TurnCompleted",
    "ToolCallsRequested",
    "TurnContinued",
    "FrameworkMessage",
    "ModelCallMetadata",
    "EventWriter",
    "Heartbeat",
    "heartbeats",
    "DEFAULT_HEARTBEAT_INTERVAL_SECONDS",
    # MCP tool sources given to a runner
    "McpSources",
    # tool execution
    "DeferredToolCall",
    "DeferredToolExecution",
    "DeferredToolOutcome",
    "ToolExecutionResult",
    "ToolExecutionError",
    "ToolInputRequested",
    "ToolTaskStarted",
    # declared capabilities
    "DescribedRunner",
    "RunnerCapabilities",
    "declare_capabilities",
    # optional capabilities
    "UnfinishedTurnMessageBuilder",
    "ToolTaskPoller",
    "ToolTaskPoll",
    "ToolTaskPending",
    "ToolTaskPollOutcome",
    "ToolTaskCanceller",
    "ToolTaskCancellation",
    "ContextCompactionRunner",
    "ContextSummaryRequest",
    "ContextSummaryResult",
    "PlanModeRunner",
    # the kit: the Step a call runs in, routing, results, run state, errors
    "DexRunInfo",
    "dex_run_info",
    "running",
    "ToolRouter",
    "SourcedTool",
    "declared_approval",
    "PendingCall",
    "pending_records",
    "result_text",
    "result_texts",
    "failed_turn_messages",
    "with_stored_results",
    "stored_result",
    "parse_tool_arguments",
    "arguments_text",
    "tool_output_text",
    "RunStateFormat",
    "framework_version",
    "RunStateError",
    "FrameworkItemError",
    # rules for what the model asked for
    "invalid_tool_call_ids",
    "model_tool_call_id_problem",
    "resolve_tool_policy",
    "ResolvedToolPolicy",
    "DEFAULT_REQUIRES_APPROVAL",
    "default_tool_effect",
    "TOOL_EFFECTS_BY_NAME",
    "tool_effect_named",
    "tool_effect_from_annotations",
    "BuiltInToolName",
    "BUILT_IN_TOOL_NAMES",
    "BUILT_IN_TOOL_POLICY",
    "BUILT_IN_TOOL_DEFINITIONS",
    "offered_built_ins",
    "ReservedToolNameError",
    # decoding stored messages
    "DecodedItemCache",
    "DEFAULT_ITEM_CACHE_BYTES",
    # what the model sees for final tool calls
    "is_final",
    "model_visible_result",
    "tool_call_status_text",
    "turn_failure_note",
    "USER_REJECTED_RESULT",
    "OUTCOME_UNKNOWN_RESULT",
    "NO_RESULT_TEXT",
    "APPROVAL_DEADLINE_PASSED",
    "TOOL_CALL_NOT_RUN_ERROR_PREFIX",
    # offline doubles
    "FakeSession",
    "RecordingEventWriter",
    "NullEventWriter",
    "no_heartbeat",
    "no_checkpoint",
    "run_sync",
    "stored_message",
]
