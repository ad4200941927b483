"""Assembles storage, engine, transports and gRPC services into one server."""

from __future__ import annotations

import logging
import threading
from concurrent.futures import ThreadPoolExecutor

import grpc
from dex.dexpb import dex_pb2_grpc

from ._api import FlowOps
from ._engine import Engine
from ._listening import ListeningTransport
from ._options import ServerOptions
from ._pull import PullHub
from ._service import FlowService, WorkerTaskService
from ._storage import STREAM_SCHEMA, Database, stream_db_path
from ._streams import StreamStore

_LOGGER = logging.getLogger(__name__)
_MAX_MESSAGE_BYTES = 16 * 1024 * 1024


class DexliteServer:
    """A running dexlite instance; ``start`` returns once the port is bound and serving."""

    def __init__(self, options: ServerOptions) -> None:
        self.options = options
        self._db = Database(options.db_path, options.sync)
        changed = threading.Condition(self._db.lock)
        self._streams = StreamStore(
            Database(stream_db_path(options.db_path), "normal", schema=STREAM_SCHEMA)
        )
        self._streams.adopt_legacy(self._db)
        self._listening = ListeningTransport(slots_per_target=options.worker_slots)
        self._hub = PullHub(dispatch_wait_seconds=options.pull_dispatch_wait_seconds)
        self.engine = Engine(
            db=self._db,
            options=options,
            streams=self._streams,
            listening=self._listening,
            pull=self._hub,
            changed=changed,
        )
        # Every open pull stream and long poll holds a thread, hence the large pool.
        self._grpc = grpc.server(
            ThreadPoolExecutor(max_workers=512, thread_name_prefix="dexlite-rpc"),
            options=[
                ("grpc.max_receive_message_length", _MAX_MESSAGE_BYTES),
                ("grpc.max_send_message_length", _MAX_MESSAGE_BYTES),
                ("grpc.so_reuseport", 0),
            ],
        )
        dex_pb2_grpc.add_FlowServiceServicer_to_server(
            FlowService(FlowOps(self.engine.state)), self._grpc
        )
        dex_pb2_grpc.add_WorkerTaskServiceServicer_to_server(
            WorkerTaskService(self._hub), self._grpc
        )
        self.port = 0

    def start(self) -> int:
        """Binds, recovers persisted work and starts serving; returns the bound port."""
        self.port = self._grpc.add_insecure_port(self.options.listen)
        if self.port == 0:
            raise OSError(f"cannot listen on {self.options.listen}")
        self.engine.start()
        self._grpc.start()
        return self.port

    def stop(self, grace: float = 2.0) -> None:
        """Stops accepting calls, ends pull streams and closes the database."""
        self._hub.close()
        stopped = self._grpc.stop(grace)
        self.engine.stop()
        stopped.wait(grace + 1)
        self._listening.close()
        self._streams.close()
        self._db.close()

    def wait(self) -> None:
        self._grpc.wait_for_termination()
