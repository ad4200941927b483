"""The recorder: real sessions on dexlite and a capture Worker, one fixture per point.

An adapter's recipe (`tests/run_state_recipes.json`) names its test app, the
framework's distribution and, per point, the app that reaches it when another
one does (`app`) and its conformance `flow`, the prompt that reaches it (and the
`plan_prompt` of a planning turn after it), the call
to approve and the gate files to open (if any), the tool whose result the
recorded RunModel resumes after, and the model script for the resumed run. The
recorded RunModel is the first of the session whose stored run state is set and
whose tool call records hold that tool, final; its real outcome becomes
`expected`, and the fixture is only written when resuming it offline with the
script gives the same action.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from importlib.metadata import version
from pathlib import Path
from typing import Any

from dex_agents.results import is_final
from dex_agents_contracts import decode_runner_turn_context

from dex_agents_testing.conformance._flows import CaseApp
from dex_agents_testing.processes import DexliteProcess
from dex_agents_testing.run_state_fixtures._check import resume
from dex_agents_testing.run_state_fixtures._format import (
    POINTS,
    Point,
    RunStateFixture,
    run_state_sha256,
    write_fixture,
)
from dex_agents_testing.worker_apps import load_app

__all__ = ["record"]


@dataclass
class _CaptureApp(CaseApp):
    """The recipe's app (with the point's conformance `flow`, if any), served by
    `capture_worker`, which logs every RunModel call."""

    capture: Path = Path()

    def worker_command(self) -> list[str]:
        module = "dex_agents_testing.run_state_fixtures.capture_worker"
        return [
            sys.executable,
            "-m",
            module,
            "--app",
            str(self.script),
            "--capture",
            str(self.capture),
            *self.worker_arguments(),
        ]


def _commit(directory: Path) -> str:
    found = subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=directory, capture_output=True, text=True, check=False
    )
    return found.stdout.strip() or "unknown"


def _drive(app: _CaptureApp, recipe: Mapping[str, Any]) -> str:
    for gate in recipe.get("open_gates", []):
        app.gate(gate).touch()
    session = app.start(recipe["prompt"])
    plan_prompt = recipe.get("plan_prompt")
    if plan_prompt is not None:
        # A planning turn after the first: it resumes after write_todos with a plan.
        app.wait_idle(session, 1, timeout=120)
        assert app.client.send_user_message(session, plan_prompt, plan_mode=True)
        app.wait_idle(session, 2, timeout=120)
        return session
    approve = recipe.get("approve")
    if approve is not None:
        interrupt = app.client.wait_for_interrupt(session, approve)
        assert interrupt is not None, f"no approval {approve!r} came"
        assert app.client.resolve_interrupt(session, approve, approved=True)
    app.wait_idle(session, 1, timeout=120)
    return session


def _resumed_turn(capture: Path, session: str, tool: str) -> dict[str, Any]:
    for line in capture.read_text().splitlines():
        entry: dict[str, Any] = json.loads(line)
        turn = decode_runner_turn_context(json.dumps(entry["turn_context"]))
        if (
            turn.flow_id == session
            and turn.framework_run_state
            and any(c.tool_name == tool and is_final(c.status) for c in turn.tool_calls)
        ):
            return entry
    raise AssertionError(f"no RunModel of {session!r} resumed after {tool!r}")


def record(recipe_path: Path, points: list[Point] | None = None) -> list[Path]:
    """Records the recipe's points (all by default); the paths of the written fixtures."""
    recipe = json.loads(recipe_path.read_text())
    base = recipe_path.parent
    chosen = points or list(recipe["points"])
    unknown = [p for p in chosen if p not in POINTS or p not in recipe["points"]]
    if unknown:
        raise ValueError(f"{recipe_path}: no recipe for {unknown!r}")
    recorded_with = {
        "framework": f"{recipe['framework']} {version(recipe['framework'])}",
        "dex_agents_commit": _commit(base),
    }
    written: list[Path] = []
    with tempfile.TemporaryDirectory(prefix="run-states-") as tmp:
        server = DexliteProcess(Path(tmp) / "db.sqlite").start()
        try:
            for point in chosen:
                steps = recipe["points"][point]
                script = (base / steps.get("app", recipe["app"])).resolve()
                root = Path(tmp) / point
                root.mkdir()

                def scripted(model_script: Any, script: Path = script, root: Path = root) -> Any:
                    app = load_app(script)
                    return app.scripted_runner(model_script, str(root / "offline.jsonl"))

                app = _CaptureApp(
                    server=server,
                    root=root,
                    script=script,
                    flow=steps.get("flow"),
                    capture=root / "capture.jsonl",
                )
                try:
                    app.start_worker()
                    session = _drive(app, steps)
                finally:
                    app.stop()
                entry = _resumed_turn(app.capture, session, steps["resumes_after"])
                turn = decode_runner_turn_context(json.dumps(entry["turn_context"]))
                assert turn.framework_run_state is not None
                fixture = RunStateFixture(
                    adapter=recipe["adapter"],
                    point=point,
                    recorded_at=datetime.now(UTC).date().isoformat(),
                    recorded_with=recorded_with,
                    framework_run_state_sha256=run_state_sha256(turn.framework_run_state),
                    turn_context=turn,
                    model_script=steps["model_script"],
                    expected=entry["expected"],
                )
                offline = resume(fixture, scripted)
                if offline != fixture.expected:
                    raise AssertionError(
                        f"{point}: the session went on with {fixture.expected!r}, the model "
                        f"script resumes to {offline!r}; fix the recipe's model_script"
                    )
                path = base / recipe["fixtures"] / f"{point}.json"
                write_fixture(path, fixture)
                written.append(path)
        finally:
            server.stop()
    return written
