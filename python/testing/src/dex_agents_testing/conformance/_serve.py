"""The Worker side of an app factory module: `python app.py --server ADDR --flow-type T
--log PATH [--interrupt-deadline S] [--factory NAME] [--flow FLOW]` serves the Flow and
prints `ready`."""

from __future__ import annotations

import argparse
import logging
import sys
from collections.abc import Callable
from typing import Any

from dex_agents import AgentSessionFlow, run_worker

from dex_agents_testing.conformance._flows import build_app_flow

__all__ = ["app_parser", "serve", "serve_app_flow"]


def app_parser() -> argparse.ArgumentParser:
    """The arguments `WorkerApp` starts an app module with; a wrapper adds its own."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--server", required=True)
    parser.add_argument("--flow-type", required=True)
    parser.add_argument("--log", required=True)
    parser.add_argument("--interrupt-deadline", type=float, default=None)
    parser.add_argument("--factory", default="build_flow")
    parser.add_argument("--flow", default=None, help="a case's flow (FLOWS), for build_flow")
    return parser


def serve_app_flow(
    module: Any,
    args: argparse.Namespace,
    prepare: Callable[[AgentSessionFlow], None] | None = None,
) -> int:
    """Builds `module`'s Flow from parsed `app_parser` arguments, lets `prepare` wrap it,
    and serves it on a Worker until it is stopped."""
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr)
    flow = build_app_flow(
        module, args.factory, args.flow_type, args.log, args.interrupt_deadline, flow=args.flow
    )
    if prepare is not None:
        prepare(flow)
    run_worker([flow], server_address=args.server, on_ready=lambda: print("ready", flush=True))
    return 0


def serve(module: Any, argv: list[str] | None = None) -> int:
    """Runs `module`'s Flow factory (`build_flow`, or `--factory NAME`, with `--flow`'s
    options) on a Worker."""
    return serve_app_flow(module, app_parser().parse_args(argv))
