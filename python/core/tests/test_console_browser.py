"""The web console in Debian's headless Chromium (playwright-core, no browser
download) on the real path: dexlite, a Worker process of the demo agent, and the
dex_agents.http app with the console mounted on uvicorn on loopback. The page
sends a message, the test's click approves the refund, and the page shows the
answer and the Step timeline; a rejection with a reason and a question's choice
button reach the session; an unknown session, a closed one and a dropped
server each get a sentence on the page. Screenshots are test artifacts."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from console_support import artifact_dir, built_console, static_dir
from dex_agents.history import executed_steps, fetch_history
from dex_agents.http import HttpLimits, mount_console
from dex_agents_testing import DexliteProcess, wait_until
from helpers import Harness
from http_support import serving

FLOW = "console_flows:demo"
LIMITS = HttpLimits(poll_seconds=1, idle_timeout_seconds=30)
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"


def _drive(driver: Path, mode: str, base_url: str, out: Path, *extra: str) -> dict[str, Any]:
    done = subprocess.run(
        ["node", str(driver), mode, base_url, str(out), *extra],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
        env=_env(),
    )
    assert done.returncode == 0, f"{mode}: the driver failed\n{done.stdout}\n{done.stderr[-6000:]}"
    seen: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    assert seen["pageErrors"] == [], seen["pageErrors"]
    assert (out / f"{mode}.png").stat().st_size > 10_000
    return seen


def _env() -> dict[str, str]:
    return {**os.environ, "DEX_CHROMIUM": CHROMIUM}


def _overlap(a: dict[str, Any], b: dict[str, Any], width: float) -> bool:
    return bool(a["left"] < b["left"] + width and b["left"] < a["left"] + width)


@pytest.fixture(autouse=True)
def _chromium() -> None:
    assert Path(CHROMIUM).exists(), "Debian's chromium is missing: tools/bootstrap.sh installs it"


def test_console_in_chromium(factory_harness: Callable[..., Harness], tmp_path: Path) -> None:
    package = built_console(tmp_path)
    driver = package / "dist" / "browser" / "console.browser.js"
    static = static_dir(package)
    out = artifact_dir(tmp_path / "shots")
    h = factory_harness(FLOW)
    closed = f"console-closed-{uuid.uuid4().hex[:8]}"
    h.client.start_session(closed)
    h.client.client.stop_flow(closed)
    idle = h.start()
    dropped: subprocess.Popen[str] | None = None
    try:
        with serving(h.client, LIMITS) as served:
            mount_console(served.app, static_dir=static, dex_address=h.server.address)
            base = served.base_url
            _chat_turn(h, _drive(driver, "chat", base, out))

            declined = _drive(driver, "decline", base, out)
            assert "the refund was not made" in declined["texts"][1]
            assert declined["texts"][-1].endswith("You answered: green")
            tools = {m.tool_name: m.tool_output for m in h.client.all_messages(declined["session"])}
            assert tools["issue_refund"] == "not this one"  # the reason typed on the page
            assert '"answer":"green"' in (tools["ask_user"] or "").replace(" ", "")

            unknown = _drive(driver, "unknown", base, out, "no-such-session")
            assert unknown["problem"] == "no session 'no-such-session' on the Dex server"

            shut = _drive(driver, "closed", base, out, closed)
            assert f"Session {closed} has closed (canceled)" in shut["problem"]
            assert "takes no more messages" in shut["problem"]

            dropped = subprocess.Popen(
                ["node", str(driver), "dropped", base, str(out), idle],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
                env=_env(),
            )
            assert dropped.stdout is not None
            first = dropped.stdout.readline().strip()
            assert first == "opened", f"the driver said {first!r}"
        # serving() has stopped uvicorn; the page is still open on the session.
        stdout, stderr = dropped.communicate("stopped\n", timeout=300)
        assert dropped.returncode == 0, f"dropped: the driver failed\n{stdout}\n{stderr[-6000:]}"
        lost = json.loads(stdout.strip().splitlines()[-1])
        expected = (
            f"Lost the connection to the console server at {base}: "
            "is `dex-agents serve` still running?"
        )
        assert lost["problem"] == expected  # the timeline's refresh found the server gone
        assert lost["texts"] == [expected]  # and so did sending a message
        assert lost["pageErrors"] == []
    finally:
        if dropped is not None and dropped.poll() is None:
            dropped.kill()
            dropped.communicate()


def test_console_shows_a_retried_step(private_dexlite: DexliteProcess, tmp_path: Path) -> None:
    """The Worker is SIGKILLed while the page streams a model call, before the call
    can commit: the page shows the Step running with attempt 1 lost, then ends on
    the retried call's answer alone, with the timeline's one RunModel-1 bar marked
    as two attempts, saying why. Then with no Worker at all, the page says the
    messages cannot be read."""
    package = built_console(tmp_path)
    driver = package / "dist" / "browser" / "console.browser.js"
    static = static_dir(package)
    out = artifact_dir(tmp_path / "shots")
    gates = tmp_path / "gates"
    gates.mkdir()
    # Attempt 1 waits for `g1`, which nobody creates, so only the kill ends it; the
    # retry waits for `g1.retry`, which opens once the test has seen the Step in flight.
    (gates / "g1.hold_retry").touch()
    h = Harness.create_from_factory(
        private_dexlite, tmp_path, "http_flows:flow", {"gate_dir": str(gates)}
    )
    try:
        session = h.start()
        with serving(h.client, LIMITS) as served:
            mount_console(served.app, static_dir=static, dex_address=h.server.address)
            page = subprocess.Popen(
                ["node", str(driver), "retried", served.base_url, str(out), session],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
                env=_env(),
            )
            try:
                # The SDK sends stream writes in the background: a Worker killed as soon
                # as the model has streamed may die before they leave. So kill only once
                # the page shows them.
                assert page.stdin is not None
                assert page.stdout is not None
                first = page.stdout.readline().strip()
                assert first == "streamed", f"the driver said {first!r}: {page.communicate()}"
                killed = h.worker.pid
                assert int((gates / "g1.streamed").read_text()) == killed  # attempt 1 runs there
                h.restart_worker()  # SIGKILL mid-call; the new Worker retries RunModel-1
                retrying = gates / "g1.retrying"
                wait_until(lambda: retrying.exists() or None, timeout=60, what="the retry")
                assert int(retrying.read_text()) == h.worker.pid  # the new Worker's
                assert "RunModel-1" not in _committed(h, session)  # the kill was not late
                page.stdin.write("killed\n")
                page.stdin.flush()
                second = page.stdout.readline().strip()
                assert second == "in-flight", f"the driver said {second!r}: {page.communicate()}"
                assert "RunModel-1" not in _committed(h, session)
                (gates / "g1.retry").touch()
                stdout, stderr = page.communicate(timeout=300)
            finally:
                if page.poll() is None:
                    page.kill()
                    page.communicate()
            # With no Worker left, the snapshot cannot be read: the page says so.
            h.worker.kill()
            orphan = _drive(driver, "noworker", served.base_url, out, session)
            assert orphan["problem"].startswith(
                "The session's messages could not be read: no Worker of the session's Flow "
                "answered: "
            ), orphan["problem"]
        assert page.returncode == 0, f"retried: the driver failed\n{stdout}\n{stderr[-6000:]}"
        seen = json.loads(stdout.strip().splitlines()[-1])
        assert seen["pageErrors"] == []
        # After the kill, before the retry answered: the Step runs, attempt 1 is lost.
        lost = "RunModel-1 attempt 1 Worker killed or lost ("
        assert any(n.startswith(lost) for n in seen["inFlight"]["notes"]), seen["inFlight"]
        # The end: the retry's text alone (attempt 1's partial text dropped), and one
        # bar for RunModel-1's execution, of two attempts.
        assert [t.strip() for t in seen["texts"]] == ["kill:g1", "final answer"]
        (bar,) = [b for b in seen["bars"] if b["step"] == "RunModel-1"]
        assert (bar["kind"], bar["attempts"]) == ("execute", 2)
        (note,) = [n for n in seen["notes"] if n.startswith("RunModel-1")]
        assert note.startswith("RunModel-1 retried: attempt 1 Worker killed or lost ("), note
        assert note.endswith("attempt 2 committed")
        assert _committed(h, session)["RunModel-1"] == 2
    finally:
        h.close()


def _committed(h: Harness, session: str) -> dict[str, int]:
    """The session's committed Step executions and the attempt each committed on."""
    history = fetch_history(h.server.address, session, h.runs[session])
    found: dict[str, int] = {}
    for event in history:
        if event.WhichOneof("payload") == "step_execute_completed":
            context = event.step_execute_completed.context
            found[context.step_execution_id] = context.final_attempt
    return found


def _chat_turn(h: Harness, seen: dict[str, Any]) -> None:
    """The refund turn as the page showed it, against the session's Flow history."""
    session = seen["session"]
    assistant = seen["texts"][-1]
    assert "I refunded the full amount" in assistant
    assert "rf-A-1001" in assistant  # the approved refund's output, on its tool part
    bars = {(b["step"], b["kind"]): b for b in seen["bars"]}
    lookup, approval = bars[("CallTool-1", "execute")], bars[("AwaitToolApproval-1", "wait")]
    # The model asked for both tools at once: their Steps stand side by side.
    assert lookup["lane"] != approval["lane"]
    assert _overlap(lookup, approval, width=20)
    assert ("CallSingleAttemptTool-1", "execute") in bars  # the refund, once approved
    # The picture shows the Steps the Flow history committed in the turn.
    info = h.client.client.describe_flow(session)
    history = executed_steps(fetch_history(h.server.address, session, info.run_id))
    committed = {s.step_execution_id for s in history if not s.failed}
    turn = {"AwaitUserMessage-1", "RunModel-1", "CallTool-1", "AwaitToolApproval-1"}
    turn |= {"CallSingleAttemptTool-1", "ResumeTurn-1", "RunModel-2"}
    assert turn <= committed
    assert turn <= {step for step, _ in bars}
