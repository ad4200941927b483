"""Dex `Codec` adapters that store every contract value as its wire JSON.

The SDK's automatic dataclass codec writes sorted keys and integer enums, which
is not the wire format every reader shares (docs/wire-format.md), so each
contract type the session stores or exchanges gets an explicit codec here.
SDK 1.23.0 resolves codecs only through the `CodecRegistry` a `Registry` is
built with, so Workers and Clients must use `agent_codec_registry()`.
"""

from __future__ import annotations

import json
import threading
from abc import ABC, abstractmethod
from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from dex import Codec, CodecRegistry, Value, WireKind
from dex_agents_contracts import (
    CODECS,
    AgentInterrupt,
    AgentMessage,
    AgentMessageChunk,
    AgentSessionStartInput,
    CompactContextInput,
    Struct,
    UpdateSessionSettingsRequest,
    decode,
    decode_list,
    encode,
    encode_list,
    struct_from_json,
    struct_to_json,
)

from dex_agents._session_settings import decode_settings_leniently

__all__ = [
    "DECODED_MESSAGE_CACHE_BYTES",
    "CachedMessageCodec",
    "ContractCodec",
    "ContractListCodec",
    "OptionalContractCodec",
    "StructCodec",
    "agent_codec_registry",
]

T = TypeVar("T")


class _JsonCodec(ABC):
    """What every codec here shares: values are JSON text, any other kind is refused."""

    @property
    @abstractmethod
    def type_name(self) -> str: ...

    @property
    def wire_kind(self) -> WireKind:
        return WireKind.JSON

    def _json_text(self, value: Value) -> str:
        if value.kind is not WireKind.JSON or not isinstance(value.data, str):
            raise TypeError(f"{self.type_name} requires a JSON value")
        return value.data


@dataclass(frozen=True)
class _MessageTypeCodec(_JsonCodec, Generic[T]):
    """A codec of values built from one contract message type."""

    message_type: type[T]

    def _encoded(self, value: T) -> Value:
        """One message of exactly `message_type` (not a subclass) as its wire JSON."""
        if type(value) is not self.message_type:
            raise TypeError(
                f"{self.type_name} requires {self.type_name}, got {type(value).__name__}"
            )
        return Value(WireKind.JSON, encode(value))


@dataclass(frozen=True)
class ContractCodec(_MessageTypeCodec[T]):
    """One contract message type as its wire JSON (WireKind.JSON)."""

    @property
    def type_name(self) -> str:
        return self.message_type.__name__

    def encode(self, value: T) -> Value:
        return self._encoded(value)

    def decode(self, value: Value) -> T:
        return decode(self.message_type, self._json_text(value))


class SettingsTolerantCodec(ContractCodec[T]):
    """A message carrying `session_settings`: settings that are not a JSON object
    decode as a marker, so the session refuses them itself instead of the decode
    failing (StartAgentSession force-fails, update_session_settings returns false)."""

    def decode(self, value: Value) -> T:
        return decode_settings_leniently(self.message_type, self._json_text(value))


SESSION_SETTINGS_CODECS: dict[object, Codec[Any]] = {
    AgentSessionStartInput: SettingsTolerantCodec(AgentSessionStartInput),
    UpdateSessionSettingsRequest: SettingsTolerantCodec(UpdateSessionSettingsRequest),
}
"""The codecs `agent_codec_registry` uses for the two messages that carry settings."""


DECODED_MESSAGE_CACHE_BYTES = 16 * 1024 * 1024
"""Wire JSON bytes whose decoded AgentMessage / AgentMessageChunk values a process keeps."""


class _DecodeCache:
    """Decoded values by their wire JSON text, least recently used first out.

    Only for values that are immutable once stored (AgentMessages instances and
    AgentMessageChunks, design "Message storage"): RunModel loads every one of them
    on every model call, and decoding them again each time cost most of its Worker
    CPU. Keyed by the full text, so a hit is exactly the value a decode would give.
    """

    def __init__(self, max_bytes: int) -> None:
        self._max_bytes = max_bytes
        self._bytes = 0
        self._entries: OrderedDict[str, object] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, text: str) -> object | None:
        with self._lock:
            value = self._entries.get(text)
            if value is not None:
                self._entries.move_to_end(text)
            return value

    def put(self, text: str, value: object) -> None:
        size = len(text)
        if size > self._max_bytes:
            return
        with self._lock:
            if text in self._entries:
                return
            self._entries[text] = value
            self._bytes += size
            while self._bytes > self._max_bytes:
                evicted, _ = self._entries.popitem(last=False)
                self._bytes -= len(evicted)


def _copy_message(message: AgentMessage) -> AgentMessage:
    # A shallow copy is a full one: every field is a str, int, enum or datetime.
    copied: AgentMessage = object.__new__(AgentMessage)
    copied.__dict__.update(message.__dict__)
    return copied


@dataclass(frozen=True)
class CachedMessageCodec(ContractCodec[T]):
    """ContractCodec for AgentMessage or AgentMessageChunk, with a shared decode cache.

    Every decode returns fresh objects (copies of the cached ones), so a caller
    that changes what it got changes nothing another Step sees.
    """

    cache: _DecodeCache = field(
        default_factory=lambda: _DecodeCache(DECODED_MESSAGE_CACHE_BYTES), compare=False
    )

    def decode(self, value: Value) -> T:
        text = self._json_text(value)
        cached = self.cache.get(text)
        if cached is None:
            cached = decode(self.message_type, text)
            self.cache.put(text, cached)
        if isinstance(cached, AgentMessage):
            return _copy_message(cached)  # type: ignore[return-value]
        if isinstance(cached, AgentMessageChunk):
            return AgentMessageChunk(  # type: ignore[return-value]
                messages=[_copy_message(m) for m in cached.messages]
            )
        raise TypeError(f"{self.type_name} values are not cached")


@dataclass(frozen=True)
class OptionalContractCodec(_MessageTypeCodec[T]):
    """`T | None` as wire JSON or JSON null (failure routes share their Step's input)."""

    @property
    def type_name(self) -> str:
        return f"{self.message_type.__name__} | None"

    def encode(self, value: T | None) -> Value:
        if value is None:
            return Value(WireKind.JSON, "null")
        return self._encoded(value)

    def decode(self, value: Value) -> T | None:
        text = self._json_text(value)
        if text.strip() == "null":
            return None
        return decode(self.message_type, text)


@dataclass(frozen=True)
class ContractListCodec(_MessageTypeCodec[T]):
    """`list[T]` as a JSON array of wire JSON values (PendingInterrupts)."""

    @property
    def type_name(self) -> str:
        return f"list[{self.message_type.__name__}]"

    def encode(self, value: list[T]) -> Value:
        if not isinstance(value, list) or any(type(v) is not self.message_type for v in value):
            raise TypeError(f"{self.type_name} requires a list of {self.message_type.__name__}")
        return Value(WireKind.JSON, encode_list(self.message_type, value))

    def decode(self, value: Value) -> list[T]:
        return decode_list(self.message_type, self._json_text(value))


@dataclass(frozen=True)
class StructCodec(_JsonCodec):
    """A JSON object (`google.protobuf.Struct`), such as SessionSettings, as compact JSON."""

    @property
    def type_name(self) -> str:
        return "Struct"

    def encode(self, value: Struct) -> Value:
        if not isinstance(value, Struct):
            raise TypeError(f"Struct requires Struct, got {type(value).__name__}")
        text = json.dumps(
            struct_to_json(value), ensure_ascii=False, separators=(",", ":"), allow_nan=False
        )
        return Value(WireKind.JSON, text)

    def decode(self, value: Value) -> Struct:
        data = json.loads(self._json_text(value))
        if not isinstance(data, dict):
            raise TypeError("Struct requires a JSON object")
        return struct_from_json(data)


_MESSAGE_CODEC = CachedMessageCodec(AgentMessage)
_MESSAGE_CHUNK_CODEC = CachedMessageCodec(AgentMessageChunk)


def agent_codec_registry(extra: Mapping[object, Codec[Any]] | None = None) -> CodecRegistry:
    """A `CodecRegistry` with a wire-JSON codec for every contract type.

    Covers each message type, `list[AgentInterrupt]` and
    `CompactContextInput | None`; `extra` adds or overrides codecs.
    """
    codecs: dict[object, Codec[Any]] = {
        message_type: ContractCodec(message_type) for message_type in CODECS
    }
    codecs[AgentMessage] = _MESSAGE_CODEC
    codecs[AgentMessageChunk] = _MESSAGE_CHUNK_CODEC
    codecs[list[AgentInterrupt]] = ContractListCodec(AgentInterrupt)
    codecs[Struct] = StructCodec()
    codecs[CompactContextInput | None] = OptionalContractCodec(CompactContextInput)
    # Settings that are not a JSON object must reach the session, which refuses them.
    codecs.update(SESSION_SETTINGS_CODECS)
    if extra:
        codecs.update(extra)
    return CodecRegistry(codecs)
