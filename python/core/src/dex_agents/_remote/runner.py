"""`RemoteRunner`: an `AgentFrameworkRunner` whose methods call the runner service.

The Python Worker keeps hosting the session Flow; a runner written in another
language (the TypeScript runners of the Node sidecar) answers each call. The
class has every optional method; the runner's declared capabilities, read from
`DescribeRunner` when first needed, decide which ones the session calls.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

from dex_agents_contracts import (
    BuildUnfinishedTurnMessagesRequest,
    BuildUserMessageRequest,
    CancelToolTaskRequest,
    DescribeRunnerRequest,
    DescribeRunnerResponse,
    EstimateInputTokensRequest,
    ExecuteDeferredToolCallRequest,
    PollToolTaskRequest,
    RunModelStepRequest,
    RunnerCapabilities,
    RunnerEvent,
    RunnerHeartbeat,
    SelectCompactionCutoffRequest,
    SummarizeContextRequest,
)

from dex_agents._remote import frames
from dex_agents._remote.methods import (
    BUILD_UNFINISHED_TURN_MESSAGES,
    BUILD_USER_MESSAGE,
    CANCEL_TOOL_TASK,
    DESCRIBE_RUNNER,
    ESTIMATE_INPUT_TOKENS,
    EXECUTE_DEFERRED_TOOL_CALL,
    POLL_TOOL_TASK,
    RUN_MODEL_STEP,
    SELECT_COMPACTION_CUTOFF,
    SUMMARIZE_CONTEXT,
    Method,
)
from dex_agents._remote.session_options import agent_session_options
from dex_agents._remote.transport import CallSite, Transport, frame_field
from dex_agents._runner.capabilities import (
    ContextSummaryRequest,
    ContextSummaryResult,
    ToolTaskCancellation,
    ToolTaskPending,
    ToolTaskPoll,
    ToolTaskPollOutcome,
)
from dex_agents._runner.declared import CAPABILITIES, declare_capabilities
from dex_agents._runner.values import (
    AgentTurnContext,
    AgentTurnOutcome,
    DeferredToolExecution,
    DeferredToolOutcome,
    FrameworkMessage,
    ToolExecutionError,
    ToolInputRequested,
    ToolTaskStarted,
)
from dex_agents.errors import UserError
from dex_agents.options import AgentSessionOptions

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

    from dex_agents.events import EventWriter

__all__ = ["RemoteRunner"]

_log = logging.getLogger(__name__)

ResponseT = TypeVar("ResponseT")


class RemoteRunner:
    """A runner served by another process over the runner service (runner.proto).

    Construction opens no connection. The first call that needs the runner's
    description (`describe()`, `session_options`, or a session Flow reading its
    capabilities) asks the service once, waiting up to `connect_timeout` for it to
    come up, and keeps the answer. A call that cannot reach the service, or breaks
    off, raises `RemoteRunnerUnavailableError`; a runner that raises answers
    `RemoteRunnerError`: either fails the Step attempt, and only the Step's retry
    policy runs it again. Every protocol method is a coroutine function, the
    protocol's synchronous ones included (`build_user_message`, token estimates,
    cutoffs, unfinished-turn messages): the Worker awaits them, so a slow sidecar
    holds up only the Step that waits for it. `describe()` alone blocks, once.

    Args:
        target: The service's address, e.g. `127.0.0.1:50061`.
        flow_type: The Flow type the runner is served under.
        connect_timeout: Seconds to wait for the service when describing the runner,
            and for a connection before each streamed call (a model call, tool call,
            poll or summary) before the attempt fails as unreachable.
        call_timeout: Deadline in seconds of the unary methods (`build_user_message`,
            token estimates, cutoffs, unfinished-turn messages).
        stream_timeout: Deadline in seconds of a model call, tool call, poll or
            summary; the Step's own method timeout usually ends it first.
    """

    def __init__(
        self,
        target: str,
        flow_type: str,
        *,
        connect_timeout: float = 10.0,
        call_timeout: float = 30.0,
        stream_timeout: float = 15 * 60.0,
    ) -> None:
        self.target = target
        self.flow_type = flow_type
        self._transport = Transport(target, flow_type, connect_timeout=connect_timeout)
        self._connect_timeout = connect_timeout
        self._call_timeout = call_timeout
        self._stream_timeout = stream_timeout
        self._description: _Description | None = None
        self._describing = threading.Lock()

    def __repr__(self) -> str:
        return f"RemoteRunner({self.target!r}, {self.flow_type!r})"

    def close(self) -> None:
        """Closes the blocking channel; asyncio channels end with their event loop."""
        self._transport.close()

    # --- the description, read once ---------------------------------------------------

    def describe(self) -> RunnerCapabilities:
        """What the remote runner declares; connects and asks the service on first use.

        Raises:
            UserError: the service serves no runner for `flow_type`.
            RemoteRunnerUnavailableError: the service did not answer in time.
        """
        return self._described().capabilities

    @property
    def session_options(self) -> AgentSessionOptions | None:
        """What the service serves for this Flow type (`serveRunners({sessionOptions})`),
        or None; pass it to `AgentSessionFlow(options=...)`. Connects on first use."""
        return self._described().session_options

    def _described(self) -> _Description:
        with self._describing:
            if self._description is None:
                self._description = self._ask_description()
            return self._description

    def _ask_description(self) -> _Description:
        described = self._transport.unary_blocking(
            DESCRIBE_RUNNER,
            DescribeRunnerRequest(flow_type=self.flow_type),
            site=CallSite(method=DESCRIBE_RUNNER.name),
            timeout=self._connect_timeout,
        )
        if described.failure is not None:
            raise UserError(
                f"the runner service at {self.target!r} has no runner for flow type "
                f"{self.flow_type!r}: {described.failure.message}"
            )
        return _Description(
            capabilities=(
                described.capabilities
                if described.capabilities is not None
                else _capabilities_of_older_service(described)
            ),
            session_options=(
                None
                if described.session_options is None
                else agent_session_options(self.flow_type, described.session_options)
            ),
        )

    # --- the protocol ---------------------------------------------------------------

    async def build_user_message(self, text: str) -> FrameworkMessage:
        site = CallSite(method=BUILD_USER_MESSAGE.name)
        response = await self._unary(
            BUILD_USER_MESSAGE, BuildUserMessageRequest(flow_type=self.flow_type, text=text), site
        )
        if response.failure is not None:
            raise self._transport.failure(site, response.failure)
        if response.message is None:
            raise self._transport.error(site, "answered without a message")
        return self._message(site, response.message)

    async def run_model_step(self, turn: AgentTurnContext) -> AgentTurnOutcome:
        site = CallSite(method=RUN_MODEL_STEP.name, attempt=turn.attempt, session_id=turn.flow_id)
        request = RunModelStepRequest(flow_type=self.flow_type, turn=frames.turn_context(turn))
        async for name, value in self._frames(RUN_MODEL_STEP, request, site):
            if await _side_frame(name, value, turn.events, turn.heartbeat, None):
                continue
            if name in ("turn_completed", "tool_calls_requested", "turn_continued"):
                self._messages(site, value.new_messages)
                outcome: AgentTurnOutcome = value
                return outcome
            raise self._outcome_error(site, name, value)
        raise AssertionError("unreachable: the stream raises when it ends without an outcome")

    async def execute_deferred_tool_call(self, call: DeferredToolExecution) -> DeferredToolOutcome:
        site = CallSite(
            method=EXECUTE_DEFERRED_TOOL_CALL.name, attempt=call.attempt, session_id=call.flow_id
        )
        request = ExecuteDeferredToolCallRequest(
            flow_type=self.flow_type,
            flow_id=call.flow_id,
            turn_id=call.turn_id,
            tool_call=call.tool_call,
            idempotency_key=call.idempotency_key,
            attempt=call.attempt,
            heartbeat_checkpoint=call.heartbeat_checkpoint,
            input_answers=list(call.input_answers),
            supports_tool_tasks=call.supports_tool_tasks,
        )
        async for name, value in self._frames(EXECUTE_DEFERRED_TOOL_CALL, request, site):
            if await _side_frame(
                name, value, call.events, call.heartbeat, call.save_heartbeat_checkpoint
            ):
                continue
            if name == "task_started":
                return ToolTaskStarted(
                    task_id=value.task_id,
                    poll_interval_seconds=value.poll_interval_milliseconds / 1000,
                )
            outcome: DeferredToolOutcome = self._tool_outcome(site, name, value)
            return outcome
        raise AssertionError("unreachable: the stream raises when it ends without an outcome")

    # --- the optional methods: called only when declared ---------------------------

    async def build_unfinished_turn_messages(
        self, turn: AgentTurnContext
    ) -> Sequence[FrameworkMessage]:
        site = CallSite(
            method=BUILD_UNFINISHED_TURN_MESSAGES.name,
            attempt=turn.attempt,
            session_id=turn.flow_id,
        )
        response = await self._unary(
            BUILD_UNFINISHED_TURN_MESSAGES,
            BuildUnfinishedTurnMessagesRequest(
                flow_type=self.flow_type, turn=frames.turn_context(turn)
            ),
            site,
        )
        if response.failure is not None:
            raise self._transport.failure(site, response.failure)
        return self._messages(site, response.messages)

    async def poll_tool_task(self, poll: ToolTaskPoll) -> ToolTaskPollOutcome:
        site = CallSite(method=POLL_TOOL_TASK.name, attempt=poll.attempt, session_id=poll.flow_id)
        request = PollToolTaskRequest(
            flow_type=self.flow_type,
            flow_id=poll.flow_id,
            tool_call=poll.tool_call,
            idempotency_key=poll.idempotency_key,
            attempt=poll.attempt,
            input_answers=list(poll.input_answers),
            pending_answer=poll.pending_answer,
        )
        async for name, value in self._frames(POLL_TOOL_TASK, request, site):
            if await _side_frame(name, value, poll.events, poll.heartbeat, None):
                continue
            if name == "task_pending":
                return ToolTaskPending(
                    poll_interval_seconds=value.poll_interval_milliseconds / 1000,
                    continuation=value.continuation,
                )
            outcome: ToolTaskPollOutcome = self._tool_outcome(site, name, value)
            return outcome
        raise AssertionError("unreachable: the stream raises when it ends without an outcome")

    async def cancel_tool_task(self, cancellation: ToolTaskCancellation) -> None:
        site = CallSite(
            method=CANCEL_TOOL_TASK.name,
            attempt=cancellation.attempt,
            session_id=cancellation.flow_id,
        )
        request = CancelToolTaskRequest(
            flow_type=self.flow_type,
            flow_id=cancellation.flow_id,
            tool_call=cancellation.tool_call,
            idempotency_key=cancellation.idempotency_key,
            attempt=cancellation.attempt,
        )
        async for name, value in self._frames(CANCEL_TOOL_TASK, request, site):
            if name == "heartbeat":
                await cancellation.heartbeat()
                continue
            if name == "cancelled":
                return
            raise self._outcome_error(site, name, value)

    async def estimate_input_tokens(self, turn: AgentTurnContext) -> int:
        site = CallSite(
            method=ESTIMATE_INPUT_TOKENS.name, attempt=turn.attempt, session_id=turn.flow_id
        )
        response = await self._unary(
            ESTIMATE_INPUT_TOKENS,
            EstimateInputTokensRequest(flow_type=self.flow_type, turn=frames.turn_context(turn)),
            site,
        )
        if response.failure is not None:
            raise self._transport.failure(site, response.failure)
        return int(response.input_tokens)

    async def select_compaction_cutoff(
        self, turn: AgentTurnContext, retained_token_budget: int
    ) -> int | None:
        site = CallSite(
            method=SELECT_COMPACTION_CUTOFF.name, attempt=turn.attempt, session_id=turn.flow_id
        )
        response = await self._unary(
            SELECT_COMPACTION_CUTOFF,
            SelectCompactionCutoffRequest(
                flow_type=self.flow_type,
                turn=frames.turn_context(turn),
                retained_token_budget=retained_token_budget,
            ),
            site,
        )
        if response.failure is not None:
            raise self._transport.failure(site, response.failure)
        return None if response.cutoff_sequence is None else int(response.cutoff_sequence)

    async def summarize_context(self, request: ContextSummaryRequest) -> ContextSummaryResult:
        site = CallSite(
            method=SUMMARIZE_CONTEXT.name, attempt=request.attempt, session_id=request.flow_id
        )
        wire = SummarizeContextRequest(
            flow_type=self.flow_type,
            flow_id=request.flow_id,
            turn_id=request.turn_id,
            attempt=request.attempt,
            previous_summary=request.previous_summary,
            messages=list(request.messages),
            through_sequence=request.through_sequence,
            input_token_budget=request.input_token_budget,
            session_settings=frames.session_settings_struct(request.session_settings),
        )
        async for name, value in self._frames(SUMMARIZE_CONTEXT, wire, site):
            if await _side_frame(name, value, request.events, request.heartbeat, None):
                continue
            if name == "summary":
                summary: ContextSummaryResult = value
                return summary
            raise self._outcome_error(site, name, value)
        raise AssertionError("unreachable: the stream raises when it ends without an outcome")

    # --- helpers ---------------------------------------------------------------------

    async def _unary(
        self, method: Method[Any, ResponseT], request: object, site: CallSite
    ) -> ResponseT:
        return await self._transport.unary(
            method, request, site=site, deadline_seconds=self._call_timeout
        )

    async def _frames(
        self, method: Method[Any, Any], request: object, site: CallSite
    ) -> AsyncIterator[tuple[str, Any]]:
        async for frame in self._transport.stream(
            method, request, site=site, deadline_seconds=self._stream_timeout
        ):
            try:
                yield frame_field(frame, site=site)
            except ValueError as error:
                raise self._transport.error(site, f"sent a bad frame: {error}") from None

    def _outcome_error(self, site: CallSite, name: str, value: Any) -> Exception:
        if name == "failure":
            return self._transport.failure(site, value)
        return self._transport.error(site, f"sent `{name}`, which this method does not answer")

    def _tool_outcome(self, site: CallSite, name: str, value: Any) -> Any:
        if name == "result":
            return value
        if name == "input_requested":
            return ToolInputRequested(
                question=value.question,
                choices=tuple(value.choices),
                allows_free_text=value.allows_free_text,
                continuation=value.continuation,
            )
        if name == "tool_error":
            raise ToolExecutionError(value.message)
        raise self._outcome_error(site, name, value)

    def _message(self, site: CallSite, wire: FrameworkMessage) -> FrameworkMessage:
        return self._messages(site, [wire])[0]

    def _messages(
        self, site: CallSite, wire: Sequence[FrameworkMessage]
    ) -> Sequence[FrameworkMessage]:
        try:
            return frames.checked_messages(wire)
        except ValueError as error:
            raise self._transport.error(site, f"sent a bad message: {error}") from None


async def _side_frame(
    name: str,
    value: Any,
    events: EventWriter,
    heartbeat: Callable[[], Awaitable[None]],
    save_checkpoint: Callable[[str], Awaitable[None]] | None,
) -> bool:
    """Handles an event or heartbeat frame; False for an outcome."""
    if name == "event":
        assert isinstance(value, RunnerEvent)
        try:
            events.write_raw(value.event_type, value.payload)
        except ValueError:
            # Streams are best effort: a bad event never fails the Step.
            _log.warning("dropped a remote runner event %r", value.event_type, exc_info=True)
        return True
    if name == "heartbeat":
        assert isinstance(value, RunnerHeartbeat)
        if value.checkpoint is not None and save_checkpoint is not None:
            await save_checkpoint(value.checkpoint)
        else:
            await heartbeat()
        return True
    return False


@dataclass(frozen=True)
class _Description:
    capabilities: RunnerCapabilities
    session_options: AgentSessionOptions | None


_OLDER_SERVICE = "the runner service predates declared capabilities and did not say"

# The five capabilities an older service answers as booleans (fields 1-5).
_OLDER_FIELDS = {
    "unfinished_turn_messages": "builds_unfinished_turn_messages",
    "tool_task_polls": "polls_tool_tasks",
    "tool_task_cancels": "cancels_tool_tasks",
    "compaction": "compacts_context",
    "plan_mode": "supports_plan_mode",
}


def _capabilities_of_older_service(described: DescribeRunnerResponse) -> RunnerCapabilities:
    supported = [name for name, field in _OLDER_FIELDS.items() if getattr(described, field)]
    return declare_capabilities(
        supported=supported,
        unsupported={name: _OLDER_SERVICE for name in CAPABILITIES if name not in supported},
    )
