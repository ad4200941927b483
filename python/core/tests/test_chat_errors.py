"""Bad input to `dex-agents chat` and `inspect`: one clear line and exit 1, never a traceback."""

from __future__ import annotations

from pathlib import Path

from chat_flows import agent
from chat_support import run_cli
from dex_agents import AgentSessionClient
from dex_agents_testing import DexliteProcess, free_port

AGENT = "chat_flows:agent"


def _clean(result_out: str) -> None:
    assert "Traceback" not in result_out


def test_unknown_closed_and_unreachable(dexlite: DexliteProcess, tmp_path: Path) -> None:
    address = dexlite.address
    unknown = run_cli(["inspect", "no-such-session", "--dex", address, "--agent", AGENT])
    assert unknown.returncode == 1
    assert f"no session 'no-such-session' on the Dex server at {address}" in unknown.stdout
    _clean(unknown.stdout + unknown.stderr)

    attach = run_cli(["chat", "--dex", address, "--agent", AGENT, "--session", "no-such"])
    assert attach.returncode == 1
    assert "no session 'no-such'" in attach.stdout
    assert "leave out --session" in attach.stdout
    _clean(attach.stdout + attach.stderr)

    # A closed session: chat refuses it, inspect still shows its timeline.
    with AgentSessionClient(agent(), server_address=address) as client:
        client.start_session("closed-one")
        client.client.stop_flow("closed-one")
    closed = run_cli(["chat", "--dex", address, "--agent", AGENT, "--session", "closed-one"])
    assert closed.returncode == 1
    assert "session 'closed-one' has closed" in closed.stdout
    _clean(closed.stdout + closed.stderr)
    seen = run_cli(["inspect", "closed-one", "--dex", address, "--agent", AGENT])
    assert seen.returncode == 0, seen.stdout
    assert "the session has closed" in seen.stdout
    assert "closed-one (ChatTestAgent)" in seen.stdout
    assert "FLOW_STATUS_CANCELED" in seen.stdout  # the timeline's close entry

    dropped = f"127.0.0.1:{free_port()}"
    gone = run_cli(["inspect", "s", "--dex", dropped, "--agent", AGENT])
    assert gone.returncode == 1
    assert f"cannot reach the Dex server at {dropped}" in gone.stdout
    _clean(gone.stdout + gone.stderr)

    bad_agent = run_cli(["inspect", "s", "--dex", address, "--agent", "nowhere"])
    assert bad_agent.returncode == 1
    assert "--agent 'nowhere' must be 'module:name'" in bad_agent.stdout
