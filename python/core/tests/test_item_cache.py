"""DecodedItemCache: decode once per text, copies on hits, bounded by bytes, errors uncached."""

from __future__ import annotations

import json
from dataclasses import dataclass

import pytest
from dex_agents._runner.item_cache import DecodedItemCache


@dataclass
class Item:
    value: object


def counting_decoder() -> tuple[list[str], DecodedItemCache[Item]]:
    decoded: list[str] = []

    def decode(text: str) -> Item:
        decoded.append(text)
        return Item(json.loads(text))

    return decoded, DecodedItemCache(decode, max_bytes=20)


def test_a_text_is_decoded_once_and_every_hit_is_a_separate_copy() -> None:
    decoded, cache = counting_decoder()
    first = cache.decoded('{"a":1}')
    first.value = "changed by the framework"
    second = cache.decoded('{"a":1}')
    assert second == Item({"a": 1})
    assert second is not first
    assert decoded == ['{"a":1}']
    assert (cache.hits, cache.misses) == (1, 1)


def test_the_least_recently_used_text_goes_first_once_the_bytes_run_out() -> None:
    decoded, cache = counting_decoder()
    for text in ['"aaaaaa"', '"bbbbbb"', '"aaaaaa"', '"cccccc"']:  # 8 characters each
        cache.decoded(text)
    assert len(cache) == 2
    cache.decoded('"aaaaaa"')  # still cached: it was used after "b"
    cache.decoded('"bbbbbb"')  # dropped for "c", so decoded again
    assert decoded == ['"aaaaaa"', '"bbbbbb"', '"cccccc"', '"bbbbbb"']


def test_a_text_larger_than_the_whole_cache_is_decoded_every_time() -> None:
    decoded, cache = counting_decoder()
    big = json.dumps("x" * 40)
    cache.decoded(big)
    cache.decoded(big)
    assert len(decoded) == 2
    assert len(cache) == 0


def test_a_text_that_fails_to_decode_raises_each_time_and_is_not_kept() -> None:
    decoded, cache = counting_decoder()
    for _ in range(2):
        with pytest.raises(json.JSONDecodeError):
            cache.decoded("{not json")
    assert len(decoded) == 2
    assert len(cache) == 0


def test_a_zero_byte_cache_decodes_every_time_and_a_negative_size_is_refused() -> None:
    decoded, cache = counting_decoder()
    cache.max_bytes = 0
    cache.decoded('"a"')
    cache.decoded('"a"')
    assert decoded == ['"a"', '"a"']
    with pytest.raises(ValueError, match="max_bytes must not be negative, got -1"):
        DecodedItemCache(str, max_bytes=-1)
