"""The engine as the server sees it: built over shared state, started, stopped.

The Step state machine lives in the modules beside this one, each a
set of functions over :class:`EngineState`; this class only wires them and runs
the maintenance thread.
"""

from __future__ import annotations

import logging
import threading
from typing import TYPE_CHECKING

from . import waits
from .dispatch import Dispatcher, check_liveness
from .restart import recover
from .state import EngineState

if TYPE_CHECKING:
    from dexlite._calls import Transport
    from dexlite._options import ServerOptions
    from dexlite._storage import Database
    from dexlite._streams import StreamStore

_LOGGER = logging.getLogger(__name__)


class Engine:
    """Owns runs and step executions; FlowOps reaches them through ``state``."""

    def __init__(
        self,
        *,
        db: Database,
        options: ServerOptions,
        streams: StreamStore,
        listening: Transport,
        pull: Transport,
        changed: threading.Condition,
    ) -> None:
        self.state = EngineState(
            db=db,
            options=options,
            changed=changed,
            streams=streams,
            listening=listening,
            pull=pull,
        )
        self._dispatcher = Dispatcher(self.state)
        self.state.pump = self._dispatcher.pump
        self._maintenance = threading.Thread(
            target=self._maintain, name="dexlite-maintenance", daemon=True
        )

    def start(self) -> None:
        """Recovers in-flight work from the database, then starts background work."""
        with self.state.tx() as conn:
            recover(self.state, conn)
        self._maintenance.start()

    def stop(self) -> None:
        state = self.state
        state.stopping.set()
        with state.db.lock:
            handles = [i.handle for i in (*state.inflight.values(), *state.dropped.values())]
        for handle in handles:
            handle.cancel("shutdown")
        if self._maintenance.is_alive():
            self._maintenance.join(timeout=5)
        self._dispatcher.shutdown()

    def _maintain(self) -> None:
        while not self.state.stopping.wait(0.05):
            try:
                waits.fire_due(self.state)
                check_liveness(self.state)
            except Exception:
                _LOGGER.exception("maintenance pass failed")
