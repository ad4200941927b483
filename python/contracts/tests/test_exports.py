"""The public surface of dex_agents_contracts; a vanished name fails here."""

from __future__ import annotations

import dex_agents_contracts as c


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
