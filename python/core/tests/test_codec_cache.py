"""The decode cache for stored messages: equal values, private copies, a bound."""

from __future__ import annotations

from datetime import UTC, datetime

from dex import Value, WireKind
from dex_agents.codecs import CachedMessageCodec, _DecodeCache
from dex_agents_contracts import AgentMessage, AgentMessageChunk, MessageRole, encode


def _message(sequence: int) -> AgentMessage:
    return AgentMessage(
        sequence=sequence,
        turn_id="turn-1",
        role=MessageRole.USER,
        text=f"message {sequence}",
        framework_item="{}",
        created_at=datetime(2026, 11, 1, 12, 0, 0, 123000, UTC),
    )


def test_cached_decode_returns_equal_private_copies() -> None:
    codec = CachedMessageCodec(AgentMessageChunk)
    stored = Value(WireKind.JSON, encode(AgentMessageChunk(messages=[_message(1), _message(2)])))
    first = codec.decode(stored)
    first.messages[0].text = "changed by a runner"
    first.messages.append(_message(3))
    second = codec.decode(stored)
    assert [m.text for m in second.messages] == ["message 1", "message 2"]
    assert second.messages[0] is not first.messages[0]
    assert encode(second) == stored.data


def test_cache_evicts_least_recently_used_entries_past_its_bound() -> None:
    cache = _DecodeCache(max_bytes=10)
    cache.put("aaaa", 1)
    cache.put("bbbb", 2)
    assert cache.get("aaaa") == 1  # now the most recently used
    cache.put("cccc", 3)
    assert cache.get("bbbb") is None
    assert (cache.get("aaaa"), cache.get("cccc")) == (1, 3)
    cache.put("x" * 11, 4)  # larger than the whole cache: never kept
    assert cache.get("x" * 11) is None
