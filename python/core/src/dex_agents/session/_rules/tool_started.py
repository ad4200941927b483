"""Whether a failed tool Step ever started its tool, from evidence the failure route has.

A failure route may record a call "not run" (failed with
TOOL_CALL_NOT_RUN_ERROR_PREFIX) only when the recovery error proves that no
attempt of the tool Step reached the tool; anything less keeps the status of
the call's effect, so a call that may have run is never offered for a rerun.
The evidence, each strictly about a point before tool_call_started:

- `attempt_progress` NOT_STARTED, the Dex Server's furthest progress across
  the attempts (SDK 1.23.0 reports none, so it reads UNSPECIFIED);
- `ToolNotStartedError`, which a tool Step raises for a failure on its first
  attempt before it wrote tool_call_started (on a later attempt an earlier one
  may have run the tool, so it raises the plain error);
- for a single-attempt Step, a dispatch failure the server reports for a task
  no Worker took (`NO_WORKER_AVAILABLE`, `UNKNOWN_STEP`, dexlite's and the
  SDK's names): that attempt, the only one, never reached a tool. On a retried
  Step it says nothing about the earlier attempts.

A tool Step writes tool_call_started, then a heartbeat, and calls the tool only
once both reached its Worker's transport. A Worker that died before it sent
that first frame leaves dexlite nothing that ran: the task goes back to the
queue under the same attempt (dexlite's §12.4), so it never reaches a failure
route at all; nor does a single-attempt Step that was still queued when dexlite
restarted (§12.2). A Worker that died after it leaves a lost stream, which
proves nothing, and the call keeps its effect's status. Neither the heartbeat
checkpoint nor a Step-level marker would prove more: the failure route does
not see the failed Step's heartbeat, a marker written in the same attempt can
be lost with it, and a marker committed by a Step of its own would still leave
the tool Step's own hand-out unknown.
"""

from __future__ import annotations

from dex import Context

__all__ = [
    "TOOL_NOT_STARTED_ERROR_TYPE",
    "UNDISPATCHED_ERROR_TYPES",
    "ToolNotStartedError",
    "attempt_progress",
    "tool_never_ran",
]

UNDISPATCHED_ERROR_TYPES = frozenset({"NO_WORKER_AVAILABLE", "UNKNOWN_STEP"})
"""Recovery error types of an attempt that no Worker took."""


class ToolNotStartedError(RuntimeError):
    """A tool Step failed on its first attempt before it wrote tool_call_started."""


TOOL_NOT_STARTED_ERROR_TYPE = f"{ToolNotStartedError.__module__}.{ToolNotStartedError.__qualname__}"
"""The recovery error type the SDK reports for it: the exception's module and name."""


def attempt_progress(context: Context) -> str:
    """The recovery error's attempt_progress: SDK 1.23.0 reports none, so UNSPECIFIED."""
    recovery = context.recovery_error
    progress = getattr(recovery, "attempt_progress", None)
    name = str(getattr(progress, "name", progress)) if progress is not None else ""
    for known in ("NOT_STARTED", "NOT_COMPLETED"):
        if name.endswith(known):
            return known
    return "UNSPECIFIED"


def tool_never_ran(context: Context, *, single_attempt: bool) -> bool:
    """Whether the recovery error proves that no attempt of the failed tool Step ran the tool.

    `single_attempt` says the failed Step had one attempt, so its last attempt's
    error speaks for all of them.
    """
    if attempt_progress(context) == "NOT_STARTED":
        return True
    recovery = context.recovery_error
    if recovery is None:
        return False
    if recovery.error_type == TOOL_NOT_STARTED_ERROR_TYPE:
        return True
    return single_attempt and recovery.error_type in UNDISPATCHED_ERROR_TYPES
