"""An OpenAI Agents SDK agent as a durable Dex agent session (Step mode).

The agent checks an order with a read tool and refunds it with a write tool that
needs approval. Each model call is one RunModel Step and each tool call its own
Step; the example approves the refund, prints the answer, the session's stored
messages and the turn's Step shape:

    RunModel -> CallTool | AwaitToolApproval -> CallSingleAttemptTool -> ResumeTurn -> RunModel

The SDK's own `ScriptedModel` (through `RespondingModel`) stands in for a real
model, so it runs with no key and no network. Run it from the repository root:

    PYTHONPATH=python/contracts/src:python/core/src:python/dexlite/src:python/testing/src:\
python/adapters/openai_agents/src .venv/bin/python python/examples/openai_agents_example.py

`--server host:port` uses a running dexlite or Dex server instead of starting one.
"""

from __future__ import annotations

import argparse
from typing import Any

from agents import Agent, function_tool, set_tracing_disabled
from agents.testing import ModelCall, assistant_message, function_call
from dex_agents import AgentSessionFlow, ToolPolicy
from dex_agents_contracts import ToolEffect
from dex_agents_openai_agents import OpenAiAgentsRunner, dex_run_info
from dex_agents_openai_agents.testing import RespondingModel
from dex_agents_testing import (
    dexlite_or,
)
from refund_scenario import ORDER_ID, run_refund_session

# --- the agent ----------------------------------------------------------------------


def scripted_model(call: ModelCall) -> Any:
    """Stands in for a real model: call both tools, then answer from their results."""
    items = [i if isinstance(i, dict) else i.model_dump() for i in call.input]
    names = {i["call_id"]: i["name"] for i in items if i.get("type") == "function_call"}
    seen = {
        names[i["call_id"]]: str(i["output"])
        for i in items
        if i.get("type") == "function_call_output"
    }
    if not seen:
        return [
            assistant_message("I'll check the order and prepare the refund."),
            function_call("get_order", {"order_id": ORDER_ID}, call_id="call-order"),
            function_call(
                "issue_refund", {"order_id": ORDER_ID, "amount_eur": 42.0}, call_id="call-refund"
            ),
        ]
    return [assistant_message(f"Order checked ({seen['get_order']}); {seen['issue_refund']}.")]


@function_tool
def get_order(order_id: str) -> str:
    """Look up an order by its ID."""
    return f"order {order_id} delivered, 42.00 EUR"


@function_tool(needs_approval=True)
def issue_refund(order_id: str, amount_eur: float) -> str:
    """Refund an order. Money moves, so the user approves every call."""
    info = dex_run_info()
    # A real payment API gets the idempotency key, so a retried Step never pays twice.
    key = info.idempotency_key if info else None
    return f"refunded {amount_eur:.2f} EUR for {order_id} (idempotency key {key})"


# Use a real model here, such as Agent(..., model="gpt-5.2") with OPENAI_API_KEY set.
agent: Agent[None] = Agent(
    name="support",
    instructions="You are a support agent. Check the order before refunding it.",
    model=RespondingModel(scripted_model),
    tools=[get_order, issue_refund],
)


def build_flow() -> AgentSessionFlow:
    runner = OpenAiAgentsRunner(
        agent,
        tool_policies={
            "get_order": ToolPolicy(effect=ToolEffect.READ),
            "issue_refund": ToolPolicy(effect=ToolEffect.NON_IDEMPOTENT_WRITE),
        },
    )
    return AgentSessionFlow(runner, flow_type="OpenAiAgentsSupportAgent")


# --- the example --------------------------------------------------------------------


def run(address: str) -> None:
    run_refund_session(build_flow(), address, "openai-agents")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--server", help="a running dexlite or Dex server; default: start one")
    args = parser.parse_args()
    set_tracing_disabled(True)  # no trace export without an OpenAI key
    with dexlite_or(args.server) as address:
        run(address)


if __name__ == "__main__":
    main()
