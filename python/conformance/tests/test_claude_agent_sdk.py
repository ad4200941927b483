"""The conformance suite through @dex-agents/claude-agent-sdk: `ClaudeAgentRunner` on the
real bundled Claude Code CLI in the Node sidecar, its model a scripted loopback Messages
API there (typescript/adapters/claude-agent-sdk/src/testing/conformance_app.ts). A
whole-turn harness: READ calls run inside RunModel. The sidecar SIGKILLs kill the Node
process group, the CLI with it."""

from __future__ import annotations

from dex_agents_contracts import AgentSnapshot
from dex_agents_testing.conformance import Traits
from dex_agents_testing.history import assert_step_shape
from dex_agents_testing.processes import wait_until
from dex_agents_testing.worker_apps import WorkerApp
from ts_suite import (
    TsAdapter,
    adapter_gap,
    app,
    no_plan_mode,
    no_tool_sources,
    private_app,
    sidecar_of,
    test_sigkill_of_the_sidecar_mid_single_attempt_tool_records_outcome_unknown,
    ts_conformance_suite,
)

__all__ = [
    "app",
    "private_app",
    "test_sigkill_of_the_sidecar_mid_single_attempt_tool_records_outcome_unknown",
]

PREFIX = "mcp__app__"

ADAPTER = TsAdapter(
    "typescript/adapters/claude-agent-sdk",
    Traits(
        # The Messages API requests carry the CLI's transcript, which has more messages.
        messages_after_weather=7,
        messages_after_booking=10,
        harness=True,
        tool_prefix=PREFIX,
        # The runner records a call's input as JSON.stringify writes it.
        compact_arguments=True,
        nonconforming={
            "built_in_ask_user": (
                "the Claude Code CLI offers its own tools and the host's only as MCP servers "
                "(Options.mcpServers, createSdkMcpServer in @anthropic-ai/claude-agent-sdk "
                "sdk.d.ts); ClaudeAgentRunner does not serve the session's built-ins there "
                "(capabilities.json: built_in_tools, issue 42 item 6)"
            ),
            "reasoning_deltas": adapter_gap(
                "ClaudeAgentRunner",
                "reasoning_deltas",
                "the SDK streams thinking blocks as partial messages "
                "(Options.includePartialMessages, @anthropic-ai/claude-agent-sdk sdk.d.ts)",
            ),
            "structured_output": adapter_gap(
                "ClaudeAgentRunner",
                "structured_output",
                "the SDK returns the CLI's structured output (Options.outputFormat) as "
                "SDKResultMessage's structured_output (@anthropic-ai/claude-agent-sdk sdk.d.ts)",
            ),
            "handoff_to_billing": (
                "Claude's sub-agents (Options.agents, AgentDefinition in "
                "@anthropic-ai/claude-agent-sdk sdk.d.ts) run inside the CLI as its Task "
                "tool and answer the main agent, which keeps the turn: there is no handoff"
            ),
            **no_tool_sources("ClaudeAgentRunner"),
            **no_plan_mode("ClaudeAgentRunner"),
            "structured_output_with_validator_retry": (
                "an adapter gap, not the SDK's (issue 42 item 6): the SDK returns the CLI's "
                "structured output (Options.outputFormat) as SDKResultMessage's "
                "structured_output (@anthropic-ai/claude-agent-sdk sdk.d.ts), which "
                "ClaudeAgentRunner does not read (capabilities.json: structured_output)"
            ),
        },
    ),
)

dexlite, test_conformance = ts_conformance_suite(ADAPTER)


def _pending(snapshot: AgentSnapshot) -> list[str]:
    return [i.tool_call_id for i in snapshot.pending_interrupts]


def test_two_writes_of_one_response_run_one_tool_step_each_in_order(app: WorkerApp) -> None:
    session = app.start("two bookings")
    app.wait(session, "k1's approval", lambda s: _pending(s) == ["k1"])
    assert app.client.resolve_interrupt(session, "k1", approved=True)
    # The second write is asked about only after the first ran.
    app.wait(session, "m1's approval", lambda s: _pending(s) == ["m1"])
    assert [e["key"] for e in app.entries("tool", "book_trip")] == [f"{session}/turn-1/k1"]
    assert app.client.resolve_interrupt(session, "m1", approved=True)
    snapshot = app.wait_idle(session, 1)
    assert snapshot.messages[-1].text == "Results: book_trip=booked Rome; book_trip=booked Oslo"
    assert [e["key"] for e in app.entries("tool", "book_trip")] == [
        f"{session}/turn-1/k1",
        f"{session}/turn-1/m1",
    ]
    # Two model calls: the response, and the answer that saw both results.
    assert [e["results"] for e in app.entries("model")] == [
        {},
        {"k1": "booked Rome", "m1": "booked Oslo"},
    ]
    one_write = ["AwaitToolApproval", "CallSingleAttemptTool", "ResumeTurn", "RunModel"]
    assert app.shapes(session) == [["RunModel", *one_write, *one_write]]


def test_sigkill_of_the_sidecar_mid_run_model_repeats_the_turn_and_its_inline_read(
    private_app: WorkerApp,
) -> None:
    """Item 6 for the harness: the retried RunModel repeats the whole turn so far, the
    inline read included (at least once, as documented), and nothing else."""
    app = private_app
    session = app.start("slow weather")
    wait_until(
        lambda: any(e["results"] for e in app.entries("model")), what="the second model call"
    )
    sidecar = sidecar_of(app)
    sidecar.kill()  # mid-CLI run, in Node (the CLI is in the sidecar's process group)
    sidecar.start()
    app.gate("model").touch()
    done = app.wait_idle(session, 1, timeout=90)
    assert done.messages[-1].text == "Results: get_weather=sunny in Paris"
    assert [bool(e["results"]) for e in app.entries("model")] == [False, True, False, True]
    assert len(app.entries("tool", "get_weather")) == 2
    assert_step_shape(app.history(session), ["RunModel"])
