"""Closing: the context manager whose exit is its `close`.

The client, a Step's event writer and the output drain watch are each used in
a `with` block and closed by hand alike, so leaving the block only calls `close`.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from types import TracebackType
from typing import Self

__all__ = ["Closing"]


class Closing(ABC):
    """`with thing:` returns the thing itself and closes it on the way out."""

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()

    @abstractmethod
    def close(self) -> None:
        """Releases what the object holds; calling it twice does no harm."""
