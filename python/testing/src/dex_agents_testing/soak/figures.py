"""The soak's figures: counts, kills, throughput, latency and memory, as text lines."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

__all__ = ["Figures", "percentile"]


def percentile(values: Sequence[float], fraction: float) -> float:
    """Nearest-rank percentile; 0 for no values."""
    if not values:
        return 0.0
    ordered = sorted(values)
    rank = max(1, math.ceil(fraction * len(ordered)))
    return ordered[rank - 1]


@dataclass
class Figures:
    seed: int
    sessions: int
    turns: int
    steps: int
    seconds: float
    latencies: list[float]
    kills_by_kind: Counter[str]
    kills_by_step: Counter[str]
    steps_ran: Counter[str]
    failed_steps: Counter[str]
    violations: list[str]
    known_bugs: list[str]
    """Sessions that hit a known bug (known_bugs.py), not counted as violations."""
    peak_kib: dict[str, int]
    rpc_retries: int
    coverage_target: int = 0
    coverage_types: tuple[str, ...] = ()
    notes: list[str] = field(default_factory=list)

    def coverage_short(self) -> dict[str, int]:
        """Targeted Step types (every run runs them) whose kills fall short of the target.

        Failure-route Steps (RecordToolOutcomeUnknown, ...) run only after a kill
        and are left out; their kills still show in the by-type line.
        """
        if not self.coverage_target:
            return {}
        wanted = set(self.coverage_types)
        return {
            t: self.kills_by_step[t]
            for t in sorted(wanted)
            if self.kills_by_step[t] < self.coverage_target
        }

    def lines(self) -> list[str]:
        rate = self.seconds or 1.0
        out = [
            f"seed: {self.seed}",
            f"sessions: {self.sessions}  turns: {self.turns}  Steps: {self.steps}",
            f"wall time: {self.seconds:.1f} s  throughput: {self.turns / rate:.2f} turns/s, "
            f"{self.steps / rate:.1f} Steps/s",
            f"turn latency: p50 {percentile(self.latencies, 0.5):.2f} s, "
            f"p99 {percentile(self.latencies, 0.99):.2f} s",
            f"kills: {sum(self.kills_by_kind.values())} "
            + ", ".join(f"{k} {n}" for k, n in sorted(self.kills_by_kind.items())),
            "kills by Step type running: "
            + (", ".join(f"{t} {n}" for t, n in sorted(self.kills_by_step.items())) or "none"),
            "Step runs begun, by type: "
            + ", ".join(f"{t} {n}" for t, n in sorted(self.steps_ran.items())),
            "finally failed Steps (failure routes): "
            + (", ".join(f"{t} {n}" for t, n in sorted(self.failed_steps.items())) or "none"),
            f"peak RSS (VmHWM): dexlite {self.peak_kib.get('dexlite', 0) / 1024:.1f} MiB, "
            f"Worker {self.peak_kib.get('worker', 0) / 1024:.1f} MiB",
            f"client calls that failed and were retried: {self.rpc_retries}",
        ]
        if self.coverage_target:
            short = self.coverage_short()
            out.append(
                f"kill coverage (>= {self.coverage_target} per Step type): "
                + ("reached" if not short else f"NOT reached, short: {short}")
            )
        out.extend(self.notes)
        out.append(f"known-bug hits (not counted below): {len(self.known_bugs)}")
        out.extend(f"  KNOWN {k}" for k in self.known_bugs)
        out.append(f"invariant violations: {len(self.violations)}")
        out.extend(f"  VIOLATION {v}" for v in self.violations)
        return out
