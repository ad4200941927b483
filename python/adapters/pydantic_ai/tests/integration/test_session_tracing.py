"""Tracing with Pydantic AI's own instrumentation: its agent run and model request
spans nest under the session's activation root (`pai_traced_app.py`, on dexlite with
a Worker process)."""

from __future__ import annotations

from pathlib import Path

from dex_agents_testing import DexliteProcess
from dex_agents_testing.span_files import read_spans

from integration.pai_traced_app import traced_spans
from integration.pai_workers import App

TRACED_APP = Path(__file__).resolve().parent / "pai_traced_app.py"


def test_pydantic_ai_instrumentation_nests_under_the_activation_root(
    dexlite: DexliteProcess, tmp_path: Path
) -> None:
    app = App(dexlite, tmp_path, script=TRACED_APP)
    app.start_worker()
    try:
        session = app.start("hi")
        app.wait_idle(session, 1)
    finally:
        app.stop()
    spans = [s for s in read_spans(traced_spans(app.log_path)) if s["event"] == "end"]
    (root,) = [s for s in spans if s["name"] == f"invoke_agent {app.flow_type}"]
    ours = [s for s in spans if "dex.step.type" in s["attributes"]]
    theirs = [s for s in spans if "dex.step.type" not in s["attributes"]]
    assert {s["name"] for s in ours} == {root["name"], "chat function:_answer:"}
    (chat,) = [s for s in ours if s["name"].startswith("chat")]
    assert chat["attributes"]["gen_ai.request.model"] == "function:_answer:"  # from the adapter
    assert chat["attributes"]["gen_ai.usage.output_tokens"] == 1
    assert theirs  # Pydantic AI's agent run and model request spans
    for span in theirs:
        assert span["trace_id"] == root["trace_id"], span["name"]
    # Its outermost span is a child of our root, not the start of another trace.
    top = [s for s in theirs if s["parent_span_id"] not in {t["span_id"] for t in theirs}]
    assert [s["parent_span_id"] for s in top] == [root["span_id"]]
