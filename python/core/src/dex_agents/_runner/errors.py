"""The errors every adapter raises about what the session stored for it.

Both mean the stored data is not the runner's to read (another adapter's, a
layout this build does not know, or corrupt), so a retry would fail the same
way: a runner ends the turn with the error's text instead of retrying.
"""

from __future__ import annotations

from dex_agents.errors import AgentSessionError

__all__ = ["FrameworkItemError", "RunStateError", "TurnFailed"]


class RunStateError(AgentSessionError, ValueError):
    """The turn's `framework_run_state` cannot be read, or does not fit its tool call records."""


class FrameworkItemError(AgentSessionError, ValueError):
    """A stored message's `framework_item` is not an item of this runner's framework."""


class TurnFailed(Exception):
    """The runner ends the turn as failed, with this text, without a retry.

    For a reason of the framework's own that a retry would meet again (a
    guardrail tripped, the framework refused its stored state);
    `ending_failed_turns` turns it into the turn's outcome.
    """
