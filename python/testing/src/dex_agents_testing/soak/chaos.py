"""The chaos loop: SIGKILL a random Worker, or dexlite itself, at random moments, and
restart it.

Each kill records what it interrupted: the Step types the killed Worker was
running (for dexlite, those every Worker was running), read from the Step
traces just before the signal. With `coverage_target`, the loop mostly waits for
a Step type that has fewer kills than the target to be running before it kills,
so short Steps get their share too.
"""

from __future__ import annotations

import random
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field

from dex_agents_testing.soak.cluster import Cluster
from dex_agents_testing.soak.traces import Running, TraceReader

__all__ = ["IDLE", "Chaos", "Kill"]

IDLE = "(no Step)"
_TARGET_WAIT_SECONDS = 4.0
_TARGET_POLL_SECONDS = 0.005


@dataclass(frozen=True)
class Kill:
    kind: str
    """worker or dexlite."""
    step_types: tuple[str, ...]
    at: float


@dataclass
class ChaosSettings:
    min_delay: float
    max_delay: float
    dexlite_share: float
    """The chance that a kill takes dexlite rather than a Worker."""
    coverage_target: int = 0
    coverage_types: tuple[str, ...] = ()


@dataclass
class ChaosLog:
    kills: list[Kill] = field(default_factory=list)
    restart_failures: list[str] = field(default_factory=list)

    def by_kind(self) -> Counter[str]:
        return Counter(k.kind for k in self.kills)

    def by_step_type(self) -> Counter[str]:
        counts: Counter[str] = Counter()
        for kill in self.kills:
            counts.update(kill.step_types or (IDLE,))
        return counts


class Chaos(threading.Thread):
    def __init__(
        self, cluster: Cluster, traces: TraceReader, rng: random.Random, settings: ChaosSettings
    ) -> None:
        super().__init__(name="soak-chaos", daemon=True)
        self.cluster = cluster
        self.traces = traces
        self.rng = rng
        self.settings = settings
        self.log = ChaosLog()
        self.stopping = threading.Event()
        self.lock = threading.Lock()
        """Held while a child is down; the final checks take it so nothing is killed under them."""

    def run(self) -> None:
        settings = self.settings
        # The random pause between kills is the workload's rhythm, not a synchronisation.
        while not self.stopping.wait(self.rng.uniform(settings.min_delay, settings.max_delay)):
            with self.lock:
                if self.stopping.is_set():
                    return
                self._one_kill()

    def stop(self) -> None:
        self.stopping.set()
        self.join(120)

    def _one_kill(self) -> None:
        wanted = self._wanted_type()
        worker = self.rng.randrange(len(self.cluster.workers))
        if wanted is not None:
            found = self._wait_for_running(wanted)
            if found is not None:
                worker = found
        self.cluster.sample_rss()
        if self.rng.random() < self.settings.dexlite_share:
            running = [r for pid in self.cluster.worker_pids() for r in self.traces.in_flight(pid)]
            self.cluster.kill_dexlite()
            self._record("dexlite", running)
            self._restart("dexlite", self.cluster.restart_dexlite)
        else:
            pid = self.cluster.workers[worker].pid
            running = self.traces.in_flight(pid)
            self.cluster.kill_worker(worker)
            self._record("worker", running)
            self.traces.forget(pid)
            self._restart(f"worker {worker}", lambda: self.cluster.restart_worker(worker))

    def _record(self, kind: str, running: list[Running]) -> None:
        types = tuple(sorted({r.step_type for r in running}))
        self.log.kills.append(Kill(kind, types, time.monotonic()))

    def _restart(self, what: str, restart: Callable[[], object]) -> None:
        for attempt in range(3):
            try:
                restart()
                return
            except Exception as error:  # a slow start on a busy machine: try again
                self.log.restart_failures.append(f"{what} attempt {attempt + 1}: {error}")
        raise RuntimeError(f"chaos could not restart {what}: {self.log.restart_failures[-1]}")

    def _wanted_type(self) -> str | None:
        """A Step type still short of the coverage target, most of the time."""
        settings = self.settings
        if not settings.coverage_target or self.rng.random() < 0.2:
            return None
        counts = self.log.by_step_type()
        short = [t for t in settings.coverage_types if counts[t] < settings.coverage_target]
        if not short:
            return None
        ran = self.traces.ran
        # Prefer what the workload runs at all; among those, the least-killed first.
        short.sort(key=lambda t: (ran[t] == 0, counts[t]))
        return short[0] if self.rng.random() < 0.7 else self.rng.choice(short)

    def _wait_for_running(self, step_type: str) -> int | None:
        """The index of a Worker running `step_type` within a few seconds, else None."""
        deadline = time.monotonic() + _TARGET_WAIT_SECONDS
        while time.monotonic() < deadline and not self.stopping.is_set():
            for index, worker in enumerate(self.cluster.workers):
                if worker.proc is None or worker.proc.poll() is not None:
                    continue
                if any(r.step_type == step_type for r in self.traces.in_flight(worker.pid)):
                    return index
            time.sleep(_TARGET_POLL_SECONDS)  # polling interval of the trace files
        return None
