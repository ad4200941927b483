"""What every route of one app shares: the client, the bounds and the reader threads."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import TypeVar

from dex_agents.client import AgentSessionClient
from dex_agents.http._limits import HttpLimits, StreamSlots

__all__ = ["AppContext"]

T = TypeVar("T")

# Threads beyond one per stream: RPCs, snapshots and reads of closed streams finishing.
_SPARE_THREADS = 16


@dataclass
class AppContext:
    client: AgentSessionClient
    limits: HttpLimits
    slots: StreamSlots = field(init=False)
    executor: ThreadPoolExecutor = field(init=False)

    def __post_init__(self) -> None:
        self.slots = StreamSlots(self.limits.max_streams)
        self.executor = ThreadPoolExecutor(
            max_workers=self.limits.max_streams + _SPARE_THREADS,
            thread_name_prefix="dex-agents-http",
        )

    async def blocking(self, call: Callable[[], T]) -> T:
        """Runs a Client call on the app's threads, so the event loop keeps serving."""
        return await asyncio.get_running_loop().run_in_executor(self.executor, call)

    def close(self) -> None:
        self.executor.shutdown(wait=False, cancel_futures=True)
