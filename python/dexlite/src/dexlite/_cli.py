"""The ``dexlite`` command line: ``dexlite serve`` runs the server in the foreground."""

from __future__ import annotations

import argparse
import faulthandler
import logging
import signal
import sys
from typing import TYPE_CHECKING

from ._options import ServerOptions
from ._server import DexliteServer
from ._storage import StorageError

if TYPE_CHECKING:
    from collections.abc import Sequence


def _parse(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="dexlite", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    serve = sub.add_parser("serve", help="run the server in the foreground")
    defaults = ServerOptions()
    serve.add_argument("--listen", default=defaults.listen, help="HOST:PORT (port 0 = any free)")
    serve.add_argument("--db", default=defaults.db_path, help="SQLite file or :memory:")
    serve.add_argument("--sync", choices=("full", "normal"), default=defaults.sync)
    serve.add_argument("--default-worker-target", default=defaults.default_worker_target)
    serve.add_argument(
        "--default-id-reuse",
        choices=("allow-if-no-running", "disallow"),
        default=defaults.default_id_reuse,
    )
    serve.add_argument("--max-wait", type=float, default=defaults.max_wait_seconds)
    serve.add_argument("--rpc-max-seconds", type=float, default=defaults.rpc_max_seconds)
    serve.add_argument(
        "--default-method-timeout", type=int, default=defaults.default_method_timeout_seconds
    )
    serve.add_argument(
        "--default-heartbeat-timeout", type=int, default=defaults.default_heartbeat_timeout_seconds
    )
    serve.add_argument(
        "--cancel-only-heartbeating",
        action="store_true",
        help="cancel a running Step's call only when it has a heartbeat timeout (Dex Server)",
    )
    serve.add_argument("--worker-slots", type=int, default=defaults.worker_slots)
    serve.add_argument(
        "--pull-dispatch-wait",
        type=float,
        default=defaults.pull_dispatch_wait_seconds,
        help="seconds an RPC waits for a pull Worker (Steps wait in the queue for good)",
    )
    serve.add_argument("--max-value-bytes", type=int, default=defaults.max_value_bytes)
    serve.add_argument(
        "--request-id-window",
        type=float,
        default=defaults.request_id_window_seconds,
        help="seconds a mutating call's response answers replays of its request ID",
    )
    serve.add_argument("--log-level", default="INFO")
    return parser.parse_args(argv)


_STOP_SIGNALS = {signal.SIGINT, signal.SIGTERM}


def main(argv: Sequence[str] | None = None) -> int:
    args = _parse(argv)
    # SIGUSR1 prints every thread's stack: how a test or an operator sees where a
    # server that will not stop is stuck.
    faulthandler.register(signal.SIGUSR1, all_threads=True)
    logging.basicConfig(
        level=args.log_level.upper(), format="%(asctime)s %(levelname)s %(name)s: %(message)s"
    )
    options = ServerOptions(
        listen=args.listen,
        db_path=args.db,
        sync=args.sync,
        default_worker_target=args.default_worker_target,
        default_id_reuse=args.default_id_reuse,
        max_wait_seconds=args.max_wait,
        rpc_max_seconds=args.rpc_max_seconds,
        default_method_timeout_seconds=args.default_method_timeout,
        default_heartbeat_timeout_seconds=args.default_heartbeat_timeout,
        cancel_only_heartbeating=args.cancel_only_heartbeating,
        worker_slots=args.worker_slots,
        pull_dispatch_wait_seconds=args.pull_dispatch_wait,
        max_value_bytes=args.max_value_bytes,
        request_id_window_seconds=args.request_id_window,
    )
    # The stop signals are blocked before any thread starts, so every thread
    # inherits the mask and the main thread alone takes them, in sigwait below.
    # With a Python handler instead, the kernel could deliver SIGTERM to a gRPC
    # or engine thread while the main thread slept in a lock: the handler then
    # never ran, and the server ignored SIGTERM until its parent killed it.
    signal.pthread_sigmask(signal.SIG_BLOCK, _STOP_SIGNALS)
    try:
        server = DexliteServer(options)
        port = server.start()
    except StorageError as error:
        # An operator's problem (a full disk, a read-only file), not a crash to debug.
        print(f"dexlite: {error.detail}", file=sys.stderr, flush=True)
        return 1
    host = args.listen.rsplit(":", 1)[0]
    print(f"dexlite ready on {host}:{port} db={args.db}", flush=True)
    signal.sigwait(_STOP_SIGNALS)
    server.stop()
    print("dexlite stopped", flush=True)
    return 0
