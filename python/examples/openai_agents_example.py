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
import json
import uuid
from typing import Any

from agents import Agent, function_tool, set_tracing_disabled
from agents.testing import ModelCall, assistant_message, function_call
from dex_agents import AgentSessionClient, AgentSessionFlow, ToolPolicy
from dex_agents_contracts import MessageRole, ToolEffect
from dex_agents_openai_agents import OpenAiAgentsRunner, dex_run_info
from dex_agents_openai_agents.testing import RespondingModel
from dex_agents_testing import (
    assert_step_shape,
    dexlite_or,
    fetch_history,
    turn_shapes,
    worker_in_thread,
)
from refund_scenario import EXPECTED_SHAPE, ORDER_ID

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
    flow = build_flow()
    session_id = f"openai-agents-{uuid.uuid4().hex[:8]}"
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
    args = parser.parse_args()
    set_tracing_disabled(True)  # no trace export without an OpenAI key
    with dexlite_or(args.server) as address:
        run(address)


if __name__ == "__main__":
    main()
