"""State snapshots sent to Workers: attributes, channel sizes and loaded messages (§5.2, §6.3)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from dex.dexpb import dex_pb2 as pb

if TYPE_CHECKING:
    import sqlite3
    from collections.abc import Sequence


@dataclass(frozen=True, kw_only=True)
class Loads:
    """The three load selectors of one method, echoed back verbatim."""

    attribute_maps: Sequence[str] = ()
    channels: Sequence[str] = ()
    channel_maps: Sequence[str] = ()


def _selected(key: str, selectors: Sequence[str]) -> bool:
    return any(key.startswith(s) if s.endswith("/") else key == s for s in selectors)


def attributes(conn: sqlite3.Connection, run_id: str, maps: Sequence[str]) -> list[pb.KV]:
    """Every singleton plus the selected map instances, sorted by key."""
    result: list[pb.KV] = []
    for key, blob in conn.execute(
        "SELECT key, value FROM attrs WHERE run_id=? ORDER BY key", (run_id,)
    ):
        if "/" in key and not _selected(key, maps):
            continue
        kv = pb.KV(key=key)
        kv.value.ParseFromString(blob)
        result.append(kv)
    return result


def channel_counts(conn: sqlite3.Connection, run_id: str) -> dict[str, int]:
    return {
        channel: count
        for channel, count in conn.execute(
            "SELECT channel, COUNT(*) FROM msgs WHERE run_id=? GROUP BY channel", (run_id,)
        )
    }


def fill(
    conn: sqlite3.Connection,
    run_id: str,
    loads: Loads,
    request: pb.InvokeWaitForMethodRequest
    | pb.InvokeExecuteMethodRequest
    | pb.InvokeWorkerRPCRequest,
) -> None:
    """Adds attributes, channel infos, loaded messages and the selector echoes."""
    request.attributes.extend(attributes(conn, run_id, loads.attribute_maps))
    for channel, count in channel_counts(conn, run_id).items():
        request.channel_infos[channel].size = count
    if loads.channels or loads.channel_maps:
        wanted = list(loads.channels) + list(loads.channel_maps)
        for channel in wanted:
            if not channel.endswith("/"):
                request.loaded_channel_messages[channel].SetInParent()
        for channel, message_id, blob in conn.execute(
            "SELECT channel, message_id, value FROM msgs WHERE run_id=? ORDER BY seq", (run_id,)
        ):
            if channel in loads.channels or _selected(channel, loads.channel_maps):
                message = request.loaded_channel_messages[channel].messages.add(
                    channel_name=channel, message_id=message_id
                )
                message.value.ParseFromString(blob)
    request.loaded_attribute_map_instances.extend(loads.attribute_maps)
    request.loaded_channel_names.extend(loads.channels)
    request.loaded_channel_map_instances.extend(loads.channel_maps)


def method_loads(options: pb.StepOptions, method: str) -> Loads:
    if method == "wait_for":
        return Loads(
            attribute_maps=list(options.wait_for_load_attribute_map_instances),
            channels=list(options.wait_for_load_channel_names),
            channel_maps=list(options.wait_for_load_channel_map_instances),
        )
    return Loads(
        attribute_maps=list(options.execute_load_attribute_map_instances),
        channels=list(options.execute_load_channel_names),
        channel_maps=list(options.execute_load_channel_map_instances),
    )
