"""Shared doubles for the Stepwise tests (imported by module name; pytest puts this
directory on `sys.path`): the core's `FakeSession`, typed for a `StepwiseRunner`.
"""

from __future__ import annotations

from dataclasses import dataclass

import dex_agents.offline
from dex_agents.offline import run_sync as run
from dex_agents.stepwise import StepwiseRunner

__all__ = ["FakeSession", "run"]


@dataclass
class FakeSession(dex_agents.offline.FakeSession[StepwiseRunner]):
    """Drives whole Stepwise turns without Dex."""
