"""How generated TypeScript spells things: string literals, object keys, properties.

Apart from the emitter because these rules follow protoc-gen-es and JavaScript,
not the codec design: a change in either touches only this file.
"""

from __future__ import annotations

import json
import re

from dexcodec._model import Field

RESERVED_PROPERTIES = frozenset({"constructor", "toString", "toJSON", "valueOf"})
"""Names protoc-gen-es suffixes with `$` (its `safeObjectProperty`)."""

PROTOTYPE_KEYS = frozenset(
    {
        "__proto__",
        "__defineGetter__",
        "__defineSetter__",
        "__lookupGetter__",
        "__lookupSetter__",
        "constructor",
        "hasOwnProperty",
        "isPrototypeOf",
        "propertyIsEnumerable",
        "toLocaleString",
        "toString",
        "valueOf",
    }
)
"""JSON keys that a plain property read would find on `Object.prototype`."""


def ts_str(text: str) -> str:
    """A TypeScript string literal.

    Text holding `"` (wire JSON fragments) is single-quoted to stay readable;
    anything else uses JSON string syntax, which is valid TypeScript.
    """
    plain = all(" " <= c <= "~" for c in text)
    if plain and '"' in text and "'" not in text and "\\" not in text:
        return f"'{text}'"
    return json.dumps(text)


def object_key(name: str) -> str:
    """An object literal key that defines own property `name`."""
    if name == "__proto__":
        return '["__proto__"]'
    return name if re.fullmatch(r"[A-Za-z_$][A-Za-z0-9_$]*", name) else json.dumps(name)


def property_name(field: Field) -> str:
    """The protoc-gen-es property of a field: `protoCamelCase` of the proto name.

    `Field.json_name` is protoc's JSON name, which a `json_name` option could
    change; protoc-gen-es ignores that option for property names.
    """
    parts: list[str] = []
    upper_next = False
    for char in field.name:
        if char == "_":
            upper_next = True
        elif char.isdigit():
            parts.append(char)
            upper_next = False
        else:
            parts.append(char.upper() if upper_next else char)
            upper_next = False
    name = "".join(parts)
    return f"{name}$" if name in RESERVED_PROPERTIES else name


def pb_module(proto_file: str) -> str:
    """`dex/agents/v1/tool.proto` -> `./dex/agents/v1/tool_pb.js`."""
    stem = proto_file.removesuffix(".proto")
    return f"./{stem}_pb.js"
