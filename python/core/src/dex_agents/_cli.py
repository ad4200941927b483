"""The `dex-agents` command: `serve` (dex_agents.http), `chat` and `inspect` (dex_agents.chat).

Each subcommand imports its own extra only when it runs, so `dex-agents chat` works
without the http extra and `dex-agents serve` without rich.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

__all__ = ["main"]

_USAGE = """usage: dex-agents {serve,chat,inspect} ...

  serve    serve SSE, the AI SDK stream and RPCs over HTTP (dex-agents[http])
  chat     talk to an agent session in the terminal (dex-agents[chat])
  inspect  a session's Step timeline, messages, interrupts, plan and usage (dex-agents[chat])

`dex-agents COMMAND --help` describes each command."""


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    command = args[0] if args else ""
    if command == "serve":
        from dex_agents.http._cli import main as serve  # noqa: PLC0415 - the http extra

        return serve(args)
    if command in ("chat", "inspect"):
        try:
            from dex_agents.chat._cli import main as chat  # noqa: PLC0415 - the chat extra
        except ImportError as error:
            print(
                f"dex-agents {command} needs rich: pip install 'dex-agents[chat]' ({error})",
                file=sys.stderr,
            )
            return 2
        return chat(args)
    print(_USAGE, file=sys.stderr if command not in ("-h", "--help") else sys.stdout)
    return 0 if command in ("-h", "--help") else 2


if __name__ == "__main__":
    sys.exit(main())
