"""Worker child processes for an adapter's integration tests: one Flow type per `WorkerApp`.

A `WorkerApp` loads a test application module by path, so the client holds the
same Flow object as the Worker, which runs that module as a child process in
its own process group (the kill tests SIGKILL the group). The application logs
its model calls and tool runs as JSON lines, which `entries` reads back; gate
files (`WorkerApp.gate`) hold a model call or tool until a test opens them.

The module's contract: `build_flow(flow_type, log_path, interrupt_deadline)`
returns the Flow, and running it as a script with `--server ADDR --flow-type T
--log PATH [--interrupt-deadline S] [--factory NAME]` serves that Flow and
prints `ready`. Every adapter's suite uses it with its own application.
"""

from __future__ import annotations

import functools
import importlib.util
import json
import subprocess
import sys
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dex import StartFlowOptions
from dex_agents import AgentSessionClient, AgentSessionFlow
from dex_agents_contracts import AgentEvent, AgentSnapshot, AgentStatus

from dex_agents_testing.events import events_until
from dex_agents_testing.history import fetch_history, turn_shapes
from dex_agents_testing.processes import ChildProcess, DexliteProcess, child_env, wait_until

__all__ = ["WorkerApp", "load_app"]


@functools.cache
def load_app(script: Path) -> Any:
    """A test application module, loaded by path: the client needs the Worker's Flow object."""
    spec = importlib.util.spec_from_file_location(script.stem, script)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@dataclass
class WorkerApp(ChildProcess):
    """One Flow type served by a Worker child process in its own process group."""

    server: DexliteProcess
    root: Path
    script: Path
    """The application module (see the module docstring for its contract)."""
    factory: str = "build_flow"
    """Another function of the module with `build_flow`'s signature, which the script
    then takes as `--factory NAME`."""
    flow_type: str = field(default_factory=lambda: f"App{uuid.uuid4().hex[:10]}")
    interrupt_deadline: float | None = None
    timeout: float = 30.0
    proc: subprocess.Popen[bytes] | None = None
    stop_timeout: float = 40.0
    runs: dict[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.log_path = self.root / f"{self.flow_type}.jsonl"
        self.log_path.touch()
        self.session_flow = self.build_flow()
        self.client = AgentSessionClient(self.session_flow, server_address=self.server.address)

    def build_flow(self) -> AgentSessionFlow:
        """The client's Flow, as the Worker builds it; a subclass that adds arguments to
        `worker_arguments` passes them here too."""
        build = getattr(load_app(self.script), self.factory)
        flow: AgentSessionFlow = build(self.flow_type, str(self.log_path), self.interrupt_deadline)
        return flow

    def gate(self, name: str) -> Path:
        return Path(f"{self.log_path}.{name}-gate")

    def worker_command(self) -> list[str]:
        """The Worker child's command line; a subclass may run the app another way."""
        return [sys.executable, str(self.script), *self.worker_arguments()]

    def worker_arguments(self) -> list[str]:
        """The arguments of the module's contract (see the module docstring)."""
        return [
            "--server",
            self.server.address,
            "--flow-type",
            self.flow_type,
            "--log",
            str(self.log_path),
            *(
                ["--interrupt-deadline", str(self.interrupt_deadline)]
                if self.interrupt_deadline is not None
                else []
            ),
            *(["--factory", self.factory] if self.factory != "build_flow" else []),
        ]

    def start_worker(self) -> None:
        with (self.root / f"{self.flow_type}.worker.log").open("ab") as err:
            self.proc = subprocess.Popen(
                self.worker_command(),
                env=child_env(),
                stdout=subprocess.PIPE,
                stderr=err,
                start_new_session=True,
            )
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline().decode()
        if not line.startswith("ready"):
            self.kill()
            raise AssertionError(f"the Worker did not start: {line!r}")

    def kill_worker(self) -> None:
        self.kill()

    def stop(self) -> int:
        """Stops the Worker (SIGTERM, SIGKILL after `stop_timeout`) and closes the client."""
        code = super().stop()
        self.client.close()
        return code

    def restart_worker(self) -> None:
        self.kill_worker()
        self.start_worker()

    def start(self, text: str, options: StartFlowOptions | None = None) -> str:
        session = f"s-{uuid.uuid4().hex[:12]}"
        self.runs[session] = self.client.start_session(session, text, options=options)
        return session

    def entries(self, kind: str, name: str | None = None) -> list[dict[str, Any]]:
        lines = self.log_path.read_text().splitlines()
        entries = [json.loads(line) for line in lines if line]
        return [e for e in entries if e["kind"] == kind and (name is None or e["name"] == name)]

    def wait(self, session: str, what: str, check: Any) -> AgentSnapshot:
        def probe() -> AgentSnapshot | None:
            snapshot = self.client.get_snapshot(session)
            return snapshot if check(snapshot) else None

        result: AgentSnapshot = wait_until(probe, timeout=self.timeout, what=what)
        return result

    def wait_idle(self, session: str, turns: int, timeout: float = 30.0) -> AgentSnapshot:
        self.timeout = timeout
        return self.wait(
            session,
            f"{turns} turns",
            lambda s: (
                s.state is not None
                and s.state.turn_count >= turns
                and s.state.status is AgentStatus.WAITING_FOR_USER_MESSAGE
            ),
        )

    def events(self, session: str, until_type: str, *, count: int = 1) -> list[AgentEvent]:
        """AgentEvents from the oldest retained until the `count`-th of `until_type`."""
        return events_until(self.client, session, until_type, count=count)

    def history(self, session: str) -> list[Any]:
        return list(fetch_history(self.server.address, session, self.runs[session]))

    def shapes(self, session: str) -> list[list[str]]:
        return turn_shapes(self.history(session))
