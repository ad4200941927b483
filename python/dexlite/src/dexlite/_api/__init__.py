"""FlowService operations: request validation, then engine state changes.

One module per group of calls; ``FlowOps`` joins them for the servicer.
"""

from __future__ import annotations

from .channels import ChannelCalls
from .flows import FlowCalls
from .history import HistoryCalls
from .rpcs import RpcCalls
from .timers import TimerCalls

__all__ = ["FlowOps"]


class FlowOps(FlowCalls, RpcCalls, TimerCalls, ChannelCalls, HistoryCalls):
    """One method per FlowService call; the servicer stays a thin adapter."""
