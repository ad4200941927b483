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
import json
import uuid
from collections.abc import Callable, Sequence
from typing import Any

from dex_agents import AgentSessionClient, AgentSessionFlow, ToolPolicy
from dex_agents_contracts import MessageRole, ToolEffect
from dex_agents_langgraph import (
    DexCheckpointSaver,
    DexStepMiddleware,
    DexToolContext,
    LangGraphRunner,
)
from dex_agents_testing import (
    assert_step_shape,
    dexlite_or,
    fetch_history,
    turn_shapes,
    worker_in_thread,
)
from langchain.agents import create_agent
from langchain_core.language_models import BaseChatModel, LanguageModelInput
from langchain_core.messages import AIMessage, BaseMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.runnables import Runnable, RunnableConfig
from langchain_core.tools import BaseTool, tool
from refund_scenario import EXPECTED_SHAPE, ORDER_ID

# --- the agent ----------------------------------------------------------------------


class ScriptedSupportModel(BaseChatModel):
    """Stands in for a real model: call both tools, then answer from their results."""

    @property
    def _llm_type(self) -> str:
        return "scripted-support"

    def bind_tools(
        self,
        tools: Sequence[dict[str, Any] | type | Callable[..., Any] | BaseTool],
        *,
        tool_choice: str | None = None,
        **kwargs: Any,
    ) -> Runnable[LanguageModelInput, AIMessage]:
        del tools, tool_choice, kwargs
        return self

    def _generate(self, messages: list[BaseMessage], *args: Any, **kwargs: Any) -> ChatResult:
        seen = {m.name: str(m.text) for m in messages if isinstance(m, ToolMessage)}
        if not seen:
            reply = AIMessage(
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
        else:
            reply = AIMessage(
                content=f"Order checked ({seen['get_order']}); {seen['issue_refund']}."
            )
        return ChatResult(generations=[ChatGeneration(message=reply)])


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
    ScriptedSupportModel(),
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
    flow = build_flow()
    session_id = f"langgraph-{uuid.uuid4().hex[:8]}"
    with (
        worker_in_thread([flow], address),
        AgentSessionClient(flow, server_address=address) as client,
    ):
        run_id = client.start_session(session_id, f"Order {ORDER_ID} arrived broken. Refund it.")
        for event, _ in client.follow_events(
            session_id,
            until=lambda e: e.type in {"turn_completed", "turn_failed"},
            deadline_seconds=60,
        ):
            print(f"event {event.type}: {event.payload}")
            if event.type == "interrupt_raised":
                interrupt_id = json.loads(event.payload)["interrupt_id"]
                # The event streams before its Step commits: wait until it is pending.
                if client.wait_for_interrupt(session_id, interrupt_id) is not None:
                    print(f"approving {interrupt_id}")
                    if not client.resolve_interrupt(session_id, interrupt_id, approved=True):
                        raise SystemExit(f"the approval of {interrupt_id} was refused")
            if event.type == "turn_failed":
                raise SystemExit("the turn failed")
        # The end event is streamed before its Step commits: wait for the commit.
        snapshot = client.wait_for_turn_end(session_id, event.turn_id or "turn-1")

    print("\nStored messages")
    for m in snapshot.messages:
        body = m.text or ""
        if m.role is MessageRole.TOOL:
            body = f"{m.tool_name} -> {m.tool_output}"
        elif m.tool_call_id:
            body = f"{body} [calls {m.tool_name}]".strip()
        print(f"  {m.sequence:>2} {m.role.name.lower():<9} {body}")
    history = fetch_history(address, session_id, run_id)
    print("\nStep shape: " + " -> ".join(turn_shapes(history)[0]))
    assert_step_shape(history, EXPECTED_SHAPE, turn=0)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--server", help="a running dexlite or Dex server; default: start one")
    with dexlite_or(parser.parse_args().server) as address:
        run(address)


if __name__ == "__main__":
    main()
