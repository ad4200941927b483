"""Streams in their own database: independent of engine transactions, and adopted
from the main database an older dexlite kept them in."""

from __future__ import annotations

import threading
from pathlib import Path

from dex.dexpb import dex_pb2 as pb
from dexlite._storage import STREAM_SCHEMA, Database, stream_db_path
from dexlite._streams import StreamStore

KEY = {"flow_type": "Chat", "flow_id": "chat-1", "name": "events"}


def _value(text: str) -> pb.Value:
    return pb.Value(string_value=text)


def _store(db_path: str) -> StreamStore:
    return StreamStore(Database(stream_db_path(db_path), "normal", schema=STREAM_SCHEMA))


def _texts(store: StreamStore) -> list[str]:
    messages, _ = store.list(**KEY, page_size=100, token="")
    return [m.value.string_value for m in reversed(messages)]


def test_streams_live_next_to_the_database_or_in_memory() -> None:
    assert stream_db_path("/data/dexlite.sqlite") == "/data/dexlite.sqlite-streams"
    assert stream_db_path(":memory:") == ":memory:"


def test_appends_and_reads_do_not_wait_for_the_engine_lock(tmp_path: Path) -> None:
    main = Database(str(tmp_path / "dexlite.sqlite"))
    store = _store(main.path)
    holding, release = threading.Event(), threading.Event()

    def hold_engine_lock() -> None:
        with main.transaction():  # an engine transaction that does not end yet
            holding.set()
            release.wait(30)

    holder = threading.Thread(target=hold_engine_lock)
    holder.start()
    try:
        assert holding.wait(30)
        store.append(**KEY, capacity=1024, value=_value("a"), source="#Step-1")
        message = store.read(**KEY, token="", wait_seconds=5)
        assert (message.value.string_value, message.resume_token) == ("a", "1")
    finally:
        release.set()
        holder.join(30)
    store.close()
    main.close()


def test_streams_kept_in_the_main_database_are_adopted_once(tmp_path: Path) -> None:
    path = str(tmp_path / "dexlite.sqlite")
    main = Database(path)
    main.conn.executescript(STREAM_SCHEMA)  # the layout older dexlite versions used
    with main.transaction() as conn:
        for seq, text in ((3, "first"), (4, "second"), (7, "third")):
            conn.execute(
                "INSERT INTO streams(seq, flow_type, flow_id, name, value, source, created_ms,"
                " size) VALUES (?,?,?,?,?,?,?,?)",
                (seq, *KEY.values(), _value(text).SerializeToString(), "#Step-1", 1000, 10),
            )
    store = _store(path)

    store.adopt_legacy(main)
    store.adopt_legacy(main)  # nothing left to adopt: no change

    tables = main.conn.execute("SELECT name FROM sqlite_master WHERE name LIKE 'stream%'")
    assert tables.fetchall() == []
    assert _texts(store) == ["first", "second", "third"]
    # Resume tokens handed out before the move still work.
    assert store.read(**KEY, token="4", wait_seconds=0).value.string_value == "third"
    # The adopted byte totals drive trimming: 3 x 10 bytes stored, room for 25.
    store.append(**KEY, capacity=25, value=_value("fourth"), source="#Step-2")
    assert _texts(store) == ["third", "fourth"]
    store.close()
    main.close()
