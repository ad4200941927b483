"""The bench's agent, session Flow and Worker child, and how it drives a session.

`session_on_dexlite.py` measures with these. The Worker child runs this file:

    python bench_session.py SERVER WORKER_CONFIG_JSON
"""

from __future__ import annotations

import cProfile
import json
import os
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from types import FrameType
from typing import Any

import grpc
from dex import Context, RPCResult, rpc
from dex.dexpb import dex_pb2 as pb
from dex.dexpb import dex_pb2_grpc
from dex_agents import AgentSessionClient, AgentSessionFlow, ToolPolicy, run_worker
from dex_agents.models import (
    ModelRequest,
    ModelResponse,
    ScriptedModelClient,
    ScriptEntry,
    scripted_answer,
    scripted_tool_calls,
)
from dex_agents.options import AgentSessionOptions, CompactionPolicy
from dex_agents.runner import AgentTurnContext, AgentTurnOutcome
from dex_agents.session._step_options import LOAD_MESSAGES_AND_CHUNKS, LOAD_TOOL_CALLS
from dex_agents.stepwise import AgentDefinition, StepwiseRunner, tool
from dex_agents_contracts import AgentStatus, ToolEffect, encode
from dex_agents_testing import DexliteProcess, child_env
from google.protobuf import empty_pb2
from worker_probe import install as install_probe
from worker_probe import note

TURN_SHAPE = ["RunModel", "CallTool", "ResumeTurn", "RunModel"]
TURN_STARTS = ("StartAgentSession", "AwaitUserMessage")
QUESTION = "What is x?"
FANOUT = 10
"""Tool calls per model response in the growth turns, which store 2 + 2 * FANOUT messages."""
SUMMARY_INSTRUCTIONS = "Summarize the bench conversation."
SUMMARY_TEXT = "The user asked what x is, many times; the lookup tool said 42 every time."


# --- the agent (the same in the Worker and in-process) --------------------------------


def lookup(key: str) -> str:
    """Returns at once: the bench measures the loop, not the tool.

    Args:
        key: What to look up.
    """
    return f"value of {key}"


def script(turns: int, fanout_turns: int = 0) -> list[ScriptEntry]:
    """`turns` turns with one tool call, then `fanout_turns` with FANOUT parallel calls."""
    entries: list[ScriptEntry] = []
    for n in range(turns + fanout_turns):
        count = 1 if n < turns else FANOUT
        calls = [(f"call-{i}", "lookup", f'{{"key":"x{i}"}}') for i in range(1, count + 1)]
        entries.append(scripted_tool_calls(*calls))
        entries.append(scripted_answer("x is 42."))
    return entries


class SummaryRoutingModel:
    """Turn calls take the turn script; summary calls (by their instructions) the other."""

    def __init__(self, turns: ScriptedModelClient, summaries: ScriptedModelClient) -> None:
        self._turns = turns
        self._summaries = summaries

    async def complete(self, request: ModelRequest) -> ModelResponse:
        if request.instructions == SUMMARY_INSTRUCTIONS:
            return await self._summaries.complete(request)
        return await self._turns.complete(request)

    def supports_forced_tool_choice(self, settings: Mapping[str, object]) -> bool:
        return True


class ProbedStepwiseRunner(StepwiseRunner):
    """Stepwise that tells the Worker probe how many stored messages the model gets."""

    async def run_model_step(self, turn: AgentTurnContext) -> AgentTurnOutcome:
        note(
            model_messages=len(turn.messages),
            summary_generation=turn.context_summary.generation if turn.context_summary else 0,
        )
        return await super().run_model_step(turn)


def build_runner(turns: int, fanout_turns: int = 0, summaries: int = 0) -> StepwiseRunner:
    # Unrecorded: a recorded request holds the whole model input, and a long session's
    # records made the Worker's garbage collections take seconds.
    turn_model = ScriptedModelClient(script(turns, fanout_turns), record_requests=False)
    model = SummaryRoutingModel(
        turn_model,
        ScriptedModelClient([scripted_answer(SUMMARY_TEXT)] * summaries, record_requests=False),
    )
    chosen = tool(lookup, name="lookup", policy=ToolPolicy(effect=ToolEffect.READ))
    definition = AgentDefinition(
        instructions="Answer.",
        tools=[chosen],
        model=model,
        summary_instructions=SUMMARY_INSTRUCTIONS,
    )
    return ProbedStepwiseRunner(definition)


class MeasuredSessionFlow(AgentSessionFlow):
    """The session Flow plus one read-only RPC that loads RunModel's static selection."""

    @rpc(load_attribute_maps=(*LOAD_MESSAGES_AND_CHUNKS, *LOAD_TOOL_CALLS))
    def stored_chunks(self, context: Context) -> RPCResult[str]:
        """JSON [count, bytes]: every stored AgentMessageChunks instance (its wire JSON)."""
        chunks = self.schema.message_chunks
        sizes = [
            len(encode(chunks.get(context, key)).encode("utf-8"))
            for key in chunks.get_all_instance_keys(context)
        ]
        return RPCResult(json.dumps([len(sizes), sum(sizes)]))


# --- the Worker child process -----------------------------------------------------------


@dataclass
class WorkerConfig:
    flow_type: str
    turns: int  # single-call turns of the latency session
    fanout_turns: int  # then FANOUT turns of the same session (0 in a latency-only Worker)
    compact_turns: int  # FANOUT turns of the compaction session (0: no such Flow)
    context_window_tokens: int
    retained_message_limit: int
    probe_log: str
    listen: str | None = None
    profile: str | None = None

    @property
    def compact_flow_type(self) -> str:
        return f"{self.flow_type}Compacting"


def compaction_options(config: WorkerConfig) -> AgentSessionOptions:
    return AgentSessionOptions(
        compaction=CompactionPolicy(context_window_tokens=config.context_window_tokens),
        retained_message_limit=config.retained_message_limit,
    )


def worker_main(server: str, config: WorkerConfig) -> None:
    install_probe(config.probe_log)
    flows = [
        MeasuredSessionFlow(
            build_runner(config.turns, config.fanout_turns), flow_type=config.flow_type
        )
    ]
    if config.compact_turns:
        # Every turn stores messages, so at most one compaction a turn; a few spare.
        runner = build_runner(0, config.compact_turns, summaries=2 * config.compact_turns + 8)
        flows.append(
            MeasuredSessionFlow(
                runner,
                flow_type=config.compact_flow_type,
                options=compaction_options(config),
            )
        )
    if config.profile:
        _profile_on_signals(config.profile)
    run_worker(
        flows,
        server_address=server,
        listen=config.listen,
        on_ready=lambda: print("ready", flush=True),
    )


def _profile_on_signals(path: str) -> None:
    """SIGUSR1 starts cProfile in the Worker's event-loop thread; SIGUSR2 writes it to `path`.

    It counts the thread's CPU time, like `profiled_dexlite.py`: waits in epoll do not show.
    """
    profiler = cProfile.Profile(time.thread_time)

    def start(signum: int, frame: FrameType | None) -> None:
        profiler.enable()

    def stop(signum: int, frame: FrameType | None) -> None:
        profiler.disable()
        profiler.dump_stats(path + ".tmp")
        os.replace(path + ".tmp", path)

    signal.signal(signal.SIGUSR1, start)
    signal.signal(signal.SIGUSR2, stop)


def start_worker(server: str, config: WorkerConfig, log_path: Path) -> subprocess.Popen[bytes]:
    args = [sys.executable, __file__, server, json.dumps(asdict(config))]
    with open(log_path, "ab") as log:
        proc = subprocess.Popen(
            args, env=child_env(), stdout=subprocess.PIPE, stderr=log, start_new_session=True
        )
    assert proc.stdout is not None
    line = proc.stdout.readline().decode()
    if not line.startswith("ready"):
        proc.kill()
        raise RuntimeError(f"the Worker did not start (see {log_path}): {line!r}")
    return proc


class InstrumentedDexlite(DexliteProcess):
    """dexlite run by a bench launcher script that writes `output` on SIGUSR2.

    `profiled_dexlite.py` (cProfile in every thread) or `traced_dexlite.py`
    (stage timestamps of each Step method call), both on SIGUSR1..SIGUSR2.
    """

    def __init__(self, launcher: str, db_path: Path, output: Path, *extra_args: str) -> None:
        super().__init__(db_path, *extra_args)
        self.launcher = launcher
        self.output = output

    def start(self) -> InstrumentedDexlite:
        launcher = Path(__file__).with_name(self.launcher)
        args = [sys.executable, str(launcher), str(self.output), "serve"]
        args += ["--listen", self.address, "--db", self.db_path, *self.extra_args]
        with open(self.log_path, "ab") as log:
            self.proc = subprocess.Popen(
                args, env=child_env(), stdout=log, stderr=subprocess.STDOUT, start_new_session=True
            )
        deadline = time.monotonic() + 30
        with grpc.insecure_channel(self.address) as channel:
            stub = dex_pb2_grpc.FlowServiceStub(channel)
            while True:
                try:
                    stub.HealthCheck(empty_pb2.Empty(), timeout=1.0)
                    return self
                except grpc.RpcError:
                    if time.monotonic() > deadline or self.proc.poll() is not None:
                        raise RuntimeError(f"dexlite did not start (see {self.log_path})") from None
                    time.sleep(0.05)


# --- driving a session -------------------------------------------------------------------


@dataclass
class TurnTiming:
    turn: int  # 1-based
    messages_before: int  # stored messages when the turn's user message was sent
    client_seconds: float  # send_user_message -> turn_completed received


def run_turn(
    client: AgentSessionClient, session: str, token: str, turn: int, stored: int
) -> tuple[TurnTiming, str, int, str]:
    """One turn; returns its timing, the events' resume token, the messages it stored
    and its turn ID."""
    started = time.perf_counter()
    turn_id = ""
    if not client.send_user_message(session, QUESTION):
        raise RuntimeError("send_user_message returned false")
    appended = 0
    resume = token
    for event, resume in client.follow_events(  # noqa: B007 - the last token is returned
        session, token, until=lambda e: e.type in ("turn_completed", "turn_failed")
    ):
        if event.type == "turn_failed":
            raise RuntimeError(f"turn {turn} failed: {event.payload}")
        if event.type == "turn_completed":
            # message_count: what the turn appended after its user message.
            appended = 1 + int(json.loads(event.payload)["message_count"])
            turn_id = event.turn_id or ""
    return TurnTiming(turn, stored, time.perf_counter() - started), resume, appended, turn_id


@dataclass
class Checkpoint:
    turn: int
    messages: int
    stored_chunks: tuple[int, int]  # (count, bytes) from the RPC


class Driver:
    """Sends turns into one session, counting stored messages; checkpoints at given lengths."""

    def __init__(self, client: AgentSessionClient, flow: MeasuredSessionFlow) -> None:
        self.client = client
        self.flow = flow
        self.session = f"bench-{uuid.uuid4().hex[:8]}"
        self.run_id = client.start_session(self.session)
        self.token = ""
        self.stored = 0
        self.turns = 0
        self.last_turn_id = ""
        self.timings: list[TurnTiming] = []
        self.checkpoints: list[Checkpoint] = []

    def turn(self, pending_sizes: list[int] | None = None) -> None:
        self.turns += 1
        timing, self.token, appended, self.last_turn_id = run_turn(
            self.client, self.session, self.token, self.turns, self.stored
        )
        self.timings.append(timing)
        self.stored += appended
        while pending_sizes and self.stored >= pending_sizes[0]:
            pending_sizes.pop(0)
            stored = json.loads(
                self.client.client.invoke_rpc(self.flow.stored_chunks, self.session)
            )
            self.checkpoints.append(Checkpoint(self.turns, self.stored, (stored[0], stored[1])))

    def check_idle(self) -> None:
        # turn_completed streams before its Step commits: wait for the commit.
        snapshot = self.client.wait_for_turn_end(self.session, self.last_turn_id)
        assert snapshot.state is not None
        assert snapshot.state.status is AgentStatus.WAITING_FOR_USER_MESSAGE
        assert snapshot.state.next_message_sequence - 1 == self.stored, (
            snapshot.state,
            self.stored,
        )


@dataclass
class StepChain:
    steps: list[str]
    commit_times: list[float]  # the start Step's commit, then each Step's commit

    @property
    def seconds(self) -> float:
        return self.commit_times[-1] - self.commit_times[0]

    def gaps(self) -> list[float]:
        return [b - a for a, b in zip(self.commit_times, self.commit_times[1:], strict=False)]


def completed_steps(history: Sequence[pb.FlowHistoryEvent]) -> list[tuple[str, float]]:
    """(Step type, commit time) of every completed Execute, in history order."""
    return [
        (
            event.step_execute_completed.context.step_type,
            event.event_time.ToNanoseconds() / 1e9,
        )
        for event in history
        if event.WhichOneof("payload") == "step_execute_completed"
    ]


def step_chains(steps: Sequence[tuple[str, float]]) -> list[StepChain]:
    """Per turn, the Step types after the Step that started it, with commit times."""
    chains: list[StepChain] = []
    for step_type, when in steps:
        if step_type in TURN_STARTS:
            chains.append(StepChain([], [when]))
        elif chains:
            chains[-1].steps.append(step_type)
            chains[-1].commit_times.append(when)
    return [chain for chain in chains if chain.steps]  # StartAgentSession starts no turn here


def read_probe(path: Path, flow_id: str) -> list[dict[str, Any]]:
    """The probe's entries for one session, in the order their responses were ready."""
    entries = []
    with open(path, encoding="utf-8") as log:
        for line in log:
            entry = json.loads(line)
            if entry["flow"] == flow_id:
                entries.append(entry)
    return sorted(entries, key=lambda e: e["done"])


# --- process CPU time ---------------------------------------------------------------------


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of one process so far (Linux /proc)."""
    with open(f"/proc/{pid}/stat", encoding="ascii") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


if __name__ == "__main__":
    worker_main(sys.argv[1], WorkerConfig(**json.loads(sys.argv[2])))
