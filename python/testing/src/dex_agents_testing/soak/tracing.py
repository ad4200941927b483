"""Which Step is running in which Worker: a begin/end line around every Execute and WaitFor.

The chaos loop reads these files to name the Step types a kill interrupted, and
to wait for a Step type it has not killed often enough yet. Lines are written
with O_APPEND and no fsync: a SIGKILL loses nothing the kernel already has.
"""

from __future__ import annotations

import functools
import itertools
import json
import os
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any

from dex import AsyncContext, Step, StepList
from dex_agents import AgentSessionFlow
from dex_agents_contracts import AgentSessionStartInput

__all__ = ["TracedSessionFlow", "trace_path"]

_Handler = Callable[[AsyncContext, Any], Coroutine[Any, Any, Any]]


def trace_path(trace_dir: str | Path, pid: int) -> Path:
    return Path(trace_dir) / f"trace-{pid}.jsonl"


class _Trace:
    """This process's trace file, opened once."""

    def __init__(self, trace_dir: str) -> None:
        self.fd = os.open(
            trace_path(trace_dir, os.getpid()), os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644
        )
        self.ids = itertools.count(1)

    def write(self, entry: dict[str, object]) -> None:
        os.write(self.fd, (json.dumps(entry, separators=(",", ":")) + "\n").encode("utf-8"))


def _traced(trace: _Trace, step_type: str, phase: str, handler: _Handler) -> _Handler:
    # functools.wraps keeps the signature and annotations the SDK reads for the input codec.
    @functools.wraps(handler)
    async def traced(context: AsyncContext, input: Any) -> Any:
        number = next(trace.ids)
        trace.write({"b": number, "t": step_type, "p": phase, "f": context.flow_id})
        try:
            return await handler(context, input)
        finally:
            trace.write({"e": number})

    return traced


class TracedSessionFlow(AgentSessionFlow):
    """An AgentSessionFlow whose Steps log their runs to `trace_dir`."""

    trace_dir: str = ""

    def get_steps(self) -> StepList[AgentSessionStartInput]:
        steps = super().get_steps()
        trace = _Trace(self.trace_dir)
        for definition in steps:
            step: Any = definition.step
            step_type = str(step.get_step_type())
            step.execute = _traced(trace, step_type, "execute", step.execute)
            # The SDK tells a waiting Step by its class's wait_for; only those get one traced.
            if type(step).wait_for is not Step.wait_for:
                step.wait_for = _traced(trace, step_type, "wait_for", step.wait_for)
        return steps
