"""Worker child processes for the integration tests: `claude_app.py` on `WorkerApp`."""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from pathlib import Path

from dex_agents_testing import WorkerApp

__all__ = ["APP", "App"]

APP = Path(__file__).resolve().parent / "claude_app.py"


@dataclass
class App(WorkerApp):
    """A `WorkerApp` running `claude_app.py` unless told otherwise."""

    script: Path = APP
    flow_type: str = field(default_factory=lambda: f"Claude{uuid.uuid4().hex[:10]}")
