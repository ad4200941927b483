"""The public surface of dex_agents_contracts; a vanished name fails here."""

from __future__ import annotations

import dex_agents_contracts as c
from dex_agents_contracts._gen import codec as generated_codec
from dex_agents_contracts._gen.dex.agents import v1 as generated_types


def test_public_names_resolve() -> None:
    missing = [name for name in c.__all__ if not hasattr(c, name)]
    assert not missing


def test_core_names_are_exported() -> None:
    for name in [
        "AgentState",
        "AgentSnapshot",
        "AgentToolCall",
        "AgentEvent",
        "WireFormatError",
        "encode",
        "decode",
        "encode_list",
        "decode_list",
        "encode_agent_snapshot",
        "decode_agent_snapshot",
        "struct_from_json",
        "CODECS",
        "EVENT_PAYLOAD_TYPES",
    ]:
        assert name in c.__all__, name


def test_every_generated_name_is_exported() -> None:
    """`__init__.py` is hand-written: a message added to the protos must be added there."""
    generated = set(generated_codec.__all__)
    generated |= {
        name
        for name, value in vars(generated_types).items()
        if isinstance(value, type) and value.__module__ == generated_types.__name__
    }
    missing = sorted(generated - set(c.__all__))
    assert not missing, f"export these from dex_agents_contracts/__init__.py: {missing}"


def test_each_name_is_listed_once() -> None:
    assert len(c.__all__) == len(set(c.__all__))
