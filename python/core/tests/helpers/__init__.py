"""Test helpers: a scripted session on a real Worker process and a typed client."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from dex import StartFlowOptions, WorkerTarget
from dex.dexpb import dex_pb2 as pb
from dex_agents import AgentSessionClient
from dex_agents_contracts import AgentEvent, AgentSnapshot, AgentStatus
from dex_agents_testing import (
    DexliteProcess,
    FactoryScenario,
    RunLog,
    Scenario,
    WorkerProcess,
    events_until,
    fetch_history,
    free_port,
    turn_shapes,
    wait_until,
)

__all__ = ["FakeContext", "Harness", "HarnessFactory"]


class Harness:
    """One scenario: its Worker process, a client, the run log and the sessions started."""

    def __init__(
        self,
        server: DexliteProcess,
        scenario: Scenario | FactoryScenario,
        scenario_path: Path,
        *,
        listen: bool,
    ) -> None:
        self.server = server
        self.scenario = scenario
        self.scenario_path = scenario_path
        self.flow = scenario.build_flow()
        self.listen_port = free_port() if listen else None
        self.worker = self._new_worker().start()
        target = (
            WorkerTarget(address=f"127.0.0.1:{self.listen_port}")
            if self.listen_port is not None
            else WorkerTarget(pull=True)
        )
        self.client = AgentSessionClient(
            self.flow, server_address=server.address, worker_target=target
        )
        self.runs: dict[str, str] = {}

    def _new_worker(self) -> WorkerProcess:
        return WorkerProcess(self.server.address, self.scenario_path, listen_port=self.listen_port)

    @staticmethod
    def create(
        server: DexliteProcess, root: Path, *, listen: bool = False, **fields: Any
    ) -> Harness:
        """A Worker process for a new scenario (pull mode unless `listen`)."""
        name = f"T{uuid.uuid4().hex[:10]}"
        fields.setdefault("flow_type", name)
        fields.setdefault("log_path", str(root / f"{name}.runs.jsonl"))
        scenario = Scenario(**fields)
        path = scenario.save(root / f"{name}.scenario.json")
        return Harness(server, scenario, path, listen=listen)

    @staticmethod
    def create_from_factory(
        server: DexliteProcess,
        root: Path,
        factory: str,
        config: dict[str, Any] | None = None,
        *,
        listen: bool = False,
    ) -> Harness:
        """A Worker process for the Flow `factory(config)` builds (see FactoryScenario).

        `config` gets `flow_type` and `log_path` (a RunLog file) unless it sets them.
        """
        name = f"T{uuid.uuid4().hex[:10]}"
        config = dict(config or {})
        config.setdefault("flow_type", name)
        config.setdefault("log_path", str(root / f"{name}.runs.jsonl"))
        scenario = FactoryScenario(factory=factory, config=config, log_path=config["log_path"])
        path = scenario.save(root / f"{name}.scenario.json")
        return Harness(server, scenario, path, listen=listen)

    @property
    def log(self) -> RunLog:
        return self.scenario.log

    def start(
        self,
        initial_message: str | None = None,
        *,
        options: StartFlowOptions | None = None,
        session_settings: dict[str, object] | None = None,
    ) -> str:
        session_id = f"s-{uuid.uuid4().hex[:12]}"
        self.runs[session_id] = self.client.start_session(
            session_id, initial_message, options=options, session_settings=session_settings
        )
        return session_id

    def snapshot(self, session_id: str) -> AgentSnapshot:
        return self.client.get_snapshot(session_id)

    def wait_snapshot(
        self,
        session_id: str,
        check: Callable[[AgentSnapshot], bool],
        *,
        timeout: float = 30.0,
        what: str = "a session state",
    ) -> AgentSnapshot:
        def probe() -> AgentSnapshot | None:
            snapshot = self.snapshot(session_id)
            return snapshot if check(snapshot) else None

        return wait_until(probe, timeout=timeout, what=what)

    def wait_idle(self, session_id: str, turns: int, timeout: float = 30.0) -> AgentSnapshot:
        """Waits until `turns` turns ended and the session waits for a user message."""

        def idle(s: AgentSnapshot) -> bool:
            return (
                s.state is not None
                and s.state.turn_count >= turns
                and s.state.status is AgentStatus.WAITING_FOR_USER_MESSAGE
            )

        return self.wait_snapshot(session_id, idle, timeout=timeout, what=f"{turns} turns")

    def history(self, session_id: str) -> list[pb.FlowHistoryEvent]:
        return fetch_history(self.server.address, session_id, self.runs[session_id])

    def shapes(self, session_id: str) -> list[list[str]]:
        return turn_shapes(self.history(session_id))

    def events(self, session_id: str, until_type: str, *, count: int = 1) -> list[AgentEvent]:
        """Events from the start until the `count`-th event of `until_type`."""
        return events_until(self.client, session_id, until_type, count=count)

    def restart_worker(self) -> None:
        self.worker.kill()
        self.worker = self._new_worker().start()

    def close(self) -> None:
        self.worker.stop()
        self.client.close()


HarnessFactory = Callable[..., Harness]


def texts(snapshot: AgentSnapshot) -> Sequence[str | None]:
    return [m.text for m in snapshot.messages]


class FakeContext:
    """Just enough of a Step or RPC Context for Attribute reads and writes: a dict.

    For rules easier to pin down without a server, such as message rollover
    boundaries and retention, or an RPC before the session's state exists.
    """

    flow_id = "fake-session"

    def __init__(self) -> None:
        self.values: dict[tuple[str, str | None], object] = {}

    def _get_attribute(self, definition: Any, instance: str | None) -> Any:
        return self.values.get((definition.name, instance))

    def _set_attribute(self, definition: Any, instance: str | None, value: object) -> None:
        self.values[(definition.name, instance)] = value

    def _delete_attribute(self, definition: Any, instance: str | None) -> None:
        self.values.pop((definition.name, instance), None)

    def _attribute_map_keys(self, definition: Any) -> tuple[str, ...]:
        return tuple(sorted(i for (n, i) in self.values if n == definition.name and i is not None))

    def keys(self, name: str) -> list[int]:
        return [int(i) for (n, i) in sorted(self.values, key=str) if n == name and i is not None]
