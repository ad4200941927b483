"""Heartbeats on a timer while a runner's model call or tool call runs.

Dex fails a Step attempt after two minutes without a heartbeat, and a framework
knows nothing of Dex, so every runner beats for it while the framework works.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator

from dex_agents._runner.values import Heartbeat

__all__ = ["DEFAULT_HEARTBEAT_INTERVAL_SECONDS", "heartbeats"]

DEFAULT_HEARTBEAT_INTERVAL_SECONDS = 30.0
"""A quarter of the two minutes Dex waits, so one late beat does not fail the Step."""

_logger = logging.getLogger(__name__)


@contextlib.asynccontextmanager
async def heartbeats(heartbeat: Heartbeat, interval: float) -> AsyncIterator[None]:
    """Heartbeats every `interval` seconds while the body runs.

    A failed heartbeat only stops the heartbeats: the call itself decides the Step.
    """

    async def beat() -> None:
        while True:
            await asyncio.sleep(interval)
            try:
                await heartbeat()
            except Exception:
                _logger.warning("heartbeat failed; no more heartbeats this call", exc_info=True)
                return

    task = asyncio.create_task(beat())
    try:
        yield
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
