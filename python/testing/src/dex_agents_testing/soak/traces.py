"""Reads the Workers' Step trace files (see tracing.py) as they grow.

`in_flight(pid)` is what that Worker runs right now, as far as its file says;
`ran` counts every Step run begun, by type, so coverage can name the Step
types the workload reached.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from dex_agents_testing.soak.tracing import trace_path

__all__ = ["Running", "TraceReader"]


@dataclass(frozen=True)
class Running:
    step_type: str
    phase: str
    flow_id: str


class TraceReader:
    def __init__(self, trace_dir: Path) -> None:
        self.trace_dir = trace_dir
        self._offsets: dict[int, int] = {}
        self._partial: dict[int, bytes] = {}
        self._running: dict[int, dict[int, Running]] = {}
        self.ran: Counter[str] = Counter()

    def in_flight(self, pid: int) -> list[Running]:
        self._read(pid)
        return list(self._running.get(pid, {}).values())

    def forget(self, pid: int) -> None:
        """A killed Worker runs nothing any more; its file is read to the end first."""
        self._read(pid)
        self._running.pop(pid, None)

    def _read(self, pid: int) -> None:
        path = trace_path(self.trace_dir, pid)
        try:
            with path.open("rb") as trace:
                trace.seek(self._offsets.get(pid, 0))
                data = self._partial.pop(pid, b"") + trace.read()
                self._offsets[pid] = trace.tell()
        except FileNotFoundError:
            return
        *lines, rest = data.split(b"\n")
        if rest:
            self._partial[pid] = rest
        running = self._running.setdefault(pid, {})
        for line in lines:
            entry = json.loads(line)
            if "b" in entry:
                item = Running(str(entry["t"]), str(entry["p"]), str(entry["f"]))
                running[int(entry["b"])] = item
                if item.phase == "execute":
                    self.ran[item.step_type] += 1
            else:
                running.pop(int(entry["e"]), None)

    def read_all(self) -> None:
        """Reads every trace file to its end, so `ran` covers every Worker ever started."""
        for path in sorted(self.trace_dir.glob("trace-*.jsonl")):
            self._read(int(path.stem.split("-", 1)[1]))
