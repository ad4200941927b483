"""What durability costs per Step, and how much a RunModel Step loads, on dexlite.

Two measurements of one session on dexlite (a child process) with one Worker
(another child process, pull mode, the default), whose Stepwise runner has a
zero-latency scripted model and one READ tool without approval, so every turn
is RunModel -> CallTool -> ResumeTurn -> RunModel:

1. Turn latency. After a warm-up, each measured turn is timed from the commit
   of the AwaitUserMessage Step that started it to the commit of its second
   RunModel, using the event times of dexlite's Flow history: exactly the four
   Steps of the turn, each from its predecessor's commit to its own. The
   overhead per Step is that turn latency / 4 (the model and tool take no time).
   The same turns, with the same growing history, run by Stepwise in-process
   without Dex (`run_model_step` / `execute_deferred_tool_call` called directly,
   as `stepwise_inprocess.py` does) give the ratio. The client's view, from
   `send_user_message` to receiving `turn_completed` (which adds the RPC,
   AwaitUserMessage and the event read), is printed too. Target: under 10 ms
   of overhead per Step.

2. Bytes a RunModel Step loads, at several history lengths up to 2,000
   messages. dexlite sends a Step every singleton Attribute plus every instance
   of the AttributeMaps its execute load options select; for RunModel those are
   AgentMessages, AgentMessageChunks and AgentToolCalls. A read-only RPC of this
   bench's Flow subclass declares the same load options as RunModel (the very
   tuples `RunModel` uses), so dexlite hands it the same Attribute instances,
   and returns the size of each instance's stored value (its wire JSON, the
   payload of the Dex Value; protobuf framing and keys add a few bytes per
   instance). The bench reads it through the SDK client after the turn that
   reaches each length: what the next RunModel will load, less its user message.

   What the design document implies: every Step that stores messages loads the
   whole AgentMessages window (at most `message_window_size`, 64, messages), and
   RunModel also loads "only the AgentMessageChunks instances after the
   summary". This core has no compaction, so there is no ContextSummary and
   RunModel loads every chunk: its load grows linearly with the conversation,
   while AwaitUserMessage's (the window) stays bounded. Compaction with
   retention is what bounds RunModel's load; until then a long session pays for
   its whole history on every model call. These scripted messages are small
   (about 300 bytes stored); at 2,000 messages, an average above about 1.7 KB
   would take RunModel's request past dexlite's 3.5 MB cap on a composed Worker
   request, and every RunModel attempt of that session would fail.

Run from the repository root (about 75 seconds on a 2-core machine):

    PYTHONPATH=python/contracts/src:python/core/src:python/testing/src:python/dexlite/src \\
        .venv/bin/python python/core/bench/session_on_dexlite.py
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from dex import Context, RPCResult, rpc
from dex.dexpb import dex_pb2 as pb
from dex_agents import AgentSessionClient, AgentSessionFlow, run_worker
from dex_agents._schema import SessionSchema
from dex_agents._step_options import LOAD_MESSAGES_AND_CHUNKS, LOAD_TOOL_CALLS
from dex_agents.codecs import StructCodec
from dex_agents.models import ScriptedModelClient, ScriptEntry, scripted_answer, scripted_tool_calls
from dex_agents.offline import stored_message
from dex_agents.runner import (
    ToolPolicy,
)
from dex_agents.stepwise import AgentDefinition, StepwiseRunner, tool
from dex_agents_contracts import (
    AgentMessage,
    AgentStatus,
    ToolEffect,
    encode,
    encode_list,
)
from dex_agents_testing import DexliteProcess, child_env, fetch_history
from stepwise_inprocess import Timings, one_turn

TURN_SHAPE = ["RunModel", "CallTool", "ResumeTurn", "RunModel"]
TURN_STARTS = ("StartAgentSession", "AwaitUserMessage")
QUESTION = "What is x?"
FANOUT = 10
"""Tool calls per model response in the growth turns, which store 2 + 2 * FANOUT messages."""


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


def build_runner(turns: int, fanout_turns: int = 0) -> StepwiseRunner:
    model = ScriptedModelClient(script(turns, fanout_turns))
    chosen = tool(lookup, name="lookup", policy=ToolPolicy(effect=ToolEffect.READ))
    return StepwiseRunner(AgentDefinition(instructions="Answer.", tools=[chosen], model=model))


class MeasuredSessionFlow(AgentSessionFlow):
    """The session Flow plus one read-only RPC that loads what RunModel loads."""

    @rpc(load_attribute_maps=(*LOAD_MESSAGES_AND_CHUNKS, *LOAD_TOOL_CALLS))
    def run_model_load(self, context: Context) -> RPCResult[str]:
        """JSON: the stored value size of every Attribute instance RunModel's Execute gets."""
        return RPCResult(json.dumps(_load_sizes(self.schema, context)))


def _load_sizes(schema: SessionSchema, context: Context) -> dict[str, object]:
    def utf8(text: str) -> int:
        return len(text.encode("utf-8"))

    maps: dict[str, list[int]] = {
        "AgentMessages": [
            utf8(encode(schema.messages.get(context, key)))
            for key in schema.messages.get_all_instance_keys(context)
        ],
        "AgentMessageChunks": [
            utf8(encode(schema.message_chunks.get(context, key)))
            for key in schema.message_chunks.get_all_instance_keys(context)
        ],
        "AgentToolCalls": [
            utf8(encode(schema.tool_calls.get(context, key)))
            for key in schema.tool_calls.get_all_instance_keys(context)
        ],
    }
    singletons: dict[str, int] = {}
    for attribute in (
        schema.state,
        schema.message_index,
        schema.turn_reply_sequence,
        schema.usage,
        schema.turn_session_settings,
    ):
        value = attribute.get(context)
        if value is not None:
            singletons[attribute.name] = utf8(encode(value))
    run_state = schema.framework_run_state.get(context)
    if run_state is not None:
        singletons[schema.framework_run_state.name] = utf8(run_state)
    interrupts = schema.pending_interrupts.get(context)
    if interrupts is not None:
        singletons[schema.pending_interrupts.name] = utf8(
            encode_list(type(interrupts[0]), interrupts) if interrupts else "[]"
        )
    settings = schema.session_settings.get(context)
    if settings is not None:
        data = StructCodec().encode(settings).data
        assert isinstance(data, str)
        singletons[schema.session_settings.name] = utf8(data)
    return {"maps": maps, "singletons": singletons}


# --- the Worker child process -----------------------------------------------------------


def worker_main(server: str, flow_type: str, turns: int, fanout_turns: int) -> None:
    flow = MeasuredSessionFlow(build_runner(turns, fanout_turns), flow_type=flow_type)
    run_worker([flow], server_address=server, on_ready=lambda: print("ready", flush=True))


def start_worker(
    server: str, flow_type: str, turns: int, fanout_turns: int, log_path: Path
) -> subprocess.Popen[bytes]:
    args = [sys.executable, __file__, "--worker", server, "--flow-type", flow_type]
    args += ["--script-turns", str(turns), "--fanout-turns", str(fanout_turns)]
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


# --- driving the session ------------------------------------------------------------------


@dataclass
class TurnTiming:
    turn: int  # 1-based
    messages_before: int  # stored messages when the turn's user message was sent
    client_seconds: float  # send_user_message -> turn_completed received


def run_turn(
    client: AgentSessionClient, session: str, token: str, turn: int, stored: int
) -> tuple[TurnTiming, str, int]:
    """One turn; returns its timing, the events' resume token and the messages it stored."""
    started = time.perf_counter()
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
    return TurnTiming(turn, stored, time.perf_counter() - started), resume, appended


@dataclass
class StepChain:
    steps: list[str]
    commit_times: list[float]  # the start Step's commit, then each Step's commit

    @property
    def seconds(self) -> float:
        return self.commit_times[-1] - self.commit_times[0]

    def gaps(self) -> list[float]:
        return [b - a for a, b in zip(self.commit_times, self.commit_times[1:], strict=False)]


def step_chains(history: Sequence[pb.FlowHistoryEvent]) -> list[StepChain]:
    """Per turn, the Step types after the Step that started it, with commit times."""
    chains: list[StepChain] = []
    for event in history:
        if event.WhichOneof("payload") != "step_execute_completed":
            continue
        step_type = event.step_execute_completed.context.step_type
        when = event.event_time.ToNanoseconds() / 1e9
        if step_type in TURN_STARTS:
            chains.append(StepChain([], [when]))
        elif chains:
            chains[-1].steps.append(step_type)
            chains[-1].commit_times.append(when)
    return [chain for chain in chains if chain.steps]  # StartAgentSession starts no turn here


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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--warmup", type=int, default=20)
    parser.add_argument("--turns", type=int, default=200, help="measured latency turns")
    parser.add_argument(
        "--sizes", default="100,500,1000,2000", help="history lengths (messages) to measure"
    )
    parser.add_argument("--sync", default="full", help="dexlite --sync (its default: full)")
    parser.add_argument("--worker", metavar="SERVER", help=argparse.SUPPRESS)
    parser.add_argument("--flow-type", help=argparse.SUPPRESS)
    parser.add_argument("--script-turns", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--fanout-turns", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker_main(args.worker, args.flow_type, args.script_turns, args.fanout_turns)
        return

    sizes = sorted(int(s) for s in args.sizes.split(","))
    latency_turns = args.warmup + args.turns
    # The latency turns store 4 messages each; growth turns with FANOUT tool calls take
    # the session to the largest size in fewer (and costlier) turns.
    fanout_turns = max(0, -(-(sizes[-1] - 4 * latency_turns) // (2 + 2 * FANOUT)))
    flow_type = f"Bench{uuid.uuid4().hex[:8]}"
    with tempfile.TemporaryDirectory(prefix="dex-agents-bench-") as root:
        server = DexliteProcess(Path(root) / "bench.sqlite", "--sync", args.sync).start()
        worker = None
        try:
            worker = start_worker(
                server.address, flow_type, latency_turns, fanout_turns, Path(root) / "worker.log"
            )
            flow = MeasuredSessionFlow(build_runner(0), flow_type=flow_type)
            with AgentSessionClient(flow, server_address=server.address) as client:
                report(
                    client,
                    server,
                    flow,
                    args,
                    sizes=sizes,
                    total_turns=latency_turns + fanout_turns,
                )
        finally:
            if worker is not None:
                worker.terminate()
                worker.wait(30)
            server.stop()


def report(
    client: AgentSessionClient,
    server: DexliteProcess,
    flow: MeasuredSessionFlow,
    args: argparse.Namespace,
    *,
    sizes: list[int],
    total_turns: int,
) -> None:
    session = f"bench-{uuid.uuid4().hex[:8]}"
    run_id = client.start_session(session)
    token = ""
    timings: list[TurnTiming] = []
    loads: list[tuple[int, int, dict[str, object]]] = []  # (turn, messages, sizes)
    pending = list(sizes)
    stored = 0
    began = time.perf_counter()
    for turn in range(1, total_turns + 1):
        timing, token, appended = run_turn(client, session, token, turn, stored)
        timings.append(timing)
        stored += appended
        while pending and stored >= pending[0]:
            pending.pop(0)
            sizes_json = client.client.invoke_rpc(flow.run_model_load, session)
            loads.append((turn, stored, json.loads(sizes_json)))
    driven = time.perf_counter() - began
    snapshot = client.get_snapshot(session)
    assert snapshot.state is not None
    assert snapshot.state.status is AgentStatus.WAITING_FOR_USER_MESSAGE
    assert snapshot.state.next_message_sequence - 1 == stored, (snapshot.state, stored)

    chains = step_chains(fetch_history(server.address, session, run_id))
    first, last = args.warmup, args.warmup + args.turns
    fanout_shape = ["RunModel", *["CallTool"] * FANOUT, "ResumeTurn", "RunModel"]
    expected = [TURN_SHAPE] * last + [fanout_shape] * (total_turns - last)
    if [c.steps for c in chains] != expected:
        raise RuntimeError(f"unexpected Step shapes: {[c.steps for c in chains[:3]]} ...")
    measured = chains[first:last]
    turn_seconds = [c.seconds for c in measured]
    inprocess = asyncio.run(inprocess_turns(last))[first:last]

    print(
        f"Session on dexlite (--sync {args.sync}), one pull-mode Worker process, Stepwise "
        "with a zero-latency scripted model and READ tool"
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
    print(f"  Stepwise in-process, same turns      {summary(inprocess)}")
    ratio = statistics.median(turn_seconds) / statistics.median(inprocess)
    extra = (statistics.median(turn_seconds) - statistics.median(inprocess)) / 4
    print(f"  ratio Dex / in-process (medians)     {ratio:7.1f} x")
    print(f"  Dex minus in-process, per Step       {ms(extra)}   (target: < 10 ms)")
    client_view = [t.client_seconds for t in timings[first:last]]
    print(f"  client: send_user_message -> turn_completed received   {summary(client_view)}")
    quarter = max(1, args.turns // 4)
    print(
        f"  growth: first {quarter} measured turns {summary(turn_seconds[:quarter])}; "
        f"last {quarter} {summary(turn_seconds[-quarter:])}"
    )
    print()
    print(
        "Bytes a RunModel Step loads (stored value sizes of the Attribute instances its load "
        "options select: every singleton, AgentMessages, AgentMessageChunks, AgentToolCalls):"
    )
    print(
        f"  {'messages':>8} {'window':>6} {'window bytes':>12} {'chunks':>6} {'chunk bytes':>12}"
        f" {'other bytes':>11} {'total bytes':>11} {'bytes/msg':>9} {'RunModel Step':>14}"
    )
    for turn, messages, data in loads:
        maps = data["maps"]
        singletons = data["singletons"]
        assert isinstance(maps, dict)
        assert isinstance(singletons, dict)
        window = maps["AgentMessages"]
        chunk_sizes = maps["AgentMessageChunks"]
        other = sum(singletons.values()) + sum(maps["AgentToolCalls"])
        total = sum(window) + sum(chunk_sizes) + other
        # The first RunModel (AwaitUserMessage commit -> its commit) of the 10 turns before.
        near = [c.gaps()[0] for c in chains[max(0, turn - 10) : turn]]
        print(
            f"  {messages:>8} {len(window):>6} {sum(window):>12,} {len(chunk_sizes):>6}"
            f" {sum(chunk_sizes):>12,} {other:>11,} {total:>11,} {total / messages:>9.0f}"
            f" {ms(statistics.median(near)):>14}"
        )
    print(
        f"  (turns {last + 1}..{total_turns} each ask for {FANOUT} tool calls at once, to reach "
        f"{sizes[-1]:,} messages sooner; {total_turns} turns driven in {driven:.1f} s. RunModel "
        "Step: median time from the turn's AwaitUserMessage commit to its first RunModel "
        "commit, over the 10 turns before that length)"
    )


if __name__ == "__main__":
    main()
