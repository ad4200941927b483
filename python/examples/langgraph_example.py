"""A LangChain `create_agent` agent as a durable Dex agent session (Step mode).

The agent checks an order with a read tool and refunds it with a write tool that
needs approval. Each model call is one RunModel Step and each tool call its own
Step; the example approves the refund, prints the answer, the session's stored
messages and the turn's Step shape:

    RunModel -> CallTool | AwaitToolApproval -> CallSingleAttemptTool -> ResumeTurn -> RunModel

A scripted chat model stands in for a real one, so it runs with no key and no
network. Run it from the repository root:

    PYTHONPATH=python/contracts/src:python/core/src:python/dexlite/src:python/testing/src:\
python/adapters/langgraph/src .venv/bin/python python/examples/langgraph_example.py

`--server host:port` uses a running dexlite or Dex server instead of starting one.
"""

from __future__ import annotations

import argparse

from dex_agents import AgentSessionFlow, ToolPolicy
from dex_agents_contracts import ToolEffect
from dex_agents_langgraph import (
    DexCheckpointSaver,
    DexStepMiddleware,
    DexToolContext,
    LangGraphRunner,
)
from dex_agents_langgraph.testing import RespondingChatModel
from dex_agents_testing import (
    dexlite_or,
)
from langchain.agents import create_agent
from langchain_core.messages import AIMessage, BaseMessage, ToolMessage
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import tool
from refund_scenario import ORDER_ID, run_refund_session

# --- the agent ----------------------------------------------------------------------


def scripted_support_model(messages: list[BaseMessage]) -> AIMessage:
    """Stands in for a real model: call both tools, then answer from their results."""
    seen = {m.name: str(m.text) for m in messages if isinstance(m, ToolMessage)}
    if seen:
        return AIMessage(content=f"Order checked ({seen['get_order']}); {seen['issue_refund']}.")
    return AIMessage(
        content="I'll check the order and prepare the refund.",
        tool_calls=[
            {"id": "call-order", "name": "get_order", "args": {"order_id": ORDER_ID}},
            {
                "id": "call-refund",
                "name": "issue_refund",
                "args": {"order_id": ORDER_ID, "amount_eur": 42.0},
            },
        ],
    )


@tool
def get_order(order_id: str) -> str:
    """Look up an order by its ID."""
    return f"order {order_id} delivered, 42.00 EUR"


@tool
def issue_refund(order_id: str, amount_eur: float, config: RunnableConfig) -> str:
    """Refund an order. Money moves, so the user approves every call."""
    context = DexToolContext.from_config(config)
    # A real payment API gets the idempotency key, so a retried Step never pays twice.
    key = context.idempotency_key if context else None
    return f"refunded {amount_eur:.2f} EUR for {order_id} (idempotency key {key})"


# Use a real model here, such as create_agent("openai:gpt-5.2", ...) with a key set.
agent = create_agent(
    RespondingChatModel(respond=scripted_support_model),
    [get_order, issue_refund],
    system_prompt="You are a support agent. Check the order before refunding it.",
    middleware=[DexStepMiddleware()],
    checkpointer=DexCheckpointSaver(),
)


def build_flow() -> AgentSessionFlow:
    runner = LangGraphRunner(
        agent,
        tool_policies={
            "get_order": ToolPolicy(effect=ToolEffect.READ),
            "issue_refund": ToolPolicy(effect=ToolEffect.NON_IDEMPOTENT_WRITE),
        },
    )
    return AgentSessionFlow(runner, flow_type="LangGraphSupportAgent")


# --- the example --------------------------------------------------------------------


def run(address: str) -> None:
    run_refund_session(build_flow(), address, "langgraph")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--server", help="a running dexlite or Dex server; default: start one")
    with dexlite_or(parser.parse_args().server) as address:
        run(address)


if __name__ == "__main__":
    main()
