"""A language-neutral view of the contract protos, read from protoc's request.

Both emitters (Python and TypeScript) work from this model only, so the two
codecs cannot disagree about which fields exist, how they are typed, which are
nullable, and which JSON default a reader applies.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Literal

from google.protobuf import descriptor_pb2
from google.protobuf.compiler import plugin_pb2

PACKAGE = "dex.agents.v1"
JSON_DEFAULT_EXTENSION_NUMBER = 50001
EVENT_PAYLOAD_SUFFIX = "Payload"

FieldKind = Literal["string", "bool", "int32", "int64", "enum", "message", "time", "struct"]

_FDP = descriptor_pb2.FieldDescriptorProto
_SCALAR_KINDS: dict[int, FieldKind] = {
    _FDP.TYPE_STRING: "string",
    _FDP.TYPE_BOOL: "bool",
    _FDP.TYPE_INT32: "int32",
    _FDP.TYPE_INT64: "int64",
}
_WELL_KNOWN: dict[str, FieldKind] = {
    ".google.protobuf.Timestamp": "time",
    ".google.protobuf.Struct": "struct",
}


class ModelError(Exception):
    """The protos use something the wire format does not define."""


@dataclass(frozen=True, kw_only=True)
class EnumValue:
    proto_name: str
    """`TOOL_CALL_STATUS_FAILED`."""
    number: int
    short_name: str
    """`FAILED`: the name without the enum prefix (betterproto2's member name)."""
    wire: str
    """`failed`: the JSON string."""


@dataclass(frozen=True, kw_only=True)
class Enum:
    name: str
    proto_file: str
    values: tuple[EnumValue, ...]
    """Every value but `*_UNSPECIFIED`, in number order."""


@dataclass(frozen=True, kw_only=True)
class Field:
    name: str
    """The proto field name, which is the JSON key."""
    number: int
    json_name: str
    """lowerCamelCase name, the TypeScript property of protoc-gen-es."""
    kind: FieldKind
    type_name: str | None
    """Short name of the enum or message type, for `enum` and `message` kinds."""
    repeated: bool
    nullable: bool
    """Declared `optional`: written as `null` when absent."""
    json_default: str | None
    """JSON text a reader uses for a missing key, from `(dex.agents.v1.json_default)`."""


@dataclass(frozen=True, kw_only=True)
class Message:
    name: str
    proto_file: str
    fields: tuple[Field, ...]
    """In field-number order, which is the key order on the wire."""

    @property
    def event_type(self) -> str | None:
        """`turn_started` for `TurnStartedPayload`; None for other messages."""
        if not self.name.endswith(EVENT_PAYLOAD_SUFFIX) or self.name == EVENT_PAYLOAD_SUFFIX:
            return None
        stem = self.name[: -len(EVENT_PAYLOAD_SUFFIX)]
        return re.sub(r"(?<!^)(?=[A-Z])", "_", stem).lower()


@dataclass(frozen=True, kw_only=True)
class Model:
    messages: tuple[Message, ...]
    """Every message of the package, in file then declaration order."""
    enums: tuple[Enum, ...]
    proto_files: tuple[str, ...]
    """The package's files, in the order protoc was given them."""

    def message(self, name: str) -> Message:
        return next(m for m in self.messages if m.name == name)

    def enum(self, name: str) -> Enum:
        return next(e for e in self.enums if e.name == name)


def load_model(request: plugin_pb2.CodeGeneratorRequest) -> Model:
    """Build the model from the files protoc was asked to generate."""
    files = {f.name: f for f in request.proto_file}
    messages: list[Message] = []
    enums: list[Enum] = []
    names: list[str] = []
    for file_name in request.file_to_generate:
        file = files[file_name]
        if file.package != PACKAGE:
            raise ModelError(f"{file_name}: package {file.package!r} is not {PACKAGE!r}")
        names.append(file_name)
        enums.extend(_enum(e, file_name) for e in file.enum_type)
        for message in file.message_type:
            if message.nested_type or message.enum_type:
                raise ModelError(f"{message.name}: nested types are not supported")
            messages.append(_message(message, file_name))
    return Model(messages=tuple(messages), enums=tuple(enums), proto_files=tuple(names))


def _enum(enum: descriptor_pb2.EnumDescriptorProto, file_name: str) -> Enum:
    prefix = re.sub(r"(?<!^)(?=[A-Z])", "_", enum.name).upper() + "_"
    values: list[EnumValue] = []
    for value in enum.value:
        if not value.name.startswith(prefix):
            raise ModelError(f"{enum.name}.{value.name}: value lacks the prefix {prefix!r}")
        short = value.name[len(prefix) :]
        if value.number == 0:
            if short != "UNSPECIFIED":
                raise ModelError(f"{enum.name}: value 0 must be {prefix}UNSPECIFIED")
            continue
        values.append(
            EnumValue(
                proto_name=value.name, number=value.number, short_name=short, wire=short.lower()
            )
        )
    return Enum(name=enum.name, proto_file=file_name, values=tuple(values))


def _message(message: descriptor_pb2.DescriptorProto, file_name: str) -> Message:
    fields = [_field(message.name, f) for f in message.field]
    for oneof_index, oneof in enumerate(message.oneof_decl):
        members = [
            f for f in message.field if f.HasField("oneof_index") and f.oneof_index == oneof_index
        ]
        if not all(f.proto3_optional for f in members):
            raise ModelError(f"{message.name}.{oneof.name}: oneofs are not supported")
    return Message(
        name=message.name,
        proto_file=file_name,
        fields=tuple(sorted(fields, key=lambda f: f.number)),
    )


def _field(message_name: str, field: descriptor_pb2.FieldDescriptorProto) -> Field:
    where = f"{message_name}.{field.name}"
    type_name: str | None = None
    kind: FieldKind
    if field.type in _SCALAR_KINDS:
        kind = _SCALAR_KINDS[field.type]
    elif field.type == _FDP.TYPE_ENUM:
        kind, type_name = "enum", _local_name(field.type_name, where)
    elif field.type == _FDP.TYPE_MESSAGE and field.type_name in _WELL_KNOWN:
        kind = _WELL_KNOWN[field.type_name]
    elif field.type == _FDP.TYPE_MESSAGE:
        kind, type_name = "message", _local_name(field.type_name, where)
    else:
        raise ModelError(f"{where}: field type {field.type} is not part of the wire format")
    if kind == "int64" and field.options.jstype != descriptor_pb2.FieldOptions.JS_NUMBER:
        raise ModelError(f"{where}: int64 fields need [jstype = JS_NUMBER]")
    repeated = field.label == _FDP.LABEL_REPEATED
    if repeated and kind == "struct":
        raise ModelError(f"{where}: repeated Struct is not supported")
    json_default = _json_default(field, where)
    if json_default is not None and (repeated or field.proto3_optional):
        raise ModelError(f"{where}: json_default applies to singular non-optional fields only")
    return Field(
        name=field.name,
        number=field.number,
        json_name=field.json_name,
        kind=kind,
        type_name=type_name,
        repeated=repeated,
        nullable=field.proto3_optional,
        json_default=json_default,
    )


def _local_name(type_name: str, where: str) -> str:
    prefix = f".{PACKAGE}."
    if not type_name.startswith(prefix):
        raise ModelError(f"{where}: type {type_name} is outside {PACKAGE}")
    return type_name[len(prefix) :]


def _json_default(field: descriptor_pb2.FieldDescriptorProto, where: str) -> str | None:
    """Read the custom option from the raw options bytes.

    The plugin does not import generated code for options.proto, so the
    extension arrives as an unknown field: tag (50001 << 3 | 2), then a
    length-delimited UTF-8 string.
    """
    raw = field.options.SerializeToString()
    tag = _varint(JSON_DEFAULT_EXTENSION_NUMBER << 3 | 2)
    position = raw.find(tag)
    if position < 0:
        return None
    length, offset = _read_varint(raw, position + len(tag))
    text: str = raw[offset : offset + length].decode("utf-8")
    try:
        json.loads(text)
    except ValueError as error:
        raise ModelError(f"{where}: json_default {text!r} is not JSON text") from error
    return text


def _varint(value: int) -> bytes:
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        if value:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def _read_varint(data: bytes, offset: int) -> tuple[int, int]:
    result = shift = 0
    while True:
        byte = data[offset]
        offset += 1
        result |= (byte & 0x7F) << shift
        shift += 7
        if not byte & 0x80:
            return result, offset
