"""The chat's side of one session: following its events, waiting for commits, RPCs.

Everything that blocks runs on threads and reports through one queue, so the
terminal loop never waits on Dex. No rendering here.
"""

from __future__ import annotations

import json
import queue
import threading
import uuid
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import timedelta

from dex import FlowNotFoundError, FlowStatus
from dex_agents_contracts import AgentEvent, AgentInterrupt, AgentSnapshot

from dex_agents.chat._errors import ChatError, describe_error, is_connection_error
from dex_agents.client import AgentSessionClient
from dex_agents.errors import SessionNotFoundError

__all__ = ["ChatSession", "Report"]


@dataclass(frozen=True)
class Report:
    """One thing a background call found out, for the terminal loop."""

    kind: str
    """`event`, `interrupt`, `turn_end`, `notice`, `error`, `lost`, `back`, `closed`."""
    event: AgentEvent | None = None
    interrupt: AgentInterrupt | None = None
    snapshot: AgentSnapshot | None = None
    text: str = ""
    turn_id: str = ""


class ChatSession:
    """Starts or attaches to a session and turns everything it hears into Reports."""

    def __init__(self, client: AgentSessionClient, address: str) -> None:
        self.client = client
        self.address = address
        self.session_id = ""
        self.reports: queue.Queue[Report] = queue.Queue()
        self._pool = ThreadPoolExecutor(max_workers=4, thread_name_prefix="dex-agents-chat")
        self._stop = threading.Event()
        self._follower: threading.Thread | None = None

    # --- opening --------------------------------------------------------------------

    def start_new(self, session_id: str | None = None) -> str:
        """Starts an idle session; the first line typed is its first message."""
        self.session_id = session_id or f"chat-{uuid.uuid4().hex[:8]}"
        try:
            self.client.start_session(self.session_id)
        except Exception as error:
            raise ChatError(describe_error(error, address=self.address)) from None
        self._follow("")
        return self.session_id

    def attach(self, session_id: str) -> AgentSnapshot:
        """An existing session: its committed snapshot, then its events from now on."""
        self.session_id = session_id
        try:
            info = self.client.client.describe_flow(session_id)
        except FlowNotFoundError:
            raise ChatError(
                f"no session {session_id!r} on the Dex server at {self.address} "
                f"(leave out --session to start one)"
            ) from None
        except Exception as error:
            raise ChatError(describe_error(error, address=self.address)) from None
        if info.status is not FlowStatus.RUNNING:
            raise ChatError(
                f"session {session_id!r} has closed ({info.status.value}); it takes no more "
                f"messages (`dex-agents inspect {session_id}` shows what it did)"
            )
        try:
            # The tail before the snapshot: an event may show twice, none is missed.
            page = self.client.client.list_stream_messages(session_id, self.client.flow.events, 1)
            token = page.messages[0].resume_token if page.messages else ""
            snapshot = self.client.get_snapshot(session_id)
        except Exception as error:
            raise ChatError(describe_error(error, address=self.address)) from None
        self._follow(token)
        return snapshot

    # --- following ------------------------------------------------------------------

    def _follow(self, token: str) -> None:
        self._follower = threading.Thread(
            target=self._follow_loop, args=(token,), name="dex-agents-chat-events", daemon=True
        )
        self._follower.start()

    def _follow_loop(self, start: str) -> None:
        token = start
        lost = False
        while not self._stop.is_set():
            try:
                for event, seen in self.client.follow_events(
                    self.session_id, token, poll=timedelta(seconds=1)
                ):
                    token = seen
                    if lost:
                        lost = False
                        self.reports.put(Report("back", text=f"reconnected to {self.address}"))
                    self.reports.put(Report("event", event=event))
                    self._after_event(event)
                    if self._stop.is_set():
                        return
            except SessionNotFoundError as error:
                self.reports.put(Report("closed", text=str(error)))
                return
            except Exception as error:
                if not lost:
                    lost = True
                    self.reports.put(
                        Report("lost", text=describe_error(error, address=self.address))
                    )
                if not is_connection_error(error) and "closed" in str(error).lower():
                    self.reports.put(Report("closed", text=describe_error(error)))
                    return
                self._stop.wait(1.0)

    def _after_event(self, event: AgentEvent) -> None:
        """Events stream before their Step commits; wait for the commit off this thread."""
        if event.type == "interrupt_raised":
            interrupt_id = str(json.loads(event.payload).get("interrupt_id", ""))
            self._background(
                lambda: Report(
                    "interrupt",
                    interrupt=self.client.wait_for_interrupt(self.session_id, interrupt_id),
                )
            )
        elif event.type in ("turn_completed", "turn_failed", "turn_steered", "turn_cancelled"):
            turn_id = event.turn_id or ""
            self._background(
                lambda: Report(
                    "turn_end",
                    turn_id=turn_id,
                    snapshot=self.client.wait_for_turn_end(
                        self.session_id, turn_id, deadline_seconds=120
                    ),
                )
            )

    def _background(self, call: Callable[[], Report]) -> None:
        def run() -> None:
            try:
                self.reports.put(call())
            except Exception as error:
                self.reports.put(Report("error", text=describe_error(error, address=self.address)))

        self._pool.submit(run)

    # --- RPCs -----------------------------------------------------------------------

    def rpc(self, what: str, call: Callable[[], object], refused: str) -> None:
        """Runs an RPC off the loop; reports `what` on true and `refused` on false."""

        def run() -> Report:
            result = call()
            if result is False:
                return Report("notice", text=refused)
            if isinstance(result, str):
                return Report("notice", text=result)
            return Report("notice", text=what) if what else Report("notice", text="")

        self._background(run)

    def snapshot(self) -> AgentSnapshot:
        return self.client.get_snapshot(self.session_id)

    def close(self) -> None:
        self._stop.set()
        self._pool.shutdown(wait=False, cancel_futures=True)
        if self._follower is not None:
            self._follower.join(timeout=3)
