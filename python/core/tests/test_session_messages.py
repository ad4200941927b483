"""Message storage: window rollover into chunks, oversized messages, reads (unit and end to end)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from dex_agents.options import AgentSessionOptions
from dex_agents.runner import FrameworkMessage
from dex_agents.session._rpcs.reads import snapshot
from dex_agents.session._runtime import SessionRuntime
from dex_agents.session._schema import SessionSchema, sequence_key
from dex_agents.session._stores.messages import EMPTY_CHUNK_BYTES, MessageStore, encoded_size
from dex_agents_contracts import AgentState, AgentStatus, InteractionMode, MessageRole
from dex_agents_testing import ModelReply
from helpers import FakeContext, HarnessFactory


def _state() -> AgentState:
    return AgentState(
        status=AgentStatus.RUNNING_MODEL,
        next_message_sequence=1,
        interaction_mode=InteractionMode.CHAT,
    )


def _texts(*texts: str) -> list[FrameworkMessage]:
    return [FrameworkMessage(role=MessageRole.USER, text=t, framework_item="{}") for t in texts]


def _store(**options: Any) -> MessageStore:
    return MessageStore(SessionSchema.create(1024), AgentSessionOptions(**options))


def _ranges(context: FakeContext, store: MessageStore) -> list[tuple[int, int]]:
    index = store.index(context)  # type: ignore[arg-type]
    assert index is not None
    return [(r.first_sequence, r.last_sequence) for r in index.chunks]


def _append(
    store: MessageStore, context: FakeContext, state: AgentState, texts: Sequence[str]
) -> None:
    store.append(context, state, "turn-1", _texts(*texts))  # type: ignore[arg-type]


def test_window_rolls_over_whole_chunks() -> None:
    store, context, state = (
        _store(message_window_size=4, message_chunk_size=3),
        FakeContext(),
        _state(),
    )
    _append(store, context, state, ["m1", "m2", "m3", "m4"])
    assert store.index(context) is None  # type: ignore[arg-type]
    assert sorted(context.keys("AgentMessages")) == [1, 2, 3, 4]
    _append(store, context, state, ["m5"])
    assert _ranges(context, store) == [(1, 3)]
    assert sorted(context.keys("AgentMessages")) == [4, 5]
    index = store.index(context)  # type: ignore[arg-type]
    assert index is not None
    assert index.window_first_sequence == 4
    assert index.first_sequence == 1
    for n in range(6, 17):
        _append(store, context, state, [f"m{n}"])
    assert _ranges(context, store) == [(1, 3), (4, 6), (7, 9), (10, 12)]
    assert [m.text for m in store.read_all(context)] == [f"m{n}" for n in range(1, 17)]  # type: ignore[arg-type]
    assert context.values[("AgentMessageChunks", sequence_key(4))] is not None


def test_one_commit_moves_at_most_four_chunks() -> None:
    store, context, state = (
        _store(message_window_size=2, message_chunk_size=2),
        FakeContext(),
        _state(),
    )
    _append(store, context, state, [f"m{n}" for n in range(1, 21)])
    assert _ranges(context, store) == [(1, 2), (3, 4), (5, 6), (7, 8)]
    assert len(context.keys("AgentMessages")) == 12  # drains over later commits
    _append(store, context, state, ["m21"])
    assert len(_ranges(context, store)) == 8
    assert [m.sequence for m in store.read_all(context)] == list(range(1, 22))  # type: ignore[arg-type]


def test_chunk_closes_before_its_byte_limit_and_oversized_messages_skip_the_window() -> None:
    store, context, state = _store(), FakeContext(), _state()
    probe = store.append(FakeContext(), _state(), "turn-1", _texts("x" * 100))  # type: ignore[arg-type]
    size = encoded_size(probe[0])
    # Room for exactly two such messages (plus the comma) per chunk.
    limit = EMPTY_CHUNK_BYTES + 2 * size + 1
    store = _store(message_window_size=2, message_chunk_size=32, message_chunk_max_bytes=limit)
    _append(store, context, state, ["x" * 100] * 3)
    assert _ranges(context, store) == [(1, 2)]
    big = "y" * limit
    _append(store, context, state, [big, "x" * 100])
    ranges = _ranges(context, store)
    assert (4, 4) in ranges  # the oversized message has a chunk of its own
    assert 4 not in context.keys("AgentMessages")
    messages = store.read_all(context)  # type: ignore[arg-type]
    assert [m.sequence for m in messages] == [1, 2, 3, 4, 5]
    assert messages[3].text == big
    # Rollover steps over the oversized message: chunks never span it.
    _append(store, context, state, ["x" * 100] * 4)
    assert [m.sequence for m in store.read_all(context)] == list(range(1, 10))  # type: ignore[arg-type]
    for first, last in _ranges(context, store):
        assert not (first < 4 < last)


def test_long_history_rolls_over_and_reads_back_whole(harness: HarnessFactory) -> None:
    turns = 14
    h = harness(
        script=[[ModelReply(text=f"answer {n}")] for n in range(1, turns + 1)],
        message_window_size=5,
        message_chunk_size=3,
        message_chunk_max_bytes=2048,
    )
    session = h.start("question 1")
    for n in range(2, turns + 1):
        text = "z" * 3000 if n == 7 else f"question {n}"  # one oversized message
        assert h.client.send_user_message(session, text)
    done = h.wait_idle(session, turns, timeout=60)
    assert done.state is not None
    assert done.state.next_message_sequence == 2 * turns + 1
    expected = []
    for n in range(1, turns + 1):
        expected += ["z" * 3000 if n == 7 else f"question {n}", f"answer {n}"]
    everything = h.client.all_messages(session)
    assert [m.sequence for m in everything] == list(range(1, 2 * turns + 1))
    assert [m.text for m in everything] == expected
    assert [m.text for m in done.messages] == expected
    # Small pages walk back over chunk and window boundaries.
    paged: list[str | None] = []
    before: int | None = None
    while True:
        page = h.client.list_messages(session, before_sequence=before, limit=4)
        paged = [m.text for m in page.messages] + paged
        if page.next_before_sequence is None:
            break
        before = page.next_before_sequence
    assert paged == expected
    # Each turn saw every earlier message.
    last = h.log.entries("model", turn=f"turn-{turns}")[0]
    assert last["seen"] == expected[:-1]


class CountingContext(FakeContext):
    """Counts each value read, as the SDK decodes a value on every read."""

    def __init__(self) -> None:
        super().__init__()
        self.reads: list[tuple[str, str | None]] = []

    def _get_attribute(self, definition: Any, instance: str | None) -> Any:
        self.reads.append((definition.name, instance))
        return super()._get_attribute(definition, instance)


def test_a_range_read_decodes_only_the_chunks_and_window_messages_it_returns() -> None:
    store = _store(message_window_size=5, message_chunk_size=3)
    context, state = CountingContext(), _state()
    _append(store, context, state, [f"m{n}" for n in range(1, 21)])
    assert _ranges(context, store) == [(1, 3), (4, 6), (7, 9), (10, 12)]  # 4 per commit
    context.reads.clear()
    got = store.read_range(context, after=10, through=17)  # type: ignore[arg-type]
    assert [m.sequence for m in got] == list(range(11, 18))
    chunks = [i for name, i in context.reads if name == "AgentMessageChunks"]
    window = [i for name, i in context.reads if name == "AgentMessages"]
    assert chunks == [sequence_key(10)]
    assert window == [sequence_key(n) for n in range(13, 18)]


class SnapshotContext(CountingContext):
    """Adds the empty Channel reads of a session with nothing queued."""

    def _pending_channel_messages(self, definition: Any, instance: str | None) -> list[Any]:
        return []


def test_the_snapshot_holds_the_newest_messages_and_decodes_no_older_chunk() -> None:
    options = AgentSessionOptions(message_window_size=5, message_chunk_size=50)
    runtime = SessionRuntime(
        runner=None,  # type: ignore[arg-type]  # reads only: no Step runs
        options=options,
        schema=SessionSchema.create(1024),
        steps=None,  # type: ignore[arg-type]
    )
    context, state = SnapshotContext(), _state()
    store = runtime.store
    for first in range(1, 301, 10):  # ten at a time: each commit moves at most four chunks
        _append(store, context, state, [f"m{n}" for n in range(first, first + 10)])
    state.status = AgentStatus.WAITING_FOR_USER_MESSAGE
    runtime.schema.state.set(context, state)  # type: ignore[arg-type]
    context.reads.clear()
    got = snapshot(runtime, context)  # type: ignore[arg-type]
    assert [m.text for m in got.messages] == [f"m{n}" for n in range(101, 301)]
    chunks = [i for name, i in context.reads if name == "AgentMessageChunks"]
    holding_the_newest = [(f, last) for f, last in _ranges(context, store) if last > 100]
    assert chunks == [sequence_key(first) for first, _ in holding_the_newest]
    assert len(holding_the_newest) < len(_ranges(context, store))
