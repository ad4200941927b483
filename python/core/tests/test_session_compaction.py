"""Context compaction and retention on a real Worker: Stepwise with a rule-based model.

Token counts are `#` characters (stepwise_flows), so each test knows exactly when
RunModel compacts and where the runner cuts.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest
from dex.dexpb import dex_pb2 as pb
from dex_agents import AgentSessionFlow, AgentSessionOptions
from dex_agents.errors import UserError
from dex_agents.options import CompactionPolicy
from dex_agents.runner import FrameworkMessage
from dex_agents.session._schema import SessionSchema
from dex_agents.session._steps.compaction import BLANK_SUMMARY_ERROR
from dex_agents.session._stores.messages import MessageStore
from dex_agents.stepwise import SUMMARY_PREFIX, AgentDefinition, StepwiseRunner
from dex_agents_contracts import (
    AgentMessage,
    AgentSnapshot,
    AgentState,
    AgentStatus,
    ContextSummary,
    MessageRole,
)
from dex_agents_testing import DexliteProcess, FactoryScenario, assert_step_shape, wait_until
from helpers import FakeContext, Harness
from stepwise_flows import WithoutUnfinishedBuilder

FACTORY = "stepwise_flows:flow"
HASHES = "#" * 100

# Window 1000 tokens: compaction at 500, cuts keep at most 200 tokens unsummarized.
COMPACTION = {"context_window_tokens": 1000, "trigger_ratio": 0.5, "retained_ratio": 0.2}


def _config(**extra: Any) -> dict[str, Any]:
    return {"compaction": COMPACTION, "answer_tokens": 100, **extra}


def _turns(h: Harness, session: str, first: int, last: int) -> AgentSnapshot:
    """Sends `say` turns first..last (each 100 tokens in and out) and waits for each."""
    snapshot = h.snapshot(session)
    for n in range(first, last + 1):
        assert h.client.send_user_message(session, f"say {HASHES} {n}")
        snapshot = h.wait_idle(session, n)
    return snapshot


def _turn_calls(h: Harness) -> list[dict[str, Any]]:
    return [e for e in h.log.entries("model_call") if not e["summary"]]


def _summary_calls(h: Harness) -> list[dict[str, Any]]:
    return [e for e in h.log.entries("model_call") if e["summary"]]


def test_compaction_at_trigger_then_summary_leads_next_input(
    factory_harness: Callable[..., Harness],
) -> None:
    h = factory_harness(FACTORY, _config())
    session = h.start(session_settings={"model": "m1"})
    snapshot = _turns(h, session, 1, 2)
    assert snapshot.context_summary is None  # 300 tokens: below the trigger
    snapshot = _turns(h, session, 3, 3)  # 500 tokens: compacts first
    summary = snapshot.context_summary
    assert summary is not None
    assert (summary.generation, summary.first_sequence, summary.last_sequence) == (1, 1, 3)
    assert summary.text == "the summary"
    assert summary.created_at is not None
    shapes = h.shapes(session)
    assert shapes[2] == ["RunModel", "CompactContext", "RunModel"]
    assert all("CompactContext" not in shape for shape in shapes[:2])
    # The summary call saw messages 1..3 and no earlier summary.
    (first_summary,) = _summary_calls(h)
    transcript = first_summary["texts"][-1]
    assert f"{HASHES} 2" in transcript
    assert f"{HASHES} 3" not in transcript
    # The model call after it starts with the summary note, then the unsummarized rest.
    after = _turn_calls(h)[-1]
    assert after["texts"][0] == f"{SUMMARY_PREFIX}\nthe summary"
    assert after["texts"][1:] == [f"ok {HASHES}", f"say {HASHES} 3"]
    # Usage counts the summary call: three turns plus one summary.
    assert snapshot.usage is not None
    assert snapshot.usage.model_calls == 4
    # The summary call ran with the turn's settings, on the model they select.
    assert (first_summary["model"], first_summary["settings"]) == ("m1", {"model": "m1"})
    events = h.events(session, "compaction_finished")
    started = [e for e in events if e.type == "compaction_started"]
    assert [json.loads(e.payload) for e in started] == [{"through_sequence": 3}]
    finished = json.loads(events[-1].payload)
    assert finished == {"generation": 1, "through_sequence": 3}
    assert {e.turn_id for e in (*started, events[-1])} == {"turn-3"}


def test_second_compaction_folds_in_the_previous_summary(
    factory_harness: Callable[..., Harness],
) -> None:
    h = factory_harness(FACTORY, _config(summary_text="the summary"))
    session = h.start()
    snapshot = _turns(h, session, 1, 5)
    summary = snapshot.context_summary
    assert summary is not None
    assert (summary.generation, summary.first_sequence, summary.last_sequence) == (2, 1, 7)
    first, second = _summary_calls(h)
    assert not first["texts"][0].startswith(SUMMARY_PREFIX)
    assert second["texts"][0] == f"{SUMMARY_PREFIX}\nthe summary"
    # Only the messages after the first summary (4..7: a2, u3, a3, u4) are in it.
    transcript = second["texts"][-1]
    assert transcript.startswith("Assistant: ok")
    assert f"{HASHES} 2" not in transcript
    assert f"{HASHES} 4" in transcript
    shapes = h.shapes(session)
    assert [i for i, s in enumerate(shapes) if "CompactContext" in s] == [2, 4]


def test_compaction_never_separates_a_tool_call_from_its_result(
    factory_harness: Callable[..., Harness],
) -> None:
    # Trigger at 400. The tool call carries 100 tokens and its result none, so the
    # earliest cut whose tail fits 200 tokens would fall between them.
    h = factory_harness(
        FACTORY,
        {
            "compaction": {
                "context_window_tokens": 1000,
                "trigger_ratio": 0.4,
                "retained_ratio": 0.2,
            },
            "answer_tokens": 0,
            "tool_args_tokens": 100,
        },
    )
    session = h.start(f"tool:a {HASHES}")
    h.wait_idle(session, 1)
    for n in (2, 3):
        assert h.client.send_user_message(session, f"say {HASHES} {n}")
        snapshot = h.wait_idle(session, n)
    summary = snapshot.context_summary
    assert summary is not None
    messages = h.client.all_messages(session)
    by_sequence = {m.sequence: m for m in messages}
    assert by_sequence[2].tool_call_id == "call-a"
    assert by_sequence[2].role is MessageRole.ASSISTANT
    assert by_sequence[3].tool_call_id == "call-a"
    assert by_sequence[3].role is MessageRole.TOOL
    assert summary.last_sequence == 3
    assert_step_shape(h.history(session), ["RunModel", "CompactContext", "RunModel"], turn=2)


def _stored(h: Harness, session: str, limit: int) -> tuple[list[AgentMessage], set[int | None]]:
    """Every stored message read page by page, and the pages' deleted_before_sequence."""
    pages: list[list[AgentMessage]] = []
    deleted: set[int | None] = set()
    before: int | None = None
    while True:
        page = h.client.list_messages(session, before_sequence=before, limit=limit)
        pages.append(list(page.messages))
        deleted.add(page.deleted_before_sequence)
        if page.next_before_sequence is None:
            break
        assert page.next_before_sequence == page.messages[0].sequence
        before = page.next_before_sequence
    return [m for page in reversed(pages) for m in page], deleted


def _movements(history: Sequence[pb.FlowHistoryEvent], from_step: str) -> list[pb.StepMovement]:
    found: list[pb.StepMovement] = []
    for event in history:
        if event.WhichOneof("payload") != "step_execute_completed":
            continue
        completed = event.step_execute_completed
        if completed.context.step_type == from_step:
            found.extend(completed.output.step_decision.next_steps)
    return found


def _all_loads(history: Sequence[pb.FlowHistoryEvent], from_step: str) -> list[str]:
    return [
        load
        for movement in _movements(history, from_step)
        for load in movement.step_options.execute_load_attribute_map_instances
    ]


def _movement_chunk_loads(
    history: Sequence[pb.FlowHistoryEvent], from_step: str, to_step: str
) -> list[list[int]]:
    """Per movement from `from_step` to `to_step`: the first sequences of the chunks it loads."""
    return [
        [
            int(load.split("/", 1)[1])
            for load in movement.step_options.execute_load_attribute_map_instances
            if load.startswith("AgentMessageChunks/")
        ]
        for movement in _movements(history, from_step)
        if movement.step_type == to_step
    ]


def test_retention_deletes_whole_summarized_chunks_and_keeps_the_newest(
    factory_harness: Callable[..., Harness],
) -> None:
    h = factory_harness(
        FACTORY,
        _config(message_window_size=4, message_chunk_size=2, retained_message_limit=4),
    )
    session = h.start()
    snapshot = _turns(h, session, 1, 5)
    summary = snapshot.context_summary
    assert summary is not None
    assert summary.last_sequence == 7
    newest = snapshot.state.next_message_sequence - 1 if snapshot.state else 0
    assert newest == 10
    messages, deleted = _stored(h, session, limit=3)
    sequences = [m.sequence for m in messages]
    first = sequences[0]
    assert deleted == {first}
    # Whole chunks of two from sequence 1, so the first kept message is odd; the
    # newest four and everything after the summary are kept; nothing in between is lost.
    assert first > 1
    assert first % 2 == 1
    assert sequences == list(range(first, newest + 1))
    assert first <= newest - 4 + 1
    assert first <= summary.last_sequence + 1
    assert [m.sequence for m in snapshot.messages] == sequences
    # CompactContext's movement into RunModel lists only the chunks after the summary.
    history = h.history(session)
    assert "AgentMessageChunks/" not in _all_loads(history, "CompactContext")
    # Message 7 and later sit in the window when each summary commits: no chunk after it.
    assert _movement_chunk_loads(history, "CompactContext", "RunModel") == [[], []]
    # RunModel's movement into CompactContext lists only the chunks it summarizes:
    # (0, 3] is in chunk 1-2, and (3, 7] in chunks 3-4 and 5-6, not 1-2.
    assert "AgentMessageChunks/" not in _all_loads(history, "RunModel")
    assert _movement_chunk_loads(history, "RunModel", "CompactContext") == [[1], [3, 5]]
    # A sixth turn still reads its input (after the summary) from the kept chunks.
    snapshot = _turns(h, session, 6, 6)
    assert snapshot.state is not None
    assert snapshot.state.last_turn_error is None


def test_retention_off_without_limit_keeps_every_message(
    factory_harness: Callable[..., Harness],
) -> None:
    h = factory_harness(
        FACTORY,
        _config(message_window_size=4, message_chunk_size=2, retained_message_limit=None),
    )
    session = h.start()
    snapshot = _turns(h, session, 1, 5)
    assert snapshot.context_summary is not None
    messages, deleted = _stored(h, session, limit=4)
    assert [m.sequence for m in messages] == list(range(1, 11))
    assert deleted == {None}


def test_blank_summary_fails_the_attempt_and_then_the_turn(
    factory_harness: Callable[..., Harness],
) -> None:
    h = factory_harness(FACTORY, _config(summary_text="   "))
    session = h.start()
    _turns(h, session, 1, 2)
    assert h.client.send_user_message(session, f"say {HASHES} 3")
    snapshot = h.wait_idle(session, 3, timeout=90)
    assert snapshot.state is not None
    assert BLANK_SUMMARY_ERROR in (snapshot.state.last_turn_error or "")
    assert snapshot.context_summary is None
    assert len(_summary_calls(h)) == 3  # every attempt asked once
    assert h.shapes(session)[2] == ["RunModel", "RecordTurnFailure"]


@pytest.fixture
def private_factory(
    private_dexlite: DexliteProcess, tmp_root: Path
) -> Iterator[Callable[..., Harness]]:
    made: list[Harness] = []

    def make(config: dict[str, Any]) -> Harness:
        h = Harness.create_from_factory(private_dexlite, tmp_root, FACTORY, config)
        made.append(h)
        return h

    yield make
    for h in made:
        h.close()


def test_sigkill_during_compact_context_reruns_only_the_summary_call(
    private_factory: Callable[..., Harness], tmp_path: Path
) -> None:
    h = private_factory(_config(gate_dir=str(tmp_path), summary_gate="summary"))
    session = h.start()
    _turns(h, session, 1, 2)
    assert h.client.send_user_message(session, f"say {HASHES} 3")
    wait_until(lambda: len(_summary_calls(h)) == 1, what="the summary call")
    snapshot = h.snapshot(session)
    assert snapshot.state is not None
    assert snapshot.state.status is AgentStatus.COMPACTING_CONTEXT
    h.restart_worker()  # SIGKILL mid-summary, then a fresh Worker
    (tmp_path / "summary").touch()
    snapshot = h.wait_idle(session, 3, timeout=90)
    assert snapshot.context_summary is not None
    assert len(_summary_calls(h)) == 2
    assert len(_turn_calls(h)) == 3  # one model call per turn: none repeated
    assert h.shapes(session)[2] == ["RunModel", "CompactContext", "RunModel"]


def test_flow_refuses_compaction_without_the_runner_capability() -> None:
    runner = WithoutUnfinishedBuilder(
        StepwiseRunner(AgentDefinition(model=flow_model_placeholder()))
    )
    with pytest.raises(UserError, match="ContextCompactionRunner"):
        AgentSessionFlow(
            runner,
            flow_type="NoCompaction",
            options=AgentSessionOptions(compaction=CompactionPolicy(context_window_tokens=1000)),
        )


def flow_model_placeholder() -> Any:
    from dex_agents.models import ScriptedModelClient

    return ScriptedModelClient([])


def test_runner_without_compaction_on_a_trimmed_session_logs_a_warning(
    factory_harness: Callable[..., Harness],
) -> None:
    config = _config(message_window_size=4, message_chunk_size=2, retained_message_limit=4)
    h = factory_harness(FACTORY, config)
    session = h.start()
    snapshot = _turns(h, session, 1, 5)
    first = h.client.list_messages(session).deleted_before_sequence
    assert first is not None
    assert first > 1
    # The same Flow type, now served by a runner without the compaction capability.
    assert isinstance(h.scenario, FactoryScenario)
    scenario = FactoryScenario(
        factory=FACTORY,
        config={**h.scenario.config, "compaction": None, "runner": "without_unfinished_builder"},
        log_path=h.log.path,
    )
    scenario.save(h.scenario_path)
    h.restart_worker()
    snapshot = _turns(h, session, 6, 6)
    assert snapshot.state is not None
    assert snapshot.state.last_turn_error is None
    # Its model input starts at the oldest kept message, without the summary.
    texts = _turn_calls(h)[-1]["texts"]
    kept = h.client.all_messages(session)
    assert texts[: len(kept) - 1] == [m.text for m in kept[:-1]]
    log = Path(h.worker.log_path).read_text(encoding="utf-8")
    assert f"messages before sequence {first} were deleted" in log
    assert "does not declare compaction" in log


def test_continued_turn_after_compaction_loads_only_chunks_after_the_summary(
    factory_harness: Callable[..., Harness],
) -> None:
    h = factory_harness(FACTORY, _config(message_window_size=2, message_chunk_size=2))
    session = h.start()
    snapshot = _turns(h, session, 1, 3)
    summary = snapshot.context_summary
    assert summary is not None
    assert summary.last_sequence == 3
    assert h.client.send_user_message(session, f"continue:2 {HASHES}")
    snapshot = h.wait_idle(session, 4)
    assert snapshot.state is not None
    assert snapshot.state.last_turn_error is None
    assert [m.text for m in snapshot.messages[-5:]] == [
        "continuing 2",
        "go on",
        "continuing 2",
        "go on",
        "continuing 2",
    ]
    loads = _movement_chunk_loads(h.history(session), "RunModel", "RunModel")
    assert len(loads) == 2
    for firsts in loads:
        assert firsts  # chunks after the summary exist, and only they are listed
        assert all(first >= 3 for first in firsts)
    # Each continued call still saw the summary first.
    assert _turn_calls(h)[-1]["texts"][0] == f"{SUMMARY_PREFIX}\nthe summary"


def test_cancel_turn_during_compact_context_ends_the_turn_without_a_summary(
    factory_harness: Callable[..., Harness], tmp_path: Path
) -> None:
    h = factory_harness(FACTORY, _config(gate_dir=str(tmp_path), summary_gate="summary"))
    session = h.start()
    _turns(h, session, 1, 2)
    assert h.client.send_user_message(session, f"say {HASHES} 3")
    wait_until(lambda: len(_summary_calls(h)) == 1, what="the summary call")
    assert h.client.cancel_turn(session) is True
    snapshot = h.wait_idle(session, 3)
    assert snapshot.context_summary is None
    assert snapshot.state is not None
    assert snapshot.state.last_turn_error is None
    types = [e.type for e in h.events(session, "turn_cancelled")]
    assert "compaction_started" in types
    assert "compaction_finished" not in types
    (tmp_path / "summary").touch()
    # The next turn compacts again from scratch and answers.
    snapshot = _turns(h, session, 4, 4)
    assert snapshot.context_summary is not None
    assert snapshot.context_summary.generation == 1


# --- retention rules, unit level ------------------------------------------------------


def _retention_store(**options: Any) -> MessageStore:
    return MessageStore(
        SessionSchema.create(1024),
        AgentSessionOptions(
            compaction=CompactionPolicy(context_window_tokens=1000),
            message_window_size=2,
            message_chunk_size=2,
            **options,
        ),
    )


def _append_texts(store: MessageStore, context: Any, state: AgentState, *texts: str) -> None:
    store.append(
        context,
        state,
        "turn-1",
        [FrameworkMessage(role=MessageRole.USER, text=t, framework_item="{}") for t in texts],
    )


def _summarize(store: MessageStore, context: Any, through: int) -> None:
    store.schema.context_summary.set(
        context,
        ContextSummary(generation=1, first_sequence=1, last_sequence=through, text="s"),
    )


def test_retention_waits_for_the_summary_and_the_limit() -> None:
    store = _retention_store(retained_message_limit=3)
    context: Any = FakeContext()
    state = AgentState(status=AgentStatus.RUNNING_MODEL, next_message_sequence=1)
    _append_texts(store, context, state, *(f"m{n}" for n in range(1, 9)))
    index = store.index(context)
    assert index is not None
    assert [(r.first_sequence, r.last_sequence) for r in index.chunks] == [(1, 2), (3, 4), (5, 6)]
    assert index.first_sequence == 1  # no summary: nothing goes
    _summarize(store, context, 3)
    store.retain(context, state.next_message_sequence, 3)
    index = store.index(context)
    assert index is not None
    # Chunk 3-4 ends after the summary, so it stays although 4 messages follow it.
    assert [(r.first_sequence, r.last_sequence) for r in index.chunks] == [(3, 4), (5, 6)]
    assert index.first_sequence == 3
    assert [m.sequence for m in store.read_all(context)] == list(range(3, 9))
    _summarize(store, context, 8)
    _append_texts(store, context, state, "m9")
    index = store.index(context)
    assert index is not None
    # 3-4 and 5-6 go (5 and 3 newer); 7-8 stays: the newest 3 always stay.
    assert index.first_sequence == 7
    assert [m.sequence for m in store.read_all(context)] == [7, 8, 9]
    assert [m.sequence for m in store.read_range(context, after=7)] == [8, 9]
    assert [m.sequence for m in store.read_range(context, after=6, through=7)] == [7]


def test_retention_never_skips_an_older_message_for_an_oversized_chunk() -> None:
    store = _retention_store(retained_message_limit=1, message_chunk_max_bytes=300)
    context: Any = FakeContext()
    state = AgentState(status=AgentStatus.RUNNING_MODEL, next_message_sequence=1)
    _append_texts(store, context, state, "small")
    _append_texts(store, context, state, "x" * 400)  # its own chunk, among window messages
    index = store.index(context)
    assert index is not None
    assert [(r.first_sequence, r.last_sequence) for r in index.chunks] == [(2, 2)]
    _summarize(store, context, 2)
    _append_texts(store, context, state, "newest")
    index = store.index(context)
    assert index is not None
    # Message 1 still sits in the window, so chunk 2-2 is not the oldest: nothing goes.
    assert index.first_sequence == 1
    assert [m.sequence for m in store.read_all(context)] == [1, 2, 3]


def test_no_retention_without_compaction() -> None:
    store = MessageStore(
        SessionSchema.create(1024),
        AgentSessionOptions(message_window_size=2, message_chunk_size=2, retained_message_limit=1),
    )
    context: Any = FakeContext()
    state = AgentState(status=AgentStatus.RUNNING_MODEL, next_message_sequence=1)
    _summarize(store, context, 6)
    _append_texts(store, context, state, *(f"m{n}" for n in range(1, 9)))
    assert [m.sequence for m in store.read_all(context)] == list(range(1, 9))
