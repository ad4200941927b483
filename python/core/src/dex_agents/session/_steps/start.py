"""StartAgentSession: initializes a session and, with an initial message, starts its first turn."""

from __future__ import annotations

from dex import AsyncContext, StepDecision, StepOptions, force_fail, go_to
from dex_agents_contracts import (
    AgentSessionStartInput,
    AgentState,
    AgentStatus,
    AgentUsage,
    AgentUserMessage,
    InteractionMode,
)

from dex_agents._session_settings import (
    INVALID_START_SETTINGS,
    MAX_SESSION_SETTINGS_BYTES,
    SESSION_SETTINGS_SIZE_TOLERANCE_BYTES,
    session_settings_problem,
)
from dex_agents.session._movements import go_to_run_model
from dex_agents.session._step_base import SessionStep
from dex_agents.session._step_options import LOAD_MESSAGES, sync_options

__all__ = [
    "INVALID_START_SETTINGS",
    "MAX_SESSION_SETTINGS_BYTES",
    "SESSION_SETTINGS_SIZE_TOLERANCE_BYTES",
    "StartAgentSession",
]


class StartAgentSession(SessionStep[AgentSessionStartInput]):
    """Initializes AgentState, AgentUsage and PendingInterrupts; stores session settings."""

    def get_step_options(self) -> StepOptions:
        return sync_options(execute_load=LOAD_MESSAGES)

    async def run(self, context: AsyncContext, input: AgentSessionStartInput) -> StepDecision:
        runtime = self._runtime
        runtime.activate(context, turn_id=None, activation="session_start")
        settings = input.session_settings
        if settings is not None:
            problem = session_settings_problem(settings)
            if problem is not None:
                return force_fail(f"{INVALID_START_SETTINGS}: {problem}")
            if settings.fields:
                runtime.schema.session_settings.set(context, settings)
        state = AgentState(
            status=AgentStatus.WAITING_FOR_USER_MESSAGE,
            turn_count=0,
            active_turn_id=None,
            next_message_sequence=1,
            last_turn_error=None,
            interaction_mode=InteractionMode.CHAT,
            accepts_turn_control=False,
        )
        runtime.schema.usage.set(context, AgentUsage())
        runtime.interrupt_store.clear(context)
        initial = input.initial_message
        if initial is not None and initial.strip():
            if await runtime.begin_turn(context, state, [AgentUserMessage(text=initial)]):
                return go_to_run_model(runtime, context)
            return go_to(
                runtime.steps.await_user_message, None
            )  # too large to store: the first turn failed
        runtime.schema.state.set(context, state)
        return go_to(runtime.steps.await_user_message, None)
