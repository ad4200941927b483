"""A flow whose Step result is large enough to meet a full disk when it is committed.

The Step blocks until the test has filled the disk, then returns a decision
that writes `RESULT_BYTES` of attribute value; the test counts its runs to
tell a retried commit (one run) from a re-dispatched attempt (two).
"""

from __future__ import annotations

import threading

import dex

__all__ = ["DISK_FULL", "ENTERED", "REGISTRY", "RELEASE", "RESULT_BYTES", "RUNS", "record", "reset"]

RESULT_BYTES = 200_000
record = dex.Attribute("record", str)
ENTERED = threading.Event()
RELEASE = threading.Event()
RUNS: list[int] = []
"""The attempt number of every run of BigResult's execute."""


def reset() -> None:
    """Fresh events and run list for the next test."""
    ENTERED.clear()
    RELEASE.clear()
    RUNS.clear()


class BigResult(dex.Step[str]):
    def get_step_options(self) -> dex.StepOptions | None:
        return dex.StepOptions(execute_retry=dex.RetryPolicy(maximum_attempts=1))

    def execute(self, context: dex.Context, input: str) -> dex.StepDecision:
        RUNS.append(context.attempt)
        ENTERED.set()
        RELEASE.wait(60)
        record.set(context, input * (RESULT_BYTES // len(input)))
        return dex.graceful_complete(f"stored on attempt {context.attempt}")


class DiskFull(dex.Flow[str]):
    def get_flow_type(self) -> str:
        return "DiskFullResult"

    def get_steps(self) -> dex.StepList[str]:
        return dex.StepList.start_step(BigResult())

    def get_persistence_schema(self) -> dex.PersistenceSchema:
        return dex.PersistenceSchema.of(record)


DISK_FULL = DiskFull()
REGISTRY = dex.Registry((DISK_FULL,))
