"""The read RPCs: get_agent_snapshot and list_agent_messages, from committed state."""

from __future__ import annotations

from dex import Context
from dex_agents_contracts import (
    AgentMessagesPage,
    AgentSnapshot,
    AgentUsage,
    ListAgentMessagesRequest,
    PendingUserMessage,
)

from dex_agents.session._runtime import SessionRuntime

__all__ = [
    "DEFAULT_MESSAGE_PAGE_LIMIT",
    "MAX_MESSAGE_PAGE_LIMIT",
    "SNAPSHOT_MESSAGE_LIMIT",
    "message_page",
    "snapshot",
]

SNAPSHOT_MESSAGE_LIMIT = 200
DEFAULT_MESSAGE_PAGE_LIMIT = 50
MAX_MESSAGE_PAGE_LIMIT = 200


def snapshot(runtime: SessionRuntime, context: Context) -> AgentSnapshot:
    """State, recent messages, interrupts, the active turn's tool calls, usage, queues."""
    schema = runtime.schema
    state = runtime.state(context)
    # Only the newest messages are returned, so only their chunks are decoded.
    newest = state.next_message_sequence - 1 if state is not None else 0
    messages = runtime.store.read_range(context, after=max(0, newest - SNAPSHOT_MESSAGE_LIMIT))
    queued = schema.queued_user_messages.pending_messages(context)
    tool_calls = (
        runtime.turn_records(context, state.active_turn_id)
        if state is not None and state.active_turn_id is not None
        else []
    )
    return AgentSnapshot(
        state=state,
        messages=messages[-SNAPSHOT_MESSAGE_LIMIT:],
        pending_interrupts=runtime.interrupts(context),
        tool_calls=tool_calls,
        usage=schema.usage.get(context) or AgentUsage(),
        queued_message_count=len(queued),
        plan=schema.plan.get(context),
        queued_messages=[
            PendingUserMessage(message_id=m.message_id, message=m.value) for m in queued
        ],
        steered_messages=[
            PendingUserMessage(message_id=m.message_id, message=m.value)
            for m in schema.steered_user_messages.pending_messages(context)
        ],
        context_summary=schema.context_summary.get(context),
        session_settings=schema.session_settings.get(context),
    )


def message_page(
    runtime: SessionRuntime, context: Context, request: ListAgentMessagesRequest
) -> AgentMessagesPage:
    """One page of stored messages, oldest first, ending before `before_sequence`."""
    store = runtime.store
    limit = max(1, min(MAX_MESSAGE_PAGE_LIMIT, request.limit))
    before = request.before_sequence
    state = runtime.state(context)
    newest = state.next_message_sequence - 1 if state is not None else 0
    through = newest if before is None else min(newest, before - 1)
    # Stored sequences are one run, so the page is the `limit` sequences up to `through`;
    # only the chunks holding them are decoded.
    page = store.read_range(context, after=max(0, through - limit), through=through)
    index = store.index(context)
    oldest = index.first_sequence if index is not None else 1
    next_before = page[0].sequence if page and page[0].sequence > oldest else None
    return AgentMessagesPage(
        messages=page,
        next_before_sequence=next_before,
        deleted_before_sequence=oldest if oldest > 1 else None,
    )
