"""The console's routes of dex_agents.http (`mount_console`) over dexlite and a Worker
process of the demo agent: the session list, starting a session, the timeline
`dex-agents inspect` shows, the static files, and the refusals in words."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from pathlib import Path

import httpx2
import pytest
from dex_agents.http import mount_console
from dex_agents_testing import wait_until
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

            wait_until(
                lambda: h.client.get_snapshot(talked).pending_interrupts or None,
                timeout=60,
                what="the refund's approval to be pending",
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


def test_console_needs_built_files(tmp_path: Path) -> None:
    app = Starlette()
    with pytest.raises(ValueError, match=r"has no index\.html"):
        mount_console(app, static_dir=tmp_path, dex_address="127.0.0.1:1")
