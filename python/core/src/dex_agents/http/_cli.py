"""`dex-agents serve`: the HTTP app over a client of one session Flow, run by uvicorn."""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
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


def _runfiles_console() -> Path:
    """Where `bazel run //python/core:dex_agents_serve` finds //typescript/console:static."""
    found = os.environ.get("PYTHON_RUNFILES") or os.environ.get("RUNFILES_DIR")
    runfiles = Path(found) if found else None
    if runfiles is None:
        here = Path(os.path.abspath(__file__))
        runfiles = next((p for p in here.parents if p.name.endswith(".runfiles")), Path.cwd())
    return runfiles / "dex_agents" / "typescript" / "console" / "static"


_BUILT_CONSOLE = Path("<runfiles>")


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="dex-agents")
    commands = parser.add_subparsers(dest="command", required=True)
    serve = commands.add_parser("serve", help="serve SSE, the AI SDK stream and RPCs over HTTP")
    where = serve.add_mutually_exclusive_group(required=True)
    where.add_argument("--dex", help="the Dex server, e.g. 127.0.0.1:7233")
    where.add_argument(
        "--dexlite",
        action="store_true",
        help="run dexlite and a Worker of --flow here, on --data-dir",
    )
    serve.add_argument(
        "--data-dir",
        type=Path,
        default=None,
        help="--dexlite's database and logs (default $XDG_STATE_HOME/dex-agents/serve)",
    )
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
        nargs="?",
        const=_BUILT_CONSOLE,
        metavar="DIR",
        help="serve the web console's built files from DIR at /console/ "
        "(default: //typescript/console:static in `bazel run`'s runfiles)",
    )
    return parser


@contextmanager
def _address(args: argparse.Namespace) -> Iterator[str]:
    """--dex as given, or the dexlite --dexlite runs for the lifetime of the block."""
    if not args.dexlite:
        yield args.dex
        return
    from dex_agents.http._embedded import default_serve_dir, embedded_dex  # noqa: PLC0415

    with embedded_dex(args.data_dir or default_serve_dir(), args.flow) as address:
        yield address


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
    console = _runfiles_console() if args.console == _BUILT_CONSOLE else args.console
    if console is not None and not (console / "index.html").is_file():
        raise SystemExit(
            f"--console {console} has no index.html "
            "(build it: bazel build //typescript/console:static)"
        )
    with _address(args) as address, AgentSessionClient(flow, server_address=address) as client:
        app = create_app(client, limits=limits)
        where = f"http://{args.host}:{args.port}"
        if console is not None:
            mount_console(app, static_dir=console, dex_address=address)
            where += f" (console: {where}{CONSOLE_PATH}/)"
        print(f"serving on {where}", file=sys.stderr, flush=True)
        uvicorn.run(app, host=args.host, port=args.port, log_level="warning")
    return 0


if __name__ == "__main__":
    sys.exit(main())
