"""What durability costs per Step, and how much a RunModel Step loads, on dexlite.

Sessions on dexlite (a child process) with one Worker (another child process,
pull mode by default, `--mode listen` for a listening Worker, `--mode both` for
one after the other), whose Stepwise runner has a zero-latency scripted model
and one READ tool without approval, so every turn is RunModel -> CallTool ->
ResumeTurn -> RunModel (`bench_session.py`: the agent, Flow, Worker child and
session driver). The Worker runs `worker_probe`, which logs every Execute
attempt: when the request reached the SDK's Execute handler, when its response
was ready, and the request's wire size per Attribute (see that module).

1. Turn latency, per Worker mode. After a warm-up, each measured turn is timed
   from the commit of the AwaitUserMessage Step that started it to the commit of
   its second RunModel, using the event times of dexlite's Flow history: exactly
   the four Steps of the turn, each from its predecessor's commit to its own.
   The overhead per Step is that turn latency / 4 (the model and tool take no
   time). Each Step's gap splits, with the probe's times, into dispatch (the
   previous commit until the request reaches the Worker's Execute handler:
   dexlite picking and loading the Step, transport, request parsing), Worker
   (the handler: the Step and runner code, Context decoding and encoding) and
   commit (the response's way back and dexlite's work until the history event
   of its transaction, including the AgentEvents appends the Step streamed
   before it, which dexlite applies first). The CPU time each process used
   over the measured turns, per Step, says who is busy (a 2-core machine; it
   includes AwaitUserMessage and the client's RPCs). The same turns, with the same growing
   history, run by Stepwise in-process without Dex (`run_model_step` /
   `execute_deferred_tool_call` called directly, as `stepwise_inprocess.py`
   does) give the ratio. The client's view, from `send_user_message` to
   receiving `turn_completed` (which adds the RPC, AwaitUserMessage and the
   event read), is printed too. Target: under 10 ms of overhead per Step.
   `--profile DIR` runs cProfile, counting thread CPU time, in the Worker's
   event-loop thread and in every dexlite thread (`profiled_dexlite.py`) over
   the measured turns of the first mode, and prints the top functions; that
   slows both a lot, so those latency figures are not comparable.
   `--trace` (pull mode) splits each Step further, into the stages of
   `step_trace.STAGES`, from timestamps dexlite (`traced_dexlite.py`) and the
   Worker probe take over the measured turns; it costs a few microseconds a mark.

2. Bytes a RunModel Step loads, at several history lengths up to 2,000
   messages, in two sessions on the first mode's Worker: A without compaction
   (the latency session, continued with turns of FANOUT parallel tool calls)
   and B with compaction and retention (Stepwise's ContextCompactionRunner, a
   CompactionPolicy of `--context-window-tokens`, a scripted summarizer, and
   `retained_message_limit`), driven by FANOUT turns from its start. At each
   length the bench reports the real request of the next RunModel: the first
   RunModel Execute attempt of the next turn, found in the probe log by the
   message count in its AgentState (the length plus the new user message). Its
   figures are the wire sizes of the Attribute instances dexlite sent it
   (AgentMessages is the window, AgentMessageChunks the chunks; "other" is every
   singleton and AgentToolCalls) and of the whole InvokeExecuteMethodRequest,
   which dexlite caps at 3.5 MB. This is what RunModel loads after the load
   options of the movement into it, which with compaction list only the chunks
   after the summary (`_compaction.run_model_movement`); "max since previous"
   is the largest RunModel request between two lengths, so a bounded figure is
   bounded everywhere, not only where sampled. "model msgs" is how many stored
   messages Stepwise was handed (`AgentTurnContext.messages`, after the
   summary). "stored chunks" is what a read-only RPC loads with RunModel's
   static options (the whole chunk map): the chunks the session still stores,
   which retention bounds. The first RunModel of a turn that compacts loads
   the chunks after the old summary; CompactContext then loads the chunks it
   summarizes, and the RunModel after it the chunks after the new summary.

Run from the repository root (pull: about 2.5 minutes on this 2-core machine
while others run tests, `--mode both` about 3.5; `--keep DIR` keeps the
database and probe logs):

    PYTHONPATH=python/contracts/src:python/core/src:python/testing/src:python/dexlite/src \\
        .venv/bin/python python/core/bench/session_on_dexlite.py [--mode pull|listen|both]
"""

from __future__ import annotations

import argparse
import asyncio
import io
import os
import pstats
import signal
import statistics
import tempfile
import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench_session import (
    FANOUT,
    QUESTION,
    TURN_SHAPE,
    TURN_STARTS,
    Checkpoint,
    Driver,
    InstrumentedDexlite,
    MeasuredSessionFlow,
    WorkerConfig,
    build_runner,
    completed_steps,
    cpu_seconds,
    read_probe,
    start_worker,
    step_chains,
)
from dex import WorkerTarget
from dex_agents import AgentSessionClient
from dex_agents.offline import stored_message
from dex_agents_contracts import AgentMessage
from dex_agents_testing import DexliteProcess, fetch_history, free_port
from step_trace import print_stages, read_trace
from stepwise_inprocess import Timings, one_turn

# --- Stepwise in-process, the same turns ---------------------------------------------------


async def inprocess_turns(turns: int) -> list[float]:
    """Seconds per turn: RunModel, the tool call, RunModel, with the history growing."""
    runner = build_runner(turns)
    messages: list[AgentMessage] = []
    seconds: list[float] = []
    for n in range(1, turns + 1):
        turn_id = f"turn-{n}"
        messages.append(
            stored_message(runner.build_user_message(QUESTION), len(messages) + 1, turn_id)
        )
        started = time.perf_counter()
        completed = await one_turn(runner, turn_id, messages, Timings(), flow_id="bench-session")
        seconds.append(time.perf_counter() - started)
        for item in completed.new_messages:
            messages.append(stored_message(item, len(messages) + 1, turn_id))
    return seconds


# --- reporting ------------------------------------------------------------------------------


def ms(seconds: float) -> str:
    return f"{seconds * 1e3:7.2f} ms"


def quantile(samples: Sequence[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(len(ordered) * q))]


def summary(samples: Sequence[float]) -> str:
    return f"median {ms(statistics.median(samples))}   p90 {ms(quantile(samples, 0.9))}"


@dataclass
class LatencyResult:
    mode: str
    turn_seconds: list[float]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mode", choices=("pull", "listen", "both"), default="pull")
    parser.add_argument("--warmup", type=int, default=20)
    parser.add_argument("--turns", type=int, default=200, help="measured latency turns")
    parser.add_argument(
        "--sizes", default="100,500,1000,2000", help="history lengths (messages) to measure"
    )
    parser.add_argument("--sync", default="full", help="dexlite --sync (its default: full)")
    parser.add_argument("--context-window-tokens", type=int, default=4000)
    parser.add_argument("--retained-message-limit", type=int, default=200)
    parser.add_argument(
        "--profile",
        metavar="DIR",
        help="cProfile the Worker and dexlite over the measured turns into DIR (first mode)",
    )
    parser.add_argument(
        "--trace",
        action="store_true",
        help="split each Step into the stages of step_trace.py (pull mode; first mode)",
    )
    parser.add_argument("--keep", metavar="DIR", help="keep the database, logs and probe logs")
    args = parser.parse_args()

    modes = ["pull", "listen"] if args.mode == "both" else [args.mode]
    sizes = sorted(int(s) for s in args.sizes.split(","))
    latency_turns = args.warmup + args.turns
    # The latency turns store 4 messages each; growth turns with FANOUT tool calls take
    # the session to the largest size in fewer (and costlier) turns, plus one turn whose
    # first RunModel is the one measured at the largest size.
    per_fanout_turn = 2 + 2 * FANOUT
    fanout_turns = max(0, -(-(sizes[-1] - 4 * latency_turns) // per_fanout_turn)) + 1
    compact_turns = -(-sizes[-1] // per_fanout_turn) + 1
    began = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="dex-agents-bench-") as temp:
        root = Path(args.keep or temp)
        root.mkdir(parents=True, exist_ok=True)
        profile = Path(args.profile) if args.profile else None
        if profile is not None:
            profile.mkdir(parents=True, exist_ok=True)
        db, sync = root / "bench.sqlite", ("--sync", args.sync)
        server: DexliteProcess
        if profile is not None:
            server = InstrumentedDexlite("profiled_dexlite.py", db, profile / "dexlite.prof", *sync)
        elif args.trace:
            server = InstrumentedDexlite("traced_dexlite.py", db, root / "trace.jsonl", *sync)
        else:
            server = DexliteProcess(db, *sync)
        server.start()
        try:
            results: list[LatencyResult] = []
            for index, mode in enumerate(modes):
                first = index == 0
                config = WorkerConfig(
                    flow_type=f"Bench{uuid.uuid4().hex[:8]}",
                    turns=latency_turns,
                    fanout_turns=fanout_turns if first else 0,
                    compact_turns=compact_turns if first else 0,
                    context_window_tokens=args.context_window_tokens,
                    retained_message_limit=args.retained_message_limit,
                    probe_log=str(root / f"probe-{mode}.jsonl"),
                    listen=f"127.0.0.1:{free_port()}" if mode == "listen" else None,
                    profile=str(profile / "worker.prof") if profile and first else None,
                )
                results.append(
                    run_mode(server, config, args, sizes=sizes if first else [], root=root)
                )
            if len(results) == 2:
                pull, listen = (statistics.median(r.turn_seconds) / 4 for r in results)
                print(
                    f"Overhead per Step (turn / 4), medians in this run: pull {ms(pull)}, "
                    f"listen {ms(listen)}"
                )
        finally:
            server.stop()
    print(f"(bench run {time.perf_counter() - began:.0f} s)")


def run_mode(
    server: DexliteProcess,
    config: WorkerConfig,
    args: argparse.Namespace,
    *,
    sizes: list[int],
    root: Path,
) -> LatencyResult:
    mode = "listen" if config.listen else "pull"
    worker = start_worker(server.address, config, root / f"worker-{mode}.log")
    target = (
        WorkerTarget(address=config.listen)
        if config.listen is not None
        else WorkerTarget(pull=True)
    )
    probe_log = Path(config.probe_log)
    try:
        flow = MeasuredSessionFlow(build_runner(0), flow_type=config.flow_type)
        with AgentSessionClient(
            flow, server_address=server.address, worker_target=target
        ) as client:
            driver = Driver(client, flow)
            pending = list(sizes)
            for _ in range(args.warmup):
                driver.turn(pending)
            assert server.proc is not None
            pids = {"dexlite": server.proc.pid, "Worker": worker.pid, "bench client": os.getpid()}
            cpu_before = {name: cpu_seconds(pid) for name, pid in pids.items()}
            # The measuring window (SIGUSR1..SIGUSR2) of cProfile or the stage trace.
            signalled = [worker, server.proc] if config.profile else []
            if args.trace and isinstance(server, InstrumentedDexlite):
                signalled = [server.proc]
            for proc in signalled:
                proc.send_signal(signal.SIGUSR1)
            for _ in range(args.turns):
                driver.turn(pending)
            for proc in signalled:
                proc.send_signal(signal.SIGUSR2)
            cpu = {name: cpu_seconds(pid) - cpu_before[name] for name, pid in pids.items()}
            total = args.warmup + args.turns + config.fanout_turns
            while driver.turns < total:
                # The last turn's first RunModel is the one measured at the largest length.
                driver.turn(pending if driver.turns < total - 1 else None)
            driver.check_idle()
            steps = completed_steps(fetch_history(server.address, driver.session, driver.run_id))
            result = report_latency(
                mode, driver, steps, probe_log=probe_log, cpu=cpu, args=args, config=config
            )
            if config.profile:
                print_profile("the Worker (event-loop thread CPU time)", Path(config.profile))
                if isinstance(server, InstrumentedDexlite):
                    print_profile("dexlite (every thread's CPU time)", server.output)
            elif args.trace and isinstance(server, InstrumentedDexlite):
                if mode == "pull":
                    trace = read_trace(wait_for_file(server.output))
                    print_stages(trace, read_probe(probe_log, driver.session))
                else:
                    print("  (--trace splits pull-mode Steps only)")
                print()
            if sizes:
                session_a = report_loads_and_chains(driver, steps, probe_log, config, args)
                compacting = MeasuredSessionFlow(
                    build_runner(0), flow_type=config.compact_flow_type
                )
                with AgentSessionClient(
                    compacting, server_address=server.address, worker_target=target
                ) as compact_client:
                    session_b = drive_compacting(compact_client, compacting, config, sizes, server)
                print_loads(session_a, session_b, config, sizes)
            return result
    finally:
        worker.terminate()
        worker.wait(30)


# --- part 1 ---------------------------------------------------------------------------------


def report_latency(
    mode: str,
    driver: Driver,
    steps: list[tuple[str, float]],
    *,
    probe_log: Path,
    cpu: dict[str, float],
    args: argparse.Namespace,
    config: WorkerConfig,
) -> LatencyResult:
    chains = step_chains(steps)
    first, last = args.warmup, args.warmup + args.turns
    if [c.steps for c in chains[:last]] != [TURN_SHAPE] * last:
        raise RuntimeError(f"unexpected Step shapes: {[c.steps for c in chains[:3]]} ...")
    measured = chains[first:last]
    turn_seconds = [c.seconds for c in measured]
    inprocess = asyncio.run(inprocess_turns(last))[first:last]

    print(
        f"Session on dexlite (--sync {args.sync}), one {mode}-mode Worker process, Stepwise "
        "with a zero-latency scripted model and READ tool"
        + ("  [cProfile on: latency inflated]" if config.profile else "")
    )
    print(
        f"Turn RunModel -> CallTool -> ResumeTurn -> RunModel, turns {first + 1}..{last} of one "
        f"session after {args.warmup} warm-up turns (history {4 * first}..{4 * last} messages):"
    )
    print(f"  on Dex (4 Steps, commit to commit)   {summary(turn_seconds)}")
    per_step = [s / 4 for s in turn_seconds]
    print(f"  overhead per Step (turn / 4)         {summary(per_step)}")
    for index, name in enumerate(TURN_SHAPE):
        gaps = [c.gaps()[index] for c in measured]
        print(f"    {name:<12} (from previous commit)  {summary(gaps)}")
    print_split(steps, read_probe(probe_log, driver.session), first, last)
    step_count = 4 * args.turns
    print(
        "  CPU time per measured Step: "
        + ", ".join(f"{name} {ms(seconds / step_count)}" for name, seconds in cpu.items())
    )
    print(f"  Stepwise in-process, same turns      {summary(inprocess)}")
    ratio = statistics.median(turn_seconds) / statistics.median(inprocess)
    extra = (statistics.median(turn_seconds) - statistics.median(inprocess)) / 4
    print(f"  ratio Dex / in-process (medians)     {ratio:7.1f} x")
    print(f"  Dex minus in-process, per Step       {ms(extra)}   (target: < 10 ms)")
    client_view = [t.client_seconds for t in driver.timings[first:last]]
    print(f"  client: send_user_message -> turn_completed received   {summary(client_view)}")
    quarter = max(1, args.turns // 4)
    print(
        f"  growth: first {quarter} measured turns {summary(turn_seconds[:quarter])}; "
        f"last {quarter} {summary(turn_seconds[-quarter:])}"
    )
    for label, part in (("first", slice(None, quarter)), ("last", slice(-quarter, None))):
        turns = range(first, last)[part]
        extra = (statistics.median(turn_seconds[part]) - statistics.median(inprocess[part])) / 4
        print(
            f"  Dex minus in-process, per Step, {label} {quarter} turns "
            f"(history {4 * turns[0]}..{4 * (turns[-1] + 1)} messages)  {ms(extra)}"
        )
    print()
    return LatencyResult(mode, turn_seconds)


def print_split(
    steps: list[tuple[str, float]], probe: list[dict[str, Any]], first: int, last: int
) -> None:
    """Each measured Step's gap as dispatch + Worker + commit, medians per position."""
    done = [e for e in probe if e["ok"]]
    if [step for step, _ in steps] != [e["step"] for e in done]:
        print("  (the probe's Steps do not match the history's; no split)")
        return
    starts = [i for i, (step, _) in enumerate(steps) if step in TURN_STARTS][1:]  # turn starts
    split: list[tuple[list[float], list[float], list[float]]] = [([], [], []) for _ in TURN_SHAPE]
    for start in starts[first:last]:
        for offset, parts in enumerate(split, start=1):
            previous_commit, commit = steps[start + offset - 1][1], steps[start + offset][1]
            entry = done[start + offset]
            parts[0].append(entry["received"] - previous_commit)
            parts[1].append(entry["done"] - entry["received"])
            parts[2].append(commit - entry["done"])
    print("  where a Step's gap goes (medians): dispatch | Worker handler | response + commit")
    for name, (dispatch, handler, back) in zip(TURN_SHAPE, split, strict=True):
        print(
            f"    {name:<12} {ms(statistics.median(dispatch))} | "
            f"{ms(statistics.median(handler))} | {ms(statistics.median(back))}"
        )
    costs = [e["probe_seconds"] for e in done]
    print(f"    (the probe's own cost, in the commit part: median {ms(statistics.median(costs))})")
    totals = [sum(sum(parts[k]) for parts in split) for k in range(3)]
    print(
        "    share of all measured gaps: "
        + ", ".join(
            f"{label} {100 * part / sum(totals):4.1f} %"
            for label, part in zip(("dispatch", "Worker", "commit"), totals, strict=True)
        )
    )


def wait_for_file(path: Path) -> Path:
    """`path` once the instrumented process wrote it (on SIGUSR2)."""
    deadline = time.monotonic() + 10
    while not path.exists():
        if time.monotonic() > deadline:
            raise RuntimeError(f"{path} was not written")
        time.sleep(0.1)
    return path


def print_profile(what: str, path: Path) -> None:
    wait_for_file(path)
    out = io.StringIO()
    stats = pstats.Stats(str(path), stream=out)
    stats.sort_stats("tottime").print_stats(30)
    stats.sort_stats("cumulative").print_stats(45)
    print(f"cProfile of {what} over the measured turns ({path}):")
    print(out.getvalue())


# --- part 2 ---------------------------------------------------------------------------------


@dataclass
class LoadRow:
    messages: int
    window: tuple[int, int]  # (instances, bytes)
    chunks: tuple[int, int]
    other: int
    request: int
    max_since_previous: int
    model_messages: int | None
    stored_chunks: tuple[int, int]
    step_split: tuple[float, float, float]  # first RunModel: medians over the 10 turns before


@dataclass
class SessionLoads:
    name: str
    rows: list[LoadRow]
    turns: int
    seconds: float
    compactions: int = 0
    summary_generation: int = 0


def first_run_model_splits(
    steps: list[tuple[str, float]], probe: list[dict[str, Any]]
) -> list[tuple[float, float, float]]:
    """Per turn, its first RunModel's gap as dispatch, Worker handler, response + commit.

    Pairs history and probe by position: a session runs one Step at a time, except a
    response's CallTools, which only swap places among themselves.
    """
    done = [e for e in probe if e["ok"]]
    if [step for step, _ in steps] != [e["step"] for e in done]:
        raise RuntimeError("the probe's Steps do not match the history's")
    splits = []
    for index, (step, started) in enumerate(steps[:-1]):
        if step == "AwaitUserMessage" and steps[index + 1][0] == "RunModel":
            entry = done[index + 1]
            splits.append(
                (
                    entry["received"] - started,
                    entry["done"] - entry["received"],
                    steps[index + 1][1] - entry["done"],
                )
            )
    return splits


def load_rows(
    checkpoints: list[Checkpoint],
    probe: list[dict[str, Any]],
    steps: list[tuple[str, float]],
) -> list[LoadRow]:
    splits = first_run_model_splits(steps, probe)
    run_models = [e for e in probe if e["step"] == "RunModel"]
    rows: list[LoadRow] = []
    previous = 0
    for checkpoint in checkpoints:
        # The next turn's user message is stored before its first RunModel.
        target = checkpoint.messages + 1
        candidates = [e for e in run_models if e["messages"] == target]
        if not candidates:
            raise RuntimeError(f"no RunModel request at {target} messages in the probe log")
        entry = candidates[0]
        groups: dict[str, list[int]] = entry["attributes"]
        window = tuple(groups.get("AgentMessages", [0, 0]))
        chunks = tuple(groups.get("AgentMessageChunks", [0, 0]))
        other = sum(
            size
            for name, (_, size) in groups.items()
            if name not in ("AgentMessages", "AgentMessageChunks")
        )
        span = [e["request_bytes"] for e in run_models if previous < e["messages"] <= target]
        noted = [e for e in candidates if "model_messages" in e]
        near = splits[max(0, checkpoint.turn - 10) : checkpoint.turn]
        rows.append(
            LoadRow(
                messages=checkpoint.messages,
                window=(window[0], window[1]),
                chunks=(chunks[0], chunks[1]),
                other=other,
                request=entry["request_bytes"],
                max_since_previous=max(span),
                model_messages=noted[0]["model_messages"] if noted else None,
                stored_chunks=checkpoint.stored_chunks,
                step_split=(
                    statistics.median(n[0] for n in near),
                    statistics.median(n[1] for n in near),
                    statistics.median(n[2] for n in near),
                ),
            )
        )
        previous = target
    return rows


def report_loads_and_chains(
    driver: Driver,
    steps: list[tuple[str, float]],
    probe_log: Path,
    config: WorkerConfig,
    args: argparse.Namespace,
) -> SessionLoads:
    chains = step_chains(steps)
    last = args.warmup + args.turns
    fanout_shape = ["RunModel", *["CallTool"] * FANOUT, "ResumeTurn", "RunModel"]
    expected = [TURN_SHAPE] * last + [fanout_shape] * (driver.turns - last)
    if [c.steps for c in chains] != expected:
        raise RuntimeError(f"unexpected Step shapes: {[c.steps for c in chains[-3:]]} ...")
    rows = load_rows(driver.checkpoints, read_probe(probe_log, driver.session), steps)
    seconds = sum(t.client_seconds for t in driver.timings[last:])
    return SessionLoads("A, no compaction", rows, driver.turns - last, seconds)


def drive_compacting(
    client: AgentSessionClient,
    flow: MeasuredSessionFlow,
    config: WorkerConfig,
    sizes: list[int],
    server: DexliteProcess,
) -> SessionLoads:
    driver = Driver(client, flow)
    pending = list(sizes)
    started = time.perf_counter()
    while driver.turns < config.compact_turns:
        driver.turn(pending if driver.turns < config.compact_turns - 1 else None)
    seconds = time.perf_counter() - started
    driver.check_idle()
    snapshot = client.get_snapshot(driver.session)
    generation = snapshot.context_summary.generation if snapshot.context_summary else 0
    steps = completed_steps(fetch_history(server.address, driver.session, driver.run_id))
    compactions = sum(1 for step, _ in steps if step == "CompactContext")
    rows = load_rows(driver.checkpoints, read_probe(Path(config.probe_log), driver.session), steps)
    return SessionLoads(
        "B, compaction + retention", rows, driver.turns, seconds, compactions, generation
    )


def print_loads(a: SessionLoads, b: SessionLoads, config: WorkerConfig, sizes: list[int]) -> None:
    print(
        "Bytes the next RunModel Step loads: wire sizes of the Attribute instances in its "
        "real InvokeExecuteMethodRequest (probe log), and of the whole request:"
    )
    header = (
        f"  {'messages':>8} {'window':>13} {'chunks':>16} {'other':>7} {'request':>9}"
        f" {'max since prev':>14} {'model msgs':>10} {'stored chunks':>16}"
        f"  {'RunModel ms: dispatch + Worker + commit':>30}"
    )
    for loads in (a, b):
        print(f" Session {loads.name}:")
        print(header)
        for row in loads.rows:
            model = "-" if row.model_messages is None else str(row.model_messages)
            print(
                f"  {row.messages:>8} {row.window[0]:>3} {row.window[1]:>9,}"
                f" {row.chunks[0]:>3} {row.chunks[1]:>12,} {row.other:>7,} {row.request:>9,}"
                f" {row.max_since_previous:>14,} {model:>10}"
                f" {row.stored_chunks[0]:>3} {row.stored_chunks[1]:>12,}"
                f"  {sum(row.step_split) * 1e3:6.1f} = "
                + " + ".join(f"{part * 1e3:5.1f}" for part in row.step_split)
            )
    print(
        f"  (A: the latency session, then {a.turns} turns of {FANOUT} tool calls each, driven in "
        f"{a.seconds:.1f} s. B: {b.turns} such turns from the start, in {b.seconds:.1f} s, with "
        f"CompactionPolicy(context_window_tokens={config.context_window_tokens}) and "
        f"retained_message_limit={config.retained_message_limit}: {b.compactions} CompactContext "
        f"Steps, summary generation {b.summary_generation}. window / chunks: instances and "
        "bytes. RunModel ms: a turn's first RunModel, from the AwaitUserMessage commit to its "
        "own, split as in the latency part, medians over the 10 turns before that length; in "
        "B that RunModel may be one that hands over to CompactContext)"
    )


if __name__ == "__main__":
    main()
