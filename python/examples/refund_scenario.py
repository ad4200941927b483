"""What every adapter's example runs: one order, a read tool and an approval-gated refund.

The turn's Step shape is the same whichever framework drives the model: the
read tool and the approval wait run in parallel, then the refund, then the
model's answer. `run_refund_session` is the client side every example shares:
start the session, print its events as they come, approve the refund, then
print the stored messages and the turn's Step shape read from the Flow history.
"""

from __future__ import annotations

import json
import uuid

from dex_agents import AgentSessionClient, AgentSessionFlow
from dex_agents_contracts import MessageRole
from dex_agents_testing import assert_step_shape, fetch_history, turn_shapes, worker_in_thread

ORDER_ID = "A-1001"
EXPECTED_SHAPE: list[str | frozenset[str]] = [
    "RunModel",
    frozenset({"CallTool", "AwaitToolApproval", "CallSingleAttemptTool"}),
    "ResumeTurn",
    "RunModel",
]


def run_refund_session(
    flow: AgentSessionFlow,
    address: str,
    session_prefix: str,
    expected_shape: list[str | frozenset[str]] | None = None,
) -> None:
    """One turn of `flow` on the server at `address`, with a Worker in this process.

    `expected_shape` replaces the Step-mode shape for a whole-turn harness, whose
    read runs inside RunModel."""
    session_id = f"{session_prefix}-{uuid.uuid4().hex[:8]}"
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
    assert_step_shape(history, expected_shape or EXPECTED_SHAPE, turn=0)
