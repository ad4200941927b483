"""One dexlite and K Worker children serving the soak session, each killable and restartable.

Peak RSS is read from /proc/<pid>/status (VmHWM, the high-water mark) just
before a child is killed and at the end, because a dead child's figure is gone.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from dex_agents_testing.processes import DexliteProcess, WorkerProcess
from dex_agents_testing.scenario import FactoryScenario

__all__ = ["FACTORY", "Cluster", "peak_rss_kib"]

FACTORY = "dex_agents_testing.soak.agent:build_soak_flow"


def peak_rss_kib(pid: int) -> int:
    """VmHWM of a live process in KiB; 0 when it is gone or the kernel hides it."""
    try:
        status = Path(f"/proc/{pid}/status").read_text(encoding="ascii")
    except OSError:
        return 0
    for line in status.splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    return 0


class Cluster:
    """The processes under test; `config` is the soak factory's config."""

    def __init__(self, root: Path, workers: int, config: Mapping[str, object]) -> None:
        self.root = root
        self.scenario_path = FactoryScenario(factory=FACTORY, config=dict(config)).save(
            root / "scenario.json"
        )
        self.dexlite = DexliteProcess(root / "dex.sqlite", "--sync", "normal")
        self.workers = [
            WorkerProcess(
                self.dexlite.address, self.scenario_path, log_path=root / f"worker-{i}.log"
            )
            for i in range(workers)
        ]
        self.peak_kib = {"dexlite": 0, "worker": 0}

    @property
    def address(self) -> str:
        return self.dexlite.address

    def start(self) -> None:
        self.dexlite.start()
        for worker in self.workers:
            worker.start()

    def worker_pids(self) -> list[int]:
        return [w.pid for w in self.workers if w.proc is not None and w.proc.poll() is None]

    def dexlite_pid(self) -> int:
        assert self.dexlite.proc is not None
        return self.dexlite.proc.pid

    def dexlite_alive(self) -> bool:
        return self.dexlite.proc is not None and self.dexlite.proc.poll() is None

    def worker_alive(self, index: int) -> bool:
        proc = self.workers[index].proc
        return proc is not None and proc.poll() is None

    def worker_index(self, pid: int) -> int:
        for index, worker in enumerate(self.workers):
            if worker.proc is not None and worker.proc.pid == pid:
                return index
        raise LookupError(f"no Worker has pid {pid}")

    def sample_rss(self) -> None:
        """Folds the live children's VmHWM into the peaks."""
        if self.dexlite.proc is not None:
            self._note("dexlite", peak_rss_kib(self.dexlite.proc.pid))
        for pid in self.worker_pids():
            self._note("worker", peak_rss_kib(pid))

    def kill_worker(self, index: int) -> int:
        """SIGKILLs Worker `index` and returns its pid."""
        worker = self.workers[index]
        pid = worker.pid
        if worker.proc is not None and worker.proc.poll() is None:
            self._note("worker", peak_rss_kib(pid))
        worker.kill()
        return pid

    def restart_worker(self, index: int) -> None:
        self.workers[index].start()

    def kill_dexlite(self) -> None:
        if self.dexlite_alive():
            self._note("dexlite", peak_rss_kib(self.dexlite_pid()))
        self.dexlite.kill()

    def restart_dexlite(self) -> None:
        self.dexlite.start()

    def stop(self) -> None:
        self.sample_rss()
        for worker in self.workers:
            worker.kill()  # called after the checks: no Step needs to finish
        self.dexlite.stop()

    def _note(self, kind: str, kib: int) -> None:
        self.peak_kib[kind] = max(self.peak_kib[kind], kib)
