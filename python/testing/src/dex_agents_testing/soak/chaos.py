"""The chaos loop: SIGKILL a random Worker, or dexlite itself, at random moments, and
restart it.

Two kinds of moment. A random kill signals a random child now. An armed kill
picks the Step type with the fewest kills so far and arms it (tracing.py): the
first Worker to begin such a Step sends the SIGKILL itself, to itself or to
dexlite, at once or a few milliseconds in, so short Steps are hit as often as
long ones. Each kill records the Step types running when it landed: for a
Worker, what its trace shows begun and not ended once it is dead; for dexlite,
what every Worker's trace shows running.
"""

from __future__ import annotations

import json
import os
import random
import threading
import time
from collections import Counter, deque
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from dex_agents_testing.soak.cluster import Cluster
from dex_agents_testing.soak.traces import Running, TraceReader
from dex_agents_testing.soak.tracing import arm_path

__all__ = ["IDLE", "Chaos", "ChaosLog", "ChaosSettings", "Kill"]

IDLE = "(no Step)"
_DEATH_WAIT_SECONDS = 10.0
_POLL_SECONDS = 0.01
_MAX_ARMED_DELAY = 0.05
_PROGRESS_STEPS = 5
_EXCLUDED_STEPS = 256
_PROGRESS_WAIT_SECONDS = 30.0


@dataclass(frozen=True)
class Kill:
    kind: str
    """worker or dexlite."""
    how: str
    """random or armed."""
    step_types: tuple[str, ...]


@dataclass(frozen=True)
class ChaosSettings:
    min_delay: float
    max_delay: float
    dexlite_share: float
    """The chance that a kill takes dexlite rather than a Worker."""
    armed_share: float
    """The chance that a kill is armed for a Step type rather than random."""
    step_types: tuple[str, ...]
    """The Step types armed kills go for, fewest kills first."""
    claim_wait: float = 4.0
    """Seconds an armed kill waits for its Step type before a random kill replaces it."""
    quota: int = 0
    """Kills wanted per Step type: armed kills go for the types under it first."""


@dataclass
class ChaosLog:
    kills: list[Kill] = field(default_factory=list)
    unclaimed_arms: int = 0
    restart_failures: list[str] = field(default_factory=list)

    def by_kind(self) -> Counter[str]:
        return Counter(f"{k.kind} ({k.how})" for k in self.kills)

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
        self.failure: BaseException | None = None
        self._unclaimed: Counter[str] = Counter()
        """Arms per Step type no Worker claimed: rare types are tried less often."""
        self._armed_steps: deque[str] = deque(maxlen=_EXCLUDED_STEPS)
        """The Steps armed kills took lately; the next arms leave their retries alone."""
        self._restarting: dict[int, threading.Thread] = {}
        """Workers being restarted in the background; the loop kills on meanwhile."""

    def run(self) -> None:
        settings = self.settings
        try:
            # The random pause between kills is the workload's rhythm, not a synchronisation.
            while not self.stopping.wait(self.rng.uniform(settings.min_delay, settings.max_delay)):
                self._one_kill()
                self._wait_progress()
        except BaseException as error:  # reported by the run, which then fails
            self.failure = error

    def stop(self) -> None:
        """Ends the loop and waits until every child it killed runs again."""
        self.stopping.set()
        self.join(120)
        for thread in list(self._restarting.values()):
            thread.join(120)

    # --- one kill -------------------------------------------------------------------

    def _wait_progress(self) -> None:
        """Waits until the cluster runs Steps again after a kill.

        Without this, kills faster than the Workers' reconnect backoff would stall
        every session and soak nothing. The deadline covers a workload with
        nothing to run (every session waiting on a timer).
        """
        before = self._executes_begun()
        deadline = time.monotonic() + _PROGRESS_WAIT_SECONDS
        while self._executes_begun() < before + _PROGRESS_STEPS:
            if time.monotonic() > deadline or self.stopping.is_set():
                return
            time.sleep(_POLL_SECONDS * 5)  # polling interval of a condition wait

    def _executes_begun(self) -> int:
        for pid in self.cluster.worker_pids():
            self.traces.in_flight(pid)  # reads the file on
        return sum(self.traces.ran.values())

    def _one_kill(self) -> None:
        self._restart_the_self_killed()
        dexlite = self.rng.random() < self.settings.dexlite_share
        if self.rng.random() < self.settings.armed_share and self._armed(dexlite):
            return
        self.cluster.sample_rss()
        if dexlite:
            self.cluster.kill_dexlite()
            self._dexlite_died("random")
        else:
            live = [i for i in range(len(self.cluster.workers)) if self._settled(i)]
            if not live:
                return  # every Worker is starting up: the next pause comes first
            index = self.rng.choice(live)
            pid = self.cluster.kill_worker(index)
            self._worker_died(index, pid, "random")

    def _restart_the_self_killed(self) -> None:
        """Restarts a Worker that died with no kill of this loop's: one that claimed an
        arm after the loop had given up on it (a slow claim on a busy machine), and
        dexlite when such a claim killed it."""
        if not self.cluster.dexlite_alive():
            self.cluster.kill_dexlite()  # reaps it
            self._dexlite_died("armed")
        for index in range(len(self.cluster.workers)):
            restarting = self._restarting.get(index)
            if restarting is not None and restarting.is_alive():
                continue
            if not self.cluster.worker_alive(index):
                pid = self.cluster.workers[index].pid
                self._worker_died(index, pid, "armed")

    def _settled(self, index: int) -> bool:
        """Worker `index` runs and no restart of it is under way."""
        thread = self._restarting.get(index)
        return (thread is None or not thread.is_alive()) and self.cluster.worker_alive(index)

    def _armed(self, dexlite: bool) -> bool:
        """An armed kill; False when no Worker began the Step type in time."""
        step_type = self._least_killed()
        trace_dir = self.traces.trace_dir
        pgid = self.cluster.dexlite_pid() if dexlite else 0
        delay = 0.0 if self.rng.random() < 0.5 else self.rng.uniform(0, _MAX_ARMED_DELAY)
        self.cluster.sample_rss()
        armed = arm_path(trace_dir)
        staged = armed.with_suffix(".staged")
        arm = {
            "step_type": step_type,
            "pgid": pgid,
            "delay": delay,
            "exclude": list(self._armed_steps),
        }
        staged.write_text(json.dumps(arm))
        os.replace(staged, armed)
        claimer = self._wait_claim(trace_dir)
        if claimer is None:
            try:
                os.rename(armed, armed.with_suffix(".cancelled"))
            except FileNotFoundError:
                claimer = self._wait_claim(trace_dir)  # claimed while we gave up
            if claimer is None:
                self.log.unclaimed_arms += 1
                self._unclaimed[step_type] += 1
                return False
        if dexlite:
            self._wait_dead(self.cluster.dexlite_alive, "dexlite")
            self.cluster.kill_dexlite()  # reaps it
            self._dexlite_died("armed")
            return True
        try:
            index = self.cluster.worker_index(claimer)
        except LookupError:
            # A late claim: the Worker claimed after this loop gave up on an earlier arm,
            # killed itself, and was replaced since. Its kill still counts.
            self._record("worker", "armed", self.traces.in_flight(claimer))
            self.traces.forget(claimer)
            return True
        self._wait_dead(lambda: self.cluster.worker_alive(index), f"Worker {claimer}")
        pending = self._restarting.get(index)
        if pending is not None:
            pending.join(120)  # a Worker that claimed while its start was still returning
        self.cluster.kill_worker(index)  # reaps it
        self._worker_died(index, claimer, "armed")
        return True

    def _wait_claim(self, trace_dir: Path) -> int | None:
        """The pid of the Worker that claimed the arm; the Step it claimed it in is noted."""
        deadline = time.monotonic() + self.settings.claim_wait
        while True:
            for path in trace_dir.glob("claimed-*.json"):
                self._armed_steps.append(str(json.loads(path.read_text())["step"]))
                path.unlink()
                return int(path.stem.split("-", 1)[1])
            if time.monotonic() > deadline or self.stopping.is_set():
                return None
            time.sleep(_POLL_SECONDS)  # polling interval of a condition wait

    def _wait_dead(self, alive: Callable[[], bool], what: str) -> None:
        deadline = time.monotonic() + _DEATH_WAIT_SECONDS
        while alive():
            if time.monotonic() > deadline:
                raise RuntimeError(f"chaos: {what} claimed an armed kill but did not die")
            time.sleep(_POLL_SECONDS)  # polling interval of a condition wait

    def _dexlite_died(self, how: str) -> None:
        running = [r for pid in self.cluster.worker_pids() for r in self.traces.in_flight(pid)]
        self._record("dexlite", how, running)
        self._restart("dexlite", self.cluster.restart_dexlite)

    def _worker_died(self, index: int, pid: int, how: str) -> None:
        self._record("worker", how, self.traces.in_flight(pid))  # its trace is complete now
        self.traces.forget(pid)
        thread = threading.Thread(
            target=self._restart,
            args=(f"Worker {index}", lambda: self.cluster.restart_worker(index)),
            name=f"soak-restart-{index}",
            daemon=True,
        )
        self._restarting[index] = thread
        thread.start()

    def _record(self, kind: str, how: str, running: list[Running]) -> None:
        types = tuple(sorted({r.step_type for r in running}))
        self.log.kills.append(Kill(kind, how, types))

    def _restart(self, what: str, restart: Callable[[], object]) -> None:
        for attempt in range(3):
            try:
                restart()
                return
            except Exception as error:  # a slow start on a busy machine: try again
                self.log.restart_failures.append(f"{what} attempt {attempt + 1}: {error}")
        self.failure = RuntimeError(f"chaos could not restart {what}")
        self.stopping.set()

    def quota_met(self, quota: int) -> bool:
        """Every Step type has `quota` kills (False for a quota of 0)."""
        counts = self.log.by_step_type()
        return quota > 0 and all(counts[t] >= quota for t in self.settings.step_types)

    def _least_killed(self) -> str:
        """The type under its quota with the fewest kills, counting each unclaimed arm
        as a kill, so a type rarely running does not hold up the others."""
        counts = self.log.by_step_type()
        ran = self.traces.ran
        quota = self.settings.quota
        types = list(self.settings.step_types)
        self.rng.shuffle(types)  # ties broken at random
        return min(
            types,
            key=lambda t: (
                quota > 0 and counts[t] >= quota,
                counts[t] + self._unclaimed[t],
                ran[t] == 0,
            ),
        )
