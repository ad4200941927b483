"""Message storage: the AgentMessages window, chunk rollover, oversized messages, reads.

Message storage (docs/architecture.md): the newest messages are one AgentMessages instance
each, so storing one is a blind write; when a Step leaves more than
`message_window_size` there, the same commit moves the oldest into immutable
AgentMessageChunks instances listed in AgentMessageIndex. With compaction, chunks
the summary covers are deleted whole once enough newer messages are stored.

TurnReplySequence lets a turn's end count its messages without reading them.
A turn whose value names another turn (started by a Worker that wrote none)
counts back from the newest message, and the first store in that turn records
the value before its rollover can move those messages out of the window.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from dex import Context
from dex_agents_contracts import (
    AgentMessage,
    AgentMessageChunk,
    AgentMessageChunkRange,
    AgentMessageIndex,
    AgentState,
    MessageRole,
    TurnReplySequence,
    encode_agent_message,
)

from dex_agents._runner.values import message_record
from dex_agents.errors import ValueTooLarge
from dex_agents.options import (
    MESSAGE_ROLLOVER_MAX_BYTES_PER_COMMIT,
    MESSAGE_ROLLOVER_MAX_CHUNKS_PER_COMMIT,
    AgentSessionOptions,
)
from dex_agents.runner import FrameworkMessage
from dex_agents.session._schema import SessionSchema, sequence_key
from dex_agents.session._time import utc_now

__all__ = [
    "EMPTY_CHUNK_BYTES",
    "VALUE_FRAMING_BYTES",
    "MessageStore",
    "chunk_ranges_between",
    "encoded_size",
]

EMPTY_CHUNK_BYTES = len('{"messages":[]}')
VALUE_FRAMING_BYTES = 16
"""Most bytes a Dex Value adds around a JSON payload (obj_value, encoding, lengths)."""


def encoded_size(message: AgentMessage) -> int:
    """UTF-8 length of the message's wire JSON, as chunk sizes count it."""
    return len(encode_agent_message(message).encode("utf-8"))


@dataclass(frozen=True)
class MessageStore:
    """Reads and appends a session's messages inside one Step or RPC Context."""

    schema: SessionSchema
    options: AgentSessionOptions

    # --- reads ---------------------------------------------------------------------

    def index(self, context: Context) -> AgentMessageIndex | None:
        return self.schema.message_index.get(context)

    def window(self, context: Context) -> dict[int, AgentMessage]:
        """The AgentMessages instances (the Context must load the whole map)."""
        messages = self.schema.messages
        return {
            int(key): messages.get(context, key) for key in messages.get_all_instance_keys(context)
        }

    def read_all(self, context: Context) -> list[AgentMessage]:
        """Every stored message, oldest first (the Context loads both maps)."""
        return self.read_range(context)

    def read_range(
        self, context: Context, *, after: int = 0, through: int | None = None
    ) -> list[AgentMessage]:
        """Stored messages with `after < sequence <= through`, oldest first.

        Reads only the chunks that hold such messages, so the Context needs the whole
        AgentMessages window but only those AgentMessageChunks instances.
        """
        index = self.index(context)
        messages = self.schema.messages
        # Values decode on read: only the window's messages in the range are decoded.
        window = {
            seq: messages.get(context, sequence_key(seq))
            for seq in self._window_sequences(context)
            if _within(seq, after, through)
        }
        if index is None:
            return [window[seq] for seq in sorted(window)]
        found: dict[int, AgentMessage] = {}
        covered: set[int] = set()
        for chunk_range in chunk_ranges_between(index, after, through):
            chunk = self.schema.message_chunks.get(
                context, sequence_key(chunk_range.first_sequence)
            )
            expected = list(range(chunk_range.first_sequence, chunk_range.last_sequence + 1))
            if chunk is None or [m.sequence for m in chunk.messages] != expected:
                raise RuntimeError(
                    f"AgentMessageChunks {sequence_key(chunk_range.first_sequence)} does not hold "
                    f"messages {chunk_range.first_sequence}..{chunk_range.last_sequence}"
                )
            for message in chunk.messages:
                if _within(message.sequence, after, through):
                    found[message.sequence] = message
            covered.update(expected)
        for seq, message in window.items():
            if seq >= index.window_first_sequence and seq not in covered:
                found[seq] = message
        return [found[seq] for seq in sorted(found)]

    def reply_sequence(self, context: Context, state: AgentState, turn_id: str) -> int:
        """The first sequence after the turn's user messages (the Context loads the window).

        From TurnReplySequence when it names the turn; otherwise counted back from
        the newest message over the turn's replies.
        """
        reply = self.schema.turn_reply_sequence.get(context)
        if reply is not None and reply.turn_id == turn_id:
            return reply.sequence
        window = self.window(context)
        count = 0
        for seq in sorted(window, reverse=True):
            message = window[seq]
            if message.turn_id != turn_id or message.role is MessageRole.USER:
                break
            count += 1
        return state.next_message_sequence - count

    # --- writes --------------------------------------------------------------------

    def record_reply_sequence(self, context: Context, state: AgentState, turn_id: str) -> None:
        """Before a store in a started turn: record its TurnReplySequence when the stored
        one names another turn, while the window still holds the turn's replies."""
        reply = self.schema.turn_reply_sequence.get(context)
        if reply is None or reply.turn_id != turn_id:
            sequence = self.reply_sequence(context, state, turn_id)
            self.schema.turn_reply_sequence.set(
                context, TurnReplySequence(turn_id=turn_id, sequence=sequence)
            )

    def append(
        self,
        context: Context,
        state: AgentState,
        turn_id: str,
        messages: Sequence[FrameworkMessage],
    ) -> list[AgentMessage]:
        """Store `messages` after the newest one, then roll the window over.

        Advances `state.next_message_sequence`; the caller writes the state. A message
        too large for `max_value_bytes` raises ValueTooLarge before anything changes.
        """
        if not messages:
            return []
        stored = [
            message_record(
                framework_message,
                sequence=state.next_message_sequence + offset,
                turn_id=turn_id,
                created_at=utc_now(),
            )
            for offset, framework_message in enumerate(messages)
        ]
        sizes = [encoded_size(message) for message in stored]
        for message, size in zip(stored, sizes, strict=True):
            self._check_storable(context, message, size)
        state.next_message_sequence += len(stored)
        # Only the window's sequences are needed, plus the messages a rollover moves:
        # decode those lazily instead of the whole window.
        window: dict[int, AgentMessage | None] = dict.fromkeys(self._window_sequences(context))
        index = self.index(context)
        index_changed = False
        for message, size in zip(stored, sizes, strict=True):
            if EMPTY_CHUNK_BYTES + size > self.options.message_chunk_max_bytes:
                # Oversized: its own chunk at once, so no later rollover meets a bigger value.
                index = index or _new_index()
                self.schema.message_chunks.set(
                    context, sequence_key(message.sequence), AgentMessageChunk(messages=[message])
                )
                index.chunks.append(
                    AgentMessageChunkRange(
                        first_sequence=message.sequence, last_sequence=message.sequence
                    )
                )
                index_changed = True
            else:
                window[message.sequence] = message
                self.schema.messages.set(context, sequence_key(message.sequence), message)
        if len(window) > self.options.message_window_size:
            index = index or _new_index()
            index_changed = self._roll_over(context, window, index) or index_changed
        if index is not None:
            summary = self.schema.context_summary.get(context)
            if summary is not None:
                index_changed = (
                    self._retain(context, index, state.next_message_sequence, summary.last_sequence)
                    or index_changed
                )
        if index is not None and index_changed:
            index.chunks.sort(key=lambda r: r.first_sequence)
            index.window_first_sequence = min(window) if window else state.next_message_sequence
            self.schema.message_index.set(context, index)
        return stored

    def retain(self, context: Context, next_message_sequence: int, summarized_through: int) -> None:
        """Retention after a new summary: delete the chunks it made deletable.

        For CompactContext, which stores no message; writes the index only when a
        chunk goes.
        """
        index = self.index(context)
        if index is not None and self._retain(
            context, index, next_message_sequence, summarized_through
        ):
            self.schema.message_index.set(context, index)

    def _retain(
        self,
        context: Context,
        index: AgentMessageIndex,
        next_message_sequence: int,
        summarized_through: int,
    ) -> bool:
        """Delete the oldest chunks while the summary covers them and enough newer stay.

        Only whole chunks that start at the oldest stored message go, so the stored
        messages stay one run from `first_sequence` and the newest
        `retained_message_limit` messages and everything after the summary survive.
        """
        limit = self.options.retained_message_limit
        if self.options.compaction is None or limit is None:
            return False
        index.chunks.sort(key=lambda r: r.first_sequence)
        deleted = False
        while index.chunks:
            oldest = index.chunks[0]
            newer = next_message_sequence - 1 - oldest.last_sequence
            if (
                oldest.first_sequence != index.first_sequence
                or oldest.last_sequence > summarized_through
                or newer < limit
            ):
                break
            self.schema.message_chunks.delete(context, sequence_key(oldest.first_sequence))
            index.chunks.pop(0)
            index.first_sequence = oldest.last_sequence + 1
            deleted = True
        return deleted

    def _window_sequences(self, context: Context) -> list[int]:
        return [int(key) for key in self.schema.messages.get_all_instance_keys(context)]

    def _check_storable(self, context: Context, message: AgentMessage, size: int) -> None:
        """Raise ValueTooLarge, before anything is written, for a message Dex cannot store.

        Its first stored value is its own AgentMessages instance or, when oversized, its
        single-message chunk; the check takes the larger, plus the Value's framing.
        """
        needed = EMPTY_CHUNK_BYTES + size + VALUE_FRAMING_BYTES
        limit = self.options.max_value_bytes
        if needed > limit:
            raise ValueTooLarge(
                f"dex-agents: {message.role.name.lower()} message {message.sequence} needs a "
                f"stored value of {needed} bytes, over the {limit}-byte limit "
                "(values.maxValueBytes)",
                session_id=context.flow_id,
            )

    def _roll_over(
        self,
        context: Context,
        window: dict[int, AgentMessage | None],
        index: AgentMessageIndex,
    ) -> bool:
        moved_chunks = 0
        moved_bytes = 0
        while (
            len(window) > self.options.message_window_size
            and moved_chunks < MESSAGE_ROLLOVER_MAX_CHUNKS_PER_COMMIT
        ):
            chunk, size = self._next_chunk(context, window)
            if moved_chunks and moved_bytes + size > MESSAGE_ROLLOVER_MAX_BYTES_PER_COMMIT:
                break
            first, last = chunk[0].sequence, chunk[-1].sequence
            self.schema.message_chunks.set(
                context, sequence_key(first), AgentMessageChunk(messages=chunk)
            )
            for message in chunk:
                del window[message.sequence]
                self.schema.messages.delete(context, sequence_key(message.sequence))
            index.chunks.append(AgentMessageChunkRange(first_sequence=first, last_sequence=last))
            moved_chunks += 1
            moved_bytes += size
        return moved_chunks > 0

    def _next_chunk(
        self, context: Context, window: dict[int, AgentMessage | None]
    ) -> tuple[list[AgentMessage], int]:
        """The oldest consecutive window messages that fit one chunk, and its size.

        Decodes a stored window message only when the chunk reaches it (and keeps it
        in `window`, so the next chunk does not decode it again).
        """
        chunk: list[AgentMessage] = []
        size = EMPTY_CHUNK_BYTES
        for seq in sorted(window):
            message = window[seq]
            if chunk and seq != chunk[-1].sequence + 1:
                break
            if message is None:
                message = self.schema.messages.get(context, sequence_key(seq))
                window[seq] = message
            added = encoded_size(message) + (1 if chunk else 0)
            if chunk and size + added > self.options.message_chunk_max_bytes:
                break
            chunk.append(message)
            size += added
            if len(chunk) >= self.options.message_chunk_size:
                break
        return chunk, size


def chunk_ranges_between(
    index: AgentMessageIndex, after: int, through: int | None = None
) -> list[AgentMessageChunkRange]:
    """The index's chunks that hold a message with `after < sequence <= through`."""
    return [
        r
        for r in index.chunks
        if r.last_sequence > after and (through is None or r.first_sequence <= through)
    ]


def _within(sequence: int, after: int, through: int | None) -> bool:
    return sequence > after and (through is None or sequence <= through)


def _new_index() -> AgentMessageIndex:
    # A session without an index stored every message in AgentMessages from 1.
    return AgentMessageIndex(chunks=[], first_sequence=1, window_first_sequence=1)
