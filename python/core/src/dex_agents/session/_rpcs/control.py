"""The rules of send_user_message, steer_user_message, delete_queued_message and cancel_turn.

The RPC methods on AgentSessionFlow declare locks and loads; the decisions live
here so each reads as its list of cases.
"""

from __future__ import annotations

from dataclasses import dataclass

from dex import Context
from dex_agents_contracts import (
    AgentUserMessage,
    CancelTurnRequest,
    DeleteQueuedMessageRequest,
    SteerUserMessageRequest,
    TurnCancellationRequest,
    TurnControlKind,
    TurnControlRequest,
)

from dex_agents.session._schema import SessionSchema
from dex_agents.session._time import utc_now

__all__ = [
    "TurnCancellation",
    "accept_turn_cancellation",
    "delete_queued_message",
    "send_user_message",
    "steer_user_message",
]


def send_user_message(
    schema: SessionSchema, context: Context, message: AgentUserMessage, *, plan_mode_enabled: bool
) -> bool:
    """Queue a user message; false for blank text, or plan_mode without plan mode."""
    text = message.text
    if not isinstance(text, str) or not text.strip():
        return False
    plan_mode = message.plan_mode is True
    if plan_mode and not plan_mode_enabled:
        return False
    schema.queued_user_messages.publish(context, AgentUserMessage(text=text, plan_mode=plan_mode))
    return True


def steer_user_message(
    schema: SessionSchema, context: Context, request: SteerUserMessageRequest
) -> bool:
    """Publish a steered message and wake the turn; queue it instead while no turn runs.

    A queued message moved by its ID keeps its plan_mode. The RPC is
    transactional, so a message consumed since the read fails it whole.
    """
    message_id, text = request.message_id, request.text
    if (message_id is None) == (text is None):
        return False  # exactly one of the two
    if text is not None and not text.strip():
        return False
    queued = None
    if message_id is not None:
        queued = next(
            (
                m
                for m in schema.queued_user_messages.pending_messages(context)
                if m.message_id == message_id
            ),
            None,
        )
        if queued is None:
            return False
    state = schema.state.get(context)
    if state is None or state.active_turn_id is None:
        # An idle wait listens only to QueuedUserMessages: a steer becomes a message.
        if queued is None:
            assert text is not None
            schema.queued_user_messages.publish(context, AgentUserMessage(text=text))
        return True
    if not state.accepts_turn_control:
        return False  # a Worker without steering runs this turn
    if queued is not None:
        assert message_id is not None
        schema.queued_user_messages.delete(context, message_id)
        schema.steered_user_messages.publish(context, queued.value)
    else:
        assert text is not None
        schema.steered_user_messages.publish(context, AgentUserMessage(text=text))
    schema.turn_control_requests.publish(context, TurnControlRequest(kind=TurnControlKind.STEER))
    return True


def delete_queued_message(
    schema: SessionSchema, context: Context, request: DeleteQueuedMessageRequest
) -> bool:
    """Delete a message no turn has taken yet; false when it is not pending."""
    message_id = request.message_id
    if not message_id:
        return False
    pending = schema.queued_user_messages.pending_messages(context)
    if all(m.message_id != message_id for m in pending):
        return False
    schema.queued_user_messages.delete(context, message_id)
    return True


@dataclass(frozen=True)
class TurnCancellation:
    """cancel_turn's decision: refused, already recorded, or newly recorded for a turn."""

    accepted: bool
    turn_id: str | None = None
    """Set only when this call recorded the cancellation."""


def accept_turn_cancellation(
    schema: SessionSchema, context: Context, request: CancelTurnRequest
) -> TurnCancellation:
    """Record TurnCancellationRequest for the active turn when cancel_turn may stop it."""
    state = schema.state.get(context)
    if state is None or state.active_turn_id is None:
        return TurnCancellation(accepted=False)
    turn_id = state.active_turn_id
    if request.turn_id is not None and request.turn_id != turn_id:
        return TurnCancellation(accepted=False)
    if not state.accepts_turn_control:
        return TurnCancellation(accepted=False)
    existing = schema.turn_cancellation_request.get(context)
    if existing is not None and existing.turn_id == turn_id:
        return TurnCancellation(accepted=True)
    schema.turn_cancellation_request.set(
        context, TurnCancellationRequest(turn_id=turn_id, requested_at=utc_now())
    )
    return TurnCancellation(accepted=True, turn_id=turn_id)
