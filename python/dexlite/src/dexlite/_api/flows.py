"""Starting, stopping, awaiting, describing and searching flows."""

from __future__ import annotations

import logging
import time
import uuid
from typing import TYPE_CHECKING

from dex.dexpb import dex_pb2 as pb

from dexlite import _errors
from dexlite._engine import cancellation, queue, rows, writes
from dexlite._model import (
    RUNNING,
    START_FROM_ID,
    check_identifier,
    is_null,
    null_value,
    require_value,
    step_options_problem,
)

from .base import OpsBase, not_negative, require_fields, token_number

if TYPE_CHECKING:
    import sqlite3

_LOGGER = logging.getLogger(__name__)
_ABNORMAL = (pb.FLOW_STATUS_FAILED, pb.FLOW_STATUS_CANCELED, pb.FLOW_STATUS_TERMINATED)


class FlowCalls(OpsBase):
    """A flow run from its start to its close."""

    def _target(self, override: pb.FlowConfig) -> pb.FlowConfig:
        config = pb.FlowConfig()
        config.MergeFrom(override)
        if not override.HasField("worker_target"):
            _LOGGER.warning(
                "StartFlow without worker_target; using %s", self._options.default_worker_target
            )
            config.worker_target.address = self._options.default_worker_target
        target = config.worker_target
        if target.address.startswith(("http://", "https://")):
            raise _errors.invalid("worker_target.address must be host:port without a scheme")
        if not target.is_pull_mode and not target.address:
            raise _errors.invalid("worker_target.address is required for listening workers")
        return config

    # -- flows ---------------------------------------------------------------------

    def start_flow(self, request: pb.StartFlowRequest) -> str:
        check_identifier(request.flow_id, "flow_id")
        require_fields(request, "flow_type", "request_id")
        not_negative(request.flow_timeout_seconds, "flow_timeout_seconds")
        start = request.flow_start_options
        not_negative(start.flow_start_delay_seconds, "flow_start_options.flow_start_delay_seconds")
        limit = self._options.max_value_bytes
        problem = step_options_problem(request.step_options, "step_options")
        if problem is None and start.HasField("timeout_handler_options"):
            handler = start.timeout_handler_options
            if handler.method_timeout_seconds < 0 or handler.heartbeat_timeout_seconds < 0:
                problem = "timeout_handler_options timeouts must not be negative"
        if problem:
            raise _errors.invalid(problem)
        if request.start_step_type:
            check_identifier(request.start_step_type, "start_step_type")
            if request.HasField("step_input"):
                require_value(request.step_input, "step_input", limit)
        for write in start.attributes:
            if not write.key:
                raise _errors.invalid("flow_start_options.attributes.key is required")
            require_value(write.value, f"flow_start_options.attributes[{write.key!r}]", limit)
        config = self._target(start.flow_config_override)
        with self.state.tx() as conn:
            existing = rows.find_run(self.state, request.flow_id)
            if existing is not None:
                reused = self._check_reuse(conn, request, existing)
                if reused is not None:
                    return reused
            return self._create_run(conn, request, config)

    def _check_reuse(
        self, conn: sqlite3.Connection, request: pb.StartFlowRequest, existing: sqlite3.Row
    ) -> str | None:
        start = request.flow_start_options
        policy = start.id_reuse_policy
        if (
            start.flow_already_started_options.ignore_already_started_error
            and existing["request_id"] == request.request_id
        ):
            # A replay of the start that made the latest run gets that run, whatever the
            # policy would allow: it must neither terminate it nor start a second (§3.2).
            return str(existing["run_id"])
        if existing["status"] == RUNNING:
            if policy == pb.ID_REUSE_POLICY_ALLOW_TERMINATE_IF_RUNNING:
                cancellation.close_run(
                    self.state,
                    conn,
                    existing["run_id"],
                    pb.FLOW_STATUS_TERMINATED,
                )
                return None
            raise _errors.already_started(request.flow_id)
        if policy == pb.ID_REUSE_POLICY_UNSPECIFIED:
            allowed = self._options.default_id_reuse == "allow-if-no-running"
        elif policy == pb.ID_REUSE_POLICY_DISALLOW_REUSE:
            allowed = False
        elif policy == pb.ID_REUSE_POLICY_ALLOW_IF_PREVIOUS_EXISTS_ABNORMALLY:
            allowed = existing["status"] in _ABNORMAL
        else:
            allowed = True
        if allowed:
            return None
        raise _errors.already_started(request.flow_id)

    def _create_run(
        self, conn: sqlite3.Connection, request: pb.StartFlowRequest, config: pb.FlowConfig
    ) -> str:
        run_id = str(uuid.uuid4())
        now = time.time()
        start = request.flow_start_options
        timeout_at = (
            now + request.flow_timeout_seconds if request.flow_timeout_seconds > 0 else None
        )
        conn.execute(
            "INSERT INTO runs(run_id, flow_id, flow_type, status, request_id, start_ts, config,"
            " timeout_at, timeout_policy, handler_options) VALUES (?,?,?,?,?,?,?,?,?,?)",
            (
                run_id,
                request.flow_id,
                request.flow_type,
                RUNNING,
                request.request_id,
                now,
                config.SerializeToString(),
                timeout_at,
                request.flow_timeout_policy,
                start.timeout_handler_options.SerializeToString(),
            ),
        )
        initial = [w for w in start.attributes if not is_null(w.value)]
        writes.apply_writes(conn, run_id, initial)
        started = pb.FlowStartedOrContinuedHistoryEvent(
            flow_execution_id=pb.FlowExecutionID(flow_id=request.flow_id, run_id=run_id),
            flow_type=request.flow_type,
            flow_config=config,
            flow_timeout_policy=request.flow_timeout_policy,
            timeout_handler_options=start.timeout_handler_options,
            initial_start=pb.FlowInitialStart(
                start_step_type=request.start_step_type,
                step_input=request.step_input,
                step_options=request.step_options,
                initial_attributes=[pb.KV(key=w.key, value=w.value) for w in initial],
            ),
        )
        started.flow_timeout.FromSeconds(request.flow_timeout_seconds)
        rows.event(conn, run_id, flow_started_or_continued=started)
        if request.start_step_type:
            movement = pb.StepMovement(
                step_type=request.start_step_type, step_options=request.step_options
            )
            movement.step_input.CopyFrom(
                request.step_input if request.HasField("step_input") else null_value()
            )
            queue.enqueue(
                self.state,
                conn,
                run_id,
                movement,
                START_FROM_ID,
                not_before=now + start.flow_start_delay_seconds,
            )
        return run_id

    def stop_flow(self, request: pb.StopFlowRequest) -> None:
        check_identifier(request.flow_id, "flow_id")
        with self.state.tx() as conn:
            run = rows.running_run(self.state, request.flow_id, request.run_id)
            # Only FAIL reports an error; TERMINATE and CANCEL keep the reason in
            # history alone, as the Dex Server does.
            if request.stop_type == pb.STOP_TYPE_FAIL:
                status, error = pb.FLOW_STATUS_FAILED, pb.FLOW_ERROR_TYPE_CLIENT_API_FAILING_FLOW
                message = request.reason or "fail by client"
            else:
                status, error, message = (
                    pb.FLOW_STATUS_TERMINATED
                    if request.stop_type == pb.STOP_TYPE_TERMINATE
                    else pb.FLOW_STATUS_CANCELED,
                    pb.FLOW_ERROR_TYPE_UNSPECIFIED,
                    "",
                )
            cancellation.close_run(
                self.state,
                conn,
                run["run_id"],
                status,
                error_type=error,
                message=message,
                history_message=request.reason or message,
            )

    def wait_for_flow(self, request: pb.WaitForFlowRequest) -> pb.FlowResult:
        check_identifier(request.flow_id, "flow_id")
        state = self.state
        run_id = self._run_id(request.flow_id, request.run_id)

        def check() -> pb.FlowResult | None:
            # Runs after every commit while the flow is open: read only the status.
            row = state.db.conn.execute(
                "SELECT status FROM runs WHERE run_id=?", (run_id,)
            ).fetchone()
            if row is None:
                rows.run_row(state, run_id)  # raises the usual "run vanished" error
            if row["status"] == RUNNING:
                return None
            return rows.flow_result(state.db.conn, run_id)

        return self._wait(float(request.wait_time_seconds), check, "the flow to close")

    def describe(self, request: pb.GetFlowSummaryRequest) -> pb.GetFlowSummaryResponse:
        check_identifier(request.flow_id, "flow_id")
        with self.state.db.lock:
            run = rows.existing_run(self.state, request.flow_id, request.run_id)
            first = self.state.db.conn.execute(
                "SELECT run_id FROM runs WHERE flow_id=? ORDER BY seq LIMIT 1", (request.flow_id,)
            ).fetchone()[0]
        response = pb.GetFlowSummaryResponse(
            flow_execution_id=pb.FlowExecutionID(flow_id=run["flow_id"], run_id=run["run_id"]),
            first_run_id=first,
            request_id=run["request_id"],
            flow_type=run["flow_type"],
            flow_status=run["status"],
            run_attempt=1,
        )
        response.start_time.FromNanoseconds(int(run["start_ts"] * 1e9))
        if run["close_ts"] is not None:
            response.close_time.FromNanoseconds(int(run["close_ts"] * 1e9))
        return response

    def update_config(self, request: pb.UpdateFlowConfigRequest) -> None:
        check_identifier(request.flow_id, "flow_id")
        with self.state.tx() as conn:
            run = rows.running_run(self.state, request.flow_id, request.run_id)
            config = rows.config(run)
            config.MergeFrom(request.flow_config)
            if request.flow_config.HasField("worker_target"):
                config.worker_target.CopyFrom(request.flow_config.worker_target)
            conn.execute(
                "UPDATE runs SET config=? WHERE run_id=?",
                (config.SerializeToString(), run["run_id"]),
            )

    def search(self, request: pb.SearchFlowsRequest) -> pb.SearchFlowsResponse:
        filters = _parse_query(request.query)
        size = request.page_size or 1000
        offset = token_number(request.next_page_token or "0", "next_page_token")
        response = pb.SearchFlowsResponse()
        with self.state.db.lock:
            conn = self.state.db.conn
            rows = conn.execute("SELECT * FROM runs ORDER BY seq DESC").fetchall()
            matched: list[tuple[sqlite3.Row, list[pb.KV]]] = []
            for run in rows:
                indexed: list[pb.KV] = []
                fields: dict[str, pb.Value] = {}
                for key, blob in conn.execute(
                    "SELECT index_key, value FROM attrs WHERE run_id=? AND index_key<>''",
                    (run["run_id"],),
                ):
                    kv = pb.KV(key=key)
                    kv.value.ParseFromString(blob)
                    indexed.append(kv)
                    fields[key] = kv.value
                if all(_matches(run, fields, name, wanted) for name, wanted in filters):
                    matched.append((run, indexed))
        for run, indexed in matched[offset : offset + size]:
            entry = response.flow_runs.add(
                flow_id=run["flow_id"],
                run_id=run["run_id"],
                flow_type=run["flow_type"],
                flow_status=run["status"],
                indexed_attributes=indexed,
            )
            entry.start_time.FromNanoseconds(int(run["start_ts"] * 1e9))
            if run["close_ts"] is not None:
                entry.close_time.FromNanoseconds(int(run["close_ts"] * 1e9))
        if offset + size < len(matched):
            response.next_page_token = str(offset + size)
        return response


def _parse_query(query: str) -> list[tuple[str, str]]:
    """``Field = 'value' AND Field = 3`` -> [(field, literal)], literals kept as text."""
    text = query.strip()
    if not text:
        return []
    result = []
    for clause in text.split(" AND "):
        name, sep, literal = clause.partition("=")
        if not sep or not name.strip():
            raise _errors.invalid(f"query: unsupported clause {clause.strip()!r}")
        result.append((name.strip(), literal.strip().strip("'\"")))
    return result


def _matches(run: sqlite3.Row, fields: dict[str, pb.Value], name: str, wanted: str) -> bool:
    if name == "FlowType":
        return bool(run["flow_type"] == wanted)
    if name == "ExecutionStatus":
        status = str(pb.FlowStatus.Name(run["status"])).removeprefix("FLOW_STATUS_")
        return status.lower() == wanted.lower()
    value = fields.get(name)
    if value is None:
        return False
    kind = value.WhichOneof("kind")
    if kind == "string_value":
        return value.string_value == wanted
    if kind == "int_value":
        return str(value.int_value) == wanted
    if kind == "bool_value":
        return str(value.bool_value).lower() == wanted.lower()
    if kind == "double_value":
        return str(value.double_value) == wanted
    return False
