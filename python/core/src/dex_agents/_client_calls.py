"""How AgentSessionClient makes one call: the retries it may take and the errors it maps.

A lock conflict says nothing about the answer, so the call is made again for up
to LOCK_RETRY_SECONDS. A call that got no answer (UNAVAILABLE, such as a reset
connection, or a DEADLINE_EXCEEDED the caller did not ask for) may or may not
have reached the session; it is made again up to TRANSIENT_ATTEMPTS times in
all. That is safe for reads, and for a mutating RPC because every attempt
carries the same client request ID, which the session answers once.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

import grpc
from dex import (
    DexServiceError,
    FlowNotActiveOrNotFoundError,
    FlowNotFoundError,
    LongPollTimeoutError,
    RequestTimeoutError,
    RpcLockConflictError,
    WorkerInvocationError,
)

from dex_agents.errors import (
    AgentSessionRunError,
    ClientRequestIdReusedError,
    SessionNotFoundError,
    SessionUnavailableError,
)

__all__ = [
    "LOCK_RETRY_SECONDS",
    "TRANSIENT_ATTEMPTS",
    "call_with_retries",
    "is_transient",
]

T = TypeVar("T")

LOCK_RETRY_SECONDS = 10.0
"""How long a call that meets a held lock is made again."""
TRANSIENT_ATTEMPTS = 5
"""Attempts in all for a call that got no answer."""
_TRANSIENT_FIRST_DELAY = 0.1
_TRANSIENT_MAX_DELAY = 2.0
_REUSED_TYPE = f"{ClientRequestIdReusedError.__module__}.{ClientRequestIdReusedError.__qualname__}"
_NO_ANSWER = frozenset({grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED})
_ANSWERS = (LongPollTimeoutError, RequestTimeoutError, RpcLockConflictError, WorkerInvocationError)


def is_transient(error: BaseException) -> bool:
    """Whether `error` means the call got no answer, so it may have reached Dex or not.

    Long-poll expiries and the caller's own request timeouts are answers; so are
    lock conflicts and Worker failures, which have their own handling.
    """
    return (
        isinstance(error, DexServiceError)
        and not isinstance(error, _ANSWERS)
        and error.code in _NO_ANSWER
    )


def call_with_retries(
    session_id: str,
    call: Callable[[], T],
    *,
    client_request_id: str | None = None,
    sleep: Callable[[float], None] = time.sleep,
) -> T:
    """`call()`, made again after lock conflicts and lost answers, with Dex errors mapped.

    Raises:
        SessionNotFoundError: The session does not exist or has closed.
        SessionUnavailableError: Every attempt went unanswered.
        AgentSessionRunError: The session stayed locked for LOCK_RETRY_SECONDS.
        ClientRequestIdReusedError: The session remembers `client_request_id` for
            another request.
    """
    lock_deadline = time.monotonic() + LOCK_RETRY_SECONDS
    lock_delay = 0.02
    unanswered = 0
    while True:
        try:
            return call()
        except RpcLockConflictError:
            if time.monotonic() > lock_deadline:
                raise AgentSessionRunError(
                    f"session {session_id!r} stayed locked for {LOCK_RETRY_SECONDS} s",
                    session_id=session_id,
                ) from None
            sleep(lock_delay)
            lock_delay = min(lock_delay * 2, 0.5)
        except (FlowNotFoundError, FlowNotActiveOrNotFoundError) as error:
            raise SessionNotFoundError(
                f"session {session_id!r} was not found or has closed", session_id=session_id
            ) from error
        except WorkerInvocationError as error:
            if error.worker_error_type == _REUSED_TYPE:
                raise ClientRequestIdReusedError(
                    error.worker_error_detail,
                    session_id=session_id,
                    client_request_id=client_request_id,
                ) from error
            raise
        except DexServiceError as error:
            if not is_transient(error):
                raise
            unanswered += 1
            if unanswered >= TRANSIENT_ATTEMPTS:
                raise SessionUnavailableError(
                    f"session {session_id!r}: Dex gave no answer in {TRANSIENT_ATTEMPTS} "
                    f"attempts ({error.code.name}: {error.detail}); the call may have taken "
                    "effect, and repeating it with the same client_request_id is safe",
                    session_id=session_id,
                    client_request_id=client_request_id,
                ) from error
            sleep(min(_TRANSIENT_FIRST_DELAY * 2 ** (unanswered - 1), _TRANSIENT_MAX_DELAY))
