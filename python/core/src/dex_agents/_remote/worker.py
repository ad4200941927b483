"""`python -m dex_agents._remote.worker`: a Worker whose session Flows run on RemoteRunners.

The TypeScript launcher (`@dex-agents/core`'s `launchWorker`) starts it, one
Flow type per served runner, each with the session options the runner service
serves for it (`serveRunners({sessionOptions})`, else the defaults); it prints
`ready` once Dex can hand it tasks.
"""

from __future__ import annotations

import argparse
import logging
import sys

from dex_agents._remote.runner import RemoteRunner
from dex_agents.session import AgentSessionFlow
from dex_agents.worker import run_worker


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m dex_agents._remote.worker")
    parser.add_argument("--server", required=True, help="the Dex server's address")
    parser.add_argument("--runner-target", required=True, help="the runner service's address")
    parser.add_argument("--flow-type", action="append", required=True)
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr)
    runners = [RemoteRunner(args.runner_target, flow_type) for flow_type in args.flow_type]
    flows = [
        AgentSessionFlow(runner, flow_type=runner.flow_type, options=runner.session_options)
        for runner in runners
    ]
    run_worker(flows, server_address=args.server, on_ready=lambda: print("ready", flush=True))
    return 0


if __name__ == "__main__":
    sys.exit(main())
