"""`dex-agents chat` and `dex-agents inspect`: argument handling and the one error path."""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from rich.console import Console

from dex_agents.chat._agent_spec import load_agent
from dex_agents.chat._errors import ChatError, describe_error
from dex_agents.chat._state import ChatState, Output
from dex_agents.client import AgentSessionClient
from dex_agents.errors import UserError

__all__ = ["main"]

DEMO_AGENT = "dex_agents.chat.demo_agent:flow"


def _where(parser: argparse.ArgumentParser) -> None:
    where = parser.add_mutually_exclusive_group()
    where.add_argument("--dex", metavar="HOST:PORT", help="a running Dex server or dexlite")
    where.add_argument(
        "--dexlite",
        action="store_true",
        help="run dexlite in this process (the default) and a Worker for --agent",
    )
    parser.add_argument(
        "--agent",
        default=DEMO_AGENT,
        help=f"module:name of the AgentSessionFlow or a factory of one (default {DEMO_AGENT})",
    )
    parser.add_argument(
        "--data-dir",
        type=Path,
        default=None,
        help="--dexlite's database directory (default $XDG_STATE_HOME/dex-agents/chat)",
    )


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="dex-agents")
    commands = parser.add_subparsers(dest="command", required=True)
    chat = commands.add_parser("chat", help="talk to an agent session in the terminal")
    _where(chat)
    chat.add_argument("--session", help="attach to this session (default: start a new one)")
    inspect = commands.add_parser("inspect", help="a session's Step timeline and state")
    inspect.add_argument("session", help="the session ID (the Flow ID)")
    _where(inspect)
    inspect.add_argument(
        "--snapshot-timeout",
        type=float,
        default=15.0,
        help="seconds to wait for a Worker to answer the snapshot RPC",
    )
    return parser


@contextmanager
def _dex(args: argparse.Namespace, console: Console) -> Iterator[tuple[str, object]]:
    """The server address, and the embedded dexlite when this process runs one."""
    if args.dex:
        yield args.dex, None
        return
    from dex_agents.chat._embedded import EmbeddedDex, default_data_dir  # noqa: PLC0415

    data_dir = args.data_dir or default_data_dir()
    embedded = EmbeddedDex(data_dir, args.agent)
    try:
        with console.status(f"starting dexlite in {data_dir} and a Worker for {args.agent}"):
            address = embedded.start()
        console.print(
            f"[dim]dexlite on {address} ({data_dir}), Worker pid {embedded.worker_pid}[/dim]"
        )
        yield address, embedded
    finally:
        embedded.stop()


def _inspect(args: argparse.Namespace, console: Console) -> int:
    from dex_agents.chat._inspect import read_report  # noqa: PLC0415
    from dex_agents.chat._render_report import report_renderables  # noqa: PLC0415

    flow = load_agent(args.agent)
    with (
        _dex(args, console) as (address, _),
        AgentSessionClient(flow, server_address=address) as client,
    ):
        report = read_report(client, address, args.session, snapshot_timeout=args.snapshot_timeout)
        for renderable in report_renderables(report):
            console.print(renderable)
    return 0


def _chat(args: argparse.Namespace, console: Console) -> int:
    from dex_agents.chat._app import run_loop  # noqa: PLC0415
    from dex_agents.chat._controller import ChatController  # noqa: PLC0415
    from dex_agents.chat._session import ChatSession  # noqa: PLC0415

    flow = load_agent(args.agent)
    with (
        _dex(args, console) as (address, embedded),
        AgentSessionClient(flow, server_address=address) as client,
    ):
        session = ChatSession(client, address)
        state = ChatState()
        try:
            if args.session:
                snapshot = session.attach(args.session)
                state.session_id = args.session
                lines = state.attach(snapshot)
                console.print(f"[bold]attached to session {args.session}[/bold]")
            else:
                state.session_id = session.start_new()
                lines = []
                console.print(f"[bold]session {state.session_id}[/bold] started")
            resume = "--dex " + address if args.dex else "--dexlite"
            console.print(
                f"[dim]resume it with: dex-agents chat {resume} --agent {args.agent} "
                f"--session {state.session_id}    (/help for commands)[/dim]"
            )
            for line in lines:
                console.print(line.text, style=line.style, highlight=False)

            def inspect() -> list[Output]:
                from dex_agents.chat._inspect import read_report  # noqa: PLC0415
                from dex_agents.chat._render_report import timeline_table  # noqa: PLC0415

                try:
                    report = read_report(client, address, state.session_id, snapshot_timeout=5)
                except ChatError as error:
                    return [Output(str(error), "red")]
                console.print(timeline_table(report.timeline))
                return []

            from dex_agents.chat._controller import ChatController as _C  # noqa: PLC0415

            controller: _C = ChatController(state, session, inspect=inspect)
            tick = embedded.check_worker if embedded is not None else None  # type: ignore[attr-defined]
            run_loop(console, controller, session.reports, input_fd=sys.stdin.fileno(), tick=tick)
        finally:
            session.close()
    console.print(f"left session {state.session_id}; it goes on without this terminal")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    console = Console(highlight=False)
    try:
        if args.command == "inspect":
            return _inspect(args, console)
        return _chat(args, console)
    except (ChatError, UserError) as error:
        console.print(f"[bold red]dex-agents {args.command}:[/bold red] {error}", highlight=False)
        return 1
    except KeyboardInterrupt:
        return 130
    except Exception as error:  # a user sees one line, never a traceback
        console.print(
            f"[bold red]dex-agents {args.command}:[/bold red] {describe_error(error)}",
            highlight=False,
        )
        return 1


if __name__ == "__main__":
    time.monotonic()
    sys.exit(main())
