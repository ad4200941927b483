"""What every group of FlowService operations shares: the engine state and long polls."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, TypeVar

from dexlite import _caller, _errors
from dexlite._engine import rows

from .replays import Replays

if TYPE_CHECKING:
    from collections.abc import Callable

    from google.protobuf.message import Message  # type: ignore[import-untyped,unused-ignore]

    from dexlite._engine import EngineState

_T = TypeVar("_T")


class OpsBase:
    """Holds the engine state; each subclass validates requests, then changes state."""

    def __init__(self, state: EngineState) -> None:
        self.state = state
        self._options = state.options
        self.replays = Replays(state)

    def _wait(self, wait_seconds: float, check: Callable[[], _T | None], what: str) -> _T:
        """Long-polls ``check`` under the engine lock until it yields a value."""
        limit = self._options.max_wait_seconds
        budget = min(wait_seconds, limit) if wait_seconds > 0 else limit
        deadline = time.monotonic() + budget
        with self.state.changed:
            while True:
                value = check()
                if value is not None:
                    return value
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise _errors.long_poll_timeout(what)
                _caller.check_waiting()
                self.state.changed.wait(min(remaining, _caller.WAIT_SLICE_SECONDS))

    def _run_id(self, flow_id: str, run_id: str = "") -> str:
        """The run a long poll follows; the flow must exist (it may be closed)."""
        with self.state.changed:
            return str(rows.existing_run(self.state, flow_id, run_id)["run_id"])


def require_fields(message: Message, *names: str) -> None:
    """Rejects the request when one of the named scalar fields is empty."""
    for name in names:
        if not getattr(message, name):
            raise _errors.invalid(f"{name} is required")


def not_negative(value: float, field: str) -> None:
    if value < 0:
        raise _errors.invalid(f"{field} must not be negative")


def token_number(text: str, field: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise _errors.invalid(f"{field} is malformed") from None
    if value < 0:
        raise _errors.invalid(f"{field} is malformed")
    return value
