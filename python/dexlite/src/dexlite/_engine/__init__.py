"""The Step state machine: shared state below, then one module per concern.

Imports run one way, each module using only those listed before it:
``state`` -> ``rows``, ``writes``, ``requests`` -> ``locks`` -> ``queue`` ->
``cancellation`` -> ``waits`` -> ``results``, ``failures`` -> ``dispatch``,
``restart`` -> ``lifecycle``.
"""

from __future__ import annotations

from .lifecycle import Engine
from .state import EngineState

__all__ = ["Engine", "EngineState"]
