"""Attribute writes, channel publishes and deletions: checked, then applied in order."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from dex.dexpb import dex_pb2 as pb

from dexlite import _errors
from dexlite._model import check_value, is_null, message_id

if TYPE_CHECKING:
    import sqlite3
    from collections.abc import Sequence

    from .state import EngineState


class Effects(Protocol):
    """The writes a Worker's wait_for, execute or RPC result carries."""

    @property
    def upsert_attributes(self) -> Sequence[pb.AttributeWrite]: ...
    @property
    def publish_to_channel(self) -> Sequence[pb.ChannelMessage]: ...
    @property
    def delete_from_channel(self) -> Sequence[pb.ChannelMessageDeletion]: ...


def check_writes(
    state: EngineState,
    writes: Sequence[pb.AttributeWrite],
    publishes: Sequence[pb.ChannelMessage] = (),
    deletions: Sequence[pb.ChannelMessageDeletion] = (),
) -> str | None:
    """Why the writes cannot be applied, or None."""
    limit = state.options.max_value_bytes
    named = [("upsert_attributes", "key", "attribute", write.key, write) for write in writes] + [
        ("publish_to_channel", "channel_name", "channel", message.channel_name, message)
        for message in publishes
    ]
    for field, name_field, kind, name, item in named:
        if not name:
            return f"{field}.{name_field} is required"
        if not item.HasField("value"):
            return f"{field}[{name!r}].value is required"
        problem = check_value(item.value, f"{kind} {name!r}", limit)
        if problem:
            return problem
    for deletion in deletions:
        if not deletion.channel_name or not deletion.message_id:
            return "delete_from_channel needs channel_name and message_id"
    return None


def check_effects(state: EngineState, effects: Effects) -> str | None:
    return check_writes(
        state, effects.upsert_attributes, effects.publish_to_channel, effects.delete_from_channel
    )


def apply_effects(
    conn: sqlite3.Connection, run_id: str, effects: Effects, *, strict_deletions: bool = False
) -> None:
    apply_writes(
        conn,
        run_id,
        effects.upsert_attributes,
        effects.publish_to_channel,
        effects.delete_from_channel,
        strict_deletions=strict_deletions,
    )


def apply_writes(
    conn: sqlite3.Connection,
    run_id: str,
    writes: Sequence[pb.AttributeWrite],
    publishes: Sequence[pb.ChannelMessage] = (),
    deletions: Sequence[pb.ChannelMessageDeletion] = (),
    *,
    strict_deletions: bool = False,
) -> None:
    """Attribute writes, then deletions, then publishes (the order the protocol prescribes)."""
    for write in writes:
        if is_null(write.value):
            conn.execute("DELETE FROM attrs WHERE run_id=? AND key=?", (run_id, write.key))
        else:
            index_key = ""
            if write.index_config.enable:
                index_key = write.index_config.index_key or write.key
            conn.execute(
                "INSERT INTO attrs(run_id, key, value, index_key) VALUES (?,?,?,?)"
                " ON CONFLICT(run_id, key) DO UPDATE SET value=excluded.value,"
                " index_key=excluded.index_key",
                (run_id, write.key, write.value.SerializeToString(), index_key),
            )
    for deletion in deletions:
        cursor = conn.execute(
            "DELETE FROM msgs WHERE run_id=? AND channel=? AND message_id=?",
            (run_id, deletion.channel_name, deletion.message_id),
        )
        if cursor.rowcount == 0 and strict_deletions:
            raise _errors.message_not_found(deletion.channel_name, deletion.message_id)
    publish(conn, run_id, publishes)


def publish(
    conn: sqlite3.Connection, run_id: str, messages: Sequence[pb.ChannelMessage]
) -> list[pb.ChannelMessage]:
    """Stores the messages under fresh IDs; returns them as stored."""
    stored: list[pb.ChannelMessage] = []
    for message in messages:
        assigned = pb.ChannelMessage(
            channel_name=message.channel_name, value=message.value, message_id=message_id()
        )
        conn.execute(
            "INSERT INTO msgs(run_id, channel, message_id, value) VALUES (?,?,?,?)",
            (run_id, message.channel_name, assigned.message_id, message.value.SerializeToString()),
        )
        stored.append(assigned)
    return stored
