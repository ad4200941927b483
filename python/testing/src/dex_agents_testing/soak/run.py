"""One soak run: start the cluster, drive the sessions under chaos, check, and count."""

from __future__ import annotations

import itertools
import random
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from dex import WorkerTarget
from dex_agents import AgentSessionClient

from dex_agents_testing.history import executed_steps, fetch_history
from dex_agents_testing.soak.agent import build_soak_flow
from dex_agents_testing.soak.chaos import Chaos, ChaosSettings
from dex_agents_testing.soak.cluster import Cluster
from dex_agents_testing.soak.driver import SessionDriver, SessionResult
from dex_agents_testing.soak.figures import Figures
from dex_agents_testing.soak.invariants import Violation, check_session, stray_effects
from dex_agents_testing.soak.known_bugs import routeless_failures
from dex_agents_testing.soak.plans import TurnPlan, choose_plan
from dex_agents_testing.soak.traces import TraceReader

__all__ = ["COVERAGE_TYPES", "SoakSettings", "run_soak"]

COVERAGE_TYPES = (
    "StartAgentSession",
    "AwaitUserMessage",
    "RunModel",
    "ResumeTurn",
    "AwaitToolApproval",
    "CallTool",
    "CallSingleAttemptTool",
    "AwaitQuestionAnswer",
    "AwaitTimer",
    "ApplyTurnControl",
    "FinishTurnCancellation",
    "RecordToolFailure",
    "RecordToolOutcomeUnknown",
    "PollToolTask",
    "CancelToolTask",
    "CompactContext",
)
"""The Step types the soak workload runs in every run; --long wants kills in each."""


@dataclass(frozen=True, kw_only=True)
class SoakSettings:
    sessions: int = 20
    turns: int = 5
    workers: int = 2
    seed: int = 1
    min_delay: float = 0.2
    max_delay: float = 1.2
    dexlite_share: float = 0.2
    armed_share: float = 0.6
    """The share of kills armed for the least-killed Step type (chaos.py)."""
    claim_wait_seconds: float = 4.0
    model_seconds: float = 0.3
    tool_seconds: float = 0.1
    stagger_seconds: float = 5.0
    """Sessions start spread over this many seconds, so starts meet the chaos too."""
    deadline_seconds: float = 180.0
    """How long the driver waits for any one state before it gives the session up."""
    coverage_target: int = 0
    minutes: float = 0.0
    """Above 0, a timed run: it goes on until every Step type in COVERAGE_TYPES has
    `coverage_target` kills, or until this many minutes passed. Each of the
    `sessions` slots runs a session of `turns` turns, then starts the next one
    (`soak-007`, `soak-007-2`, ...), so session starts meet the chaos all along."""
    root: str | None = None


@contextmanager
def _root(path: str | None) -> Iterator[Path]:
    if path is not None:
        Path(path).mkdir(parents=True, exist_ok=True)
        yield Path(path)
        return
    with tempfile.TemporaryDirectory(prefix="dex-agents-soak-") as root:
        yield Path(root)


def _session_id(slot: int, generation: int) -> str:
    return f"soak-{slot:03d}" if generation == 1 else f"soak-{slot:03d}-{generation}"


def _plans(settings: SoakSettings, session_id: str) -> list[TurnPlan]:
    """A session's turns, the same for the same seed whichever thread asks first."""
    rng = random.Random(f"{settings.seed}/{session_id}")
    return [choose_plan(rng, f"{session_id}.{t}") for t in range(1, settings.turns + 1)]


def _steer_plans(plans: list[TurnPlan]) -> dict[str, TurnPlan]:
    """The message each steer turn sends mid-turn."""
    return {p.tag: TurnPlan(kind="text", tag=p.tag + "s") for p in plans if p.kind == "steer"}


def run_soak(settings: SoakSettings) -> Figures:
    """Runs the soak and returns its figures; violations are listed in them."""
    with _root(settings.root) as root:
        effects, traces_dir = root / "effects", root / "traces"
        effects.mkdir()
        traces_dir.mkdir()
        config = {
            "flow_type": "SoakSession",
            "effects_dir": str(effects),
            "trace_dir": str(traces_dir),
            "model_seconds": settings.model_seconds,
            "tool_seconds": settings.tool_seconds,
        }
        cluster = Cluster(root, settings.workers, config)
        cluster.start()
        try:
            return _run(settings, cluster, config, effects, traces_dir)
        finally:
            cluster.stop()


def _run(
    settings: SoakSettings,
    cluster: Cluster,
    config: dict[str, object],
    effects: Path,
    traces_dir: Path,
) -> Figures:
    rng = random.Random(settings.seed)
    slots = range(settings.sessions)
    starts = {slot: rng.uniform(0, settings.stagger_seconds) for slot in slots}
    flow = build_soak_flow(config)
    slot_clients = {
        slot: AgentSessionClient(
            flow, server_address=cluster.address, worker_target=WorkerTarget(pull=True)
        )
        for slot in slots
    }
    clients: dict[str, AgentSessionClient] = {}
    traces = TraceReader(traces_dir)
    chaos = Chaos(
        cluster,
        traces,
        random.Random(settings.seed * 7919 + 1),
        ChaosSettings(
            min_delay=settings.min_delay,
            max_delay=settings.max_delay,
            dexlite_share=settings.dexlite_share,
            armed_share=settings.armed_share,
            claim_wait=settings.claim_wait_seconds,
            step_types=COVERAGE_TYPES,
            quota=settings.coverage_target,
        ),
    )
    results: dict[str, SessionResult] = {}
    cap = time.monotonic() + settings.minutes * 60

    def enough() -> bool:
        if chaos.failure is not None:
            return True  # the run fails anyway: end the turns now, not at the time cap
        if settings.minutes <= 0:
            return False
        return time.monotonic() > cap or chaos.quota_met(settings.coverage_target)

    def drive(slot: int) -> None:
        time.sleep(starts[slot])  # the workload's arrival pattern, not a synchronisation
        for generation in itertools.count(1):
            sid = _session_id(slot, generation)
            plans = _plans(settings, sid)
            clients[sid] = slot_clients[slot]
            driver = SessionDriver(
                slot_clients[slot],
                sid,
                plans,
                steer_plans=_steer_plans(plans),
                deadline_seconds=settings.deadline_seconds,
                enough=enough,
            )
            results[sid] = driver.run()
            if settings.minutes <= 0 or results[sid].failure is not None or enough():
                return

    began = time.monotonic()
    chaos.start()
    threads = [
        threading.Thread(target=drive, args=(slot,), name=_session_id(slot, 1)) for slot in slots
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    seconds = time.monotonic() - began
    chaos.stop()
    if chaos.failure is not None:
        raise RuntimeError("the chaos loop failed") from chaos.failure
    try:
        return _check(
            settings=settings,
            cluster=cluster,
            clients=clients,
            results=results,
            chaos=chaos,
            traces=traces,
            effects=effects,
            seconds=seconds,
        )
    finally:
        for client in slot_clients.values():
            client.close()


def _check(
    *,
    settings: SoakSettings,
    cluster: Cluster,
    clients: dict[str, AgentSessionClient],
    results: dict[str, SessionResult],
    chaos: Chaos,
    traces: TraceReader,
    effects: Path,
    seconds: float,
) -> Figures:
    violations: list[Violation] = []
    known: list[str] = []
    steps = 0
    turns = 0
    failed: Counter[str] = Counter()
    for sid in sorted(results):
        client = clients[sid]
        result = results[sid]
        try:
            snapshot = client.get_snapshot(sid)
            messages = client.all_messages(sid)
            run_id = client.client.describe_flow(sid).run_id
            executed = executed_steps(fetch_history(cluster.address, sid, run_id))
        except Exception as error:  # the session's state is unreadable: that is the finding
            detail = f"{error!r}; the driver: {result.failure or 'no failure'}"
            violations.append(Violation(sid, "the session's state is readable", detail))
            continue
        steps += len(executed)
        failed.update(s.step_type for s in executed if s.failed)
        violations.extend(
            Violation(
                sid,
                "no single-attempt tool body ran twice",
                f"history: {s.step_execution_id} ended after attempt {s.attempt}",
            )
            for s in executed
            if s.step_type == "CallSingleAttemptTool" and s.attempt > 1
        )
        turns += snapshot.state.turn_count if snapshot.state else 0
        violations.extend(
            Violation(sid, "a Step without a failure route never gives up", execution)
            for execution in routeless_failures(executed)
        )
        violations.extend(check_session(result, snapshot, messages, effects))
    violations.extend(stray_effects(list(results.values()), effects))
    traces.read_all()
    cluster.sample_rss()
    notes = [f"restart retries: {failure}" for failure in chaos.log.restart_failures]
    errors: Counter[str] = Counter()
    for result in results.values():
        errors.update(result.errors)
    notes.append(f"armed kills no Worker claimed in time: {chaos.log.unclaimed_arms}")
    resent = sum(len(r.resent) for r in results.values())
    notes.append(
        f"calls the driver sent again after an unanswered one (same client request ID): {resent}"
    )
    failed_turns = Counter(
        t.failure for r in results.values() for t in r.turns if t.failure is not None
    )
    notes.append(
        "turns that failed because a Step's attempts ran out (allowed): "
        + (", ".join(f"{n} x {error!r}" for error, n in failed_turns.items()) or "none")
    )
    notes.append(
        "client errors during restarts: "
        + (", ".join(f"{name} {n}" for name, n in sorted(errors.items())) or "none")
    )
    return Figures(
        seed=settings.seed,
        sessions=len(results),
        turns=turns,
        steps=steps,
        seconds=seconds,
        latencies=[t.latency for r in results.values() for t in r.turns if t.latency],
        kills_by_kind=chaos.log.by_kind(),
        kills_by_step=chaos.log.by_step_type(),
        steps_ran=traces.ran,
        failed_steps=failed,
        violations=[str(v) for v in violations],
        known_bugs=known,
        peak_kib=dict(cluster.peak_kib),
        rpc_retries=sum(errors.values()),
        coverage_target=settings.coverage_target,
        coverage_types=COVERAGE_TYPES if settings.coverage_target else (),
        notes=notes,
    )
