"""TypeScript Stepwise's MCP tool source through the real path: dexlite, a Python Worker
child whose session Flow runs on a `RemoteRunner`, the Node sidecar serving a
`StepwiseRunner` with an `McpToolSource` (typescript/core/src/testing/mcp_sidecar.ts),
and a real MCP server of the official TypeScript SDK on loopback (stateless Streamable
HTTP, typescript/core/src/testing/mcp_server.ts). The server logs every call with the
idempotency key it received in `_meta`."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from dex_agents_contracts import MessageRole
from dex_agents_testing.processes import DexliteProcess
from remote_harness import Remote, running_remote

SCRIPT = Path(__file__).with_name("remote_flows.py")


@pytest.fixture
def mcp_server(core_package: Path, tmp_path: Path) -> Iterator[tuple[str, Path]]:
    """The SDK's MCP server on a free loopback port: (its URL, its call log)."""
    log = tmp_path / "mcp_calls.jsonl"
    script = core_package / "dist" / "testing" / "mcp_server.js"
    proc = subprocess.Popen(
        ["node", str(script), "--log", str(log), "http"], stdout=subprocess.PIPE
    )
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline().decode()
        assert line.startswith("listening "), f"the MCP server did not start: {line!r}"
        yield line.split()[1], log
    finally:
        proc.kill()
        proc.wait(10)


@pytest.fixture
def remote(
    dexlite: DexliteProcess,
    core_package: Path,
    mcp_server: tuple[str, Path],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> Iterator[Remote]:
    with running_remote(
        dexlite,
        core_package,
        tmp_path,
        monkeypatch,
        script=SCRIPT,
        flow_type_prefix="StepwiseMcp",
        sidecar_args=["--mcp-url", mcp_server[0]],
        sidecar_script="dist/testing/mcp_sidecar.js",
    ) as (sidecar, app):
        yield Remote(sidecar, app)


def _calls(log: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in log.read_text().splitlines() if line]


def test_mcp_tools_run_in_their_steps_and_a_task_is_polled_to_its_result(
    remote: Remote, mcp_server: tuple[str, Path]
) -> None:
    app = remote.app
    session = app.start("job 1500")
    snapshot = app.wait_idle(session, 1)
    # The answer saw both results: the task's (polled in PollToolTask Steps) and the read's.
    assert snapshot.messages[-1].text == ("Results: j1=job done after 1500 ms; l1=sunny in Paris")
    (shape,) = app.shapes(session)
    assert shape[0] == "RunModel"
    assert shape[-2:] == ["ResumeTurn", "RunModel"]
    middle = shape[1:-2]
    assert middle.count("CallTool") == 2  # idempotentHint and readOnlyHint: no approval
    assert middle.count("PollToolTask") >= 1
    assert not set(middle) - {"CallTool", "PollToolTask"}
    # Each call reached the server once, with the session's idempotency key.
    calls = sorted((c["tool"], c["key"]) for c in _calls(mcp_server[1]))
    assert calls == [("job", f"{session}/turn-1/j1"), ("lookup", f"{session}/turn-1/l1")]
    # The model was offered the listed MCP tools.
    first, resumed = remote.runs("model")
    assert {"jobs__job", "jobs__lookup", "jobs__set_flag"} <= set(first["tools"])
    assert resumed["results"] == {"j1": "job done after 1500 ms", "l1": "sunny in Paris"}
    events = app.events(session, "turn_completed")
    statuses = [json.loads(e.payload)["status"] for e in events if e.type == "mcp.task_status"]
    assert statuses[-1] == "completed"
    assert [m.role for m in snapshot.messages][-1] is MessageRole.ASSISTANT
