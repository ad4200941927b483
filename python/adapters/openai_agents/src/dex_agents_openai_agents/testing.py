"""Test doubles for an `OpenAiAgentsRunner` without Dex or a model key.

`RespondingModel` answers every model call through the SDK's own
`agents.testing.ScriptedModel`, with a responder that decides from the call
(its input items) rather than from a script position, so a model call that a
retried Step repeats gets the same answer, on any Worker. `FakeSession` is the
core's in-memory session typed for this runner: it drives whole turns with no
Dex server (integration tests against dexlite cover Steps, retries and
approvals).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import dex_agents.offline
from agents import Model, ModelResponse
from agents.items import TResponseStreamEvent
from agents.testing import ModelCall, ModelStep, ScriptedModel
from agents.testing.model import ModelResponder
from dex_agents.offline import RecordingEventWriter
from dex_agents.offline import run_sync as run

from dex_agents_openai_agents._runner import OpenAiAgentsRunner

__all__ = ["FakeSession", "ModelCall", "RecordingEventWriter", "RespondingModel", "run"]


class RespondingModel(Model):
    """A model whose every call (plain or streamed) is answered by `responder`.

    `responder` gets the SDK's `ModelCall` and returns what a `ModelStep` takes:
    a list of output items (`agents.testing.assistant_message`, `function_call`),
    a `ModelResponse` (to set usage), or an exception to raise. `calls` counts the
    calls this model object answered.
    """

    def __init__(self, responder: ModelResponder, *, model: str = "responding-model") -> None:
        self.responder = responder
        self.model = model
        self.calls = 0

    def _one_call(self) -> ScriptedModel:
        self.calls += 1
        return ScriptedModel([ModelStep.respond(self.responder)])

    async def get_response(self, *args: Any, **kwargs: Any) -> ModelResponse:
        return await self._one_call().get_response(*args, **kwargs)

    def stream_response(self, *args: Any, **kwargs: Any) -> AsyncIterator[TResponseStreamEvent]:
        return self._one_call().stream_response(*args, **kwargs)


@dataclass
class FakeSession(dex_agents.offline.FakeSession[OpenAiAgentsRunner[Any]]):
    """The core's `FakeSession`, typed for an `OpenAiAgentsRunner`."""
