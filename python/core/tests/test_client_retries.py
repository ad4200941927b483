"""How AgentSessionClient repeats a call (dex_agents._client_calls), without a server:
which failures it retries, how often, and what it raises when they run out.

Calls are stand-ins that raise the SDK's errors, and the sleep is recorded instead
of taken; test_session_client_requests.py drops a real connection.
"""

from __future__ import annotations

import pickle
from collections.abc import Callable
from dataclasses import dataclass, field

import grpc
import pytest
from dex import (
    DexServiceError,
    ErrorSubStatus,
    FlowNotActiveOrNotFoundError,
    RequestTimeoutError,
    RpcLockConflictError,
    WorkerInvocationError,
)
from dex_agents import (
    AgentSessionRunError,
    ClientRequestIdReusedError,
    SessionNotFoundError,
    SessionUnavailableError,
)
from dex_agents._client_calls import TRANSIENT_ATTEMPTS, call_with_retries, is_transient


def _error(code: grpc.StatusCode, kind: type[DexServiceError] = DexServiceError) -> DexServiceError:
    return kind(code, ErrorSubStatus.UNCATEGORIZED, "detail", "invoke_rpc", "s")


def _worker_error(error_type: str, detail: str) -> WorkerInvocationError:
    return WorkerInvocationError(
        grpc.StatusCode.FAILED_PRECONDITION,
        ErrorSubStatus.WORKER_API_ERROR,
        "",
        "invoke_rpc",
        "s",
        grpc.StatusCode.UNKNOWN,
        error_type,
        detail,
    )


@dataclass
class Script:
    """A call that raises each of `failures` in turn, then answers True."""

    failures: list[BaseException]
    calls: int = 0
    sleeps: list[float] = field(default_factory=list)

    def __call__(self) -> bool:
        self.calls += 1
        if self.failures:
            raise self.failures.pop(0)
        return True

    def run(self, client_request_id: str | None = "r1") -> bool:
        return call_with_retries(
            "s", self, client_request_id=client_request_id, sleep=self.sleeps.append
        )


@dataclass(frozen=True)
class Case:
    id: str
    error: Callable[[], BaseException]
    transient: bool


CASES = [
    Case("unavailable", lambda: _error(grpc.StatusCode.UNAVAILABLE), True),
    Case("deadline exceeded", lambda: _error(grpc.StatusCode.DEADLINE_EXCEEDED), True),
    Case(
        "the caller's own timeout",
        lambda: _error(grpc.StatusCode.DEADLINE_EXCEEDED, RequestTimeoutError),
        False,
    ),
    Case("invalid argument", lambda: _error(grpc.StatusCode.INVALID_ARGUMENT), False),
    Case("a Worker failure", lambda: _worker_error("builtins.ValueError", "bad"), False),
]


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_only_unanswered_calls_are_transient(case: Case) -> None:
    assert is_transient(case.error()) is case.transient


def test_an_unanswered_call_is_made_again_until_it_answers() -> None:
    script = Script([_error(grpc.StatusCode.UNAVAILABLE) for _ in range(TRANSIENT_ATTEMPTS - 1)])
    assert script.run() is True
    assert script.calls == TRANSIENT_ATTEMPTS
    assert script.sleeps == [0.1, 0.2, 0.4, 0.8]


def test_unanswered_attempts_run_out_with_the_request_id() -> None:
    script = Script([_error(grpc.StatusCode.UNAVAILABLE) for _ in range(TRANSIENT_ATTEMPTS)])
    with pytest.raises(SessionUnavailableError) as info:
        script.run()
    assert script.calls == TRANSIENT_ATTEMPTS
    assert info.value.client_request_id == "r1"
    assert info.value.session_id == "s"
    assert "repeating it with the same client_request_id is safe" in str(info.value)


def test_an_answer_is_not_retried() -> None:
    script = Script([_error(grpc.StatusCode.INVALID_ARGUMENT)])
    with pytest.raises(DexServiceError):
        script.run()
    assert script.calls == 1


def test_lock_conflicts_and_lost_answers_are_retried_together() -> None:
    lock = _error(grpc.StatusCode.ABORTED, RpcLockConflictError)
    script = Script([lock, _error(grpc.StatusCode.UNAVAILABLE), lock])
    assert script.run() is True
    assert script.calls == 4


def test_a_locked_session_gives_up_after_the_lock_window(monkeypatch: pytest.MonkeyPatch) -> None:
    times = iter([0.0, 11.0])
    monkeypatch.setattr("dex_agents._client_calls.time.monotonic", lambda: next(times))
    script = Script([_error(grpc.StatusCode.ABORTED, RpcLockConflictError)])
    with pytest.raises(AgentSessionRunError, match=r"stayed locked for 10\.0 s"):
        script.run()


def test_a_reused_id_becomes_its_own_error() -> None:
    reused = _worker_error(
        "dex_agents.errors.ClientRequestIdReusedError", "client request ID 'r1' already ..."
    )
    with pytest.raises(ClientRequestIdReusedError) as info:
        Script([reused]).run()
    assert info.value.client_request_id == "r1"
    assert str(info.value) == "client request ID 'r1' already ..."


def test_a_missing_session_is_session_not_found() -> None:
    gone = FlowNotActiveOrNotFoundError(
        grpc.StatusCode.NOT_FOUND, ErrorSubStatus.FLOW_NOT_EXISTS, "gone", "invoke_rpc", "s"
    )
    with pytest.raises(SessionNotFoundError):
        Script([gone]).run()


@pytest.mark.parametrize("kind", [ClientRequestIdReusedError, SessionUnavailableError])
def test_request_errors_survive_pickling(kind: type[SessionUnavailableError]) -> None:
    error = kind("lost", session_id="s", client_request_id="r1")
    copy = pickle.loads(pickle.dumps(error))
    assert (type(copy), str(copy), copy.session_id, copy.client_request_id) == (
        kind,
        "lost",
        "s",
        "r1",
    )
