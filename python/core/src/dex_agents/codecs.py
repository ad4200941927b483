"""Dex `Codec` adapters that store every contract value as its wire JSON.

The SDK's automatic dataclass codec writes sorted keys and integer enums, which
is not the wire format every reader shares (docs/wire-format.md), so each
contract type the session stores or exchanges gets an explicit codec here.
SDK 1.23.0 resolves codecs only through the `CodecRegistry` a `Registry` is
built with, so Workers and Clients must use `agent_codec_registry()`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from dex import Codec, CodecRegistry, Value, WireKind
from dex_agents_contracts import (
    CODECS,
    AgentInterrupt,
    CompactContextInput,
    Struct,
    decode,
    decode_list,
    encode,
    encode_list,
    struct_from_json,
    struct_to_json,
)

__all__ = [
    "ContractCodec",
    "ContractListCodec",
    "OptionalContractCodec",
    "StructCodec",
    "agent_codec_registry",
]

T = TypeVar("T")


def _require_json(value: Value, type_name: str) -> str:
    if value.kind is not WireKind.JSON or not isinstance(value.data, str):
        raise TypeError(f"{type_name} requires a JSON value")
    return value.data


@dataclass(frozen=True)
class ContractCodec(Generic[T]):
    """One contract message type as its wire JSON (WireKind.JSON)."""

    message_type: type[T]

    @property
    def type_name(self) -> str:
        return self.message_type.__name__

    @property
    def wire_kind(self) -> WireKind:
        return WireKind.JSON

    def encode(self, value: T) -> Value:
        if type(value) is not self.message_type:
            raise TypeError(
                f"{self.type_name} requires {self.type_name}, got {type(value).__name__}"
            )
        return Value(WireKind.JSON, encode(value))

    def decode(self, value: Value) -> T:
        return decode(self.message_type, _require_json(value, self.type_name))


@dataclass(frozen=True)
class OptionalContractCodec(Generic[T]):
    """`T | None` as wire JSON or JSON null (failure routes share their Step's input)."""

    message_type: type[T]

    @property
    def type_name(self) -> str:
        return f"{self.message_type.__name__} | None"

    @property
    def wire_kind(self) -> WireKind:
        return WireKind.JSON

    def encode(self, value: T | None) -> Value:
        if value is None:
            return Value(WireKind.JSON, "null")
        if type(value) is not self.message_type:
            raise TypeError(
                f"{self.type_name} requires {self.type_name}, got {type(value).__name__}"
            )
        return Value(WireKind.JSON, encode(value))

    def decode(self, value: Value) -> T | None:
        text = _require_json(value, self.type_name)
        if text.strip() == "null":
            return None
        return decode(self.message_type, text)


@dataclass(frozen=True)
class ContractListCodec(Generic[T]):
    """`list[T]` as a JSON array of wire JSON values (PendingInterrupts)."""

    message_type: type[T]

    @property
    def type_name(self) -> str:
        return f"list[{self.message_type.__name__}]"

    @property
    def wire_kind(self) -> WireKind:
        return WireKind.JSON

    def encode(self, value: list[T]) -> Value:
        if not isinstance(value, list) or any(type(v) is not self.message_type for v in value):
            raise TypeError(f"{self.type_name} requires a list of {self.message_type.__name__}")
        return Value(WireKind.JSON, encode_list(self.message_type, value))

    def decode(self, value: Value) -> list[T]:
        return decode_list(self.message_type, _require_json(value, self.type_name))


@dataclass(frozen=True)
class StructCodec:
    """A JSON object (`google.protobuf.Struct`), such as SessionSettings, as compact JSON."""

    @property
    def type_name(self) -> str:
        return "Struct"

    @property
    def wire_kind(self) -> WireKind:
        return WireKind.JSON

    def encode(self, value: Struct) -> Value:
        if not isinstance(value, Struct):
            raise TypeError(f"Struct requires Struct, got {type(value).__name__}")
        text = json.dumps(
            struct_to_json(value), ensure_ascii=False, separators=(",", ":"), allow_nan=False
        )
        return Value(WireKind.JSON, text)

    def decode(self, value: Value) -> Struct:
        data = json.loads(_require_json(value, self.type_name))
        if not isinstance(data, dict):
            raise TypeError("Struct requires a JSON object")
        return struct_from_json(data)


def agent_codec_registry(extra: Mapping[object, Codec[Any]] | None = None) -> CodecRegistry:
    """A `CodecRegistry` with a wire-JSON codec for every contract type.

    Covers each message type, `list[AgentInterrupt]` and
    `CompactContextInput | None`; `extra` adds or overrides codecs.
    """
    codecs: dict[object, Codec[Any]] = {
        message_type: ContractCodec(message_type) for message_type in CODECS
    }
    codecs[list[AgentInterrupt]] = ContractListCodec(AgentInterrupt)
    codecs[Struct] = StructCodec()
    codecs[CompactContextInput | None] = OptionalContractCodec(CompactContextInput)
    if extra:
        codecs.update(extra)
    return CodecRegistry(codecs)
