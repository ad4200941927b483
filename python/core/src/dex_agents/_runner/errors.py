"""The errors a runner raises to end its turn at once, without the Step's retries.

Stored data that is not the runner's to read (another adapter's, a layout this
build does not know, or corrupt), or a reason of the framework's own, would fail
every retry the same way. RunModel ends the turn when `run_model_step` raises one
of them (`turn_error_of`), for every runner: in process, or remote, where the
runner service reports the class by name.
"""

from __future__ import annotations

from dex_agents.errors import AgentSessionError

__all__ = [
    "TURN_ENDING_ERRORS",
    "TURN_ENDING_ERRORS_BY_NAME",
    "FrameworkItemError",
    "RunStateError",
    "TurnFailed",
    "turn_error_of",
]


class RunStateError(AgentSessionError, ValueError):
    """The turn's `framework_run_state` cannot be read, or does not fit its tool call records."""


class FrameworkItemError(AgentSessionError, ValueError):
    """A stored message's `framework_item` is not an item of this runner's framework."""


class TurnFailed(Exception):
    """The runner ends the turn as failed, with this text, without a retry.

    For a reason of the framework's own that a retry would meet again (a
    guardrail tripped, the framework refused its stored state).
    """


TURN_ENDING_ERRORS = (RunStateError, FrameworkItemError, TurnFailed)
TURN_ENDING_ERRORS_BY_NAME: dict[str, type[Exception]] = {e.__name__: e for e in TURN_ENDING_ERRORS}
"""The name a runner service reports each by (TypeScript's `Error.name`)."""


def turn_error_of(error: RunStateError | FrameworkItemError | TurnFailed) -> str:
    """The `last_turn_error` a turn-ending error ends its turn with."""
    if isinstance(error, RunStateError):
        return f"cannot resume the turn: {error}"
    if isinstance(error, FrameworkItemError):
        return f"cannot read the stored conversation: {error}"
    return str(error)
