"""Runtime of the generated wire codecs (`_gen/codec.py`).

The generated code inlines the common checks; what is here is either shared by
many fields (times, Structs, error texts) or only runs on the error path. The
texts are a contract with the TypeScript codec, pinned by the invalid golden
vectors under `proto/testdata/invalid/`.
"""

from __future__ import annotations

import dataclasses
import json
import math
import re
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime
from typing import Generic, NoReturn, TypeVar

import betterproto2

from ._gen.google.protobuf import ListValue, NullValue, Struct, Value

INT32_MIN = -(2**31)
INT32_MAX = 2**31 - 1
# Integers must survive a JavaScript reader: +/-(2^53 - 1).
INT64_MIN = -(2**53 - 1)
INT64_MAX = 2**53 - 1

_TIME = re.compile(
    r"(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?(?:Z|\+00:00)",
    re.ASCII,
)
# A \uD800-\uDFFF escape: the only way JSON text can carry a lone surrogate.
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")
_ARRAY_INDEX_KEY = re.compile(r"0|[1-9][0-9]{0,9}", re.ASCII)

E = TypeVar("E")
M = TypeVar("M")


class WireFormatError(ValueError):
    """A value does not follow the wire format; names the type and field.

    Attributes:
        type_name: The message type being read or written, e.g. `AgentToolCall`.
        field_path: Where the problem is, e.g. `AgentSnapshot.messages[3].role`.
        reason: What is wrong, without the path.
    """

    def __init__(self, field_path: str, reason: str) -> None:
        super().__init__(f"{field_path}: {reason}")
        self.field_path = field_path
        self.type_name = field_path.split(".", 1)[0].split("[", 1)[0]
        self.reason = reason

    def __reduce__(self) -> tuple[type[WireFormatError], tuple[str, str]]:
        return (WireFormatError, (self.field_path, self.reason))


# --- errors -----------------------------------------------------------------


def json_kind(value: object) -> str:
    """Name a decoded JSON value's type the way both codecs spell it."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object"


def expected(path: str, key: str, kind: str, value: object) -> NoReturn:
    """Reading: a value of the wrong JSON type."""
    raise WireFormatError(
        f"{path}.{key}" if key else path, f"expected {kind}, got {json_kind(value)}"
    )


def bad_value(path: str, key: str, reason: str) -> NoReturn:
    raise WireFormatError(f"{path}.{key}" if key else path, reason)


def wrong_type(path: str, key: str, kind: str, value: object) -> NoReturn:
    """Writing: a Python value of the wrong type."""
    raise WireFormatError(
        f"{path}.{key}" if key else path, f"expected {kind}, got {type(value).__name__}"
    )


def wrong_key(path: str, key: object) -> NoReturn:
    """A JSON object key that is not a string (reading Python data, or writing a Struct)."""
    raise WireFormatError(path, f"expected a string key, got {type(key).__name__}")


def quote(text: str) -> str:
    """Write a string as the wire format does, for error messages."""
    return dump(text)


# --- whole documents ----------------------------------------------------------


def dump(obj: object) -> str:
    """Compact JSON with raw non-ASCII; Python's escapes match wire-format.md."""
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":"), allow_nan=False)


def _reject_constant(name: str) -> NoReturn:
    raise ValueError(f"{name} is not JSON")


def load(text: str | bytes | bytearray, type_name: str) -> tuple[object, bool]:
    """Parse JSON text; also say whether it may hold a lone surrogate.

    Returns the parsed value and a flag that is true when the input has a
    surrogate escape or a raw surrogate, so the caller checks its strings.
    """
    try:
        if isinstance(text, bytes | bytearray):
            text = bytes(text).decode("utf-8")
            raw_surrogate = False
        elif isinstance(text, str):
            try:
                text.encode("utf-8")
                raw_surrogate = False
            except UnicodeEncodeError:
                raw_surrogate = True
        else:
            raise WireFormatError(type_name, f"expected JSON text, got {type(text).__name__}")
        value = json.loads(text, parse_constant=_reject_constant)
    except (ValueError, RecursionError) as error:
        if isinstance(error, WireFormatError):
            raise
        raise WireFormatError(type_name, "not valid JSON") from None
    return value, raw_surrogate or _SURROGATE_ESCAPE.search(text) is not None


def check_encodable(text: str, obj: object, type_name: str) -> None:
    """Refuse text holding a lone surrogate, naming the first field that has one."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        path = _find_surrogate(obj, type_name)
        raise WireFormatError(path or type_name, "lone surrogate in string") from None


def _find_surrogate(obj: object, path: str) -> str | None:
    if isinstance(obj, str):
        return None if _is_well_formed(obj) else path
    if isinstance(obj, list):
        for index, item in enumerate(obj):
            found = _find_surrogate(item, f"{path}[{index}]")
            if found:
                return found
    elif isinstance(obj, dict):
        for key, item in obj.items():
            found = _find_surrogate(item, f"{path}.{key}")
            if found:
                return found
    return None


def _read_string(value: object, path: str, key: str) -> str:
    if type(value) is not str:
        expected(path, key, "string", value)
    return value


def _refuse_string(text: str, path: str, key: str, reason: str) -> NoReturn:
    """A malformed string is reported as such before what its content gets wrong."""
    if not _is_well_formed(text):
        bad_value(path, key, "lone surrogate in string")
    bad_value(path, key, f"{reason} {quote(text)}")


def _is_well_formed(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


# --- integers -----------------------------------------------------------------


def read_int(value: object, path: str, key: str, low: int, high: int) -> int:
    """Reading: an integral JSON number within [low, high]."""
    if type(value) is float:
        if not value.is_integer():
            bad_value(path, key, "expected integer, got number")
        value = int(value)
    elif type(value) is not int:
        expected(path, key, "integer", value)
    if not low <= value <= high:
        bad_value(path, key, "integer out of range")
    return value


def write_int(value: object, path: str, key: str, low: int, high: int) -> int:
    if type(value) is not int:
        wrong_type(path, key, "int", value)
    if not low <= value <= high:
        bad_value(path, key, "integer out of range")
    return value


# --- times --------------------------------------------------------------------


def write_time(value: object, path: str, key: str) -> str:
    """`2026-11-01T12:00:00.123Z`; an unset non-optional time is the epoch."""
    if value is None:
        return "1970-01-01T00:00:00.000Z"
    if not isinstance(value, datetime):
        wrong_type(path, key, "datetime", value)
    offset = value.utcoffset()
    if offset is None or offset.total_seconds() != 0:
        bad_value(path, key, "time must be timezone-aware UTC")
    return (
        f"{value.year:04d}-{value.month:02d}-{value.day:02d}T{value.hour:02d}:"
        f"{value.minute:02d}:{value.second:02d}.{value.microsecond // 1000:03d}Z"
    )


def read_time(value: object, path: str, key: str) -> datetime:
    """Accept `Z` and `+00:00` forms; keep millisecond precision, as writers do."""
    text = _read_string(value, path, key)
    match = _TIME.fullmatch(text)
    if match is None:
        _refuse_string(text, path, key, "invalid time")
    year, month, day, hour, minute, second, fraction = match.groups()
    millis = int((fraction or "0").ljust(3, "0")[:3])
    try:
        return datetime(
            int(year), int(month), int(day), int(hour), int(minute), int(second), millis * 1000, UTC
        )
    except ValueError:
        _refuse_string(text, path, key, "invalid time")


# --- JSON objects (google.protobuf.Struct) ------------------------------------


def write_struct(value: Struct | None, path: str, key: str) -> dict[str, object]:
    """The nested JSON object; integral numbers are written as integers.

    Keys that look like array indexes come first, in numeric order, because
    that is the order a JavaScript object keeps them in: both codecs then
    write the same bytes.
    """
    if value is None:
        return {}
    if not isinstance(value, Struct):
        wrong_type(path, key, "Struct", value)
    return _struct_fields(value, f"{path}.{key}")


def _struct_fields(struct: Struct, path: str) -> dict[str, object]:
    fields = struct.fields
    keys = list(fields)
    for name in keys:
        if not isinstance(name, str):
            wrong_key(path, name)
    index_keys = sorted((k for k in keys if _ARRAY_INDEX_KEY.fullmatch(k)), key=int)
    if index_keys:
        keys = index_keys + [k for k in keys if not _ARRAY_INDEX_KEY.fullmatch(k)]
    out: dict[str, object] = {}
    for name in keys:
        if not _is_well_formed(name):
            bad_value(path, "", "lone surrogate in string")
        out[name] = _struct_value(fields[name], path)
    return out


def _struct_value(value: Value, path: str) -> object:
    if not isinstance(value, Value):
        wrong_type(path, "", "Value", value)
    kind, content = betterproto2.which_one_of(value, "kind")
    if kind in {"null_value", ""}:
        return None
    if kind == "bool_value":
        if not isinstance(content, bool):
            wrong_type(path, "", "bool", content)
        return content
    if kind == "string_value":
        if not isinstance(content, str):
            wrong_type(path, "", "str", content)
        if not _is_well_formed(content):
            bad_value(path, "", "lone surrogate in string")
        return content
    if kind == "number_value":
        if isinstance(content, bool) or not isinstance(content, int | float):
            wrong_type(path, "", "int or float", content)
        if isinstance(content, float):
            if not math.isfinite(content):
                bad_value(path, "", "number out of range")
            if content.is_integer() and abs(content) <= INT64_MAX:
                return int(content)
        return content
    if kind == "struct_value":
        if not isinstance(content, Struct):
            wrong_type(path, "", "Struct", content)
        return _struct_fields(content, path)
    if not isinstance(content, ListValue):
        wrong_type(path, "", "ListValue", content)
    return [_struct_value(item, path) for item in content.values]


def read_struct(value: object, path: str, key: str) -> Struct:
    if type(value) is not dict:
        expected(path, key, "object", value)
    where = f"{path}.{key}" if key else path
    return _fields_to_struct(value, where)


def _fields_to_struct(value: dict[object, object], path: str) -> Struct:
    fields: dict[str, Value] = {}
    for name, item in value.items():
        if not isinstance(name, str):
            wrong_key(path, name)
        if not _is_well_formed(name):
            bad_value(path, "", "lone surrogate in string")
        fields[name] = _to_value(item, path)
    return Struct(fields=fields)


def _to_value(value: object, path: str) -> Value:
    if value is None:
        return Value(null_value=NullValue.NULL_VALUE)
    if isinstance(value, bool):
        return Value(bool_value=value)
    if isinstance(value, float) and not math.isfinite(value):
        bad_value(path, "", "number out of range")  # 1e400 reads as infinity
    if isinstance(value, int | float):
        return Value(number_value=value)
    if isinstance(value, str):
        if not _is_well_formed(value):
            bad_value(path, "", "lone surrogate in string")
        return Value(string_value=value)
    if isinstance(value, list):
        return Value(list_value=ListValue(values=[_to_value(v, path) for v in value]))
    if not isinstance(value, dict):
        raise WireFormatError(path, f"expected a JSON value, got {type(value).__name__}")
    return Value(struct_value=_fields_to_struct(value, path))


def struct_from_json(data: dict[str, object]) -> Struct:
    """Build a Struct from plain JSON data (for callers of the codecs)."""
    return read_struct(data, "Struct", "")


def struct_to_json(value: Struct) -> dict[str, object]:
    """The plain JSON data of a Struct."""
    return _struct_fields(value, "Struct")


# --- enums --------------------------------------------------------------------


def read_enum(value: object, table: Mapping[str, E], path: str, key: str) -> E:
    text = _read_string(value, path, key)
    found = table.get(text)
    if found is None:
        _refuse_string(text, path, key, "unknown value")
    return found


def read_enum_item(value: object, table: Mapping[str, E], path: str) -> E:
    return read_enum(value, table, path, "")


def write_enum_item(value: object, table: Mapping[int, str], path: str) -> str:
    found = table.get(value) if isinstance(value, int) else None
    if found is None:
        bad_value(path, "", "unspecified enum value")
    return found


# --- codecs -------------------------------------------------------------------


class MessageCodec(Generic[M]):
    """Wire JSON of one message type, from its generated writer and reader."""

    __slots__ = ("_read", "_write", "message_type", "type_name")

    def __init__(
        self,
        message_type: type[M],
        write: Callable[[M, str], dict[str, object]],
        read: Callable[[object, str], M],
    ) -> None:
        self.message_type = message_type
        self.type_name = message_type.__name__
        self._write = write
        self._read = read

    def encode(self, value: M) -> str:
        obj = self._write(value, self.type_name)
        text = dump(obj)
        check_encodable(text, obj, self.type_name)
        return text

    def decode(self, text: str | bytes | bytearray) -> M:
        data, check_strings = load(text, self.type_name)
        try:
            value = self._read(data, self.type_name)
        except RecursionError:
            raise WireFormatError(self.type_name, "nesting too deep") from None
        if check_strings:
            _check_message_strings(value, self.type_name)
        return value

    def encode_list(self, values: Sequence[M]) -> str:
        """A JSON array of the messages (e.g. the `PendingInterrupts` Attribute)."""
        path = f"{self.type_name}[]"
        if not isinstance(values, list | tuple):
            raise WireFormatError(path, f"expected list, got {type(values).__name__}")
        obj = [self._write(v, f"{self.type_name}[{i}]") for i, v in enumerate(values)]
        text = dump(obj)
        check_encodable(text, obj, self.type_name)
        return text

    def decode_list(self, text: str | bytes | bytearray) -> list[M]:
        data, check_strings = load(text, self.type_name)
        if type(data) is not list:
            expected(f"{self.type_name}[]", "", "array", data)
        try:
            values = [self._read(item, f"{self.type_name}[{i}]") for i, item in enumerate(data)]
        except RecursionError:
            raise WireFormatError(self.type_name, "nesting too deep") from None
        if check_strings:
            for index, value in enumerate(values):
                _check_message_strings(value, f"{self.type_name}[{index}]")
        return values


def _check_message_strings(message: object, path: str) -> None:
    """Find a lone surrogate in a decoded message's string fields (rare path)."""
    found = _find_surrogate(_plain(message), path)
    if found:
        raise WireFormatError(found, "lone surrogate in string")


def _plain(value: object) -> object:
    """Strings, lists and dicts of a message in field order; Structs were checked on read."""
    if isinstance(value, list):
        return [_plain(item) for item in value]
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: _plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
    return value if isinstance(value, str) else None
