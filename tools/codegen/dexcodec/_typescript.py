"""Emit `codec.ts`: TypeScript wire-JSON codecs for the protoc-gen-es v2 types.

Why straight-line code: the codecs run on every stored Attribute, RPC and
event, and must be several times faster than `@bufbuild/protobuf`'s
`toJson`/`fromJson`, which walk descriptors at run time (a dynamic property
access and a type switch per field per value). So the emitter writes one
writer and one reader per message, each field spelled out once with its
literal key, property, kind-specific helper from `wire.ts` and default; no
descriptor is consulted at run time, V8 sees one object shape per message,
and a reviewer sees exactly what each field does.

Writers check each field and build a plain object in wire shape that a single
`JSON.stringify` call serializes (one native pass beats escaping strings one
by one); readers check the `JSON.parse` output and build the protoc-gen-es
objects directly as object literals with `$typeName` (no `create()`). Error
paths are assembled only while a failure unwinds.
"""

from __future__ import annotations

import json

from dexcodec._model import PACKAGE, Enum, Field, Message, Model, ModelError
from dexcodec._typescript_names import (
    PROTOTYPE_KEYS,
    object_key,
    pb_module,
    property_name,
    ts_str,
)

WIRE_MODULE = "../wire.js"
"""The hand-written runtime, relative to `src/gen/codec.ts`."""

_SCALAR_HELPER = {
    "string": "String",
    "bool": "Bool",
    "int32": "Int32",
    "int64": "Int64",
    "time": "Time",
    "struct": "Struct",
}
"""Kind -> suffix of the `read*`/`write*` helpers in `wire.ts`."""

_LIST_KINDS = frozenset({"string", "bool", "int32", "int64", "time"})
"""Scalar kinds with `read*List`/`write*List` helpers in `wire.ts`."""

_RESERVED_EXPORTS = frozenset(
    {
        # Imported or declared by the codec module.
        "GenMessage",
        "Message",
        "WireObject",
        "WireValue",
        "Codec",
        "Codecs",
        "codecs",
        "AgentEventPayload",
        "AgentEventPayloads",
        "AgentEventType",
        "UnknownAgentEventPayload",
    }
)

_UNKNOWN_EVENT = "unknown"
"""Discriminant of the variant for event types without a payload message."""

_INT_RANGE = {"int32": 2**31, "int64": 2**53}


def emit_typescript(model: Model) -> dict[str, str]:
    """Return `{"codec.ts": source}` for the whole package.

    Raises:
        ModelError: a name would clash in the generated module, or a
            `json_default` does not fit its field.
    """
    return {"codec.ts": _Emitter(model).emit()}


class _Emitter:
    def __init__(self, model: Model) -> None:
        self.model = model
        self.wire: set[str] = set()
        self.types: dict[str, set[str]] = {}
        self.values: dict[str, set[str]] = {}
        self.enums = {e.name: e for e in model.enums}
        self.messages = {m.name: m for m in model.messages}
        self.enums_used: list[str] = []
        self.lists_used: list[str] = []
        self._check_names()

    # -- naming ------------------------------------------------------------

    def _check_names(self) -> None:
        names = [m.name for m in self.model.messages] + [e.name for e in self.model.enums]
        for name in names:
            if name in _RESERVED_EXPORTS or name.startswith(("w_", "r_", "wl_", "rl_")):
                raise ModelError(f"{name}: the name clashes with the TypeScript codec module")
        for message in self.model.messages:
            if message.event_type == _UNKNOWN_EVENT:
                raise ModelError(f"{message.name}: event type {_UNKNOWN_EVENT!r} is reserved")

    def _use_wire(self, name: str) -> str:
        self.wire.add(name)
        return name

    def _use_type(self, name: str) -> str:
        proto_file = (self.messages.get(name) or self.enums[name]).proto_file
        self.types.setdefault(pb_module(proto_file), set()).add(name)
        return name

    def _use_enum(self, name: str) -> None:
        self._use_type(name)
        if name not in self.enums_used:
            self.enums_used.append(name)

    def _use_list(self, name: str) -> None:
        if name not in self.lists_used:
            self.lists_used.append(name)

    # -- output ------------------------------------------------------------

    def emit(self) -> str:
        body: list[str] = []
        for message in self.model.messages:
            body.extend(self._writer(message))
            body.extend(self._reader(message))
        lists: list[str] = []
        for name in self.lists_used:
            lists.extend(self._list_functions(name))
        enums: list[str] = []
        for enum in self.model.enums:
            if enum.name in self.enums_used:
                enums.extend(self._enum_functions(enum))
        public: list[str] = []
        for message in self.model.messages:
            public.extend(self._public(message))
        public.extend(self._registry())
        public.extend(self._events())
        head = self._header()
        return "\n".join([*head, *enums, *body, *lists, *public]).rstrip("\n") + "\n"

    def _header(self) -> list[str]:
        files = ", ".join(self.model.proto_files)
        lines = [
            "// @generated by protoc-gen-dexcodec (tools/codegen/dexcodec/_typescript.py).",
            "// DO NOT EDIT: tools/regenerate.sh rewrites this file from the protos.",
            f"// Wire JSON codecs for package {PACKAGE}: {files}.",
            "// The mapping is docs/wire-format.md; error texts are in proto/README.md.",
            "",
            'import type { Message } from "@bufbuild/protobuf";',
            'import type { GenMessage } from "@bufbuild/protobuf/codegenv2";',
        ]
        modules = sorted(set(self.types) | set(self.values))
        for module in modules:
            types = sorted(self.types.get(module, set()) - self.values.get(module, set()))
            values = sorted(self.values.get(module, set()))
            if types:
                lines.append(f"import type {{ {', '.join(types)} }} from {ts_str(module)};")
            if values:
                lines.append(f"import {{ {', '.join(values)} }} from {ts_str(module)};")
        wire = sorted(self.wire, key=lambda n: (n.lower(), n))
        # `noUnusedLocals` refuses unused imports: WireValue types list writers only.
        wire_types = "WireObject, WireValue" if self.lists_used else "WireObject"
        lines.append(f"import type {{ {wire_types} }} from {ts_str(WIRE_MODULE)};")
        lines.append("import {")
        lines.extend(f"  {name}," for name in wire)
        lines.append(f"}} from {ts_str(WIRE_MODULE)};")
        lines.append("")
        return lines

    # -- enums -------------------------------------------------------------

    def _enum_functions(self, enum: Enum) -> list[str]:
        name = enum.name
        lines = [
            f"/** Reads a `{name}` wire string; a missing key is `UNSPECIFIED` (0). */",
            f"function r_{name}(value: unknown, segment: string): {name} {{",
            "  switch (value) {",
        ]
        for value in enum.values:
            lines.append(f"    case {ts_str(value.wire)}:")
            lines.append(f"      return {value.number};")
        lines += [
            "    case undefined:",
            "      return 0;",
            "  }",
            f"  throw {self._use_wire('unknownEnumString')}(value, segment);",
            "}",
            "",
            f"/** Writes a `{name}` as its wire string; `UNSPECIFIED` has none. */",
            f"function w_{name}(value: {name}, segment: string): string {{",
            "  switch (value) {",
        ]
        for value in enum.values:
            lines.append(f"    case {value.number}:")
            lines.append(f"      return {ts_str(value.wire)};")
        lines += [
            "  }",
            f"  throw {self._use_wire('badEnumNumber')}(value, segment);",
            "}",
            "",
        ]
        return lines

    # -- messages ----------------------------------------------------------

    def _writer(self, message: Message) -> list[str]:
        name = message.name
        self._use_type(name)
        lines = [
            f"function w_{name}(value: {name}, segment: string): WireObject {{",
            f"  {self._use_wire('checkObject')}(value, segment);",
        ]
        if not message.fields:
            return [*lines, "  return {};", "}", ""]
        lines += ["  try {", "    return {"]
        lines.extend(f"      {object_key(f.name)}: {self._write_expr(f)}," for f in message.fields)
        lines += [
            "    };",
            "  } catch (error) {",
            f"    throw {self._use_wire('within')}(error, segment);",
            "  }",
            "}",
            "",
        ]
        return lines

    def _write_expr(self, field: Field) -> str:
        access = f"value.{property_name(field)}"
        segment = ts_str(f".{field.name}")
        kind = field.kind
        if field.repeated:
            if kind in _LIST_KINDS:
                return f"{self._use_wire(f'write{_SCALAR_HELPER[kind]}List')}({access}, {segment})"
            if kind == "struct":  # pragma: no cover - the model refuses it
                raise ModelError(f"{field.name}: repeated Struct is not supported")
            type_name = self._type_name(field)
            if kind == "enum":
                self._use_enum(type_name)
            self._use_list(type_name)
            return f"wl_{type_name}({access}, {segment})"
        if kind in _SCALAR_HELPER:
            helper = f"write{'Opt' if field.nullable else ''}{_SCALAR_HELPER[kind]}"
            return f"{self._use_wire(helper)}({access}, {segment})"
        type_name = self._type_name(field)
        if kind == "enum":
            self._use_enum(type_name)
        if field.nullable:
            return f"({access} == null ? null : w_{type_name}({access}, {segment}))"
        if kind == "enum":
            return f"w_{type_name}({access}, {segment})"
        # An unset non-optional message is written as the message a reader
        # builds for a missing key.
        return f'w_{type_name}({access} ?? r_{type_name}(undefined, ""), {segment})'

    def _reader(self, message: Message) -> list[str]:
        name = message.name
        type_name = ts_str(f"{PACKAGE}.{name}")
        if not message.fields:
            return [
                f"function r_{name}(value: unknown, segment: string): {name} {{",
                f"  {self._use_wire('objectOrEmpty')}(value, segment);",
                f"  return {{ $typeName: {type_name} }};",
                "}",
                "",
            ]
        lines = [
            f"function r_{name}(value: unknown, segment: string): {name} {{",
            f"  const json = {self._use_wire('objectOrEmpty')}(value, segment);",
            "  try {",
            "    return {",
            f"      $typeName: {type_name},",
        ]
        for field in message.fields:
            lines.append(f"      {property_name(field)}: {self._read_expr(message, field)},")
        lines += [
            "    };",
            "  } catch (error) {",
            f"    throw {self._use_wire('within')}(error, segment);",
            "  }",
            "}",
            "",
        ]
        return lines

    def _read_expr(self, message: Message, field: Field) -> str:
        key = field.name
        if key in PROTOTYPE_KEYS:
            access = f"(Object.hasOwn(json, {ts_str(key)}) ? json[{ts_str(key)}] : undefined)"
        else:
            access = f"json[{ts_str(key)}]"
        segment = ts_str(f".{key}")
        kind = field.kind
        if field.repeated:
            if kind in _LIST_KINDS:
                return f"{self._use_wire(f'read{_SCALAR_HELPER[kind]}List')}({access}, {segment})"
            type_name = self._type_name(field)
            if kind == "enum":
                self._use_enum(type_name)
            self._use_list(type_name)
            return f"rl_{type_name}({access}, {segment})"
        if kind in _SCALAR_HELPER:
            helper = f"read{'Opt' if field.nullable else ''}{_SCALAR_HELPER[kind]}"
            read = f"{self._use_wire(helper)}({access}, {segment})"
        else:
            type_name = self._type_name(field)
            if kind == "enum":
                self._use_enum(type_name)
            read = f"r_{type_name}({access}, {segment})"
            if field.nullable:
                return f"({access} == null ? undefined : {read})"
        if field.json_default is None:
            return read
        default = self._default_expr(message, field, segment)
        return f"({access} === undefined ? {default} : {read})"

    def _default_expr(self, message: Message, field: Field, segment: str) -> str:
        """The value a missing key reads as, from `(dex.agents.v1.json_default)`."""
        assert field.json_default is not None
        where = f"{message.name}.{field.name}"
        value: object = json.loads(field.json_default)
        kind = field.kind
        bad = ModelError(f"{where}: json_default {field.json_default} is not a valid {kind} value")
        if kind == "string":
            if not isinstance(value, str):
                raise bad
            return ts_str(value)
        if kind == "bool":
            if not isinstance(value, bool):
                raise bad
            return "true" if value else "false"
        if kind in _INT_RANGE:
            if isinstance(value, bool) or not isinstance(value, int | float):
                raise bad
            if isinstance(value, float) and not value.is_integer():
                raise bad
            number = int(value)
            limit = _INT_RANGE[kind]
            if not (-limit < number < limit) and not (kind == "int32" and number == -limit):
                raise bad
            # protoc-gen-es v2 types int64 as bigint, `jstype = JS_NUMBER` included.
            return f"{number}n" if kind == "int64" else str(number)
        if kind == "enum":
            enum = self.enums[self._type_name(field)]
            match = [v.number for v in enum.values if v.wire == value]
            if not match:
                raise bad
            return str(match[0])
        # Times, Structs and messages: parse the JSON text at run time and
        # read it like a present key, so each missing key gets a fresh object.
        expected = str if kind == "time" else dict
        if not isinstance(value, expected):
            raise bad
        compact = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
        if kind == "message":
            read = f"r_{self._type_name(field)}"
        else:
            read = self._use_wire(f"read{_SCALAR_HELPER[kind]}")
        return f"{read}(JSON.parse({ts_str(compact)}), {segment})"

    def _type_name(self, field: Field) -> str:
        if field.type_name is None:  # pragma: no cover - the model sets it
            raise ModelError(f"{field.name}: {field.kind} field without a type name")
        return self._use_type(field.type_name)

    # -- lists -------------------------------------------------------------

    def _list_functions(self, name: str) -> list[str]:
        check_list = self._use_wire("checkList")
        within = self._use_wire("within")
        list_or_empty = self._use_wire("listOrEmpty")
        return [
            f"function wl_{name}(value: readonly {name}[], segment: string): WireValue[] {{",
            f"  const list = {check_list}(value, segment);",
            "  const out: WireValue[] = [];",
            "  let i = 0;",
            "  try {",
            f'    for (; i < list.length; i++) out.push(w_{name}(list[i] as {name}, ""));',
            "  } catch (error) {",
            f"    throw {within}(error, `${{segment}}[${{i}}]`);",
            "  }",
            "  return out;",
            "}",
            "",
            f"function rl_{name}(value: unknown, segment: string): {name}[] {{",
            f"  const list = {list_or_empty}(value, segment);",
            f"  const out: {name}[] = [];",
            "  let i = 0;",
            "  try {",
            "    for (; i < list.length; i++) {",
            "      const item = list[i];",
            # A JSON array holds no `undefined`; refuse one like `null`.
            f'      out.push(r_{name}(item === undefined ? null : item, ""));',
            "    }",
            "  } catch (error) {",
            f"    throw {within}(error, `${{segment}}[${{i}}]`);",
            "  }",
            "  return out;",
            "}",
            "",
        ]

    # -- public API ---------------------------------------------------------

    def _public(self, message: Message) -> list[str]:
        name = message.name
        return [
            "/**",
            f" * Writes a `{name}` as wire JSON (every field, keys in field-number order).",
            " *",
            " * @throws {WireFormatError} when a field holds what the wire format cannot write.",
            " */",
            f"export function encode{name}(value: {name}): string {{",
            "  try {",
            f'    return {self._use_wire("wireText")}(w_{name}(value, ""));',
            "  } catch (error) {",
            f"    throw {self._use_wire('encodeFailure')}({ts_str(name)}, error);",
            "  }",
            "}",
            "",
            "/**",
            f" * Reads a `{name}` from wire JSON text (or UTF-8 bytes).",
            " *",
            " * @throws {WireFormatError} and nothing else, for any input that is not a valid",
            f" *   `{name}`.",
            " */",
            f"export function decode{name}(text: string | Uint8Array): {name} {{",
            f"  const json = {self._use_wire('parseJson')}({ts_str(name)}, text);",
            "  try {",
            f'    return r_{name}(json, "");',
            "  } catch (error) {",
            f"    throw {self._use_wire('decodeFailure')}({ts_str(name)}, error);",
            "  }",
            "}",
            "",
        ]

    def _registry(self) -> list[str]:
        lines = [
            "/** The codec of one message type. */",
            "export interface Codec<T extends Message> {",
            "  /** Short type name, which starts every error path (`AgentToolCall`). */",
            "  readonly name: string;",
            "  /** Fully-qualified protobuf type name. */",
            '  readonly typeName: T["$typeName"];',
            "  /** The protoc-gen-es schema, for `create()` and reflection. */",
            "  readonly schema: GenMessage<T>;",
            "  /** Same as `encode<Type>`. */",
            "  readonly encode: (value: T) => string;",
            "  /** Same as `decode<Type>`. */",
            "  readonly decode: (text: string | Uint8Array) => T;",
            "}",
            "",
            "/** Every message type's codec, by short type name. */",
            "export interface Codecs {",
        ]
        lines.extend(f"  readonly {m.name}: Codec<{m.name}>;" for m in self.model.messages)
        lines += ["}", "", "/** Every message type's codec, by short type name. */"]
        lines.append("export const codecs: Codecs = Object.freeze({")
        for message in self.model.messages:
            name = message.name
            schema = f"{name}Schema"
            self.values.setdefault(pb_module(message.proto_file), set()).add(schema)
            lines += [
                f"  {name}: Object.freeze({{",
                f"    name: {ts_str(name)},",
                f"    typeName: {ts_str(f'{PACKAGE}.{name}')},",
                f"    schema: {schema},",
                f"    encode: encode{name},",
                f"    decode: decode{name},",
                "  }),",
            ]
        lines += ["});", ""]
        return lines

    def _events(self) -> list[str]:
        payloads = [(m.event_type, m.name) for m in self.model.messages if m.event_type]
        if not payloads:
            return []
        lines = [
            "/** The payload message of each event type (`AgentEvent.type`). */",
            "export interface AgentEventPayloads {",
        ]
        lines.extend(f"  {event}: {name};" for event, name in payloads)
        lines += [
            "}",
            "",
            "/** An event type that has a payload message. */",
            "export type AgentEventType = keyof AgentEventPayloads;",
            "",
            "/**",
            " * The payload of an event type without a payload message here, such as an",
            " * adapter type (`openai_agents.handoff`): its type and raw payload text.",
            " */",
            "export interface UnknownAgentEventPayload {",
            f'  readonly type: "{_UNKNOWN_EVENT}";',
            "  readonly eventType: string;",
            "  readonly text: string;",
            "}",
            "",
            "/** A decoded event payload, discriminated by `type`. */",
            "export type AgentEventPayload =",
        ]
        lines.extend(
            f"  | {{ readonly type: {ts_str(event)}; readonly payload: {name} }}"
            for event, name in payloads
        )
        lines += [
            "  | UnknownAgentEventPayload;",
            "",
            "/**",
            " * Reads the payload of an event by its type. A type without a payload",
            " * message is returned as the `unknown` variant with the raw text, never an",
            " * error.",
            " *",
            " * @throws {WireFormatError} when a known type's payload is not its wire JSON.",
            " */",
            "export function decodeAgentEventPayload(event: {",
            "  readonly type: string;",
            "  readonly payload: string;",
            "}): AgentEventPayload {",
            "  switch (event.type) {",
        ]
        for event, name in payloads:
            lines += [
                f"    case {ts_str(event)}:",
                f"      return {{ type: {ts_str(event)}, payload: decode{name}(event.payload) }};",
            ]
        lines += [
            "    default:",
            f"      return {{ type: {ts_str(_UNKNOWN_EVENT)}, eventType: event.type, "
            "text: event.payload };",
            "  }",
            "}",
            "",
            "/**",
            " * Writes an event payload: the `type` and `payload` of an `AgentEvent`. The",
            " * `unknown` variant is passed through unchanged.",
            " *",
            " * @throws {WireFormatError} when the payload cannot be written.",
            " */",
            "export function encodeAgentEventPayload(event: AgentEventPayload): {",
            "  type: string;",
            "  payload: string;",
            "} {",
            "  switch (event.type) {",
        ]
        for event, name in payloads:
            lines += [
                f"    case {ts_str(event)}:",
                f"      return {{ type: {ts_str(event)}, payload: encode{name}(event.payload) }};",
            ]
        lines += [
            f"    case {ts_str(_UNKNOWN_EVENT)}:",
            "      return { type: event.eventType, payload: event.text };",
            "  }",
            "}",
            "",
        ]
        return lines
