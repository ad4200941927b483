"""What both examples run: one order, a read tool and an approval-gated refund.

The turn's Step shape is the same whichever framework drives the model: the
read tool and the approval wait run in parallel, then the refund, then the
model's answer.
"""

from __future__ import annotations

ORDER_ID = "A-1001"
EXPECTED_SHAPE: list[str | frozenset[str]] = [
    "RunModel",
    frozenset({"CallTool", "AwaitToolApproval", "CallSingleAttemptTool"}),
    "ResumeTurn",
    "RunModel",
]
