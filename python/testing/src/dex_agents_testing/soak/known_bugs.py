"""Known bugs the soak keeps meeting, told apart from new ones.

A session Step without a failure route whose attempts all run out ends its
branch for good. When crashes take all three attempts of a bookkeeping Step
(ApplyTurnControl, FinishTurnCancellation, ...), the turn never ends and the
session takes no message again. tests/test_soak_regressions.py pins it (strict
xfail) until python/core fixes it; until then a session whose violations all
follow such a failure is reported as a hit of this bug, not as a new violation.

Also told apart: a session whose driver had to send a message again after an
unanswered call. The message RPCs take no request ID, so a client cannot make
that safe, and a doubled message there is the client's doing, not the session's.
"""

from __future__ import annotations

from collections.abc import Sequence

from dex_agents_testing.history import ExecutedStep

__all__ = [
    "RESENT_AMBIGUOUS",
    "ROUTED_STEP_TYPES",
    "WEDGED_BY_LOST_ATTEMPTS",
    "routeless_failures",
]

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

WEDGED_BY_LOST_ATTEMPTS = (
    "known bug (tests/test_soak_regressions.py): a Step without a failure route lost "
    "every attempt to crashes and the session is wedged"
)


RESENT_AMBIGUOUS = (
    "the driver sent a call again after an unanswered one that may have committed "
    "(send_user_message and steer_user_message take no request ID)"
)


def routeless_failures(executed: Sequence[ExecutedStep]) -> list[str]:
    """The finally failed Steps that have no failure route, by execution ID."""
    return [
        s.step_execution_id for s in executed if s.failed and s.step_type not in ROUTED_STEP_TYPES
    ]
