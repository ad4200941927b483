"""Random and mutated JSON never makes a decoder raise anything but WireFormatError."""

from __future__ import annotations

import contextlib
import json

from conftest import locate_testdata
from dex_agents_contracts import CODECS, WireFormatError
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

CODEC_LIST = list(CODECS.values())
VALID = [
    p.read_text(encoding="utf-8") for p in sorted((locate_testdata() / "valid").rglob("*.json"))
]

json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=False)
    | st.text(),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4)
    ),
    max_leaves=20,
)


def _decode_checked(codec_index: int, text: str) -> None:
    codec = CODEC_LIST[codec_index % len(CODEC_LIST)]
    try:
        value = codec.decode(text)
    except WireFormatError:
        return
    try:
        encoded = codec.encode(value)
    except WireFormatError:
        return  # e.g. a missing enum key reads as UNSPECIFIED, which is never written
    assert codec.encode(codec.decode(encoded)) == encoded


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(min_value=0), st.text(max_size=200))
def test_random_text(codec_index: int, text: str) -> None:
    _decode_checked(codec_index, text)


@settings(max_examples=400, deadline=None)
@given(st.integers(min_value=0), st.dictionaries(st.text(max_size=30), json_values, max_size=8))
def test_random_objects(codec_index: int, data: dict[str, object]) -> None:
    _decode_checked(codec_index, json.dumps(data))


@settings(max_examples=600, deadline=None)
@given(st.sampled_from(VALID), st.data())
def test_mutated_valid_vectors(source: str, data: st.DataObject) -> None:
    keys = [k for k in json.loads(source)] if source.startswith("{") else []
    mutation = data.draw(st.sampled_from(["cut", "replace_value", "insert_char", "surrogate"]))
    if mutation == "cut":
        at = data.draw(st.integers(0, len(source)))
        text = source[:at] + source[at + 1 :]
    elif mutation == "replace_value" and keys:
        obj = json.loads(source)
        obj[data.draw(st.sampled_from(keys))] = data.draw(json_values)
        text = json.dumps(obj)
    elif mutation == "insert_char":
        at = data.draw(st.integers(0, len(source)))
        text = (
            source[:at]
            + data.draw(st.sampled_from(['"', "{", "]", ",", "\\u", "1e999", "\\ud800"]))
            + source[at:]
        )
    else:
        text = source.replace('":"', '":"\\udc01', 1)
    for codec_index in range(len(CODEC_LIST)):
        _decode_checked(codec_index, text)


def test_deep_nesting_is_refused_cleanly() -> None:
    deep = '{"session_settings":' + '{"a":' * 5000 + "1" + "}" * 5001
    for codec in CODEC_LIST:
        with contextlib.suppress(WireFormatError):
            codec.decode(deep)
