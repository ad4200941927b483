"""Worker child processes for the integration tests: `pai_app.py` on `WorkerApp`.

`App` is dex_agents_testing's `WorkerApp` with this suite's application module
(`pai_app.py`) as the default script.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from pathlib import Path

from dex_agents_testing import WorkerApp, load_app

__all__ = ["APP", "App", "load_app"]

APP = Path(__file__).resolve().parent / "pai_app.py"


@dataclass
class App(WorkerApp):
    """A `WorkerApp` running `pai_app.py` unless told otherwise."""

    script: Path = APP
    flow_type: str = field(default_factory=lambda: f"Pai{uuid.uuid4().hex[:10]}")
