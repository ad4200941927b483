"""`DecodedItemCache`: decoded framework items, so a long session decodes only new messages.

Every RunModel hands the runner the whole stored window, and a runner turns each
message's `framework_item` back into its framework's object. Stored messages never
change, so their text identifies them: a Worker process that decoded a text once
can reuse the object on every later Step of any session, and a Step late in a
long session decodes only the messages stored since the previous one. The cache
is bounded by the bytes of the texts it keeps and drops the least recently used.
Each hit returns a copy (shallow by default), so a framework that sets an attribute
on a history message does not change what the next Step sees.
"""

from __future__ import annotations

import copy
import threading
from collections import OrderedDict
from collections.abc import Callable
from typing import Generic, TypeVar

__all__ = ["DEFAULT_ITEM_CACHE_BYTES", "DecodedItemCache"]

T = TypeVar("T")

DEFAULT_ITEM_CACHE_BYTES = 32 * 1024 * 1024
"""32 MiB of framework-item text (the decoded objects take a few times that)."""


class DecodedItemCache(Generic[T]):
    """Decoded framework items by their stored text, least recently used dropped first.

    Args:
        decode: Turns one `framework_item` into the framework's object; its errors
            reach the caller and nothing is cached for that text.
        max_bytes: The most item text (in characters) the cache keeps; 0 turns it off.
        copy_item: Applied to a cached object on every hit (default `copy.copy`).
    """

    def __init__(
        self,
        decode: Callable[[str], T],
        *,
        max_bytes: int = DEFAULT_ITEM_CACHE_BYTES,
        copy_item: Callable[[T], T] = copy.copy,
    ) -> None:
        if max_bytes < 0:
            raise ValueError(f"max_bytes must not be negative, got {max_bytes}")
        self._decode = decode
        self._copy = copy_item
        self.max_bytes = max_bytes
        self._items: OrderedDict[str, T] = OrderedDict()
        self._bytes = 0
        self._lock = threading.Lock()
        self.hits = 0
        self.misses = 0

    def __len__(self) -> int:
        return len(self._items)

    def decoded(self, item: str) -> T:
        """The object `item` decodes to: a copy of the cached one, or freshly decoded."""
        with self._lock:
            cached = self._items.get(item)
            if cached is not None:
                self._items.move_to_end(item)
                self.hits += 1
                return self._copy(cached)
        value = self._decode(item)
        with self._lock:
            self.misses += 1
            if 0 < len(item) <= self.max_bytes and item not in self._items:
                self._items[item] = value
                self._bytes += len(item)
                while self._bytes > self.max_bytes:
                    dropped, _ = self._items.popitem(last=False)
                    self._bytes -= len(dropped)
        return self._copy(value)

    def clear(self) -> None:
        with self._lock:
            self._items.clear()
            self._bytes = 0
