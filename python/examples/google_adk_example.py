"""A Google ADK agent as a durable Dex agent session (Step mode).

The agent checks an order with a read tool and refunds it with a write tool that
needs approval. Each model call is one RunModel Step and each tool call its own
Step; the example approves the refund, prints the answer, the session's stored
messages and the turn's Step shape:

    RunModel -> CallTool | AwaitToolApproval -> CallSingleAttemptTool -> ResumeTurn -> RunModel

A `ScriptedLlm` (an ADK `BaseLlm`) stands in for a real model, so it runs with no
key and no network. It needs the adapter's own virtualenv (google-adk's pins
differ from the shared lock's). Run it from the repository root:

    PYTHONPATH=python/contracts/src:python/core/src:python/dexlite/src:python/testing/src:\
python/adapters/google_adk/src .venvs/google_adk/bin/python python/examples/google_adk_example.py

`--server host:port` uses a running dexlite or Dex server instead of starting one.
"""

from __future__ import annotations

import argparse
import logging

from dex_agents import AgentSessionFlow, ToolPolicy
from dex_agents_contracts import ToolEffect
from dex_agents_google_adk import AdkRunner, dex_run_info
from dex_agents_google_adk.testing import ScriptedLlm, call, function_results, text
from dex_agents_testing import dexlite_or
from google.adk.agents import LlmAgent
from google.adk.models.llm_request import LlmRequest
from google.adk.tools.function_tool import FunctionTool
from google.genai import types
from refund_scenario import ORDER_ID, run_refund_session

# --- the agent ----------------------------------------------------------------------


def scripted_model(request: LlmRequest) -> list[types.Part]:
    """Stands in for a real model: call both tools, then answer from their results."""
    seen = {name: result for _, name, result in function_results(request)}
    if not seen:
        return [
            text("I'll check the order and prepare the refund."),
            call("get_order", {"order_id": ORDER_ID}, "call-order"),
            call("issue_refund", {"order_id": ORDER_ID, "amount_eur": 42.0}, "call-refund"),
        ]
    return [text(f"Order checked ({seen['get_order']}); {seen['issue_refund']}.")]


def get_order(order_id: str) -> str:
    """Look up an order by its ID."""
    return f"order {order_id} delivered, 42.00 EUR"


def issue_refund(order_id: str, amount_eur: float) -> str:
    """Refund an order. Money moves, so the user approves every call."""
    info = dex_run_info()
    # A real payment API gets the idempotency key, so a retried Step never pays twice.
    key = info.idempotency_key if info else None
    return f"refunded {amount_eur:.2f} EUR for {order_id} (idempotency key {key})"


# Use a real model here, such as LlmAgent(..., model="gemini-2.5-flash") with a key set.
agent = LlmAgent(
    name="support",
    instruction="You are a support agent. Check the order before refunding it.",
    model=ScriptedLlm(scripted_model),
    # require_confirmation=True becomes the session's approval (AwaitToolApproval).
    tools=[get_order, FunctionTool(issue_refund, require_confirmation=True)],
)


def build_flow() -> AgentSessionFlow:
    runner = AdkRunner(
        agent,
        tool_policies={
            "get_order": ToolPolicy(effect=ToolEffect.READ),
            "issue_refund": ToolPolicy(effect=ToolEffect.NON_IDEMPOTENT_WRITE),
        },
    )
    return AgentSessionFlow(runner, flow_type="GoogleAdkSupportAgent")


# --- the example --------------------------------------------------------------------


def run(address: str) -> None:
    run_refund_session(build_flow(), address, "google-adk")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--server", help="a running dexlite or Dex server; default: start one")
    args = parser.parse_args()
    logging.getLogger("google_adk").setLevel(logging.ERROR)  # the scripted model has no usage
    with dexlite_or(args.server) as address:
        run(address)


if __name__ == "__main__":
    main()
