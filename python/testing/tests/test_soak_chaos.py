"""The chaos loop's bookkeeping around armed kills, on a fake cluster (no processes).

Regression: on a busy machine a Worker can claim an arm after the loop gave up
waiting for it, kill itself and be replaced before the next arm; its late
claim then named no current Worker and killed the chaos thread (LookupError),
and the rest of a long run had no kills.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

from dex_agents_testing.soak.chaos import Chaos, ChaosSettings
from dex_agents_testing.soak.cluster import Cluster
from dex_agents_testing.soak.traces import TraceReader
from dex_agents_testing.soak.tracing import claimed_path, trace_path


@dataclass
class FakeProc:
    pid: int
    alive: bool = True

    def poll(self) -> int | None:
        return None if self.alive else -9


@dataclass
class FakeWorker:
    proc: FakeProc

    @property
    def pid(self) -> int:
        return self.proc.pid


@dataclass
class FakeCluster:
    workers: list[FakeWorker]
    restarted: list[int] = field(default_factory=list)
    next_pid: int = 500

    def dexlite_pid(self) -> int:
        return 1

    def dexlite_alive(self) -> bool:
        return True

    def sample_rss(self) -> None:
        return None

    def worker_alive(self, index: int) -> bool:
        return self.workers[index].proc.alive

    def worker_pids(self) -> list[int]:
        return [w.pid for w in self.workers if w.proc.alive]

    def worker_index(self, pid: int) -> int:
        for index, worker in enumerate(self.workers):
            if worker.pid == pid:
                return index
        raise LookupError(f"no Worker has pid {pid}")

    def restart_worker(self, index: int) -> None:
        self.next_pid += 1
        self.workers[index] = FakeWorker(FakeProc(self.next_pid))
        self.restarted.append(index)


def _chaos(tmp_path: Path, cluster: FakeCluster) -> Chaos:
    settings = ChaosSettings(
        min_delay=0.0,
        max_delay=0.0,
        dexlite_share=0.0,
        armed_share=1.0,
        step_types=("RunModel",),
        claim_wait=0.2,
    )
    return Chaos(cast(Cluster, cluster), TraceReader(tmp_path), random.Random(1), settings)


def _claim(tmp_path: Path, pid: int, step_type: str) -> None:
    """What a Worker leaves behind: its trace line and its claim file."""
    entry: dict[str, Any] = {"b": 1, "t": step_type, "p": "execute", "f": "soak-001"}
    trace_path(tmp_path, pid).write_text(json.dumps(entry) + "\n")
    claimed_path(tmp_path, pid).write_text(json.dumps({"step": "soak-001/RunModel-3"}))


def test_a_late_claim_by_a_replaced_worker_counts_as_its_kill(tmp_path: Path) -> None:
    cluster = FakeCluster([FakeWorker(FakeProc(101)), FakeWorker(FakeProc(102))])
    chaos = _chaos(tmp_path, cluster)
    _claim(tmp_path, 99, "RunModel")  # pid 99 is no Worker of the cluster any more

    assert chaos._armed(dexlite=False)

    (kill,) = chaos.log.kills
    assert (kill.kind, kill.how, kill.step_types) == ("worker", "armed", ("RunModel",))
    assert chaos.failure is None


def test_a_worker_that_died_without_a_kill_of_the_loop_is_restarted(tmp_path: Path) -> None:
    cluster = FakeCluster([FakeWorker(FakeProc(101)), FakeWorker(FakeProc(102, alive=False))])
    chaos = _chaos(tmp_path, cluster)

    chaos._restart_the_self_killed()
    chaos._restarting[1].join(10)

    assert cluster.restarted == [1]
    assert cluster.worker_alive(1)
    assert [(k.kind, k.how) for k in chaos.log.kills] == [("worker", "armed")]
