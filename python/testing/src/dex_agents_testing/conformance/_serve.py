"""The Worker side of an app factory module: `python app.py --server ADDR --flow-type T
--log PATH [--interrupt-deadline S] [--factory NAME]` serves the Flow and prints `ready`."""

from __future__ import annotations

import argparse
import logging
import sys
from collections.abc import Callable
from typing import Any

from dex_agents import run_worker

__all__ = ["serve"]


def serve(module: Any, argv: list[str] | None = None) -> int:
    """Runs `module`'s Flow factory (`build_flow`, or `--factory NAME`) on a Worker."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--server", required=True)
    parser.add_argument("--flow-type", required=True)
    parser.add_argument("--log", required=True)
    parser.add_argument("--interrupt-deadline", type=float, default=None)
    parser.add_argument("--factory", default="build_flow")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr)
    build: Callable[..., Any] = getattr(module, args.factory)
    flow = build(args.flow_type, args.log, args.interrupt_deadline)
    run_worker([flow], server_address=args.server, on_ready=lambda: print("ready", flush=True))
    return 0
