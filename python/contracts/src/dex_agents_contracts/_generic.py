"""Type-generic entry points over the generated codecs."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypeVar

from ._gen.codec import CODECS
from ._wire import MessageCodec, WireFormatError

T = TypeVar("T")


def _codec(message_type: type[T]) -> MessageCodec[T]:
    codec = CODECS.get(message_type)
    if codec is None:
        raise WireFormatError(
            getattr(message_type, "__name__", repr(message_type)), "not a contract message type"
        )
    return codec


def encode(value: object) -> str:
    """Write any contract message as wire JSON."""
    return _codec(type(value)).encode(value)


def decode(message_type: type[T], text: str | bytes | bytearray) -> T:
    """Read a contract message of `message_type` from wire JSON."""
    return _codec(message_type).decode(text)


def encode_list(message_type: type[T], values: Sequence[T]) -> str:
    """Write a JSON array of contract messages."""
    return _codec(message_type).encode_list(values)


def decode_list(message_type: type[T], text: str | bytes | bytearray) -> list[T]:
    """Read a JSON array of contract messages."""
    return _codec(message_type).decode_list(text)
