"""`dex-agents chat` in a real terminal (tmux): approvals with their countdown, a steer,
a Worker SIGKILLed mid-RunModel, the terminal itself killed and resumed, `inspect` of
the same session, and a dropped server."""

from __future__ import annotations

import os
import re
import signal
from pathlib import Path

from chat_support import Tmux, run_cli
from dex_agents_testing import DexliteProcess, wait_until

AGENT = "chat_flows:agent"


def test_chat_turns_with_approval_steer_and_kills(tmp_path: Path) -> None:
    gates = tmp_path / "gates"
    gates.mkdir()
    data = tmp_path / "data"
    env = {"DEX_AGENTS_CHAT_GATES": str(gates)}
    chat = ["chat", "--dexlite", "--data-dir", str(data), "--agent", AGENT]
    tmux = Tmux(tmp_path, env)
    try:
        tmux.start(chat)
        screen = tmux.wait_for("(/help for commands)")
        found = re.search(r"session (chat-[0-9a-f]+) started", screen)
        assert found, screen
        session = found.group(1)

        # An approval prompt with its deadline counting down, then a steer instead.
        tmux.keys("approve:1")
        screen = tmux.wait_for(
            lambda s: re.search(r"\? approve deploy\(.*\d+:\d\d left", s) is not None
        )
        assert "[call-1] y = approve, n [reason] = reject" in screen
        tmux.keys("/steer say changed my mind")
        screen = tmux.wait_for("agent > ok changed my mind")
        assert "call-1: withdrawn (steered)" in screen
        assert "turn steered" in screen

        # An approval answered with y.
        tmux.keys("approve:2")
        tmux.wait_for("[call-2] y = approve")
        tmux.keys("y")
        screen = tmux.wait_for("agent > deployed")
        assert "✓ deploy [call-2] succeeded" in screen

        # The Worker SIGKILLed while RunModel streams: the chat restarts it, the retried
        # attempt drops the partial text and the stored answer is the retry's.
        worker = int((data / "worker.pid").read_text())
        tmux.keys("kill:g1")
        tmux.wait_for("agent > partial answer")
        wait_until(lambda: (gates / "g1.streamed").exists() or None, timeout=30, what="marker")
        os.kill(worker, signal.SIGKILL)
        screen = tmux.wait_for("agent > final answer")
        assert "the Worker killed by SIGKILL; restarted it" in screen
        assert int((data / "worker.pid").read_text()) != worker

        # inspect, from another process, while the chat runs.
        address = (data / "dexlite.address").read_text().strip()
        report = run_cli(["inspect", session, "--dex", address, "--agent", AGENT], env)
        assert report.returncode == 0, report.stderr
        out = report.stdout
        assert "Traceback" not in out + report.stderr
        assert "Worker killed or lost" in out
        assert "attempt 2 committed" in out
        for part in (
            "resolve_interrupt",
            "steer_user_message",
            "AwaitToolApproval",
            "CallSingleAttemptTool",
            "ApplyTurnControl",
            "final answer",
            "pending interrupts:",
            "usage:",
        ):
            assert part in out, (part, out)

        # The terminal killed with an approval pending: a new chat resumes the session.
        tmux.keys("approve:3")
        tmux.wait_for("[call-3] y = approve")
        os.kill(tmux.pane_pid(), signal.SIGKILL)
        tmux.start([*chat, "--session", session], name="again")
        screen = tmux.wait_for(f"attached to session {session}")
        screen = tmux.wait_for(
            lambda s: re.search(r"\[call-3\] y = approve.*\d+:\d\d left", s) is not None
        )
        assert "you > approve:3" in screen  # the stored history
        tmux.keys("y")
        screen = tmux.wait_for("agent > deployed")
        tmux.keys("/quit")
        tmux.wait_for(f"left session {session}")
    finally:
        tmux.close()


def test_chat_tells_of_a_dropped_server(tmp_path: Path) -> None:
    server = DexliteProcess(tmp_path / "dex.sqlite").start()
    tmux = Tmux(tmp_path)
    try:
        tmux.start(["chat", "--dex", server.address, "--agent", AGENT])
        tmux.wait_for("(/help for commands)")
        server.kill()
        screen = tmux.wait_for(f"cannot reach the Dex server at {server.address}")
        assert "retrying" in screen
        assert "Traceback" not in screen
    finally:
        tmux.close()
        server.stop()
