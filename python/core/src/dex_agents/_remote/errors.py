"""The errors a remote runner call raises; each names the runner, the method and the attempt."""

from __future__ import annotations

from typing import Any

from dex_agents.errors import AgentSessionRunError

__all__ = ["RemoteRunnerError", "RemoteRunnerUnavailableError"]


class RemoteRunnerError(AgentSessionRunError):
    """A remote runner call failed; the Step attempt fails and the Step's retry policy applies.

    Attributes:
        target: The runner service's address.
        flow_type: The runner's Flow type.
        method: The runner service method, e.g. `RunModelStep`.
        attempt: The Step attempt the call belonged to (0 outside a Step).
        error_type: The runner's exception class, when the runner raised.
    """

    def __init__(
        self,
        message: str,
        *,
        target: str,
        flow_type: str,
        method: str,
        attempt: int = 0,
        error_type: str | None = None,
        session_id: str | None = None,
    ) -> None:
        super().__init__(message, session_id=session_id)
        self.target = target
        self.flow_type = flow_type
        self.method = method
        self.attempt = attempt
        self.error_type = error_type

    def __reduce__(self) -> tuple[object, ...]:
        fields = {
            "target": self.target,
            "flow_type": self.flow_type,
            "method": self.method,
            "attempt": self.attempt,
            "error_type": self.error_type,
            "session_id": self.session_id,
        }
        return (_rebuild, (type(self), str(self), fields))


class RemoteRunnerUnavailableError(RemoteRunnerError):
    """The runner service could not be reached, or the connection broke during the call."""


def _rebuild(
    cls: type[RemoteRunnerError], message: str, fields: dict[str, Any]
) -> RemoteRunnerError:
    return cls(message, **fields)
