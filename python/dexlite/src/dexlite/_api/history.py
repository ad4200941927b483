"""History events and the current state of a flow."""

from __future__ import annotations

import grpc
from dex.dexpb import dex_pb2 as pb

from dexlite import _errors, _snapshot
from dexlite._engine import rows
from dexlite._model import COMPLETED, RUNNING, WAITING, check_identifier

from .base import OpsBase, not_negative, token_number

_MAX_HISTORY_PAGE = 1000


class HistoryCalls(OpsBase):
    """Reading a run back: its events, and a snapshot of its live state."""

    def history(self, request: pb.GetHistoryEventsRequest) -> pb.GetHistoryEventsResponse:
        check_identifier(request.flow_id, "flow_id")
        if not request.run_id:
            raise _errors.invalid("run_id is required")
        start = request.start_internal_event_id or 1
        if request.next_page_token:
            start = token_number(
                request.next_page_token.decode(errors="replace"), "next_page_token"
            )
        not_negative(request.estimate_page_size, "estimate_page_size")
        # An estimate: a caller asking for more than a page gets a page and a token.
        size = min(request.estimate_page_size or 100, _MAX_HISTORY_PAGE)
        with self.state.db.lock:
            rows.existing_run(self.state, request.flow_id, request.run_id)
            events = self.state.db.conn.execute(
                "SELECT event_id, payload FROM history WHERE run_id=? AND event_id>=?"
                " ORDER BY event_id LIMIT ?",
                (request.run_id, start, size + 1),
            ).fetchall()
        response = pb.GetHistoryEventsResponse()
        for _, payload in events[:size]:
            response.events.add().ParseFromString(payload)
        last = events[min(len(events), size) - 1][0] if events else start - 1
        response.next_internal_event_id = last + 1
        if len(events) > size:
            response.next_page_token = str(last + 1).encode()
        return response

    def wait_for_history(
        self, request: pb.WaitForHistoryEventRequest
    ) -> pb.WaitForHistoryEventResponse:
        check_identifier(request.flow_id, "flow_id")
        if request.next_internal_event_id <= 0:
            raise _errors.invalid("next_internal_event_id must be positive")
        state = self.state
        run_id = self._run_id(request.flow_id, request.run_id)

        def check() -> pb.WaitForHistoryEventResponse | None:
            row = rows.run_row(state, run_id)
            if row["event_seq"] >= request.next_internal_event_id or row["status"] != RUNNING:
                return pb.WaitForHistoryEventResponse(
                    event_available=row["event_seq"] >= request.next_internal_event_id,
                    available_internal_event_id=row["event_seq"],
                    flow_status=row["status"],
                )
            return None

        return self._wait(0.0, check, "a history event")

    def flow_state(self, request: pb.GetFlowStateRequest) -> pb.GetFlowStateResponse:
        check_identifier(request.flow_id, "flow_id")
        state = self.state
        with state.db.lock:
            conn = state.db.conn
            run = rows.existing_run(state, request.flow_id, request.run_id)
            run_id = run["run_id"]
            response = pb.GetFlowStateResponse(flow_config=rows.config(run))
            response.attributes.extend(_snapshot.attributes(conn, run_id, None))
            for step in conn.execute(
                "SELECT * FROM steps WHERE run_id=? AND state<>? ORDER BY seq", (run_id, COMPLETED)
            ).fetchall():
                active = response.active_step_executions.add(
                    step_execution_id=step["exec_id"],
                    from_step_execution_id=step["from_id"],
                    step_type=step["step_type"],
                    phase=(
                        pb.ACTIVE_STEP_PHASE_WAITING
                        if step["state"] == WAITING
                        else pb.ACTIVE_STEP_PHASE_ACTIVE
                    ),
                    movement=rows.movement(step),
                )
                if step["condition"] is not None:
                    active.waiting_condition.ParseFromString(step["condition"])
                if step["last_failure"] is not None:
                    active.last_failure_info.ParseFromString(step["last_failure"])
                for condition_id, fire_at, status in conn.execute(
                    "SELECT condition_id, fire_at, status FROM timers WHERE run_id=? AND exec_id=?"
                    " ORDER BY idx",
                    (run_id, step["exec_id"]),
                ):
                    active.timers.add(
                        condition_id=condition_id,
                        firing_unix_timestamp_seconds=int(fire_at),
                        status=status,
                    )
            for channel, message_id_, blob in conn.execute(
                "SELECT channel, message_id, value FROM msgs WHERE run_id=? ORDER BY seq", (run_id,)
            ):
                message = response.pending_channel_messages[channel].messages.add(
                    channel_name=channel, message_id=message_id_
                )
                message.value.ParseFromString(blob)
            response.completed_steps.extend(rows.flow_result(conn, run_id).results)
            response.sticky_app_worker_id = state.sticky.get(run_id, "")
        return response

    def load_blobs(self, request: pb.LoadBlobsRequest) -> pb.LoadBlobsResponse:
        """dexlite never emits blob references, so every requested ID is unknown."""
        if request.entries:
            raise _errors.ServiceError(
                grpc.StatusCode.NOT_FOUND, "dexlite sends values inline and stores no blobs"
            )
        return pb.LoadBlobsResponse()
