"""Every golden vector in proto/testdata, through the Python codec."""

from __future__ import annotations

import json
from pathlib import Path

import dex_agents_contracts as contracts
import pytest
from conftest import locate_testdata
from dex_agents_contracts import CODECS, ENUM_WIRE_STRINGS, WireFormatError

CODECS_BY_NAME = {t.__name__: codec for t, codec in CODECS.items()}
ROOT = locate_testdata()


def _cases(kind: str, suffix: str = ".json") -> list[Path]:
    return sorted(
        p
        for p in (ROOT / kind).rglob(f"*{suffix}")
        if not p.name.endswith(".canonical.json") or suffix != ".json"
    )


def _codec(path: Path, kind: str) -> contracts._wire.MessageCodec[object]:
    name = path.relative_to(ROOT / kind).parts[0]
    assert name in CODECS_BY_NAME, f"{path}: no message type named {name!r}"
    return CODECS_BY_NAME[name]


@pytest.mark.parametrize("path", _cases("valid"), ids=lambda p: str(p.relative_to(ROOT)))
def test_valid_vector_round_trips_to_the_same_bytes(path: Path) -> None:
    data = path.read_bytes()
    codec = _codec(path, "valid")
    assert codec.encode(codec.decode(data)).encode("utf-8") == data
    assert codec.encode(codec.decode(data.decode("utf-8"))).encode("utf-8") == data


@pytest.mark.parametrize("path", _cases("read"), ids=lambda p: str(p.relative_to(ROOT)))
def test_lenient_input_reads_and_rewrites_canonically(path: Path) -> None:
    codec = _codec(path, "read")
    canonical = path.with_name(path.name.removesuffix(".json") + ".canonical.json").read_bytes()
    assert codec.encode(codec.decode(path.read_bytes())).encode("utf-8") == canonical


@pytest.mark.parametrize("path", _cases("invalid"), ids=lambda p: str(p.relative_to(ROOT)))
def test_invalid_vector_fails_with_the_expected_text(path: Path) -> None:
    codec = _codec(path, "invalid")
    expected = path.with_suffix(".error").read_text(encoding="utf-8").removesuffix("\n")
    with pytest.raises(WireFormatError) as raised:
        codec.decode(path.read_bytes())
    assert str(raised.value) == expected


def test_every_message_type_has_a_valid_vector() -> None:
    covered = {p.relative_to(ROOT / "valid").parts[0] for p in _cases("valid")}
    missing = sorted(set(CODECS_BY_NAME) - covered)
    assert not missing, f"messages without a golden file in proto/testdata/valid: {missing}"


def _enum_strings_in(value: object, found: set[str]) -> None:
    if isinstance(value, dict):
        for item in value.values():
            _enum_strings_in(item, found)
    elif isinstance(value, list):
        for item in value:
            _enum_strings_in(item, found)
    elif isinstance(value, str):
        found.add(value)


def test_every_enum_value_appears_in_a_valid_vector() -> None:
    strings: set[str] = set()
    for path in _cases("valid"):
        _enum_strings_in(json.loads(path.read_bytes()), strings)
    missing = sorted(
        f"{enum.__name__}.{wire}"
        for enum, table in ENUM_WIRE_STRINGS.items()
        for wire in table.values()
        if wire not in strings
    )
    assert not missing, f"enum values no valid vector uses: {missing}"


def test_vector_directories_name_real_message_types() -> None:
    for kind in ("valid", "read", "invalid"):
        for directory in (ROOT / kind).iterdir():
            assert directory.name in CODECS_BY_NAME, f"{kind}/{directory.name}: not a message type"
