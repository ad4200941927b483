"""WorkerApp script of the remote-runner tests: the session Flow on a `RemoteRunner`.

The runner is the scripted runner of typescript/core/src/testing, served by the
sidecar at `$DEX_AGENTS_TEST_RUNNER_TARGET` under the Flow type. `charge` is a
single-attempt write that needs no approval, so a killed call shows outcome_unknown.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
from collections.abc import Callable
from datetime import timedelta

from dex_agents import (
    AgentSessionFlow,
    AgentSessionOptions,
    RemoteRunner,
    ToolEffect,
    ToolPolicy,
    run_worker,
)

TARGET_VARIABLE = "DEX_AGENTS_TEST_RUNNER_TARGET"


def build_flow(
    flow_type: str, log_path: str, interrupt_deadline_seconds: float | None = None
) -> AgentSessionFlow:
    del log_path  # the sidecar logs the runs
    runner = RemoteRunner(os.environ[TARGET_VARIABLE], flow_type, connect_timeout=5.0)
    deadline = (
        None
        if interrupt_deadline_seconds is None
        else timedelta(seconds=interrupt_deadline_seconds)
    )
    options = AgentSessionOptions(
        tool_policies={
            "charge": ToolPolicy(effect=ToolEffect.NON_IDEMPOTENT_WRITE, requires_approval=False)
        },
        interrupt_deadline=deadline,
    )
    return AgentSessionFlow(runner, flow_type=flow_type, options=options)


def main(argv: list[str] | None = None, build: Callable[..., AgentSessionFlow] = build_flow) -> int:
    """The Worker of one Flow type, `build(flow_type, log, interrupt_deadline_seconds)`."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--server", required=True)
    parser.add_argument("--flow-type", required=True)
    parser.add_argument("--log", required=True)
    parser.add_argument("--interrupt-deadline", type=float, default=None)
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr)
    flow = build(args.flow_type, args.log, args.interrupt_deadline)
    run_worker([flow], server_address=args.server, on_ready=lambda: print("ready", flush=True))
    return 0


if __name__ == "__main__":
    sys.exit(main())
