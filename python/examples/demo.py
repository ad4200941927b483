"""An agent session on dexlite with the Stepwise loop and a scripted model.

One turn: the model calls a read tool and an approval-gated write tool in
parallel; each runs as its own Step. The demo streams the session's
AgentEvents as they happen, approves the write, prints the answer, then the
snapshot and the turn's Step shape from the Flow's history:

    RunModel -> CallTool | AwaitToolApproval -> CallSingleAttemptTool -> ResumeTurn -> RunModel

Run it from the repository root (no model key, no network):

    PYTHONPATH=python/contracts/src:python/core/src:python/dexlite/src:python/testing/src \
        .venv/bin/python python/examples/demo.py

`--server host:port` uses a running dexlite or Dex server instead of starting one.
`--trace` also prints the turn's OpenTelemetry spans as a tree (span_tree.py).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import uuid

from dex_agents import (
    AgentSessionClient,
    AgentSessionFlow,
    AgentSessionOptions,
    ToolPolicy,
)
from dex_agents.models import ModelToolCall as Call
from dex_agents.models import ModelUsage, ScriptedModelClient, ScriptedResponse
from dex_agents.stepwise import AgentDefinition, StepwiseRunner, ToolContext, tool
from dex_agents_contracts import AgentEvent, AgentSnapshot, AgentUsage, MessageRole, ToolEffect
from dex_agents_testing import (
    assert_step_shape,
    dexlite_or,
    fetch_history,
    turn_shapes,
    worker_in_thread,
)
from refund_scenario import EXPECTED_SHAPE, ORDER_ID

# --- the agent ----------------------------------------------------------------------


def get_order(order_id: str) -> dict[str, str]:
    """Look up an order by its ID.

    Args:
        order_id: The order's ID, such as A-1001.
    """
    return {"order_id": order_id, "status": "delivered", "total": "42.00 EUR"}


def issue_refund(order_id: str, amount_eur: float, context: ToolContext) -> dict[str, str]:
    """Refund an order. Money moves, so the user approves every call.

    Args:
        order_id: The order to refund.
        amount_eur: The amount in euros.
    """
    # A real payment API gets context.idempotency_key, so a retry never pays twice.
    return {
        "refund_id": f"rf-{order_id}",
        "amount": f"{amount_eur:.2f} EUR",
        "key": context.idempotency_key,
    }


def scripted_model() -> ScriptedModelClient:
    """Stands in for a real model: the same two responses every run."""
    return ScriptedModelClient(
        [
            ScriptedResponse(
                text="I'll check the order and prepare the refund.",
                tool_calls=(
                    Call(
                        tool_call_id="call-order",
                        tool_name="get_order",
                        arguments=json.dumps({"order_id": ORDER_ID}),
                    ),
                    Call(
                        tool_call_id="call-refund",
                        tool_name="issue_refund",
                        arguments=json.dumps({"order_id": ORDER_ID, "amount_eur": 42.0}),
                    ),
                ),
                usage=ModelUsage(input_tokens=310, output_tokens=64),
            ),
            ScriptedResponse(
                text=(
                    f"Order {ORDER_ID} was delivered for 42.00 EUR, and I have refunded the "
                    f"full amount (refund rf-{ORDER_ID}). Sorry about the broken item!"
                ),
                usage=ModelUsage(input_tokens=420, output_tokens=38, cached_input_tokens=300),
                delay_seconds=0.3,
                delta_interval_seconds=0.04,
            ),
        ]
    )


def build_flow() -> AgentSessionFlow:
    definition = AgentDefinition(
        name="support",
        instructions="You are a support agent. Check the order before refunding it.",
        tools=[
            tool(get_order, policy=ToolPolicy(effect=ToolEffect.READ)),
            tool(issue_refund, policy=ToolPolicy(effect=ToolEffect.NON_IDEMPOTENT_WRITE)),
        ],
        model=scripted_model(),
    )
    return AgentSessionFlow(
        StepwiseRunner(definition), flow_type="SupportAgent", options=AgentSessionOptions()
    )


# --- printing -----------------------------------------------------------------------


class EventPrinter:
    """Prints AgentEvents as they arrive; text deltas run together on one line."""

    def __init__(self) -> None:
        self.in_text = False

    def show(self, event: AgentEvent) -> None:
        payload = json.loads(event.payload)
        if event.type == "text_delta":
            if not self.in_text:
                print(f"  [{event.turn_id}] text_delta   ", end="")
                self.in_text = True
            print(payload["text"], end="", flush=True)
            return
        if self.in_text:
            print()
            self.in_text = False
        details = ", ".join(
            f"{k}={_compact(v)}" for k, v in payload.items() if v not in (None, [], "")
        )
        print(f"  [{event.turn_id}] {event.type:<18} {details}", flush=True)


def _compact(value: object) -> str:
    if isinstance(value, dict):  # AgentUsage: only the non-zero counts
        return "{" + " ".join(f"{k}={v}" for k, v in value.items() if v) + "}"
    return str(value)


def print_snapshot(snapshot: AgentSnapshot) -> None:
    state = snapshot.state
    print("\nSnapshot")
    if state is not None:
        print(
            f"  state: {state.status.name.lower()}, turns {state.turn_count}, "
            f"next message sequence {state.next_message_sequence}"
        )
    usage = snapshot.usage or AgentUsage()
    print(
        f"  usage: {usage.model_calls} model calls, {usage.input_tokens} input tokens "
        f"({usage.cached_input_tokens} cached), {usage.output_tokens} output tokens"
    )
    print("  messages:")
    for message in snapshot.messages:
        role = message.role.name.lower()
        if message.role is MessageRole.TOOL:
            body = f"{message.tool_name} -> {message.tool_output}"
        elif message.tool_call_id:
            body = f"calls {message.tool_name}({message.tool_arguments}) as {message.tool_call_id}"
        else:
            body = message.text or ""
        print(f"    {message.sequence:>2} {role:<9} {body}")


# --- the demo -----------------------------------------------------------------------


def run_demo(address: str, *, trace: bool = False) -> int:
    flow = build_flow()
    spans = None
    if trace:
        from span_tree import SpanCollector  # noqa: PLC0415 - the SDK only with --trace

        spans = SpanCollector()
        flow.enable_tracing(spans.options())
    session_id = f"demo-{uuid.uuid4().hex[:8]}"
    started = time.monotonic()
    with (
        worker_in_thread([flow], address),
        AgentSessionClient(flow, server_address=address) as client,
    ):
        run_id = client.start_session(
            session_id, "My order A-1001 arrived broken. Please refund it."
        )
        print(f"Session {session_id} on {address}\n\nAgentEvents")
        printer = EventPrinter()
        final_types = {"turn_completed", "turn_failed"}
        for event, _ in client.follow_events(
            session_id, until=lambda e: e.type in final_types, deadline_seconds=45
        ):
            printer.show(event)
            if event.type == "interrupt_raised":
                interrupt_id = json.loads(event.payload)["interrupt_id"]
                # The event streams before its Step commits: wait until it is pending.
                if client.wait_for_interrupt(session_id, interrupt_id) is None:
                    continue
                print(f"  >> approving {interrupt_id}", flush=True)
                if not client.resolve_interrupt(session_id, interrupt_id, approved=True):
                    print("  >> the approval was refused", flush=True)
            if event.type == "turn_failed":
                print("\nThe turn failed.", file=sys.stderr)
                return 1

        # The end event is streamed before its Step commits: wait for the commit.
        snapshot = client.wait_for_turn_end(session_id, event.turn_id or "turn-1")
        answer = next(
            (
                m.text
                for m in reversed(snapshot.messages)
                if m.role is MessageRole.ASSISTANT and m.text
            ),
            None,
        )
        print(f"\nAnswer\n  {answer}")
        print_snapshot(snapshot)

    history = fetch_history(address, session_id, run_id)
    shapes = turn_shapes(history)
    print("\nStep shape of the turn (from the Flow's history)")
    print("  " + " -> ".join(shapes[0]) if shapes else "  (no turn found)")
    assert_step_shape(history, EXPECTED_SHAPE, turn=0)
    if spans is not None:
        spans.print_tree()
        spans.shutdown()
    print(f"\nDone in {time.monotonic() - started:.1f} s.")
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--server", help="a running dexlite or Dex server; default: start one")
    parser.add_argument("--trace", action="store_true", help="print the turn's span tree")
    args = parser.parse_args()
    with dexlite_or(args.server) as address:
        return run_demo(address, trace=args.trace)


if __name__ == "__main__":
    sys.exit(main())
