"""Tracing (design "Tracing"): the spans of real sessions on dexlite with Worker processes.

The Workers trace with the OpenTelemetry SDK (`dex_agents_testing.span_files`); the test
reads the spans they wrote. Each turn asks for `lookup` (read) and
`write_note` (a write needing approval), then answers after the results.
"""

from __future__ import annotations

import itertools
import re
import subprocess
import sys
import uuid
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path
from typing import Any

import grpc
from dex import StepExecutionId, TimerId
from dex.dexpb import dex_pb2 as pb
from dex.dexpb import dex_pb2_grpc
from dex_agents import ToolPolicy
from dex_agents_contracts import ToolEffect
from dex_agents_testing import (
    FileClock,
    ModelReply,
    Scenario,
    ScriptedPoll,
    ScriptedTask,
    ScriptedTool,
    ScriptedToolCall,
    wait_until,
)
from dex_agents_testing.span_files import read_spans
from helpers import Harness
from tracing_factories import MODEL_NAME

FACTORY = "tracing_factories:flow"
TRACEPARENT = re.compile(r"^00-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}$")
COMMON_KEYS = (
    "gen_ai.conversation.id",
    "session.id",
    "dex.flow.id",
    "dex.run.id",
    "dex.step.type",
    "dex.step.execution_id",
    "dex.step.attempt",
)

Span = dict[str, Any]
MakeHarness = Callable[..., Harness]


def _harness(make: MakeHarness, tmp_path: Path, **config: Any) -> tuple[Harness, Path]:
    spans = tmp_path / "spans.jsonl"
    return make(FACTORY, {"spans_path": str(spans), **config}), spans


def _stored_attributes(h: Harness, session: str) -> dict[str, bytes]:
    """The session's stored Attributes by physical key (dexlite's GetAttributes)."""
    with grpc.insecure_channel(h.server.address) as channel:
        stub = dex_pb2_grpc.FlowServiceStub(channel)
        response = stub.GetAttributes(
            pb.GetAttributesRequest(flow_id=session, run_id=h.runs[session], all_keys=True),
            timeout=30,
        )
    return {kv.key: kv.value.SerializeToString() for kv in response.attributes}


def _trace_context(h: Harness, session: str) -> str | None:
    """The stored AgentTraceContext traceparent, or None when the session has none."""
    for key, value in _stored_attributes(h, session).items():
        if "AgentTraceContext" in key:
            found = re.search(rb"00-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}", value)
            return found.group(0).decode() if found else "<unreadable>"
    return None


def _approve_write(h: Harness, session: str) -> None:
    assert h.client.wait_for_interrupt(session, "call-write") is not None
    assert h.client.resolve_interrupt(session, "call-write", approved=True)


def _ended(spans_path: Path) -> list[Span]:
    return [line for line in read_spans(spans_path) if line["event"] == "end"]


def _named(spans: list[Span], prefix: str) -> list[Span]:
    return [span for span in spans if span["name"].startswith(prefix)]


def _assert_nothing_left_open(spans_path: Path) -> None:
    lines = read_spans(spans_path)
    started = {line["span_id"] for line in lines if line["event"] == "start"}
    ended = {line["span_id"] for line in lines if line["event"] == "end"}
    assert started == ended


def _wait_spans(spans_path: Path, prefix: str, count: int) -> list[Span]:
    def enough() -> list[Span] | None:
        found = _named(_ended(spans_path), prefix)
        return found if len(found) >= count else None

    return wait_until(enough, timeout=30, what=f"{count} {prefix} spans")


def test_span_tree_of_a_turn_with_two_model_calls_a_read_and_an_approved_write(
    factory_harness: MakeHarness, tmp_path: Path
) -> None:
    h, spans_path = _harness(factory_harness, tmp_path)
    session = h.start("work")
    _approve_write(h, session)
    h.wait_idle(session, 1)
    spans = _ended(spans_path)
    flow_type = h.scenario.config["flow_type"]  # type: ignore[union-attr]

    roots = _named(spans, "invoke_agent")
    assert [r["name"] for r in roots] == [f"invoke_agent {flow_type}"] * 2
    start_root, approval_root = sorted(roots, key=lambda r: r["start"])
    assert start_root["attributes"]["dex.step.type"] == "StartAgentSession"
    assert start_root["attributes"]["dex.agent.activation"] == "session_start"
    assert approval_root["attributes"]["dex.step.type"] == "AwaitToolApproval"
    assert approval_root["attributes"]["gen_ai.tool.call.id"] == "call-write"
    for root in roots:
        assert root["kind"] == "INTERNAL"
        assert root["parent_span_id"] is None
        assert root["attributes"]["gen_ai.operation.name"] == "invoke_agent"
        assert root["attributes"]["gen_ai.agent.name"] == flow_type
        assert root["schema_url"] == "https://opentelemetry.io/schemas/gen-ai-dev/1.42.0-dev"
    # Each activation is its own trace, linked to the previous root.
    assert start_root["links"] == []
    assert approval_root["trace_id"] != start_root["trace_id"]
    assert approval_root["links"] == [
        {"trace_id": start_root["trace_id"], "span_id": start_root["span_id"]}
    ]

    chats = sorted(_named(spans, "chat"), key=lambda s: s["start"])
    assert [c["name"] for c in chats] == [f"chat {MODEL_NAME}"] * 2
    first_chat, second_chat = chats
    for chat, root in ((first_chat, start_root), (second_chat, approval_root)):
        assert chat["kind"] == "CLIENT"
        assert (chat["trace_id"], chat["parent_span_id"]) == (root["trace_id"], root["span_id"])
        assert chat["parent_is_remote"] is True  # parented from the stored traceparent
        attributes = chat["attributes"]
        assert attributes["dex.step.type"] == "RunModel"
        assert attributes["gen_ai.operation.name"] == "chat"
        assert attributes["gen_ai.provider.name"] == "scripted"
        assert attributes["gen_ai.request.model"] == MODEL_NAME
        assert attributes["gen_ai.response.model"] == MODEL_NAME
        assert attributes["gen_ai.response.id"] == "scripted-1"
        assert "gen_ai.input.messages" not in attributes  # content is opt-in
    assert first_chat["attributes"]["gen_ai.usage.input_tokens"] == 20
    assert first_chat["attributes"]["gen_ai.usage.output_tokens"] == 8
    assert first_chat["attributes"]["gen_ai.response.finish_reasons"] == ["tool_calls"]
    assert first_chat["attributes"]["dex.agent.tool_call.ids"] == ["call-read", "call-write"]
    assert first_chat["attributes"]["dex.agent.input.last_sequence"] == 1
    assert second_chat["attributes"]["gen_ai.usage.input_tokens"] == 30
    assert second_chat["attributes"]["gen_ai.response.finish_reasons"] == ["stop"]
    assert second_chat["attributes"]["dex.agent.model_call.outcome"] == "turn_completed"

    tools = {s["attributes"]["gen_ai.tool.name"]: s for s in _named(spans, "execute_tool")}
    assert set(tools) == {"lookup", "write_note"}
    read, write = tools["lookup"], tools["write_note"]
    assert read["name"] == "execute_tool lookup"
    assert read["attributes"]["dex.step.type"] == "CallTool"
    assert (read["trace_id"], read["parent_span_id"]) == (
        start_root["trace_id"],
        start_root["span_id"],
    )
    assert write["attributes"]["dex.step.type"] == "CallSingleAttemptTool"
    assert (write["trace_id"], write["parent_span_id"]) == (
        approval_root["trace_id"],
        approval_root["span_id"],
    )
    for span, call_id in ((read, "call-read"), (write, "call-write")):
        assert span["attributes"]["gen_ai.tool.call.id"] == call_id
        assert span["kind"] == "INTERNAL"
        assert span["attributes"]["gen_ai.operation.name"] == "execute_tool"
        assert span["attributes"]["gen_ai.tool.type"] == "function"
        assert "gen_ai.tool.call.arguments" not in span["attributes"]

    for span in spans:
        for key in COMMON_KEYS:
            assert key in span["attributes"], (span["name"], key)
        assert span["attributes"]["gen_ai.conversation.id"] == session
        assert span["attributes"]["dex.flow.id"] == session
        assert span["attributes"]["dex.run.id"] == h.runs[session]
        assert span["attributes"]["dex.agent.turn.id"] == "turn-1"
        assert span["status"] == "UNSET"
        assert span["sampled"]
    _assert_nothing_left_open(spans_path)

    # AgentTraceContext names the current activation's root; records carry theirs.
    stored = _trace_context(h, session)
    assert stored is not None
    assert TRACEPARENT.match(stored)
    assert stored.split("-")[1:3] == [approval_root["trace_id"], approval_root["span_id"]]
    assert int(stored.split("-")[3], 16) & 0x01


def test_sigkill_mid_tool_leaves_no_open_span_and_the_retry_joins_the_same_root(
    factory_harness: MakeHarness, tmp_path: Path
) -> None:
    gates = tmp_path / "gates"
    gates.mkdir()
    h, spans_path = _harness(factory_harness, tmp_path, gate_dir=str(gates))
    session = h.start("work")
    _approve_write(h, session)
    wait_until(lambda: h.log.count("tool", name="lookup") == 1, what="lookup to start")
    # The approval's activation and the write run beside the gated lookup; let them
    # end first, so the kill lands in lookup alone (a root still open in the killed
    # Worker would stay open, as any span of a process killed mid-Step does).
    _wait_spans(spans_path, "execute_tool write_note", 1)
    _wait_spans(spans_path, "invoke_agent", 2)
    h.restart_worker()  # SIGKILL while lookup runs
    (gates / "lookup").touch()
    h.wait_idle(session, 1, timeout=90)
    assert h.log.count("tool", name="lookup") == 2
    spans = _ended(spans_path)
    (read,) = [s for s in _named(spans, "execute_tool lookup")]
    assert read["attributes"]["dex.step.attempt"] == 2
    (start_root,) = [
        r
        for r in _named(spans, "invoke_agent")
        if r["attributes"]["dex.step.type"] == "StartAgentSession"
    ]
    assert (read["trace_id"], read["parent_span_id"]) == (
        start_root["trace_id"],
        start_root["span_id"],
    )
    _assert_nothing_left_open(spans_path)


def test_an_expired_approval_roots_its_spans_in_its_own_activation(
    factory_harness: MakeHarness, tmp_path: Path
) -> None:
    h, spans_path = _harness(factory_harness, tmp_path, interrupt_deadline_seconds=1)
    session = h.start("work")
    h.wait_idle(session, 1, timeout=60)
    assert h.log.count("tool", name="write_note") == 0  # rejected at its deadline
    spans = _ended(spans_path)
    roots = sorted(_named(spans, "invoke_agent"), key=lambda r: r["start"])
    assert [r["attributes"]["dex.agent.activation"] for r in roots] == [
        "session_start",
        "approval_deadline",
    ]
    first, expired = roots
    assert expired["links"] == [{"trace_id": first["trace_id"], "span_id": first["span_id"]}]
    # The model call after the deadline belongs to the deadline's activation.
    last_chat = max(_named(spans, "chat"), key=lambda s: s["start"])
    assert (last_chat["trace_id"], last_chat["parent_span_id"]) == (
        expired["trace_id"],
        expired["span_id"],
    )
    assert not _named(spans, "execute_tool write_note")  # rejected: never ran


def _approval_wait(h: Harness, session: str) -> StepExecutionId:
    """The AwaitToolApproval execution whose WaitFor (and so its deadline Timer) is registered."""

    def find() -> str | None:
        for event in h.history(session):
            if event.WhichOneof("payload") == "step_wait_for_completed":
                context = event.step_wait_for_completed.context
                if context.step_type == "AwaitToolApproval":
                    return str(context.step_execution_id)
        return None

    step_type, number = wait_until(find, what="AwaitToolApproval's wait").rsplit("-", 1)
    return StepExecutionId(step_type=step_type, number=int(number))


# The deadline is the only Timer of AwaitToolApproval's wait (Timers count apart
# from the Channel conditions).
_DEADLINE_TIMER = TimerId(condition_index=0)


def test_an_approval_hours_later_roots_its_spans_in_its_own_activation(
    factory_harness: MakeHarness, tmp_path: Path
) -> None:
    clock = FileClock(tmp_path / "clock")
    h, spans_path = _harness(
        factory_harness,
        tmp_path,
        interrupt_deadline_seconds=6 * 3600,
        clock_path=str(tmp_path / "clock"),
    )
    session = h.start("work")
    _approval_wait(h, session)
    _wait_spans(spans_path, "execute_tool lookup", 1)  # the read ran while approval waits
    clock.advance(timedelta(hours=5))  # the user answers five hours later, in time
    _approve_write(h, session)
    h.wait_idle(session, 1)

    spans = _ended(spans_path)
    roots = sorted(_named(spans, "invoke_agent"), key=lambda r: r["start"])
    assert [r["attributes"]["dex.agent.activation"] for r in roots] == [
        "session_start",
        "approval",
    ]
    first, answered = roots
    assert answered["attributes"]["dex.step.type"] == "AwaitToolApproval"
    assert answered["trace_id"] != first["trace_id"]
    assert answered["links"] == [{"trace_id": first["trace_id"], "span_id": first["span_id"]}]
    # Nothing of the first activation stays open across the wait.
    before = [s for s in spans if s["trace_id"] == first["trace_id"]]
    assert {s["name"].split(" ")[0] for s in before} == {"invoke_agent", "chat", "execute_tool"}
    assert max(s["end"] for s in before) <= answered["start"]
    # What the answer caused belongs to the answer's activation.
    (write,) = _named(spans, "execute_tool write_note")
    last_chat = max(_named(spans, "chat"), key=lambda s: s["start"])
    for span in (write, last_chat):
        assert (span["trace_id"], span["parent_span_id"]) == (
            answered["trace_id"],
            answered["span_id"],
        )
    assert h.log.count("tool", name="write_note") == 1
    _assert_nothing_left_open(spans_path)
    stored = _trace_context(h, session)
    assert stored is not None
    assert stored.split("-")[1:3] == [answered["trace_id"], answered["span_id"]]


def test_an_approval_deadline_hours_later_fires_its_timer_in_its_own_activation(
    factory_harness: MakeHarness, tmp_path: Path
) -> None:
    clock = FileClock(tmp_path / "clock")
    h, spans_path = _harness(
        factory_harness,
        tmp_path,
        interrupt_deadline_seconds=2 * 3600,
        clock_path=str(tmp_path / "clock"),
    )
    session = h.start("work")
    waiting = _approval_wait(h, session)
    clock.advance(timedelta(hours=3))
    # The session's clock is past the deadline: the answer comes too late.
    assert h.client.resolve_interrupt(session, "call-write", approved=True) is False
    h.client.client.skip_timer(session, waiting, _DEADLINE_TIMER)
    h.wait_idle(session, 1)

    assert h.log.count("tool", name="write_note") == 0
    spans = _ended(spans_path)
    roots = sorted(_named(spans, "invoke_agent"), key=lambda r: r["start"])
    assert [r["attributes"]["dex.agent.activation"] for r in roots] == [
        "session_start",
        "approval_deadline",
    ]
    first, expired = roots
    assert expired["links"] == [{"trace_id": first["trace_id"], "span_id": first["span_id"]}]
    last_chat = max(_named(spans, "chat"), key=lambda s: s["start"])
    assert (last_chat["trace_id"], last_chat["parent_span_id"]) == (
        expired["trace_id"],
        expired["span_id"],
    )
    _assert_nothing_left_open(spans_path)


def test_content_capture_puts_messages_and_tool_io_on_the_spans(
    factory_harness: MakeHarness, tmp_path: Path
) -> None:
    h, spans_path = _harness(factory_harness, tmp_path, capture_content=True)
    session = h.start("work")
    _approve_write(h, session)
    h.wait_idle(session, 1)
    spans = _ended(spans_path)
    first_chat = min(_named(spans, "chat"), key=lambda s: s["start"])
    attributes = first_chat["attributes"]
    assert '"content": "work"' in attributes["gen_ai.input.messages"]
    assert '"type": "tool_call"' in attributes["gen_ai.output.messages"]
    assert '"call-read"' in attributes["gen_ai.output.messages"]
    (read,) = _named(spans, "execute_tool lookup")
    assert read["attributes"]["gen_ai.tool.call.arguments"] == '{"q":"weather"}'
    assert read["attributes"]["gen_ai.tool.call.result"] == "found weather"


def test_compatibility_conventions_1_36(factory_harness: MakeHarness, tmp_path: Path) -> None:
    h, spans_path = _harness(factory_harness, tmp_path, conventions="1.36.0")
    session = h.start("work")
    _approve_write(h, session)
    h.wait_idle(session, 1)
    spans = _ended(spans_path)
    for root in _named(spans, "invoke_agent"):
        assert root["kind"] == "CLIENT"
        assert root["attributes"]["gen_ai.system"] == "_OTHER"
        assert root["schema_url"] == "https://opentelemetry.io/schemas/1.36.0"
    chat = _named(spans, "chat")[0]
    assert chat["attributes"]["gen_ai.system"] == "scripted"
    assert "gen_ai.provider.name" not in chat["attributes"]
    assert "gen_ai.tool.type" not in _named(spans, "execute_tool")[0]["attributes"]


def test_tracing_disabled_writes_no_trace_context_and_loads_no_opentelemetry(
    factory_harness: MakeHarness, tmp_path: Path
) -> None:
    h, spans_path = _harness(factory_harness, tmp_path, tracing=False)
    session = h.start("work")
    _approve_write(h, session)
    done = h.wait_idle(session, 1)
    assert done.messages[-1].text == "done"
    assert _trace_context(h, session) is None
    assert not spans_path.exists()
    (lookup,) = h.log.entries("tool", name="lookup")
    assert lookup["otel_loaded"] is False  # the Worker ran a whole turn without it


def test_a_raising_tracer_never_fails_a_step(factory_harness: MakeHarness, tmp_path: Path) -> None:
    h, _ = _harness(factory_harness, tmp_path, raising_tracer=True)
    session = h.start("work")
    _approve_write(h, session)
    done = h.wait_idle(session, 1)
    assert done.messages[-1].text == "done"
    assert h.log.count("model_call") == 2  # no Step was retried
    assert _trace_context(h, session) is None  # no root came out: nothing stored
    worker_log = Path(h.worker.log_path).read_text(encoding="utf-8")
    assert "span was skipped after an OpenTelemetry error" in worker_log


def test_importing_dex_agents_loads_no_opentelemetry() -> None:
    code = (
        "import sys, dex_agents, dex_agents.tracing\n"
        "dex_agents.TracingOptions(capture_content=True)\n"
        "loaded = [m for m in sys.modules if m.split('.')[0] == 'opentelemetry']\n"
        "print(loaded)\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    assert result.stdout.strip() == "[]"


def test_each_turn_is_an_activation_and_compaction_gets_a_chat_span(
    factory_harness: MakeHarness, tmp_path: Path
) -> None:
    spans_path = tmp_path / "spans.jsonl"
    name = f"TC{uuid.uuid4().hex[:8]}"
    inner = {
        "flow_type": name,
        "log_path": str(tmp_path / "inner.jsonl"),
        "answer_tokens": 100,
        # Window 1000 tokens: the third turn compacts first (stepwise_flows counts `#`s).
        "compaction": {"context_window_tokens": 1000, "trigger_ratio": 0.5, "retained_ratio": 0.2},
    }
    h = factory_harness(
        "tracing_factories:traced",
        {
            "inner": "stepwise_flows:flow",
            "inner_config": inner,
            "spans_path": str(spans_path),
            "flow_type": name,
        },
    )
    session = h.start()
    for n in range(1, 4):
        assert h.client.send_user_message(session, f"say {'#' * 100} {n}")
        h.wait_idle(session, n)
    spans = _ended(spans_path)
    roots = sorted(_named(spans, "invoke_agent"), key=lambda r: r["start"])
    assert [
        (r["attributes"]["dex.step.type"], r["attributes"].get("dex.agent.turn.id")) for r in roots
    ] == [
        ("StartAgentSession", None),
        ("AwaitUserMessage", "turn-1"),
        ("AwaitUserMessage", "turn-2"),
        ("AwaitUserMessage", "turn-3"),
    ]
    for previous, root in itertools.pairwise(roots):
        assert root["links"] == [{"trace_id": previous["trace_id"], "span_id": previous["span_id"]}]
    (summary,) = [s for s in spans if s["attributes"].get("dex.step.type") == "CompactContext"]
    assert summary["name"] == "chat default"
    assert summary["kind"] == "CLIENT"
    assert summary["attributes"]["dex.agent.model_call.outcome"] == "context_summary"
    assert summary["attributes"]["dex.agent.compaction.through_sequence"] == 3
    assert summary["attributes"]["gen_ai.usage.input_tokens"] == 7
    assert (summary["trace_id"], summary["parent_span_id"]) == (
        roots[-1]["trace_id"],
        roots[-1]["span_id"],
    )


def test_a_tool_task_gets_an_execute_tool_span_per_poll(
    factory_harness: MakeHarness, tmp_path: Path
) -> None:
    spans_path = tmp_path / "spans.jsonl"
    name = f"TT{uuid.uuid4().hex[:8]}"
    report = ScriptedTool(
        name="report",
        task=ScriptedTask(
            poll_interval_seconds=0.2,
            polls=(
                ScriptedPoll(kind="pending", poll_interval_seconds=0.2),
                ScriptedPoll(kind="succeed", output="report ready"),
            ),
        ),
    )
    scenario = Scenario(
        flow_type=name,
        script=[
            [
                ModelReply(tool_calls=[ScriptedToolCall(tool_call_id="r1", tool_name="report")]),
                ModelReply(text="done"),
            ]
        ],
        tools=[report],
        log_path=str(tmp_path / "inner.jsonl"),
        task_runner=True,
        tool_policies={"report": ToolPolicy(effect=ToolEffect.IDEMPOTENT_WRITE)},
    )
    path = scenario.save(tmp_path / "scenario.json")
    h = factory_harness(
        "tracing_factories:traced",
        {
            "inner": "scenario",
            "scenario_path": str(path),
            "spans_path": str(spans_path),
            "flow_type": name,
        },
    )
    session = h.start("make the report")
    h.wait_idle(session, 1)
    spans = _ended(spans_path)
    (root,) = _named(spans, "invoke_agent")
    tools = sorted(_named(spans, "execute_tool report"), key=lambda s: s["start"])
    assert [t["attributes"]["dex.step.type"] for t in tools] == [
        "CallTool",
        "PollToolTask",
        "PollToolTask",
    ]
    for span in tools:
        assert (span["trace_id"], span["parent_span_id"]) == (root["trace_id"], root["span_id"])
        assert span["attributes"]["gen_ai.tool.call.id"] == "r1"
    # The scripted runner reports no ModelCallMetadata: the chat spans are just `chat`.
    assert {s["name"] for s in _named(spans, "chat")} == {"chat"}


def test_a_steered_message_starts_its_own_activation_in_apply_turn_control(
    factory_harness: MakeHarness, tmp_path: Path
) -> None:
    gates = tmp_path / "gates"
    gates.mkdir()
    h, spans_path = _harness(factory_harness, tmp_path, gate_dir=str(gates))
    session = h.start("work")
    wait_until(lambda: h.log.count("tool", name="lookup") == 1, what="lookup to start")
    assert h.client.wait_for_interrupt(session, "call-write") is not None
    assert h.client.steer_user_message(session, text="work again")
    (gates / "lookup").touch()  # the running read finishes; the approval was abandoned
    h.wait_snapshot(
        session,
        lambda s: (
            s.state is not None
            and s.state.active_turn_id == "turn-2"
            and any(i.interrupt_id == "call-write" for i in s.pending_interrupts)
        ),
        what="the steered turn's approval",
    )
    assert h.client.resolve_interrupt(session, "call-write", approved=True)
    h.wait_idle(session, 2)
    roots = sorted(_named(_ended(spans_path), "invoke_agent"), key=lambda r: r["start"])
    steered = [r for r in roots if r["attributes"]["dex.step.type"] == "ApplyTurnControl"]
    assert len(steered) == 1
    assert steered[0]["attributes"]["dex.agent.turn.id"] == "turn-2"
    previous = roots[roots.index(steered[0]) - 1]
    assert steered[0]["links"] == [
        {"trace_id": previous["trace_id"], "span_id": previous["span_id"]}
    ]


def test_a_failing_model_call_gets_an_error_span_per_attempt(
    factory_harness: MakeHarness, tmp_path: Path
) -> None:
    spans_path = tmp_path / "spans.jsonl"
    name = f"TF{uuid.uuid4().hex[:8]}"
    inner = {"flow_type": name, "log_path": str(tmp_path / "inner.jsonl")}
    h = factory_harness(
        "tracing_factories:traced",
        {
            "inner": "stepwise_flows:flow",
            "inner_config": inner,
            "spans_path": str(spans_path),
            "flow_type": name,
        },
    )
    session = h.start("fail-after-tool:1")
    h.wait_idle(session, 1, timeout=120)
    spans = _ended(spans_path)
    failed = [s for s in _named(spans, "chat") if s["status"] == "ERROR"]
    attempts = sorted(s["attributes"]["dex.step.attempt"] for s in failed)
    assert attempts == list(range(1, len(attempts) + 1))
    assert len(attempts) >= 2  # RunModel retries; each attempt has its own span
    for span in failed:
        assert span["attributes"]["error.type"] == "RuntimeError"
        assert span["kind"] == "INTERNAL"  # no model call reported
    _assert_nothing_left_open(spans_path)
