"""The exceptions of dex-agents, under one root: `AgentSessionError`."""

from __future__ import annotations

__all__ = [
    "AgentSessionError",
    "AgentSessionRunError",
    "ClientRequestIdReusedError",
    "SessionAlreadyStartedError",
    "SessionNotFoundError",
    "SessionUnavailableError",
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


class _ClientRequestError(AgentSessionRunError):
    """A run error about one client request ID, which survives pickling with it."""

    def __init__(
        self,
        message: str,
        *,
        session_id: str | None = None,
        client_request_id: str | None = None,
    ) -> None:
        super().__init__(message, session_id=session_id)
        self.client_request_id = client_request_id

    def __reduce__(self) -> tuple[object, ...]:
        return (
            _rebuild_request_error,
            (type(self), str(self), self.session_id, self.client_request_id),
        )


def _rebuild_request_error(
    cls: type[_ClientRequestError],
    message: str,
    session_id: str | None,
    client_request_id: str | None,
) -> _ClientRequestError:
    return cls(message, session_id=session_id, client_request_id=client_request_id)


class ClientRequestIdReusedError(_ClientRequestError):
    """A client request ID the session remembers came back with another request.

    An ID names one logical request: its retries must repeat the same RPC with the
    same input, or the session cannot tell which answer the caller wants.

    Attributes:
        session_id: The session concerned.
        client_request_id: The reused ID.
    """


class SessionUnavailableError(_ClientRequestError):
    """Dex stayed unreachable through every retry of a call.

    The call may or may not have taken effect. Calling the same client method
    again with the same `client_request_id` is safe: the session applies a
    request once.

    Attributes:
        session_id: The session concerned.
        client_request_id: The ID the retries carried; None for a read.
    """


class ValueTooLarge(AgentSessionRunError):
    """A value the session must store exceeds what Dex accepts.

    Its type name is part of the failure-route contract: a recovery error of
    type `ValueTooLarge` whose detail contains `run state of` ends the session.
    """
