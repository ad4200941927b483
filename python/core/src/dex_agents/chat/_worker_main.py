"""The Worker process `dex-agents chat --dexlite` runs for `--agent module:name`.

`python -m dex_agents.chat._worker_main --server ADDRESS --agent module:name` prints
`ready` once Dex can hand it tasks, and exits when its standard input closes (the
chat that started it went away, however it died).
"""

from __future__ import annotations

import argparse
import logging
import os
import signal
import sys
import threading

from dex_agents.chat._agent_spec import load_agent
from dex_agents.errors import UserError
from dex_agents.worker import run_worker


def _exit_with_parent() -> None:
    sys.stdin.buffer.read()  # returns at end of file: the parent closed the pipe or died
    os.kill(os.getpid(), signal.SIGKILL)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="dex_agents.chat._worker_main")
    parser.add_argument("--server", required=True)
    parser.add_argument("--agent", required=True)
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr)
    try:
        flow = load_agent(args.agent)
    except UserError as error:
        print(f"error {error}", flush=True)
        return 2
    threading.Thread(target=_exit_with_parent, name="parent-watch", daemon=True).start()

    def ready() -> None:
        print("ready", flush=True)

    run_worker([flow], server_address=args.server, on_ready=ready)
    return 0


if __name__ == "__main__":
    sys.exit(main())
