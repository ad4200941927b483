"""Property-based fuzzing of every codec, from strategies built off the message classes.

Every generated valid value round-trips (encode, decode, encode gives the same
bytes and an equal value), and one mutation of its wire JSON at one place makes
the decoder fail with exactly the `<path>: <reason>` text of docs/wire-format.md.

The same strategies write the cross-language corpus under
`proto/testdata/fuzz/` that `typescript/contracts/src/fuzz_corpus.test.ts`
reads; `test_checked_in_corpus_is_current` fails when it is stale. Rewrite it
with `python python/contracts/tests/test_fuzz_codecs.py --write` (see the
contracts README, "Fuzzing").

`DEX_AGENTS_FUZZ=long` selects the long profile (10,000 cases per test).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
import os
import re
import typing
from collections.abc import Callable
from datetime import UTC, datetime
from enum import IntEnum
from pathlib import Path
from typing import Any

import pytest
from conftest import locate_testdata
from dex_agents_contracts import CODECS, WireFormatError, struct_from_json
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

LONG = os.environ.get("DEX_AGENTS_FUZZ") == "long"
# The per-message tests run once per message type (54): the CI profile gives each
# 30 cases, the long one 400, so every test function runs at least 10,000 cases.
PER_MESSAGE_LONG = 400
settings.register_profile(
    "dex-fuzz-ci",
    max_examples=30,
    derandomize=True,
    database=None,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.register_profile(
    "dex-fuzz-long",
    max_examples=PER_MESSAGE_LONG,
    database=None,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
FUZZ = settings.get_profile("dex-fuzz-long" if LONG else "dex-fuzz-ci")

INT32 = (-(2**31), 2**31 - 1)
INT64 = (-(2**53 - 1), 2**53 - 1)
TIME_MIN = datetime(1, 1, 1, tzinfo=UTC)
TIME_MAX = datetime(9999, 12, 31, 23, 59, 59, 999_000, tzinfo=UTC)
_TIME = re.compile(r"(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?(?:Z|\+00:00)")

CODECS_BY_NAME: dict[str, Any] = {t.__name__: c for t, c in CODECS.items()}
MESSAGE_TYPES: list[type[Any]] = sorted(CODECS, key=lambda t: t.__name__)

# --- the schema, read off the betterproto2 dataclasses -----------------------------


@dataclasses.dataclass(frozen=True)
class Field:
    """One field of a message: its wire key and what it holds."""

    name: str
    kind: str  # string, bool, int32, int64, enum, time, struct, message
    repeated: bool
    nullable: bool  # `optional` in the proto: null reads and writes as absent
    enum: type[IntEnum] | None = None
    message: type[Any] | None = None


def _nullable(message: type[Any], name: str) -> bool:
    """Whether `null` is a valid value of the field: the reader says so."""
    try:
        CODECS[message].decode(json.dumps({name: None}))
    except WireFormatError as error:
        return error.field_path != f"{message.__name__}.{name}"
    return True


def _fields_uncached(message: type[Any]) -> list[Field]:
    hints = typing.get_type_hints(message)
    found: list[tuple[int, Field]] = []
    for f in dataclasses.fields(message):
        meta = f.metadata["betterproto"]
        hint = hints[f.name]
        if meta.repeated:
            target = typing.get_args(hint)[0]
        else:
            target = next((a for a in typing.get_args(hint) if a is not type(None)), hint)
        kind = meta.proto_type
        enum: type[IntEnum] | None = None
        nested: type[Any] | None = None
        if kind == "enum":
            enum = target
        elif kind == "message":
            if target is datetime:
                kind = "time"
            elif target.__name__ == "Struct":
                kind = "struct"
            else:
                nested = target
        assert kind in {"string", "bool", "int32", "int64", "enum", "time", "struct", "message"}, (
            f"{message.__name__}.{f.name}: a proto type the fuzzer does not know: {kind}"
        )
        nullable = not meta.repeated and _nullable(message, f.name)
        found.append((meta.number, Field(f.name, kind, meta.repeated, nullable, enum, nested)))
    return [f for _, f in sorted(found, key=lambda item: item[0])]


_SCHEMA: dict[type[Any], list[Field]] = {}


def fields_of(message: type[Any]) -> list[Field]:
    if message not in _SCHEMA:
        _SCHEMA[message] = _fields_uncached(message)
    return _SCHEMA[message]


# --- strategies of valid values ------------------------------------------------------

# Any code point but surrogates: astral planes, controls, U+2028/9, noncharacters.
_CHARS = st.characters(exclude_categories=["Cs"])
_EDGE_TEXT = st.sampled_from(
    ["", " ", "\x00", "\x1f\x7f", '"\\/', "\u2028\u2029", "\ufeff", "\U0001f600", "\U0010ffff"]
)
TEXT = st.one_of(st.text(_CHARS, max_size=12), _EDGE_TEXT)
_MS_TIMES = st.datetimes(
    min_value=TIME_MIN.replace(tzinfo=None),
    max_value=TIME_MAX.replace(tzinfo=None),
    timezones=st.just(UTC),
).map(lambda t: t.replace(microsecond=t.microsecond // 1000 * 1000))
TIMES = st.one_of(_MS_TIMES, st.sampled_from([TIME_MIN, TIME_MAX]))


def _portable_float(value: float) -> bool:
    """A number both languages print alike: JS and Python agree on plain notation here."""
    if value.is_integer():
        return abs(value) <= INT64[1]  # larger ones are written as floats, differently
    return 1e-4 <= abs(value) < 1e15


def json_data(*, portable: bool) -> st.SearchStrategy[object]:
    """JSON values of a `Struct`; `portable` keeps to numbers both codecs print the same."""
    floats = st.floats(allow_nan=False, allow_infinity=False)
    if portable:
        floats = floats.filter(_portable_float)
    scalars = st.one_of(
        st.none(),
        st.booleans(),
        st.integers(*INT64),
        floats,
        TEXT,
    )
    keys = st.one_of(TEXT, st.integers(0, 2**32 - 2).map(str))
    return st.recursive(
        scalars,
        lambda inner: st.one_of(
            st.lists(inner, max_size=3), st.dictionaries(keys, inner, max_size=3)
        ),
        max_leaves=8,
    )


def _struct(*, portable: bool) -> st.SearchStrategy[Any]:
    keys = st.one_of(TEXT, st.integers(0, 2**32 - 2).map(str))
    return st.dictionaries(keys, json_data(portable=portable), max_size=4).map(struct_from_json)


def _field_strategy(field: Field, *, portable: bool) -> st.SearchStrategy[Any]:
    base: st.SearchStrategy[Any]
    if field.kind == "string":
        base = TEXT
    elif field.kind == "bool":
        base = st.booleans()
    elif field.kind == "int32":
        base = st.integers(*INT32)
    elif field.kind == "int64":
        base = st.integers(*INT64)
    elif field.kind == "enum":
        assert field.enum is not None
        base = st.sampled_from([v for v in field.enum if v.value != 0])
    elif field.kind == "time":
        base = TIMES
    elif field.kind == "struct":
        base = _struct(portable=portable)
    else:
        assert field.message is not None
        base = st.deferred(lambda: message_values(field.message, portable=portable))  # type: ignore[arg-type]
    if field.repeated:
        return st.lists(base, max_size=3)
    if field.nullable:
        return st.one_of(st.none(), base)
    return base


_STRATEGIES: dict[tuple[type[Any], bool], st.SearchStrategy[Any]] = {}


def message_values(message: type[Any], *, portable: bool = False) -> st.SearchStrategy[Any]:
    """Every valid value of `message`: no UNSPECIFIED enum, times in range, no lone surrogate."""
    key = (message, portable)
    if key not in _STRATEGIES:
        _STRATEGIES[key] = st.builds(
            message,
            **{f.name: _field_strategy(f, portable=portable) for f in fields_of(message)},
        )
    return _STRATEGIES[key]


# --- round trips ---------------------------------------------------------------------


def check_round_trip(message: type[Any], value: Any) -> str:
    codec = CODECS[message]
    text: str = codec.encode(value)
    assert list(json.loads(text)) == [f.name for f in fields_of(message)], "keys, in field order"
    assert codec.decode(text) == value
    assert codec.decode(text.encode("utf-8")) == value
    assert codec.encode(codec.decode(text)) == text
    return text


@pytest.mark.parametrize("message", MESSAGE_TYPES, ids=lambda t: t.__name__)
@FUZZ
@given(data=st.data())
def test_every_valid_value_round_trips(message: type[Any], data: st.DataObject) -> None:
    check_round_trip(message, data.draw(message_values(message)))


@settings(FUZZ, max_examples=10_000 if LONG else 100)
@given(st.sampled_from(MESSAGE_TYPES).flatmap(lambda t: st.tuples(st.just(t), message_values(t))))
def test_lists_of_values_round_trip(pair: tuple[type[Any], Any]) -> None:
    message, value = pair
    codec = CODECS[message]
    text = codec.encode_list([value, value])
    assert codec.decode_list(text) == [value, value]
    assert codec.encode_list(codec.decode_list(text)) == text


# --- mutations -----------------------------------------------------------------------

# A placeholder that json.dumps writes as a string, replaced in the text afterwards
# by JSON no Python value dumps to.
_RAW = "\x00raw:"


@dataclasses.dataclass(frozen=True)
class Site:
    """One place in a decoded wire object: the dict or list holding it, and its path."""

    path: str
    holder: Any
    key: Any
    field: Field
    item: bool  # a list item of a repeated field, not the field itself


def sites(message: type[Any], obj: dict[str, Any], path: str) -> list[Site]:
    found: list[Site] = []
    for field in fields_of(message):
        found.append(Site(f"{path}.{field.name}", obj, field.name, field, False))
        value = obj[field.name]
        items = list(enumerate(value)) if field.repeated else []
        for index, _ in items:
            found.append(Site(f"{path}.{field.name}[{index}]", value, index, field, True))
        if field.kind == "message" and field.message is not None:
            nested = [(f"{path}.{field.name}[{i}]", v) for i, v in items]
            if not field.repeated and value is not None:
                nested = [(f"{path}.{field.name}", value)]
            for where, inner in nested:
                found.extend(sites(field.message, inner, where))
    return found


_JSON_KINDS: list[tuple[str, object]] = [
    ("null", None),
    ("boolean", True),
    ("number", 7),
    ("number", 2.5),
    ("string", "x"),
    ("array", []),
    ("object", {}),
]
_EXPECTED_KIND = {
    "string": ("string", {"string"}),
    "enum": ("string", {"string"}),
    "time": ("string", {"string"}),
    "bool": ("boolean", {"boolean"}),
    "int32": ("integer", {"number"}),
    "int64": ("integer", {"number"}),
    "message": ("object", {"object"}),
    "struct": ("object", {"object"}),
}


def _quote(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)


def _is_time(text: str) -> bool:
    match = _TIME.fullmatch(text)
    if match is None:
        return False
    try:
        year, month, day, hour, minute, second = (int(g) for g in match.groups()[:6])
        datetime(year, month, day, hour, minute, second)
    except ValueError:
        return False
    return True


def _wrong_type(data: st.DataObject, site: Site) -> tuple[object, str]:
    """A JSON value of a type the site does not take, and the reason a reader gives."""
    if site.field.repeated and not site.item:
        wanted, accepted = "array", {"array"}
    else:
        wanted, accepted = _EXPECTED_KIND[site.field.kind]
    nullable = site.field.nullable and not site.item
    choices = [
        (kind, value)
        for kind, value in _JSON_KINDS
        if kind not in accepted and not (kind == "null" and nullable)
    ]
    kind, value = data.draw(st.sampled_from(choices))
    return value, f"expected {wanted}, got {kind}"


def _bad_content(data: st.DataObject, site: Site) -> tuple[object, str] | None:
    """A value of the right JSON type that the field still refuses."""
    kind = site.field.kind
    if kind in {"int32", "int64"}:
        low, high = INT32 if kind == "int32" else INT64
        choice = data.draw(st.sampled_from(["fraction", "low", "high"]))
        if choice == "fraction":
            return data.draw(st.floats(-1e9, 1e9).filter(lambda f: not f.is_integer())), (
                "expected integer, got number"
            )
        if choice == "low":
            return data.draw(st.integers(max_value=low - 1)), "integer out of range"
        return data.draw(st.integers(min_value=high + 1)), "integer out of range"
    if kind == "enum":
        assert site.field.enum is not None
        known = {_wire_name(site.field.enum, v) for v in site.field.enum}
        text = data.draw(TEXT.filter(lambda t: t not in known))
        return text, f"unknown value {_quote(text)}"
    if kind == "time":
        text = data.draw(
            st.one_of(
                TEXT,
                st.sampled_from(
                    [
                        "2026-13-01T00:00:00.000Z",
                        "2026-02-30T00:00:00Z",
                        "0000-01-01T00:00:00.000Z",
                        "2026-11-01T12:00:00.Z",
                        "2026-11-01T12:00:00.0000000000Z",
                        "2026-11-01T12:00:00+01:00",
                        "2026-11-01 12:00:00Z",
                        "2026-11-01T24:00:00Z",
                        "\uff12026-11-01T12:00:00Z",
                    ]
                ),
            ).filter(lambda t: not _is_time(t))
        )
        return text, f"invalid time {_quote(text)}"
    if kind == "struct":
        inner = data.draw(st.sampled_from(["1e400", "-1e999"]))
        return {"k": [_RAW + inner]}, "number out of range"
    return None


def _wire_name(enum: type[IntEnum], value: IntEnum) -> str:
    prefix = re.sub(r"(?<!^)(?=[A-Z])", "_", enum.__name__).upper() + "_"
    return value.name.removeprefix(prefix).lower()


def _surrogate(data: st.DataObject, site: Site) -> tuple[object, str] | None:
    """A string with a lone surrogate where a string (or a Struct) goes."""
    lone = chr(data.draw(st.integers(0xD800, 0xDFFF)))
    text = data.draw(TEXT)
    at = data.draw(st.integers(0, len(text)))
    spoilt = text[:at] + lone + text[at:]
    if site.field.kind in {"string", "enum", "time"} and (site.item or not site.field.repeated):
        return spoilt, "lone surrogate in string"
    if site.field.kind == "struct" and not site.field.repeated:
        return {"k": [1, {"v": spoilt}]}, "lone surrogate in string"
    return None


def _dump(obj: object) -> str:
    text = json.dumps(obj, separators=(",", ":"))
    return re.sub(r'"\\u0000raw:([^"]*)"', r"\1", text)


def mutated(message: type[Any], value: Any, data: st.DataObject) -> tuple[str, str]:
    """Wire JSON of `value` spoilt at one place, and the error text a reader must give."""
    name = message.__name__
    text = CODECS[message].encode(value)
    how = data.draw(st.sampled_from(["wrong_type", "bad_content", "surrogate", "root"]))
    if how == "root":
        root = data.draw(st.sampled_from(["truncate", "array", "string", "number", "null"]))
        if root == "truncate":
            return text[: data.draw(st.integers(0, len(text) - 1))], f"{name}: not valid JSON"
        kinds = {"array": "[]", "string": '"x"', "number": "1", "null": "null"}
        return kinds[root], f"{name}: expected object, got {root}"
    obj = json.loads(text)
    site = data.draw(st.sampled_from(sites(message, obj, name)))
    change = None
    if how == "bad_content" and (site.item or not site.field.repeated):
        change = _bad_content(data, site)
    elif how == "surrogate":
        change = _surrogate(data, site)
    if change is None:
        change = _wrong_type(data, site)
    site.holder[site.key] = change[0]
    return _dump(obj), f"{site.path}: {change[1]}"


@pytest.mark.parametrize("message", MESSAGE_TYPES, ids=lambda t: t.__name__)
@FUZZ
@given(data=st.data())
def test_every_mutated_value_is_refused_with_the_documented_text(
    message: type[Any], data: st.DataObject
) -> None:
    value = data.draw(message_values(message))
    text, error = mutated(message, value, data)
    codec = CODECS[message]
    for form in (text, text.encode("utf-8")):
        with pytest.raises(WireFormatError) as raised:
            codec.decode(form)
        assert str(raised.value) == error, text


def test_lone_surrogate_in_a_struct_key_is_refused_on_read() -> None:
    codec = CODECS_BY_NAME["TurnSessionSettings"]
    with pytest.raises(WireFormatError) as raised:
        codec.decode('{"turn_id":"t","session_settings":{"\\ud800":1}}')
    assert str(raised.value) == "TurnSessionSettings.session_settings: lone surrogate in string"


class BareAssertionError(Exception):
    """The bug: a bare AssertionError escaped instead of a WireFormatError."""


def test_struct_from_json_refuses_non_json_values_clearly() -> None:
    for value in [datetime(2026, 1, 1, tzinfo=UTC), {1}, (1, 2), b"x", object()]:
        try:
            struct_from_json({"v": value})
        except AssertionError as error:
            raise BareAssertionError(repr(error)) from error
        except (WireFormatError, TypeError):
            continue
        pytest.fail(f"{value!r} accepted")


# --- the cross-language corpus -------------------------------------------------------

CORPUS_PER_MESSAGE = 50
"""Cases per message and kind in the checked-in corpus (about 0.8 MB; keep it under 1 MB)."""


def corpus_dir() -> Path:
    return locate_testdata() / "fuzz"


def _collect(strategy: st.SearchStrategy[Any], count: int, *, derandomize: bool) -> list[Any]:
    """`count` values drawn from `strategy`, the same ones every run when `derandomize`."""
    found: list[Any] = []

    @settings(
        max_examples=count,
        derandomize=derandomize,
        database=None,
        deadline=None,
        phases=[Phase.generate],
        suppress_health_check=list(HealthCheck),
    )
    @given(strategy)
    def draw(value: Any) -> None:
        found.append(value)

    draw()
    return found


def build_corpus(count: int, *, derandomize: bool = True) -> dict[str, tuple[list[str], list[str]]]:
    """Per message: valid wire texts, and invalid ones as `[text, error]` JSON lines."""
    corpus: dict[str, tuple[list[str], list[str]]] = {}
    for message in MESSAGE_TYPES:
        portable = message_values(message, portable=True)
        valid = [
            CODECS[message].encode(v) for v in _collect(portable, count, derandomize=derandomize)
        ]

        @st.composite
        def spoilt(draw: Callable[..., Any], message: type[Any] = message) -> tuple[str, str]:
            value = draw(message_values(message, portable=True))
            return mutated(message, value, draw(st.data()))

        invalid = [
            json.dumps(list(pair), ensure_ascii=False)
            for pair in _collect(spoilt(), count, derandomize=derandomize)
        ]
        corpus[message.__name__] = (sorted(set(valid)), sorted(set(invalid)))
    return corpus


def write_corpus(root: Path, count: int, *, derandomize: bool = True) -> None:
    for kind in ("valid", "invalid"):
        (root / kind).mkdir(parents=True, exist_ok=True)
        for stale in (root / kind).glob("*.jsonl"):
            stale.unlink()
    for name, (valid, invalid) in build_corpus(count, derandomize=derandomize).items():
        (root / "valid" / f"{name}.jsonl").write_text("\n".join(valid) + "\n", encoding="utf-8")
        (root / "invalid" / f"{name}.jsonl").write_text("\n".join(invalid) + "\n", encoding="utf-8")


def _lines(path: Path) -> list[str]:
    return path.read_text(encoding="utf-8").split("\n")[:-1]


def test_checked_in_corpus_is_current() -> None:
    """Every message has corpus lines, each is what this codec writes and refuses now."""
    root = corpus_dir()
    rewrite = "rewrite it: python python/contracts/tests/test_fuzz_codecs.py --write"
    for kind in ("valid", "invalid"):
        names = {p.stem for p in (root / kind).glob("*.jsonl")}
        assert names == set(CODECS_BY_NAME), f"fuzz/{kind} is stale ({rewrite})"
    for name, codec in CODECS_BY_NAME.items():
        valid = _lines(root / "valid" / f"{name}.jsonl")
        assert valid, f"{name}: no valid cases ({rewrite})"
        for line in valid:
            stale = f"{name}: stale case {line} ({rewrite})"
            assert codec.encode(codec.decode(line)) == line, stale
        invalid = _lines(root / "invalid" / f"{name}.jsonl")
        assert invalid, f"{name}: no invalid cases ({rewrite})"
        for line in invalid:
            text, error = json.loads(line)
            with pytest.raises(WireFormatError) as raised:
                codec.decode(text)
            assert str(raised.value) == error, f"{name}: stale case {line} ({rewrite})"


def test_portable_floats_print_plainly() -> None:
    """The corpus keeps to floats whose Python repr JavaScript prints the same way."""
    for value in (1e-4, 0.5, 123.25, 1e15 - 0.5):
        assert _portable_float(value)
        assert "e" not in repr(value)
    assert not _portable_float(1e-5)
    assert not math.isinf(float("1e308"))


def main() -> None:
    parser = argparse.ArgumentParser(description="Write the codec fuzz corpus.")
    parser.add_argument("--write", action="store_true", help="rewrite proto/testdata/fuzz")
    parser.add_argument("--out", type=Path, help="write a corpus into this directory instead")
    parser.add_argument("--count", type=int, help="cases per message and kind")
    args = parser.parse_args()
    if args.out is not None:
        count = args.count or (200 if LONG else CORPUS_PER_MESSAGE)
        write_corpus(args.out, count, derandomize=False)
    elif args.write:
        write_corpus(corpus_dir(), args.count or CORPUS_PER_MESSAGE)
    else:
        parser.error("say --write or --out DIR")


if __name__ == "__main__":
    main()
