"""`dex-agents serve --dexlite`: the app over a dexlite child and a Worker child of
the served Flow, as `dex-agents chat --dexlite` runs them (dex_agents.chat._embedded),
so one command shows the web console on a laptop."""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

__all__ = ["default_serve_dir", "embedded_dex"]

# How often a dead Worker is noticed and restarted.
_WORKER_CHECK_SECONDS = 1.0


def default_serve_dir() -> Path:
    state = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(state) / "dex-agents" / "serve"


@contextmanager
def embedded_dex(data_dir: Path, flow_spec: str) -> Iterator[str]:
    """The address of a dexlite on `data_dir` with a Worker of `flow_spec`, restarted
    whenever it dies, until the block ends; SystemExit in words when either cannot start."""
    from dex_agents.chat._embedded import EmbeddedDex  # noqa: PLC0415 - only for --dexlite
    from dex_agents.chat._errors import ChatError  # noqa: PLC0415

    embedded = EmbeddedDex(data_dir, flow_spec)
    try:
        address = embedded.start()
    except ChatError as error:
        embedded.stop()
        raise SystemExit(str(error)) from None
    stopped = threading.Event()

    def keep_worker() -> None:
        while not stopped.wait(_WORKER_CHECK_SECONDS):
            for line in embedded.check_worker():
                print(line.text, file=sys.stderr, flush=True)

    keeper = threading.Thread(target=keep_worker, name="dex-agents-serve-worker", daemon=True)
    keeper.start()
    print(
        f"dexlite on {address} ({data_dir}), Worker pid {embedded.worker_pid}",
        file=sys.stderr,
        flush=True,
    )
    try:
        yield address
    finally:
        stopped.set()
        keeper.join(5)
        embedded.stop()
