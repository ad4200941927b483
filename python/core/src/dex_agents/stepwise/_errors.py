"""Errors of the Stepwise loop; `RunStateError` is the one every runner raises."""

from __future__ import annotations

from dex_agents._runner.errors import RunStateError
from dex_agents.errors import AgentSessionError

__all__ = ["InvalidModelResponseError", "RunStateError", "StepwiseError"]


class StepwiseError(AgentSessionError):
    """Root of the errors the Stepwise loop raises."""


class InvalidModelResponseError(StepwiseError, ValueError):
    """The model's response breaks a rule the session relies on.

    Raised from `run_model_step`, so the RunModel attempt fails and a retry asks the
    model again; the turn fails once the attempts run out.

    Attributes:
        tool_call_id: The offending tool call's ID.
        tool_name: The offending tool call's name.
    """

    def __init__(self, message: str, *, tool_call_id: str, tool_name: str) -> None:
        super().__init__(message)
        self.tool_call_id = tool_call_id
        self.tool_name = tool_name

    def __reduce__(self) -> tuple[object, ...]:
        return (
            _rebuild_invalid_response,
            (str(self), self.tool_call_id, self.tool_name),
        )


def _rebuild_invalid_response(
    message: str, tool_call_id: str, tool_name: str
) -> InvalidModelResponseError:
    return InvalidModelResponseError(message, tool_call_id=tool_call_id, tool_name=tool_name)
