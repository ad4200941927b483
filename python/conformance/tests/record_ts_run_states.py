"""Records the run-state fixtures of the TypeScript adapters from real sessions.

`python -m record_ts_run_states ADAPTER POINT [POINT ...]` (with python/conformance/tests
on the path, as the fast test loop sets it) builds the adapter's package, starts dexlite,
the adapter's conformance sidecar with `DEX_AGENTS_RECORD_TURN_CONTEXT` set (so it writes every
RunModelStep's wire turn, the model's replies and the next action;
typescript/core/src/testing/run_state_recorder.ts) and a Python Worker whose session Flow
runs on a `RemoteRunner`, drives one session to each point and writes
typescript/adapters/ADAPTER/fixtures/run_states/POINT.json from the RunModelStep that
resumed the turn there. Committed fixtures are only ever replaced by running this again
on purpose; the adapter's `run_states.test.ts` only reads them.
"""

from __future__ import annotations

import argparse
import datetime
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dex_agents_contracts import AgentSnapshot, ToolCallStatus
from dex_agents_testing.processes import DexliteProcess
from dex_agents_testing.sidecar import pinned_node
from ts_suite import SCRIPT, SidecarApp

PLAN_AND_COMPACTION_SCRIPT = Path(__file__).with_name("record_ts_flows.py")

RECORD_VARIABLE = "DEX_AGENTS_RECORD_TURN_CONTEXT"
ROOT = next(p for p in Path(__file__).resolve().parents if (p / "typescript" / "core").is_dir())


@dataclass(frozen=True)
class Adapter:
    """A TypeScript adapter: its package, the framework it pins and the Node it needs."""

    directory: str
    framework: str
    """The npm package whose version `recorded_with` names."""
    node: str = "node"


ADAPTERS = {
    "vercel-ai": Adapter("typescript/adapters/vercel-ai", "ai"),
    "openai-agents": Adapter("typescript/adapters/openai-agents", "@openai/agents"),
    "pi": Adapter("typescript/adapters/pi", "@mariozechner/pi-agent-core"),
    "claude-agent-sdk": Adapter(
        "typescript/adapters/claude-agent-sdk", "@anthropic-ai/claude-agent-sdk"
    ),
    "mastra": Adapter("typescript/adapters/mastra", "@mastra/core", node=pinned_node()),
}


def _awaiting_approval(snapshot: AgentSnapshot) -> bool:
    return any(i.tool_call_id.startswith("k") for i in snapshot.pending_interrupts)


def _tool_result(app: SidecarApp, adapter: str) -> str:
    if adapter == "claude-agent-sdk":
        # The harness runs reads inline in one RunModel: only a write is a tool Step.
        app.gate("charge").touch()
        return app.start("charge me")
    return app.start("weather in Paris?")


def _approval(app: SidecarApp, adapter: str) -> str:
    session = app.start("book Rome")
    app.wait(session, "the approval wait", _awaiting_approval)
    assert app.client.resolve_interrupt(session, "k1", approved=True)
    return session


def _handoff(app: SidecarApp, adapter: str) -> str:
    return app.start("forecast Lima")


def _plan(app: SidecarApp, adapter: str) -> str:
    session = app.start("hello")
    app.wait_idle(session, 1, timeout=60)
    assert app.client.send_user_message(session, "plan Lima", plan_mode=True)
    return session


COMPACTING_TURNS = 8
"""Weather turns until one resumes after a summary; the window compacts after about three."""


def _compaction(app: SidecarApp, adapter: str) -> str:
    session = app.start("weather in Oslo?")
    for n in range(2, COMPACTING_TURNS + 1):
        app.wait_idle(session, n - 1, timeout=60)
        assert app.client.send_user_message(session, f"weather in City{n}?")
    return session


@dataclass(frozen=True)
class Scenario:
    """How a session reaches a point, which turns stand there and the Worker script it needs."""

    drive: Callable[[SidecarApp, str], str]
    turns: int = 1
    at_point: Callable[[dict[str, Any]], bool] = lambda turn: True
    script: Path = SCRIPT


SCENARIOS: dict[str, Scenario] = {
    "awaiting_tool_result": Scenario(_tool_result),
    "awaiting_approval": Scenario(_approval),
    "after_handoff": Scenario(_handoff),
    "mid_plan": Scenario(
        _plan,
        turns=2,
        at_point=lambda turn: turn.get("interaction_mode") == "planning",
        script=PLAN_AND_COMPACTION_SCRIPT,
    ),
    "after_compaction": Scenario(
        _compaction,
        turns=COMPACTING_TURNS,
        at_point=lambda turn: bool(turn.get("context_summary")),
        script=PLAN_AND_COMPACTION_SCRIPT,
    ),
}


def resumed_call(
    records: list[dict[str, Any]], at_point: Callable[[dict[str, Any]], bool] = lambda t: True
) -> dict[str, Any]:
    """The RunModelStep that resumed the turn at the point: the first with a run state and
    finished calls whose turn `at_point` accepts."""
    finished = {ToolCallStatus.SUCCEEDED.name.lower(), ToolCallStatus.FAILED.name.lower()}
    for record in records:
        turn = record["turn_context"]
        calls = turn.get("tool_calls") or []
        finished_calls = bool(calls) and all(c["status"] in finished for c in calls)
        if turn.get("framework_run_state") and finished_calls and at_point(turn):
            return record
    raise AssertionError(f"no recorded RunModelStep resumed after tool calls among {len(records)}")


def framework_version(package: str) -> str:
    manifest = json.loads((ROOT / "node_modules" / package / "package.json").read_text())
    return f"{package} {manifest['version']}"


def record(adapter: str, points: list[str], work: Path) -> list[Path]:
    spec = ADAPTERS[adapter]
    commit = subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=ROOT, check=True, capture_output=True, text=True
    ).stdout.strip()
    server = DexliteProcess(work / "dexlite.sqlite").start()
    written: list[Path] = []
    try:
        for point in points:
            calls = work / point
            os.environ[RECORD_VARIABLE] = str(calls)
            root = work / f"{point}-app"
            root.mkdir()
            flow_type = f"Rec{uuid.uuid4().hex[:10]}"
            scenario = SCENARIOS[point]
            app = SidecarApp(
                server,
                root,
                scenario.script,
                flow_type=flow_type,
                directory=spec.directory,
                node=spec.node,
            )
            try:
                app.start_worker()
                session = scenario.drive(app, adapter)
                app.wait_idle(session, scenario.turns, timeout=60)
            finally:
                app.stop()
            records = [json.loads(p.read_text()) for p in sorted(calls.glob("*.json"))]
            call = resumed_call(records, scenario.at_point)
            state: str = call["turn_context"]["framework_run_state"]
            fixture = {
                "adapter": adapter,
                "point": point,
                "recorded_at": datetime.date.today().isoformat(),
                "recorded_with": {
                    "framework": framework_version(spec.framework),
                    "dex_agents_commit": commit,
                },
                "framework_run_state_sha256": hashlib.sha256(state.encode()).hexdigest(),
                "turn_context": call["turn_context"],
                "model_script": call["model_script"],
                "expected": call["expected"],
            }
            target = ROOT / spec.directory / "fixtures" / "run_states" / f"{point}.json"
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(json.dumps(fixture, indent=2) + "\n")
            written.append(target)
    finally:
        server.stop()
    return written


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("adapter", choices=sorted(ADAPTERS))
    parser.add_argument("points", nargs="+", choices=sorted(SCENARIOS))
    args = parser.parse_args(argv)
    work = Path(tempfile.mkdtemp(prefix="run-states-"))
    try:
        written = record(args.adapter, args.points, work)
    except BaseException:
        print(f"failed; the sessions' logs are in {work}", file=sys.stderr)
        raise
    shutil.rmtree(work, ignore_errors=True)
    for path in written:
        print(path.relative_to(ROOT))
    return 0


if __name__ == "__main__":
    sys.exit(main())
