"""`dex-agents serve`: the HTTP app over a client of one session Flow, run by uvicorn."""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence
from pathlib import Path

import uvicorn

from dex_agents.client import AgentSessionClient
from dex_agents.http._app import create_app
from dex_agents.http._console import CONSOLE_PATH, mount_console
from dex_agents.http._limits import HttpLimits
from dex_agents.session import AgentSessionFlow

__all__ = ["main"]


def _load_flow(spec: str) -> AgentSessionFlow:
    """`module:name`, an AgentSessionFlow or a function of no arguments returning one."""
    module_name, _, attribute = spec.partition(":")
    if not module_name or not attribute:
        raise SystemExit(f"--flow {spec!r} must be 'module:name'")
    try:
        found: object = getattr(importlib.import_module(module_name), attribute)
    except (ImportError, AttributeError) as error:
        raise SystemExit(f"--flow {spec!r} could not be loaded: {error}") from None
    if callable(found) and not isinstance(found, AgentSessionFlow):
        found = found()
    if not isinstance(found, AgentSessionFlow):
        raise SystemExit(f"--flow {spec!r} is {type(found).__name__}, not an AgentSessionFlow")
    return found


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="dex-agents")
    commands = parser.add_subparsers(dest="command", required=True)
    serve = commands.add_parser("serve", help="serve SSE, the AI SDK stream and RPCs over HTTP")
    serve.add_argument("--dex", required=True, help="the Dex server, e.g. 127.0.0.1:7233")
    serve.add_argument(
        "--flow", required=True, help="module:name of the AgentSessionFlow (or a factory)"
    )
    serve.add_argument("--host", default="127.0.0.1")
    serve.add_argument("--port", type=int, default=8000)
    serve.add_argument("--max-streams", type=int, default=HttpLimits.max_streams)
    serve.add_argument("--queue-size", type=int, default=HttpLimits.queue_size)
    serve.add_argument("--idle-timeout", type=float, default=HttpLimits.idle_timeout_seconds)
    serve.add_argument(
        "--console",
        type=Path,
        metavar="DIR",
        help="serve the web console's built files from DIR at /console/ (//typescript/console)",
    )
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        limits = HttpLimits(
            max_streams=args.max_streams,
            queue_size=args.queue_size,
            idle_timeout_seconds=args.idle_timeout,
        )
    except ValueError as error:
        raise SystemExit(str(error)) from None
    flow = _load_flow(args.flow)
    with AgentSessionClient(flow, server_address=args.dex) as client:
        app = create_app(client, limits=limits)
        where = f"http://{args.host}:{args.port}"
        if args.console is not None:
            try:
                mount_console(app, static_dir=args.console, dex_address=args.dex)
            except ValueError as error:
                raise SystemExit(str(error)) from None
            where += f" (console: {where}{CONSOLE_PATH}/)"
        print(f"serving on {where}", file=sys.stderr, flush=True)
        uvicorn.run(app, host=args.host, port=args.port, log_level="warning")
    return 0


if __name__ == "__main__":
    sys.exit(main())
