"""Server configuration."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from ._storage import SyncMode

IdReuseDefault = Literal["allow-if-no-running", "disallow"]


@dataclass(frozen=True, kw_only=True)
class ServerOptions:
    """Settings of one dexlite server; every default is documented in the README."""

    listen: str = "127.0.0.1:8801"
    """gRPC listen address (plaintext)."""
    db_path: str = "dexlite.sqlite"
    """SQLite file, or ``:memory:`` for a throwaway server."""
    sync: SyncMode = "full"
    """SQLite ``synchronous`` level (WAL mode either way)."""
    default_worker_target: str = "localhost:8803"
    """Used when StartFlow carries no worker target (the SDK's default bind)."""
    default_id_reuse: IdReuseDefault = "allow-if-no-running"
    """Meaning of ``ID_REUSE_POLICY_UNSPECIFIED`` when only closed runs exist."""
    max_wait_seconds: float = 300.0
    """Cap of every long poll (WaitForFlow, ReadStream, history, step/attribute waits)."""
    rpc_max_seconds: float = 60.0
    """Cap of one RPC, including time queued for a worker slot."""
    default_method_timeout_seconds: int = 2 * 3600
    """Method timeout when StepOptions leaves it at 0."""
    default_heartbeat_timeout_seconds: int = 0
    """Heartbeat timeout when StepOptions leaves it at 0; 0 disables it."""
    cancel_only_heartbeating: bool = False
    """Dex Server fidelity: cancelling a running Step aborts its Worker call only when
    the method has a heartbeat timeout; otherwise the call runs to its end and its
    result is discarded. Off by default, so a cancelled call stops at once."""
    worker_slots: int = 2
    """In-flight WorkerService calls per listening worker address."""
    max_value_bytes: int = 2 * 1024 * 1024
    """Largest single Value accepted from clients or workers."""
    pull_dispatch_wait_seconds: float = 10.0
    """How long an RPC waits for a pull Worker to accept it before it fails with
    ``NO_WORKER_AVAILABLE``. Steps never give up: they wait in the queue, without
    spending an attempt, until a Worker takes them."""
    request_id_window_seconds: float = 24 * 3600.0
    """How long the response of a mutating call is kept for a replay with its request
    ID (InvokeRPC, SetAttributes, DeleteChannelMessage; README "Replays")."""
