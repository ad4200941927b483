"""The bench's `--trace` split: where one Step's time goes, stage by stage, in pull mode.

Joins `traced_dexlite.py`'s rows with the Worker probe's lines on (run, Step
execution ID) and prints, per Step type, the median of each stage between two
consecutive marks of one Execute call.
"""

from __future__ import annotations

import json
import statistics
from collections import defaultdict
from pathlib import Path
from typing import Any

__all__ = ["STAGES", "print_stages", "read_trace"]

STAGES: tuple[tuple[str, str, str, str], ...] = (
    ("dispatched", "assigned", "dispatch", "dexlite builds the task, hands it to a pull stream"),
    ("assigned", "received", "to Worker", "gRPC, SDK task start, request decoding"),
    ("received", "done", "Worker", "the SDK's Execute handler, the Step's own code inside"),
    ("done", "result", "to dexlite", "queued stream writes, then the result frame"),
    ("result", "applying", "frames", "dexlite stores the stream writes, then takes the result"),
    ("applying", "applied", "apply", "writes, next Steps and their requests"),
    ("applied", "committed", "commit", "SQLite commit (fsync with --sync full)"),
    ("committed", "pumped", "dispatch next", "starting what the commit made ready"),
)

Marks = dict[str, float]


def read_trace(path: Path) -> dict[tuple[str, str], Marks]:
    """Execute calls' marks by (run_id, exec_id); a retried call keeps its last attempt's."""
    calls: dict[tuple[str, str], Marks] = defaultdict(dict)
    with path.open(encoding="utf-8") as lines:
        for line in lines:
            at, event, run_id, exec_id, method = json.loads(line)
            if method == "execute":
                calls[(run_id, exec_id)][event] = at
    return calls


def print_stages(trace: dict[tuple[str, str], Marks], probe: list[dict[str, Any]]) -> None:
    """Medians per Step type over the probe lines that have every mark."""
    stages: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    for entry in probe:
        marks = trace.get((entry.get("run", ""), entry.get("exec_id", "")))
        if not entry["ok"] or marks is None:
            continue
        marks = {**marks, "received": entry["received"], "done": entry["done"]}
        if any(start not in marks or end not in marks for start, end, _, _ in STAGES):
            continue
        for start, end, label, _ in STAGES:
            stages[entry["step"]][label].append(marks[end] - marks[start])
    if not stages:
        print("  (no traced Execute calls matched the probe's)")
        return
    names = list(stages)
    print("  stages of one Execute call, medians in ms (--trace):")
    print("    " + f"{'':<14}" + "".join(f"{name:>17}" for name in names))
    for _, _, label, meaning in STAGES:
        cells = "".join(f"{1000 * statistics.median(stages[n][label]):17.2f}" for n in names)
        print(f"    {label:<14}{cells}   {meaning}")
    totals = "".join(f"{1000 * statistics.median(_sums(stages[n])):17.2f}" for n in names)
    print(f"    {'sum':<14}{totals}")
    print("    calls: " + ", ".join(f"{n} {len(stages[n]['Worker'])}" for n in names))


def _sums(by_stage: dict[str, list[float]]) -> list[float]:
    return [sum(parts) for parts in zip(*by_stage.values(), strict=True)]
