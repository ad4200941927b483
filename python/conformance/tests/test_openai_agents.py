"""The conformance suite through @dex-agents/openai-agents: `OpenAiAgentsRunner`
(@openai/agents 0.20, a scripted `Model`) in the Node sidecar
(typescript/adapters/openai-agents/src/testing/conformance_app.ts), plus the sidecar's own
SIGKILL and cancel tests."""

from __future__ import annotations

from dex_agents_testing.conformance import Traits
from ts_suite import (
    TsAdapter,
    adapter_gap,
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
    "typescript/adapters/openai-agents",
    Traits(
        # The "book" turn as the SDK stores it: one item per function call and per
        # result, the answer; plus the user message on each side.
        messages_after_booking=7,
        # The final output is the model's JSON text, which the SDK parses into the
        # agent's outputType (fixed per agent: the sidecar's build_structured_flow).
        structured_output_as_text=True,
        factories={"structured_output": "build_structured_flow"},
        nonconforming={
            "built_in_ask_user": adapter_gap(
                "OpenAiAgentsRunner",
                "built_in_tools",
                "an Agent takes any function tools (@openai/agents-core dist/agent.d.ts, "
                "AgentConfiguration.tools), so the session's built-ins could join them",
            ),
            "reasoning_deltas": adapter_gap(
                "OpenAiAgentsRunner",
                "reasoning_deltas",
                "the SDK's model responses carry reasoning items "
                "(@openai/agents-core dist/types/protocol.d.ts, type 'reasoning')",
            ),
            **no_tool_sources("OpenAiAgentsRunner"),
            **no_plan_mode("OpenAiAgentsRunner"),
            "structured_output_with_validator_retry": (
                "the SDK has no output validator that asks the model again: an output "
                "guardrail's tripwire throws OutputGuardrailTripwireTriggered and ends the "
                "run (@openai/agents-core dist/runner/guardrails.mjs; docs: guides/guardrails, "
                "'tripwires')"
            ),
        },
    ),
)

dexlite, test_conformance = ts_conformance_suite(ADAPTER)
