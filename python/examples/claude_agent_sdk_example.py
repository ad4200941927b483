"""A Claude Agent SDK agent as a durable Dex agent session (the whole-turn harness).

The agent checks an order with a read tool and refunds it with a write tool that
needs approval. The bundled Claude Code CLI runs the turn inside one RunModel
Step, the read included; the refund is deferred out of the CLI into its own
Step, approved, run once, and the CLI resumes the session with its result:

    RunModel -> AwaitToolApproval -> CallSingleAttemptTool -> ResumeTurn -> RunModel

A scripted fake Anthropic Messages API on loopback stands in for the model (the
CLI's ANTHROPIC_BASE_URL), so it runs with no key and no network. It needs the
adapter's own virtualenv (the wheel bundles the 400 MB CLI). Run it from the
repository root:

    PYTHONPATH=python/contracts/src:python/core/src:python/dexlite/src:python/testing/src:\
python/adapters/claude_agent_sdk/src .venvs/claude_agent_sdk/bin/python \
python/examples/claude_agent_sdk_example.py

`--server host:port` uses a running dexlite or Dex server instead of starting one.
"""

from __future__ import annotations

import argparse
from collections.abc import Mapping
from typing import Any

from claude_agent_sdk import ToolAnnotations, tool
from dex_agents import AgentSessionFlow, ToolPolicy
from dex_agents_claude_agent_sdk import ClaudeAgentRunner, current_tool_execution
from dex_agents_claude_agent_sdk.testing import offline_options
from dex_agents_contracts import ToolEffect
from dex_agents_testing import dexlite_or
from dex_agents_testing.fake_anthropic import (
    FakeMessagesServer,
    MessagesRequest,
    ScriptedReply,
    text_reply,
    tool_use_reply,
)
from refund_scenario import ORDER_ID, run_refund_session

# --- the agent ----------------------------------------------------------------------


def scripted_model(request: MessagesRequest) -> ScriptedReply:
    """Stands in for a real model: call both tools, then answer from their results."""
    names = {i: n.rsplit("__", 1)[-1] for i, n, _ in request.tool_uses()}
    seen = {names[i]: text for i, text, _ in request.tool_results()}
    if len(seen) < 2:
        return tool_use_reply(
            ("call-order", "mcp__support__get_order", {"order_id": ORDER_ID}),
            ("call-refund", "mcp__support__issue_refund", {"order_id": ORDER_ID, "amount_eur": 42}),
            text="I'll check the order and prepare the refund.",
        )
    return text_reply(f"Order checked ({seen['get_order']}); {seen['issue_refund']}.")


@tool(
    "get_order",
    "Look up an order by its ID.",
    {"order_id": str},
    annotations=ToolAnnotations(readOnlyHint=True),  # read: runs inline, in RunModel
)
async def get_order(args: Mapping[str, Any]) -> dict[str, Any]:
    text = f"order {args['order_id']} delivered, 42.00 EUR"
    return {"content": [{"type": "text", "text": text}]}


@tool("issue_refund", "Refund an order.", {"order_id": str, "amount_eur": float})
async def issue_refund(args: Mapping[str, Any]) -> dict[str, Any]:
    call = current_tool_execution()
    # A real payment API gets the idempotency key, so a retried Step never pays twice.
    key = call.idempotency_key if call else None
    text = f"refunded {args['amount_eur']:.2f} EUR for {args['order_id']} (idempotency key {key})"
    return {"content": [{"type": "text", "text": text}]}


def build_flow(base_url: str) -> AgentSessionFlow:
    # A real agent: ClaudeAgentOptions(model="claude-sonnet-5", system_prompt=..., tools=[])
    # with ANTHROPIC_API_KEY set; offline_options points the CLI at the fake API only.
    options = offline_options(
        base_url, system_prompt="You are a support agent. Check the order before refunding it."
    )
    runner = ClaudeAgentRunner(
        options,
        tools={"support": [get_order, issue_refund]},
        # Money moves: a single-attempt write the user approves (its effect's default).
        tool_policies={"issue_refund": ToolPolicy(effect=ToolEffect.NON_IDEMPOTENT_WRITE)},
    )
    return AgentSessionFlow(runner, flow_type="ClaudeSupportAgent")


# --- the example --------------------------------------------------------------------


def run(address: str) -> None:
    with FakeMessagesServer(scripted_model) as api:
        run_refund_session(
            build_flow(api.base_url),
            address,
            "claude-agent-sdk",
            expected_shape=[
                "RunModel",
                "AwaitToolApproval",
                "CallSingleAttemptTool",
                "ResumeTurn",
                "RunModel",
            ],
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--server", help="a running dexlite or Dex server; default: start one")
    args = parser.parse_args()
    with dexlite_or(args.server) as address:
        run(address)


if __name__ == "__main__":
    main()
