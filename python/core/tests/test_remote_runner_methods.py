"""RemoteRunner's hand-written method table against the service in runner.proto, which
the TypeScript side serves from its generated descriptor: a renamed, added or
re-typed RPC fails here before it fails on the wire."""

from __future__ import annotations

import os
import re
from pathlib import Path

from dex_agents._remote.methods import METHODS, SERVICE


def _proto() -> str:
    srcdir = os.environ.get("TEST_SRCDIR")
    if srcdir:
        root = Path(srcdir) / os.environ.get("TEST_WORKSPACE", "dex_agents")
    else:
        root = next(p for p in Path(__file__).resolve().parents if (p / "proto").is_dir())
    return (root / "proto" / "dex" / "agents" / "v1" / "runner.proto").read_text()


def test_method_table_matches_the_service() -> None:
    text = _proto()
    assert f"service {SERVICE.rsplit('.', 1)[1]} {{" in text
    declared = re.findall(r"rpc (\w+)\((\w+)\) returns \((stream )?(\w+)\);", text)
    table = [(m.name, m.request.__name__, bool(m.streaming), m.response.__name__) for m in METHODS]
    assert table == [(name, req, bool(stream), resp) for name, req, stream, resp in declared]
