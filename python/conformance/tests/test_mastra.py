"""The conformance suite through @dex-agents/mastra: `MastraRunner` (a Mastra `Agent` on
the TypeScript Stepwise loop, a scripted `MockLanguageModelV4`) in the Node sidecar under
the pinned Node 22, which @mastra/core needs
(typescript/adapters/mastra/src/testing/conformance_app.ts), plus the sidecar's own
SIGKILL and cancel tests."""

from __future__ import annotations

from dex_agents_testing.conformance import Traits
from dex_agents_testing.sidecar import pinned_node
from ts_suite import (
    TsAdapter,
    app,
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
    "typescript/adapters/mastra",
    Traits(
        # The "book" turn as Mastra's model sees it replayed: the user message, one
        # assistant message with both calls, one tool message with both results, the
        # answer; plus the new user message. Structured output (Mastra's
        # `structuredOutput`) is the answer's JSON text, a retry prompt a user message.
        messages_after_booking=5,
        structured_output_as_text=True,
        nonconforming={
            "handoff_to_billing": (
                "Mastra has no handoff of the turn: a supervisor agent delegates to its "
                "sub-agents as tools and keeps the conversation (@mastra/core "
                "dist/agent/agent.types.d.ts, the supervisor's subagent options), and "
                "MastraRunner runs one Agent on the Stepwise loop"
            ),
            **no_tool_sources("MastraRunner"),
        },
    ),
    node=pinned_node(),
)

dexlite, test_conformance = ts_conformance_suite(ADAPTER)
