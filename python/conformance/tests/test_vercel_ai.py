"""The conformance suite through @dex-agents/vercel-ai: `VercelAiRunner` (`ai` 7, a
scripted `MockLanguageModelV4`) in the Node sidecar (typescript/adapters/vercel-ai/src/
testing/conformance_app.ts), plus the sidecar's own SIGKILL and cancel tests."""

from __future__ import annotations

from dex_agents_testing.conformance import Traits
from ts_suite import (
    TsAdapter,
    app,
    no_plan_mode,
    no_tool_sources,
    private_app,
    test_cancel_turn_aborts_the_running_model_call_in_node,
    test_sigkill_of_the_sidecar_mid_run_model_reruns_only_that_model_call,
    test_sigkill_of_the_sidecar_mid_single_attempt_tool_records_outcome_unknown,
    ts_conformance_suite,
)

__all__ = [
    "app",
    "private_app",
    "test_cancel_turn_aborts_the_running_model_call_in_node",
    "test_sigkill_of_the_sidecar_mid_run_model_reruns_only_that_model_call",
    "test_sigkill_of_the_sidecar_mid_single_attempt_tool_records_outcome_unknown",
]

ADAPTER = TsAdapter(
    "typescript/adapters/vercel-ai",
    Traits(
        # The "book" turn as the AI SDK stores it: the assistant message with both
        # calls, one tool message with both results, the answer; plus the user message
        # on each side. Structured output is Output.object's JSON text, a retry prompt
        # a user message.
        messages_after_booking=5,
        structured_output_as_text=True,
        nonconforming={
            "handoff_to_billing": (
                "the AI SDK has no handoff between agents: a ToolLoopAgent runs one model "
                "with its tools, and another agent answers only inside a tool's execute "
                "(ai docs/03-agents/06-subagents.mdx; ai dist/index.d.ts, ToolLoopAgent)"
            ),
            **no_tool_sources("VercelAiRunner"),
            **no_plan_mode("VercelAiRunner"),
        },
    ),
)

dexlite, test_conformance = ts_conformance_suite(ADAPTER)
