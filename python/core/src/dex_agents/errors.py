"""The exceptions of dex-agents, under one root: `AgentSessionError`."""

from __future__ import annotations

__all__ = [
    "AgentSessionError",
    "AgentSessionRunError",
    "SessionAlreadyStartedError",
    "SessionNotFoundError",
    "UserError",
    "ValueTooLarge",
]


class AgentSessionError(Exception):
    """Root of every error dex-agents raises."""


class UserError(AgentSessionError):
    """A caller mistake found at configuration time (bad options, bad runner)."""


class AgentSessionRunError(AgentSessionError):
    """A failure while a session runs or is called.

    Attributes:
        session_id: The session (Flow ID) concerned, when known.
    """

    def __init__(self, message: str, *, session_id: str | None = None) -> None:
        super().__init__(message)
        self.session_id = session_id

    def __reduce__(self) -> tuple[object, ...]:
        return (_rebuild_run_error, (type(self), str(self), self.session_id))


def _rebuild_run_error(
    cls: type[AgentSessionRunError], message: str, session_id: str | None
) -> AgentSessionRunError:
    return cls(message, session_id=session_id)


class SessionNotFoundError(AgentSessionRunError):
    """No session with this ID exists, or it has closed."""


class SessionAlreadyStartedError(AgentSessionRunError):
    """A session with this ID is already running."""


class ValueTooLarge(AgentSessionRunError):
    """A value the session must store exceeds what Dex accepts.

    Its type name is part of the failure-route contract: a recovery error of
    type `ValueTooLarge` whose detail contains `run state of` ends the session.
    """
