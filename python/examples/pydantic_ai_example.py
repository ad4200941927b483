"""A Pydantic AI agent as a durable Dex agent session (Step mode).

The agent checks an order with a read tool and refunds it with a write tool that
needs approval. Each model call is one RunModel Step and each tool call its own
Step; the example approves the refund, prints the answer, the session's stored
messages and the turn's Step shape:

    RunModel -> CallTool | AwaitToolApproval -> CallSingleAttemptTool -> ResumeTurn -> RunModel

A `FunctionModel` stands in for a real model, so it runs with no key and no
network. Run it from the repository root:

    PYTHONPATH=python/contracts/src:python/core/src:python/dexlite/src:python/testing/src:\
python/adapters/pydantic_ai/src .venv/bin/python python/examples/pydantic_ai_example.py

`--server host:port` uses a running dexlite or Dex server instead of starting one.
"""

from __future__ import annotations

import argparse

from dex_agents import AgentSessionFlow, ToolPolicy
from dex_agents_contracts import ToolEffect
from dex_agents_pydantic_ai import PydanticAiRunner, dex_run_info
from dex_agents_testing import (
    dexlite_or,
)
from pydantic_ai import Agent, DeferredToolRequests, RunContext
from pydantic_ai.messages import (
    ModelMessage,
    ModelResponse,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel
from refund_scenario import ORDER_ID, run_refund_session

# --- the agent ----------------------------------------------------------------------


def scripted_model(messages: list[ModelMessage], _: AgentInfo) -> ModelResponse:
    """Stands in for a real model: call both tools, then answer from their results."""
    results = [p for p in messages[-1].parts if isinstance(p, ToolReturnPart)]
    if not results:
        return ModelResponse(
            parts=[
                TextPart(content="I'll check the order and prepare the refund."),
                ToolCallPart("get_order", {"order_id": ORDER_ID}, tool_call_id="call-order"),
                ToolCallPart(
                    "issue_refund",
                    {"order_id": ORDER_ID, "amount_eur": 42.0},
                    tool_call_id="call-refund",
                ),
            ]
        )
    seen = {r.tool_name: r.model_response_str() for r in results}
    return ModelResponse(
        parts=[TextPart(content=f"Order checked ({seen['get_order']}); {seen['issue_refund']}.")]
    )


# Use a real model here, such as Agent("openai:gpt-5.2", ...). DeferredToolRequests
# must be an output type: every tool call ends the model Step as a deferred request.
agent: Agent[None, str | DeferredToolRequests] = Agent(
    FunctionModel(scripted_model),
    instructions="You are a support agent. Check the order before refunding it.",
    output_type=[str, DeferredToolRequests],
)


@agent.tool_plain(metadata={"dex_effect": "read"})
def get_order(order_id: str) -> str:
    """Look up an order by its ID."""
    return f"order {order_id} delivered, 42.00 EUR"


@agent.tool(requires_approval=True)
def issue_refund(ctx: RunContext[None], order_id: str, amount_eur: float) -> str:
    """Refund an order. Money moves, so the user approves every call."""
    info = dex_run_info(ctx)
    # A real payment API gets the idempotency key, so a retried Step never pays twice.
    key = info.idempotency_key if info else None
    return f"refunded {amount_eur:.2f} EUR for {order_id} (idempotency key {key})"


def build_flow() -> AgentSessionFlow:
    runner = PydanticAiRunner(
        agent,
        tool_policies={"issue_refund": ToolPolicy(effect=ToolEffect.NON_IDEMPOTENT_WRITE)},
    )
    return AgentSessionFlow(runner, flow_type="PydanticAiSupportAgent")


# --- the example --------------------------------------------------------------------


def run(address: str) -> None:
    run_refund_session(build_flow(), address, "pydantic-ai")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--server", help="a running dexlite or Dex server; default: start one")
    args = parser.parse_args()
    with dexlite_or(args.server) as address:
        run(address)


if __name__ == "__main__":
    main()
