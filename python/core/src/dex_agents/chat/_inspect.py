"""`dex-agents inspect SESSION`: the Step timeline from the Flow history, and the snapshot."""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass

from dex import FlowNotFoundError, FlowStatus
from dex_agents_contracts import AgentSnapshot

from dex_agents.chat._errors import ChatError, describe_error
from dex_agents.chat._timeline import TimelineEntry, build_timeline
from dex_agents.client import AgentSessionClient
from dex_agents.history import active_steps, fetch_history

__all__ = ["SessionReport", "read_report"]


@dataclass
class SessionReport:
    session_id: str
    flow_type: str
    run_id: str
    status: str
    timeline: list[TimelineEntry]
    snapshot: AgentSnapshot | None
    snapshot_problem: str | None


def _snapshot_within(
    client: AgentSessionClient, session_id: str, timeout: float
) -> tuple[AgentSnapshot | None, str | None]:
    """The snapshot RPC, which a Worker answers; a bounded wait so a missing Worker is named."""
    result: list[AgentSnapshot] = []
    failure: list[BaseException] = []

    def call() -> None:
        try:
            result.append(client.get_snapshot(session_id))
        except Exception as error:  # reported below, in words
            failure.append(error)

    thread = threading.Thread(target=call, name="dex-agents-inspect-snapshot", daemon=True)
    thread.start()
    thread.join(timeout)
    if result:
        return result[0], None
    if failure:
        return None, f"the snapshot failed: {describe_error(failure[0])}"
    return None, f"no Worker answered get_agent_snapshot within {timeout:g} s"


def read_report(
    client: AgentSessionClient, address: str, session_id: str, *, snapshot_timeout: float = 15.0
) -> SessionReport:
    """Everything `inspect` shows; raises ChatError for an unknown session or a lost server."""
    try:
        info = client.client.describe_flow(session_id)
    except FlowNotFoundError:
        raise ChatError(f"no session {session_id!r} on the Dex server at {address}") from None
    except Exception as error:
        raise ChatError(describe_error(error, address=address)) from None
    running = info.status is FlowStatus.RUNNING
    try:
        history = fetch_history(address, session_id, info.run_id)
        active = active_steps(address, session_id, info.run_id) if running else []
    except Exception as error:
        raise ChatError(describe_error(error, address=address)) from None
    timeline = build_timeline(history, active, now_seconds=time.time())
    snapshot: AgentSnapshot | None = None
    problem: str | None = None
    if running:
        snapshot, problem = _snapshot_within(client, session_id, snapshot_timeout)
    else:
        problem = f"the session has closed ({info.status.value}); it has no snapshot"
    return SessionReport(
        session_id=session_id,
        flow_type=info.flow_type,
        run_id=info.run_id,
        status=info.status.value,
        timeline=timeline,
        snapshot=snapshot,
        snapshot_problem=problem,
    )
