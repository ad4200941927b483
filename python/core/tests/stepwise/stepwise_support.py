"""Shared doubles for the Stepwise tests (imported by module name; pytest puts this
directory on `sys.path`): the core's `FakeSession`, typed for a `StepwiseRunner`.
"""

from __future__ import annotations

from dataclasses import dataclass

from dex_agents import runner
from dex_agents.runner import run_sync as run
from dex_agents.stepwise import StepwiseRunner

__all__ = ["FakeSession", "run"]


@dataclass
class FakeSession(runner.FakeSession[StepwiseRunner]):
    """Drives whole Stepwise turns without Dex."""
