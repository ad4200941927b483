"""Golden vectors shared with the TypeScript side (proto/testdata/ui-stream/): the
plain SSE bytes of AgentEvents, the UI chunks a turn's events translate into, and
UI stream tokens. DEX_AGENTS_REGENERATE_GOLDEN=1 rewrites chunks.jsonl and
tokens.json from this implementation (review the diff)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from dex_agents.http import ToolFacts, UiToken, UiTurnTranslator
from dex_agents.http._sse import compact_json
from dex_agents_contracts import AgentEvent, decode_agent_event, encode_agent_event
from sse_starlette import ServerSentEvent

_END_EVENTS = {"turn_completed", "turn_failed", "turn_steered", "turn_cancelled"}
_REGENERATE = os.environ.get("DEX_AGENTS_REGENERATE_GOLDEN") == "1"


def _root() -> Path:
    configured = os.environ.get("DEX_TESTDATA_DIR")
    if configured:
        return Path(configured) / "ui-stream"
    for parent in Path(__file__).resolve().parents:
        candidate = parent / "proto" / "testdata" / "ui-stream"
        if candidate.is_dir():
            return candidate
    raise RuntimeError("proto/testdata/ui-stream not found; set DEX_TESTDATA_DIR")


ROOT = _root()
CASES = sorted(p.name for p in ROOT.iterdir() if p.is_dir())


def _events(sse: str) -> list[tuple[str, AgentEvent]]:
    found = []
    for block in sse.split("\n\n"):
        fields = dict(line.split(": ", 1) for line in block.splitlines() if line)
        if "data" in fields:
            found.append((fields["id"], decode_agent_event(fields["data"])))
    return found


@pytest.mark.parametrize("case", CASES)
def test_sse_bytes_match(case: str) -> None:
    sse = (ROOT / case / "events.sse").read_bytes()
    events = _events(sse.decode("utf-8"))
    framed = ServerSentEvent(retry=1000, sep="\n").encode() + b"".join(
        ServerSentEvent(data=encode_agent_event(event), id=token, sep="\n").encode()
        for token, event in events
    )
    assert framed == sse


def _translate(case: str) -> list[dict[str, Any]]:
    spec = json.loads((ROOT / case / "case.json").read_text(encoding="utf-8"))
    facts = {key: ToolFacts(**value) for key, value in spec["tool_facts"].items()}

    def lookup(tool_call_id: str, event: AgentEvent) -> ToolFacts:
        return facts.get(tool_call_id, ToolFacts(tool_name=""))

    steering = {turn: [tuple(m) for m in texts] for turn, texts in spec.get("steering", {}).items()}

    def steered(event: AgentEvent) -> list[tuple[str, str]]:
        return steering.get(event.turn_id or "", [])

    translator = UiTurnTranslator(spec["turn_id"], lookup, steered)
    chunks: list[dict[str, Any]] = []
    midway = spec["joins_midway"]
    if midway is not None:
        chunks += translator.begin(midway["tool_call_ids"], midway["approvals"])
    events = _events((ROOT / case / "events.sse").read_text(encoding="utf-8"))
    for _, event in events:
        if event.type in _END_EVENTS:
            chunks += translator.end(event)
        else:
            chunks += translator.feed(event)
    if spec["then"] == "pause_for_approvals":
        chunks += translator.pause_for_approvals()
    return chunks


@pytest.mark.parametrize("case", CASES)
def test_ui_chunks_match(case: str) -> None:
    path = ROOT / case / "chunks.jsonl"
    text = "".join(compact_json(chunk) + "\n" for chunk in _translate(case))
    if _REGENERATE:
        path.write_text(text, encoding="utf-8")
    assert path.read_text(encoding="utf-8") == text


def test_ui_tokens_match() -> None:
    path = ROOT / "tokens.json"
    tokens = [
        UiToken(session_id="s-1", turn_id="turn-1", start="", position="1", chunk=0),
        UiToken(
            session_id="s-1",
            turn_id="turn-2",
            start="41",
            position="57",
            chunk=2,
            open_parts=("RunModel-3:2:t1",),
        ),
        UiToken(session_id="s-é/ü", turn_id="turn-9", start="a.b", position="x", chunk=11),
    ]
    cases = [
        {
            "session_id": t.session_id,
            "turn_id": t.turn_id,
            "start": t.start,
            "position": t.position,
            "chunk": t.chunk,
            "open_parts": list(t.open_parts),
            "encoded": t.encode(),
        }
        for t in tokens
    ]
    if _REGENERATE:
        path.write_text(json.dumps(cases, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    assert json.loads(path.read_text(encoding="utf-8")) == cases
    for case, token in zip(cases, tokens, strict=True):
        assert UiToken.decode(str(case["encoded"])) == token
