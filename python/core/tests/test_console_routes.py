"""The console's routes of dex_agents.http (`mount_console`) over dexlite and a Worker
process of the demo agent: the session list, starting a session, the timeline
`dex-agents inspect` shows, the static files, and the refusals in words."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx2
import pytest
from dex_agents.http import mount_console
from dex_agents_contracts import ToolCallStatus
from dex_agents_testing import child_env, free_port, wait_until
from helpers import Harness
from http_support import serving
from starlette.applications import Starlette


def _page(root: Path) -> Path:
    root.mkdir()
    (root / "index.html").write_text('<script type="module" src="./app.js"></script>')
    (root / "app.js").write_text("export {};")
    return root


def test_console_routes(factory_harness: Callable[..., Harness], tmp_path: Path) -> None:
    h = factory_harness("console_flows:demo")
    talked = h.start("Please refund order A-1001")
    closed = f"closed-{uuid.uuid4().hex[:8]}"
    h.client.start_session(closed)
    h.client.client.stop_flow(closed)
    with serving(h.client) as served:
        mount_console(served.app, static_dir=_page(tmp_path / "page"), dex_address=h.server.address)
        with httpx2.Client(base_url=served.base_url, timeout=30) as http:
            home = http.get("/", follow_redirects=False)
            assert home.status_code == 307
            assert home.headers["location"] == "/console/"
            page = http.get("/console/")
            assert page.status_code == 200
            assert 'src="./app.js"' in page.text
            assert http.get("/console/app.js").headers["content-type"].startswith("text/javascript")

            started = http.post("/console/api/sessions")
            assert started.status_code == 201
            fresh = started.json()["session_id"]
            assert fresh.startswith("console-")
            named = http.post("/console/api/sessions", json={"session_id": f"mine-{fresh}"})
            assert named.status_code == 201
            again = http.post("/console/api/sessions", json={"session_id": f"mine-{fresh}"})
            assert again.status_code == 409
            assert again.json() == {"error": f"session 'mine-{fresh}' already exists"}
            bad = http.post("/console/api/sessions", json={"session_id": "../x"})
            assert bad.status_code == 400
            assert "'session_id' must be 1-128 letters" in bad.json()["error"]
            not_json = http.post("/console/api/sessions", content=b"{nope")
            assert not_json.status_code == 400
            assert "not JSON" in not_json.json()["error"]

            listed = http.get("/console/api/sessions").json()
            assert listed["flow_type"] == "ChatDemoAgent"
            by_id = {s["session_id"]: s for s in listed["sessions"]}
            assert by_id[fresh]["status"] == "running"
            assert by_id[closed]["status"] == "canceled"
            assert by_id[closed]["closed_at"] is not None

            def refund_waits_after_the_lookup() -> bool:
                # The two calls run side by side: the approval may be pending before
                # get_order's Step has finished.
                snapshot = h.client.get_snapshot(talked)
                looked_up = any(
                    t.tool_name == "get_order" and t.status is ToolCallStatus.SUCCEEDED
                    for t in snapshot.tool_calls
                )
                return bool(snapshot.pending_interrupts) and looked_up

            wait_until(
                lambda: refund_waits_after_the_lookup() or None,
                timeout=60,
                what="get_order to finish and the refund's approval to be pending",
            )
            timeline = http.get(f"/console/api/sessions/{talked}/timeline").json()
            assert timeline["running"] is True
            steps = {(e["name"], e["kind"]) for e in timeline["entries"]}
            assert ("RunModel-1", "execute") in steps
            assert ("CallTool-1", "execute") in steps  # get_order ran; the refund waits
            assert ("AwaitToolApproval-1", "waiting") in steps or (
                "AwaitToolApproval-1",
                "wait",
            ) in steps

            shut = http.get(f"/console/api/sessions/{closed}/timeline").json()
            assert shut["running"] is False
            assert shut["status"] == "canceled"
            assert shut["entries"][-1]["kind"] == "closed"

            unknown = http.get("/console/api/sessions/no-such/timeline")
            assert unknown.status_code == 404
            assert unknown.json() == {"error": "no session 'no-such' on the Dex server"}

            # No Worker: the snapshot is a 503 in words; the timeline still reads from Dex.
            h.worker.kill()
            orphan = http.get(f"/sessions/{talked}/snapshot")
            assert orphan.status_code == 503
            assert orphan.json()["error"].startswith("no Worker of the session's Flow answered: ")
            assert http.get(f"/console/api/sessions/{talked}/timeline").status_code == 200


def test_console_needs_built_files(tmp_path: Path) -> None:
    app = Starlette()
    with pytest.raises(ValueError, match=r"has no index\.html"):
        mount_console(app, static_dir=tmp_path, dex_address="127.0.0.1:1")


def test_serve_dexlite_console(tmp_path: Path) -> None:
    """`dex-agents serve --dexlite --console DIR`: dexlite, a Worker and the console from
    one command; SIGTERM stops all three (uvicorn shuts down, then dies of the signal
    it caught, and the children die with their parent)."""
    port = free_port()
    data = tmp_path / "data"
    command = [sys.executable, "-m", "dex_agents._cli", "serve", "--dexlite"]
    command += ["--data-dir", str(data), "--flow", "dex_agents.chat.demo_agent:flow"]
    command += ["--port", str(port), "--console", str(_page(tmp_path / "page"))]
    serve = subprocess.Popen(
        command, stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True, env=child_env()
    )
    try:
        assert serve.stderr is not None
        lines = [serve.stderr.readline().strip() for _ in range(2)]
        assert lines[0].startswith("dexlite on 127.0.0.1:"), lines
        base = f"http://127.0.0.1:{port}"
        assert lines[1] == f"serving on {base} (console: {base}/console/)"
        worker = int((data / "worker.pid").read_text())
        with httpx2.Client(base_url=base, timeout=30) as http:
            wait_until(lambda: _answers(http, "/console/"), timeout=30, what="uvicorn to answer")
            started = http.post("/console/api/sessions", json={"session_id": "from-serve"})
            assert started.status_code == 201
            snapshot = wait_until(
                lambda: _snapshot(http, "from-serve"), timeout=60, what="the Worker's snapshot"
            )
            assert snapshot["snapshot"]["messages"] == []
            listed = http.get("/console/api/sessions").json()["sessions"]
            assert [s["session_id"] for s in listed] == ["from-serve"]
        dexlite = lines[0].removeprefix("dexlite on ").split(" ")[0]
        serve.send_signal(signal.SIGTERM)
        assert serve.wait(60) in (0, -signal.SIGTERM)
        wait_until(lambda: not _alive(worker) or None, timeout=30, what="the Worker to exit")
        host, _, dex_port = dexlite.partition(":")
        wait_until(
            lambda: not _listening(host, int(dex_port)) or None, timeout=30, what="dexlite to exit"
        )
    finally:
        if serve.poll() is None:
            serve.kill()
            serve.wait()


def test_serve_console_without_built_files(tmp_path: Path) -> None:
    command = [sys.executable, "-m", "dex_agents._cli", "serve", "--dex", "127.0.0.1:1"]
    command += ["--flow", "dex_agents.chat.demo_agent:flow", "--console", str(tmp_path)]
    done = subprocess.run(
        command,
        capture_output=True,
        text=True,
        env=child_env(),
        timeout=120,
        check=False,
    )
    assert done.returncode == 1
    build = "(build it: bazel build //typescript/console:static)"
    assert done.stderr.strip() == f"--console {tmp_path} has no index.html {build}"


def _answers(http: httpx2.Client, path: str) -> bool | None:
    try:
        return http.get(path).status_code == 200 or None
    except httpx2.TransportError:
        return None


def _snapshot(http: httpx2.Client, session: str) -> dict[str, Any] | None:
    response = http.get(f"/sessions/{session}/snapshot")
    return response.json() if response.status_code == 200 else None


def _listening(host: str, port: int) -> bool:
    try:
        socket.create_connection((host, port), timeout=1).close()
    except OSError:
        return False
    return True


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True
