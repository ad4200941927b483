"""State snapshots sent to Workers: attributes, channel sizes and loaded messages."""

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


_IN_BATCH = 500
"""Exact instance keys per `IN (...)` query, well under SQLite's parameter limit."""


def _selected(key: str, selectors: Sequence[str]) -> bool:
    return any(key.startswith(s) if s.endswith("/") else key == s for s in selectors)


def attributes(conn: sqlite3.Connection, run_id: str, maps: Sequence[str] | None) -> list[pb.KV]:
    """Every singleton plus the selected map instances (None: every instance), sorted by key.

    Rows are selected in SQL (the `(run_id, key)` primary key serves both exact
    instance keys and whole-map prefixes), so a request costs what it loads, not
    what the run stores.
    """
    if maps is None:
        rows = conn.execute("SELECT key, value FROM attrs WHERE run_id=?", (run_id,)).fetchall()
    else:
        rows = conn.execute(
            "SELECT key, value FROM attrs WHERE run_id=? AND instr(key, '/')=0", (run_id,)
        ).fetchall()
        prefixes = sorted({s for s in maps if s.endswith("/")})
        for prefix in prefixes:
            # Keys of the map `name/` sort between "name/" and "name0" ('0' follows '/').
            rows += conn.execute(
                "SELECT key, value FROM attrs WHERE run_id=? AND key>=? AND key<?",
                (run_id, prefix, prefix[:-1] + "0"),
            ).fetchall()
        exact = sorted(
            {s for s in maps if not s.endswith("/")}
            - {s for s in maps for p in prefixes if s.startswith(p)}
        )
        for start in range(0, len(exact), _IN_BATCH):
            batch = exact[start : start + _IN_BATCH]
            marks = ",".join("?" * len(batch))
            rows += conn.execute(
                f"SELECT key, value FROM attrs WHERE run_id=? AND key IN ({marks})",
                (run_id, *batch),
            ).fetchall()
    result: list[pb.KV] = []
    for key, blob in sorted(rows, key=lambda row: str(row[0])):
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
