"""Worker child process: `python -m dex_agents_testing.worker_main --server A --scenario P`.

Prints `ready` on stdout once Dex can hand it tasks.
"""

from __future__ import annotations

import argparse
import logging
import sys

from dex_agents import run_worker

from dex_agents_testing.scenario import load_flow


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="dex_agents_testing.worker_main")
    parser.add_argument("--server", required=True)
    parser.add_argument("--scenario", action="append", required=True)
    parser.add_argument("--listen", default=None)
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr)
    flows = [load_flow(path) for path in args.scenario]

    def ready() -> None:
        print("ready", flush=True)

    run_worker(flows, server_address=args.server, listen=args.listen, on_ready=ready)
    return 0


if __name__ == "__main__":
    sys.exit(main())
