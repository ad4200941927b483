"""Test doubles for a `PydanticAiRunner` without Dex: a recording event writer and
an in-memory session.

`FakeSession` does the session Flow's bookkeeping around the runner (stores the
user message and returned messages, keeps the run state, records tool calls and
their final status), so a test drives whole turns of an application's agent, with
Pydantic AI's `FunctionModel` or `TestModel`, and no Dex server. It does not run
Steps, retries or approvals: integration tests against dexlite cover those.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import dex_agents.offline
from dex_agents.offline import RecordingEventWriter
from dex_agents.offline import run_sync as run

from dex_agents_pydantic_ai._runner import PydanticAiRunner

__all__ = ["FakeSession", "RecordingEventWriter", "run"]


@dataclass
class FakeSession(dex_agents.offline.FakeSession[PydanticAiRunner[Any]]):
    """The core's `FakeSession`, typed for a `PydanticAiRunner`."""
