"""What OpenAiAgentsRunner declares: each gap with its reason, for docs/adapters.md."""

from __future__ import annotations

from dex_agents.runner import RunnerCapabilities, declare_capabilities

__all__ = ["capabilities"]

_SUPPORTED = (
    "text_deltas",
    "reasoning_deltas",
    "usage",
    "built_in_tools",
    "mcp_sources",
    "mcp_tasks",
    "structured_output",
    "handoffs",
    "parallel_deferred_calls",
    "plan_mode",
    "tool_cancellation",
    "tracing",
    "unfinished_turn_messages",
    "tool_task_polls",
    "tool_task_cancels",
)

_UNSUPPORTED = {
    "compaction": "not implemented",
}


def capabilities() -> RunnerCapabilities:
    return declare_capabilities(supported=_SUPPORTED, unsupported=_UNSUPPORTED)
