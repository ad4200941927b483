"""Which Step is running in which Worker: a begin/end line around every Execute and WaitFor.

The chaos loop reads these files to name the Step types a kill interrupted.
Lines are written with O_APPEND and no fsync: a SIGKILL loses nothing the
kernel already has.

The chaos loop can also arm a kill for a Step type (an `arm` file beside the
traces): the first Worker to begin such a Step claims the file by renaming it
and, after the armed delay, SIGKILLs the armed target (itself or dexlite's
process group). Short Steps get killed this way as often as long ones.
"""

from __future__ import annotations

import contextlib
import functools
import itertools
import json
import os
import signal
import threading
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any

from dex import AsyncContext, Step, StepList
from dex_agents import AgentSessionFlow
from dex_agents_contracts import AgentSessionStartInput

__all__ = ["TracedSessionFlow", "arm_path", "claimed_path", "trace_path"]

_Handler = Callable[[AsyncContext, Any], Coroutine[Any, Any, Any]]
_OPENED: dict[str, _Trace] = {}
_OPENED_LOCK = threading.Lock()


def trace_path(trace_dir: str | Path, pid: int) -> Path:
    return Path(trace_dir) / f"trace-{pid}.jsonl"


def arm_path(trace_dir: str | Path) -> Path:
    """The armed kill: JSON {"step_type", "pgid" (0 = the claiming Worker), "delay"}, and
    optionally "phase" (execute or wait_for) and "exclude" (Steps to leave alone)."""
    return Path(trace_dir) / "arm.json"


def claimed_path(trace_dir: str | Path, pid: int) -> Path:
    return Path(trace_dir) / f"claimed-{pid}.json"


class _Trace:
    """This process's trace file and its armed-kill check, one per process."""

    def __init__(self, trace_dir: str) -> None:
        self.trace_dir = trace_dir
        self.fd = os.open(
            trace_path(trace_dir, os.getpid()), os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644
        )
        self.ids = itertools.count(1)
        self.arm = arm_path(trace_dir)

    @classmethod
    def of(cls, trace_dir: str) -> _Trace:
        with _OPENED_LOCK:
            key = f"{os.getpid()}:{trace_dir}"
            if key not in _OPENED:
                _OPENED[key] = cls(trace_dir)
            return _OPENED[key]

    def write(self, entry: dict[str, object]) -> None:
        os.write(self.fd, (json.dumps(entry, separators=(",", ":")) + "\n").encode("utf-8"))

    def maybe_fire(self, step_type: str, phase: str, step: str) -> None:
        """Claims an armed kill for `step_type`, and schedules its SIGKILL.

        `step` (`<flow>/<step execution>`) is skipped when the arm excludes it:
        the chaos loop lists the Steps it killed lately, so an armed kill never
        takes the retry of a Step it just killed, which would spend that Step's
        attempts on purpose.
        """
        try:
            armed = json.loads(self.arm.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return  # nothing armed (or the chaos loop is writing it: next Step)
        if armed.get("step_type") != step_type or step in armed.get("exclude", ()):
            return
        if armed.get("phase", phase) != phase:
            return  # armed for the other method (execute or wait_for)
        pid = os.getpid()
        claiming = Path(self.trace_dir) / f"claiming-{pid}"
        try:
            os.rename(self.arm, claiming)  # atomic: one Worker wins
        except OSError:
            return
        staged = Path(self.trace_dir) / f"claimed-{pid}.staged"
        staged.write_text(json.dumps({"step": step}), encoding="utf-8")
        os.replace(staged, claimed_path(self.trace_dir, pid))
        claiming.unlink()
        pgid = int(armed.get("pgid", 0)) or os.getpid()
        timer = threading.Timer(float(armed.get("delay", 0.0)), _kill_group, args=(pgid,))
        timer.daemon = True
        timer.start()


def _kill_group(pgid: int) -> None:
    with contextlib.suppress(OSError):  # the target is gone already
        os.killpg(pgid, signal.SIGKILL)


def _traced(trace: _Trace, step_type: str, phase: str, handler: _Handler) -> _Handler:
    # functools.wraps keeps the signature and annotations the SDK reads for the input codec.
    @functools.wraps(handler)
    async def traced(context: AsyncContext, input: Any) -> Any:
        number = next(trace.ids)
        trace.write({"b": number, "t": step_type, "p": phase, "f": context.flow_id})
        trace.maybe_fire(step_type, phase, f"{context.flow_id}/{context.step_execution_id}")
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
        trace = _Trace.of(self.trace_dir)
        for definition in steps:
            step: Any = definition.step
            step_type = str(step.get_step_type())
            step.execute = _traced(trace, step_type, "execute", step.execute)
            # The SDK tells a waiting Step by its class's wait_for; only those get one traced.
            if type(step).wait_for is not Step.wait_for:
                step.wait_for = _traced(trace, step_type, "wait_for", step.wait_for)
        return steps
