"""AgentSessionClient: a typed client for sessions over the SDK Client."""

from __future__ import annotations

import math
import tempfile
import time
from collections.abc import Callable, Iterator, Mapping
from datetime import timedelta
from typing import Protocol, TypeVar

import dex_agents_contracts as contracts
from dex import (
    BlobCacheConfig,
    Client,
    ClientOptions,
    Context,
    FlowAlreadyStartedError,
    FlowResult,
    LongPollTimeoutError,
    Registry,
    RPCInvokeOptions,
    RPCResult,
    StartFlowOptions,
    StepExecutionId,
    StreamMessage,
    WaitForStepCompletionOptions,
    WorkerTarget,
    open_blob_cache,
)
from dex_agents_contracts import (
    AgentEvent,
    AgentInterrupt,
    AgentMessage,
    AgentMessagesPage,
    AgentSnapshot,
    WireFormatError,
    struct_from_json,
)

from dex_agents._client_calls import call_with_retries
from dex_agents._client_request_id import client_request_id_problem, new_client_request_id
from dex_agents._closing import Closing
from dex_agents._session_settings import INVALID_START_SETTINGS, client_settings_problem
from dex_agents.errors import SessionAlreadyStartedError, UserError
from dex_agents.results import is_final
from dex_agents.session import DEFAULT_MESSAGE_PAGE_LIMIT, MAX_MESSAGE_PAGE_LIMIT, AgentSessionFlow
from dex_agents.worker import agent_registry

__all__ = ["AgentSessionClient"]

T = TypeVar("T")
RequestT = TypeVar("RequestT")


class _NamedRequest(Protocol):
    """A mutating RPC's input: a contract message with a client request ID."""

    client_request_id: str | None


NamedT = TypeVar("NamedT", bound=_NamedRequest)

_TURN_END_EVENTS = frozenset({"turn_completed", "turn_failed", "turn_steered", "turn_cancelled"})


class AgentSessionClient(Closing):
    """Starts sessions of one Flow type and calls their RPCs and AgentEvents.

    RPCs that lock PendingInterrupts are retried while a Step holds the lock,
    for up to 10 seconds, because a lock conflict says nothing about the answer.
    A call that gets no answer (UNAVAILABLE, such as a reset connection) is made
    again, up to 5 attempts in all; then SessionUnavailableError. Every mutating
    RPC carries a client request ID, a fresh one unless the caller passes
    `client_request_id`, and each retry repeats it, so the session applies the
    request once (python/core/README.md, "Client request IDs").
    """

    def __init__(
        self,
        flow: AgentSessionFlow,
        *,
        server_address: str,
        worker_target: WorkerTarget | None = None,
        registry: Registry | None = None,
    ) -> None:
        self.flow = flow
        self.registry = registry or agent_registry([flow])
        self._cache_dir = tempfile.TemporaryDirectory(prefix="dex-client-blobs-")
        self._cache = open_blob_cache(
            BlobCacheConfig(directory=self._cache_dir.name, max_bytes=64 * 1024 * 1024)
        )
        self.client = Client(
            self.registry,
            self._cache,
            ClientOptions(
                server_address=server_address,
                worker_target=worker_target or WorkerTarget(pull=True),
            ),
        )

    def close(self) -> None:
        self.client.close()
        self._cache.close()
        self._cache_dir.cleanup()

    # --- sessions -------------------------------------------------------------------

    def start_session(
        self,
        session_id: str,
        initial_message: str | None = None,
        *,
        session_settings: Mapping[str, object] | None = None,
        options: StartFlowOptions | None = None,
    ) -> str:
        """Starts a session (Flow ID = session ID) and returns its run ID.

        Raises UserError, before sending, for settings that are not JSON (naming the
        first value that is not) or whose compact JSON exceeds
        MAX_SESSION_SETTINGS_BYTES: the checks update_session_settings makes.
        """
        try:
            struct = struct_from_json(dict(session_settings)) if session_settings else None
        except WireFormatError as error:
            not_json = f"they are not JSON ({error.reason})"
            raise UserError(f"{INVALID_START_SETTINGS}: {not_json}") from error
        try:
            problem = client_settings_problem(struct) if struct is not None else None
        except (TypeError, ValueError):
            problem = None  # not JSON: sent as before, and StartAgentSession refuses it
        if problem is not None:
            raise UserError(f"{INVALID_START_SETTINGS}: {problem}")
        start = contracts.AgentSessionStartInput(
            initial_message=initial_message, session_settings=struct
        )
        try:
            return self.client.start_flow(
                self.flow, session_id, start, options or StartFlowOptions()
            )
        except FlowAlreadyStartedError as error:
            raise SessionAlreadyStartedError(
                f"session {session_id!r} is already running", session_id=session_id
            ) from error

    def wait_for_session(self, session_id: str, timeout: timedelta | None = None) -> FlowResult:
        """Blocks until the session's Flow closes (a session normally never does)."""
        return self.client.wait_for_flow(session_id, timeout)

    # --- RPCs -----------------------------------------------------------------------

    # Every mutating RPC takes `client_request_id`: the name of this one logical
    # request, for a caller that repeats the call itself (after a crash, say). None
    # gives a fresh ID; the client's own retries repeat whichever is used.

    def send_user_message(
        self,
        session_id: str,
        text: str,
        *,
        plan_mode: bool = False,
        client_request_id: str | None = None,
    ) -> bool:
        """Queues a user message; false for blank text, or `plan_mode` without plan mode.

        With `plan_mode`, the turn it starts only plans (write_todos).
        """
        request = contracts.SendUserMessageRequest(text=text, plan_mode=plan_mode)
        return self._mutate(session_id, self.flow.send_user_message, request, client_request_id)

    def execute_plan(
        self, session_id: str, revision: int, *, client_request_id: str | None = None
    ) -> bool:
        """Approves plan `revision`; false unless the idle session can execute it now."""
        request = contracts.ExecutePlanRequest(revision=revision)
        return self._mutate(session_id, self.flow.execute_plan, request, client_request_id)

    def resolve_interrupt(
        self,
        session_id: str,
        interrupt_id: str,
        *,
        approved: bool,
        rejection_message: str | None = None,
        client_request_id: str | None = None,
    ) -> bool:
        """Approves or rejects a pending interrupt; false when it is not pending."""
        request = contracts.ResolveInterruptRequest(
            interrupt_id=interrupt_id, approved=approved, rejection_message=rejection_message
        )
        return self._mutate(session_id, self.flow.resolve_interrupt, request, client_request_id)

    def answer_question(
        self,
        session_id: str,
        interrupt_id: str,
        answer: str,
        *,
        client_request_id: str | None = None,
    ) -> bool:
        """Answers a pending question; false when it is not pending or the answer is refused."""
        request = contracts.AnswerQuestionRequest(interrupt_id=interrupt_id, answer=answer)
        return self._mutate(session_id, self.flow.answer_question, request, client_request_id)

    def get_snapshot(self, session_id: str) -> AgentSnapshot:
        return self._call(
            session_id, lambda: self.client.invoke_rpc(self.flow.get_agent_snapshot, session_id)
        )

    def update_session_settings(
        self,
        session_id: str,
        settings: Mapping[str, object] | None,
        *,
        client_request_id: str | None = None,
    ) -> bool:
        """Replaces the settings the next turn starts with; `{}` clears them.

        False for None, for settings that are not a JSON object or whose compact JSON
        exceeds MAX_SESSION_SETTINGS_BYTES (checked here, before sending), and when the
        session refuses them.
        """
        request = contracts.UpdateSessionSettingsRequest(session_settings=None)
        given: object = settings  # callers without type checks may pass anything
        if given is not None:
            if not isinstance(given, Mapping):
                return False
            try:
                struct = struct_from_json(dict(given))
                problem = client_settings_problem(struct)
            except (TypeError, ValueError):
                return False
            if problem is not None:
                return False
            request = contracts.UpdateSessionSettingsRequest(session_settings=struct)
        return self._mutate(
            session_id, self.flow.update_session_settings, request, client_request_id
        )

    def list_messages(
        self,
        session_id: str,
        *,
        before_sequence: int | None = None,
        limit: int = DEFAULT_MESSAGE_PAGE_LIMIT,
    ) -> AgentMessagesPage:
        request = contracts.ListAgentMessagesRequest(before_sequence=before_sequence, limit=limit)
        return self._invoke(session_id, self.flow.list_agent_messages, request)

    def all_messages(self, session_id: str) -> list[AgentMessage]:
        """Every stored message, oldest first, read page by page."""
        pages: list[list[AgentMessage]] = []
        before: int | None = None
        while True:
            page = self.list_messages(
                session_id, before_sequence=before, limit=MAX_MESSAGE_PAGE_LIMIT
            )
            pages.append(list(page.messages))
            if page.next_before_sequence is None:
                break
            before = page.next_before_sequence
        return [message for page in reversed(pages) for message in page]

    def steer_user_message(
        self,
        session_id: str,
        *,
        text: str | None = None,
        message_id: str | None = None,
        client_request_id: str | None = None,
    ) -> bool:
        """Redirects the active turn with new text or a queued message (pass exactly one).

        While no turn runs the text is queued, and a queued message stays queued.
        """
        request = contracts.SteerUserMessageRequest(text=text, message_id=message_id)
        return self._mutate(session_id, self.flow.steer_user_message, request, client_request_id)

    def delete_queued_message(
        self, session_id: str, message_id: str, *, client_request_id: str | None = None
    ) -> bool:
        """Deletes a queued message no turn has taken; false when it is not pending."""
        request = contracts.DeleteQueuedMessageRequest(message_id=message_id)
        return self._mutate(session_id, self.flow.delete_queued_message, request, client_request_id)

    def cancel_turn(
        self, session_id: str, turn_id: str | None = None, *, client_request_id: str | None = None
    ) -> bool:
        """Stops the active turn (or only `turn_id`); true once the request is recorded."""
        request = contracts.CancelTurnRequest(turn_id=turn_id)
        return self._mutate(session_id, self.flow.cancel_turn, request, client_request_id)

    # --- events ---------------------------------------------------------------------

    def read_event(
        self, session_id: str, resume_token: str = "", timeout: timedelta | None = None
    ) -> StreamMessage[AgentEvent]:
        """The next AgentEvent after `resume_token` ("" = the oldest retained)."""
        return self.client.read_stream(session_id, self.flow.events, resume_token, timeout)

    def follow_events(
        self,
        session_id: str,
        resume_token: str = "",
        *,
        poll: timedelta = timedelta(seconds=5),
        until: Callable[[AgentEvent], bool] | None = None,
        deadline_seconds: float | None = None,
    ) -> Iterator[tuple[AgentEvent, str]]:
        """Yields (event, resume token) from `resume_token` on.

        Stops after an event for which `until` is true, or raises TimeoutError
        once `deadline_seconds` pass without reaching it.
        """
        token = resume_token
        deadline = None if deadline_seconds is None else time.monotonic() + deadline_seconds
        while True:
            if deadline is not None and time.monotonic() > deadline:
                raise TimeoutError(f"no matching AgentEvent of session {session_id!r} in time")
            try:
                message = self.read_event(session_id, token, poll)
            except LongPollTimeoutError:
                continue
            token = message.resume_token
            yield message.value, token
            if until is not None and until(message.value):
                return

    def run_turn(
        self,
        session_id: str,
        text: str,
        *,
        new_session: bool = False,
        deadline_seconds: float = 300.0,
    ) -> AgentSnapshot:
        """Sends `text` and returns the committed snapshot once the turn it starts has ended.

        With `new_session`, the session starts with `text` as its first message. The
        turn is the first to start after the message is sent, so a message queued
        behind other messages returns when the first of them has run. The end event
        names the Step that wrote it; waiting for that Step's commit (one call the
        server answers when it commits) avoids polling the snapshot. A retried Step
        can decide differently from the attempt that wrote the event, so an ended
        turn is taken from the committed snapshot, never from the event alone.
        """
        deadline = time.monotonic() + deadline_seconds
        if new_session:
            token = ""
            self.start_session(session_id, text)
        else:
            token = self._event_tail(session_id)
            if not self.send_user_message(session_id, text):
                raise UserError(f"session {session_id!r} refused the message (blank text)")
        turn_id: str | None = None
        remaining = deadline - time.monotonic()
        for event, _ in self.follow_events(session_id, token, deadline_seconds=remaining):
            if turn_id is None and event.type == "turn_started":
                turn_id = event.turn_id
            if turn_id is None or event.turn_id != turn_id or event.type not in _TURN_END_EVENTS:
                continue
            snapshot = self._snapshot_after_commit(
                session_id, turn_id, event.step_execution_id, deadline
            )
            if _turn_has_ended(snapshot, turn_id):
                return snapshot
        raise AssertionError("follow_events returns only by raising")  # pragma: no cover

    def wait_for_turn_end(
        self, session_id: str, turn_id: str, *, deadline_seconds: float = 60.0
    ) -> AgentSnapshot:
        """The snapshot once `turn_id` is no longer the active turn.

        A turn's end event is written to the AgentEvents Stream while its Step
        runs, before that Step commits, so a snapshot read right after
        `turn_completed` can still show the turn running. This waits for the
        commit.
        """

        return self._wait_for_snapshot(
            session_id,
            lambda snapshot: _turn_has_ended(snapshot, turn_id),
            f"turn {turn_id!r} to end",
            deadline_seconds,
        )

    def wait_for_interrupt(
        self, session_id: str, interrupt_id: str, *, deadline_seconds: float = 60.0
    ) -> AgentInterrupt | None:
        """The interrupt once it is pending in committed state; None if it never will be.

        `interrupt_raised` is streamed while RunModel (or AwaitQuestionAnswer) runs,
        before its commit adds the interrupt to PendingInterrupts, so an answer sent
        straight from the event can meet an interrupt that is not pending yet and
        get false. Wait for this first. None: the turn ended, or the interrupt's
        tool call is final, so the interrupt is not coming (steered, cancelled,
        or already resolved).
        """

        def settled(snapshot: AgentSnapshot) -> bool:
            if any(i.interrupt_id == interrupt_id for i in snapshot.pending_interrupts):
                return True
            if snapshot.state is None or snapshot.state.active_turn_id is None:
                return snapshot.state is not None
            return any(
                is_final(t.status)
                and (
                    interrupt_id == t.tool_call_id
                    or interrupt_id.startswith(f"{t.tool_call_id}-input-")
                )
                for t in snapshot.tool_calls
            )

        snapshot = self._wait_for_snapshot(
            session_id, settled, f"interrupt {interrupt_id!r}", deadline_seconds
        )
        return next(
            (i for i in snapshot.pending_interrupts if i.interrupt_id == interrupt_id), None
        )

    def _event_tail(self, session_id: str) -> str:
        """The resume token of the newest retained AgentEvent ("" when there is none)."""
        page = self._call(
            session_id,
            lambda: self.client.list_stream_messages(session_id, self.flow.events, 1),
        )
        return page.messages[0].resume_token if page.messages else ""

    def _snapshot_after_commit(
        self, session_id: str, turn_id: str, step_execution_id: str, deadline: float
    ) -> AgentSnapshot:
        """The snapshot once the Step that wrote the turn's end event has committed."""
        step = _step_execution(step_execution_id)
        if step is None:  # a server that names no Step: poll for the turn's end
            return self.wait_for_turn_end(
                session_id, turn_id, deadline_seconds=max(0.0, deadline - time.monotonic())
            )
        # Whole seconds, as the protocol counts them.
        timeout = timedelta(seconds=max(1, math.ceil(deadline - time.monotonic())))
        self._call(
            session_id,
            lambda: self.client.wait_for_step_completion(
                session_id, step, WaitForStepCompletionOptions(request_timeout=timeout)
            ),
        )
        return self.get_snapshot(session_id)

    def _wait_for_snapshot(
        self,
        session_id: str,
        check: Callable[[AgentSnapshot], bool],
        what: str,
        deadline_seconds: float,
    ) -> AgentSnapshot:
        deadline = time.monotonic() + deadline_seconds
        delay = 0.005
        while True:
            snapshot = self.get_snapshot(session_id)
            if check(snapshot):
                return snapshot
            if time.monotonic() > deadline:
                raise TimeoutError(f"session {session_id!r}: gave up waiting for {what}")
            time.sleep(delay)
            delay = min(delay * 2, 0.2)

    # --- plumbing -------------------------------------------------------------------

    def _invoke(
        self,
        session_id: str,
        method: Callable[[Context, RequestT], RPCResult[T]],
        request: RequestT,
    ) -> T:
        """One read RPC of the session, through `_call`'s retries and error mapping."""
        return self._call(session_id, lambda: self.client.invoke_rpc(method, session_id, request))

    def _mutate(
        self,
        session_id: str,
        method: Callable[[Context, NamedT], RPCResult[bool]],
        request: NamedT,
        client_request_id: str | None,
    ) -> bool:
        """One mutating RPC under a client request ID, the same on every retry.

        The call locks the ID's ClientRequests instance, so a retry that overtakes
        an attempt still running meets a lock conflict and waits for its answer.
        """
        request_id = new_client_request_id() if client_request_id is None else client_request_id
        problem = client_request_id_problem(request_id)
        if problem is not None:
            raise UserError(problem)
        request.client_request_id = request_id
        options = RPCInvokeOptions(
            lock_attribute_map_instances=(self.flow.schema.client_requests.lock(request_id),)
        )
        return call_with_retries(
            session_id,
            lambda: self.client.invoke_rpc(method, session_id, request, options=options),
            client_request_id=request_id,
        )

    def _call(self, session_id: str, call: Callable[[], T]) -> T:
        return call_with_retries(session_id, call)


def _turn_has_ended(snapshot: AgentSnapshot, turn_id: str) -> bool:
    """Committed state shows a session whose active turn is no longer `turn_id`."""
    return snapshot.state is not None and snapshot.state.active_turn_id != turn_id


def _step_execution(step_execution_id: str) -> StepExecutionId | None:
    """`RunModel-3` as the SDK's StepExecutionId; None when it is not of that form."""
    step_type, _, number = step_execution_id.rpartition("-")
    if not step_type or not number.isdigit() or int(number) < 1:
        return None
    return StepExecutionId(step_type, int(number))
