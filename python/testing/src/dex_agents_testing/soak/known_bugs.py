"""What the soak tells apart from a session bug, and the check of a fixed one.

A session Step without a failure route must never give up: when crashes took
all three attempts of ApplyTurnControl or FinishTurnCancellation, its branch
ended and the turn stayed active for good (found by the long soak of
2026-12-03; fixed by RECOVERY_RETRY, pinned by tests/test_soak_regressions.py).
`routeless_failures` names any such Step that still fails for good, which the
soak reports as a violation.

A call the driver sent again after an unanswered one used to be told apart,
because the message RPCs took no request ID; they carry a client request ID
now, which the session answers once, so a doubled message counts as a violation.
"""

from __future__ import annotations

from collections.abc import Sequence

from dex_agents_testing.history import ExecutedStep

__all__ = ["ROUTED_STEP_TYPES", "routeless_failures"]

ROUTED_STEP_TYPES = frozenset(
    {
        "RunModel",
        "CompactContext",
        "CallTool",
        "CallSingleAttemptTool",
        "PollToolTask",
        "CancelToolTask",
    }
)
"""Step types whose final failure moves to a failure route, so their turn goes on."""


def routeless_failures(executed: Sequence[ExecutedStep]) -> list[str]:
    """The finally failed Steps that have no failure route, by execution ID."""
    return [
        s.step_execution_id for s in executed if s.failed and s.step_type not in ROUTED_STEP_TYPES
    ]
