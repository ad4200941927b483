"""A Worker that serves a test app's Flow and records every `run_model_step` call.

`python -m dex_agents_testing.run_state_fixtures.capture_worker --app PATH
--capture FILE` plus the `WorkerApp` arguments (`--server`, `--flow-type`,
`--log`, ...). Each call appends one JSON line to FILE: the turn context as
`RunnerTurnContext` wire JSON and the normalised outcome the real runner
returned. The recorder picks the call at the point it records.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from dex_agents._remote.frames import turn_context
from dex_agents.runner import AgentFrameworkRunner, AgentTurnContext, AgentTurnOutcome
from dex_agents_contracts import encode_runner_turn_context

from dex_agents_testing.conformance._serve import app_parser, serve_app_flow
from dex_agents_testing.run_state_fixtures._format import normalise_outcome
from dex_agents_testing.worker_apps import load_app

__all__ = ["capture_run_model_steps", "main"]


def capture_run_model_steps(runner: AgentFrameworkRunner[Any], capture: Path) -> None:
    """Wraps the runner's `run_model_step` in place: the Flow already holds this runner,
    and its capability checks (`isinstance`) must still see the real one."""
    inner = runner.run_model_step

    async def recording(turn: AgentTurnContext) -> AgentTurnOutcome:
        wire = encode_runner_turn_context(turn_context(turn))
        outcome = await inner(turn)
        entry = {"turn_context": json.loads(wire), "expected": normalise_outcome(outcome)}
        with capture.open("a") as f:
            f.write(json.dumps(entry) + "\n")
        return outcome

    runner.run_model_step = recording  # type: ignore[method-assign]


def main(argv: list[str] | None = None) -> int:
    parser = app_parser()
    parser.add_argument("--app", required=True, type=Path)
    parser.add_argument("--capture", required=True, type=Path)
    args = parser.parse_args(argv)
    return serve_app_flow(
        load_app(args.app.resolve()),
        args,
        prepare=lambda flow: capture_run_model_steps(flow.runner, args.capture),
    )


if __name__ == "__main__":
    sys.exit(main())
