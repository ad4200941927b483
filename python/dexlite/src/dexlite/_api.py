"""FlowService operations: validation plus calls into the engine (spec §3, §5-§8, §10, §11)."""

from __future__ import annotations

import logging
import time
import uuid
from typing import TYPE_CHECKING, TypeVar

import grpc
from dex.dexpb import dex_pb2 as pb

from . import _errors, _snapshot
from ._dispatch import CallHandle, CallSpec
from ._model import (
    COMPLETED,
    RUNNING,
    START_FROM_ID,
    WAITING,
    check_identifier,
    is_null,
    null_value,
    require_value,
    step_options_problem,
)

if TYPE_CHECKING:
    import sqlite3
    from collections.abc import Callable

    from ._engine import Engine

_LOGGER = logging.getLogger(__name__)
_T = TypeVar("_T")
_ABNORMAL = (pb.FLOW_STATUS_FAILED, pb.FLOW_STATUS_CANCELED, pb.FLOW_STATUS_TERMINATED)


class FlowOps:
    """One method per FlowService call; the servicer stays a thin adapter."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self._options = engine.options

    # -- helpers -------------------------------------------------------------------

    def _wait(self, wait_seconds: float, check: Callable[[], _T | None], what: str) -> _T:
        """Long-polls ``check`` under the engine lock until it yields a value."""
        limit = self._options.max_wait_seconds
        budget = min(wait_seconds, limit) if wait_seconds > 0 else limit
        deadline = time.monotonic() + budget
        with self.engine.changed:
            while True:
                value = check()
                if value is not None:
                    return value
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise _errors.long_poll_timeout(what)
                self.engine.changed.wait(min(remaining, 1.0))

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
        if not request.flow_type:
            raise _errors.invalid("flow_type is required")
        if not request.request_id:
            raise _errors.invalid("request_id is required")
        if request.flow_timeout_seconds < 0:
            raise _errors.invalid("flow_timeout_seconds must not be negative")
        start = request.flow_start_options
        if start.flow_start_delay_seconds < 0:
            raise _errors.invalid(
                "flow_start_options.flow_start_delay_seconds must not be negative"
            )
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
        with self.engine.tx() as conn:
            existing = self.engine.find_run(request.flow_id)
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
        same_request = (
            start.flow_already_started_options.ignore_already_started_error
            and existing["request_id"] == request.request_id
        )
        if existing["status"] == RUNNING:
            if policy == pb.ID_REUSE_POLICY_ALLOW_TERMINATE_IF_RUNNING:
                self.engine.close_run(
                    conn,
                    existing["run_id"],
                    pb.FLOW_STATUS_TERMINATED,
                    pb.FLOW_ERROR_TYPE_UNSPECIFIED,
                    "",
                )
                return None
            if same_request:
                return str(existing["run_id"])
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
        if same_request:
            return str(existing["run_id"])
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
        writes = [w for w in start.attributes if not is_null(w.value)]
        self.engine.apply_writes(conn, run_id, writes, [], [])
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
                initial_attributes=[pb.KV(key=w.key, value=w.value) for w in writes],
            ),
        )
        started.flow_timeout.FromSeconds(request.flow_timeout_seconds)
        self.engine.event(conn, run_id, flow_started_or_continued=started)
        if request.start_step_type:
            movement = pb.StepMovement(
                step_type=request.start_step_type, step_options=request.step_options
            )
            movement.step_input.CopyFrom(
                request.step_input if request.HasField("step_input") else null_value()
            )
            self.engine.enqueue(
                conn,
                run_id,
                movement,
                START_FROM_ID,
                not_before=now + start.flow_start_delay_seconds,
            )
        return run_id

    def stop_flow(self, request: pb.StopFlowRequest) -> None:
        check_identifier(request.flow_id, "flow_id")
        with self.engine.tx() as conn:
            run = self.engine.running_run(request.flow_id, request.run_id)
            if request.stop_type == pb.STOP_TYPE_TERMINATE:
                status, error, message = (
                    pb.FLOW_STATUS_TERMINATED,
                    pb.FLOW_ERROR_TYPE_UNSPECIFIED,
                    "",
                )
            elif request.stop_type == pb.STOP_TYPE_FAIL:
                status, error = pb.FLOW_STATUS_FAILED, pb.FLOW_ERROR_TYPE_CLIENT_API_FAILING_FLOW
                message = request.reason or "fail by client"
            else:
                status, error, message = pb.FLOW_STATUS_CANCELED, pb.FLOW_ERROR_TYPE_UNSPECIFIED, ""
            self.engine.close_run(conn, run["run_id"], status, error, message or request.reason)

    def wait_for_flow(self, request: pb.WaitForFlowRequest) -> pb.FlowResult:
        check_identifier(request.flow_id, "flow_id")
        engine = self.engine
        with engine.changed:
            run = engine.find_run(request.flow_id, request.run_id)
            if run is None:
                raise _errors.flow_not_found(request.flow_id)
            run_id = run["run_id"]

        def check() -> pb.FlowResult | None:
            # Runs after every commit while the flow is open: read only the status.
            row = engine.db.conn.execute(
                "SELECT status FROM runs WHERE run_id=?", (run_id,)
            ).fetchone()
            if row is None:
                engine.run_row(run_id)  # raises the usual "run vanished" error
            if row["status"] == RUNNING:
                return None
            return engine.flow_result(engine.db.conn, run_id)

        return self._wait(float(request.wait_time_seconds), check, "the flow to close")

    def describe(self, request: pb.GetFlowSummaryRequest) -> pb.GetFlowSummaryResponse:
        check_identifier(request.flow_id, "flow_id")
        with self.engine.db.lock:
            run = self.engine.find_run(request.flow_id, request.run_id)
            if run is None:
                raise _errors.flow_not_found(request.flow_id)
            first = self.engine.db.conn.execute(
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
        with self.engine.tx() as conn:
            run = self.engine.running_run(request.flow_id, request.run_id)
            config = self.engine.config(run)
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
        offset = _token_number(request.next_page_token or "0", "next_page_token")
        response = pb.SearchFlowsResponse()
        with self.engine.db.lock:
            conn = self.engine.db.conn
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

    # -- RPCs ----------------------------------------------------------------------

    def invoke_rpc(self, request: pb.InvokeRPCRequest) -> pb.Value:
        check_identifier(request.flow_id, "flow_id")
        if not request.rpc_name:
            raise _errors.invalid("rpc_name is required")
        if not request.request_id:
            raise _errors.invalid("request_id is required")
        if request.timeout_seconds < 0:
            raise _errors.invalid("timeout_seconds must not be negative")
        if any(not key for key in request.lock_attribute_keys):
            raise _errors.invalid("lock_attribute_keys must not contain empty keys")
        rpc_input = request.input if request.HasField("input") else null_value()
        require_value(rpc_input, "input", self._options.max_value_bytes)
        keys = sorted(set(request.lock_attribute_keys))
        transactional = request.is_transactional or bool(keys)
        engine = self.engine
        holder = f"rpc:{uuid.uuid4().hex}"
        with engine.db.lock:
            run = engine.find_run(request.flow_id, request.run_id)
            if run is None or (transactional and run["status"] != RUNNING):
                raise _errors.flow_not_found(request.flow_id)
            run_id = run["run_id"]
            if keys:
                held = engine._locks.setdefault(run_id, {})
                if any(k in held for k in keys):
                    raise _errors.lock_conflict()
                for key in keys:
                    held[key] = holder
            worker_request = pb.InvokeWorkerRPCRequest(
                flow_type=run["flow_type"], rpc_name=request.rpc_name, input=rpc_input
            )
            context = worker_request.context
            context.flow_id = run["flow_id"]
            context.run_id = run_id
            context.flow_started_timestamp = int(run["start_ts"])
            loads = _snapshot.Loads(
                attribute_maps=list(request.load_attribute_map_instances),
                channels=list(request.load_channel_names),
                channel_maps=list(request.load_channel_map_instances),
            )
            _snapshot.fill(engine.db.conn, run_id, loads, worker_request)
            target = engine.config(run).worker_target
        try:
            response = self._call_worker(run_id, run["flow_type"], target, worker_request, request)
            with engine.tx() as conn:
                self._apply_rpc(conn, run_id, request, response, strict=transactional)
                engine.release_locks(conn, run_id, holder)
                engine.grant_locks(conn, run_id)
        finally:
            with engine.db.lock:
                if any(h == holder for h in engine._locks.get(run_id, {}).values()):
                    with engine.tx() as conn:
                        engine.release_locks(conn, run_id, holder)
                        engine.grant_locks(conn, run_id)
        return response.output if response.HasField("output") else null_value()

    def _call_worker(
        self,
        run_id: str,
        flow_type: str,
        target: pb.WorkerTarget,
        worker_request: pb.InvokeWorkerRPCRequest,
        request: pb.InvokeRPCRequest,
    ) -> pb.InvokeWorkerRPCResponse:
        limit = self._options.rpc_max_seconds
        budget = min(float(request.timeout_seconds) or limit, limit)
        handle = CallHandle(deadline=time.monotonic() + budget)
        spec = CallSpec(
            kind="rpc",
            request=worker_request,
            target=target,
            flow_type=flow_type,
            name=request.rpc_name,
            timeout=budget,
            sticky_worker=self.engine._sticky.get(run_id, ""),
        )
        outcome = self.engine.transport(target).invoke(spec, handle)
        if outcome.failure is not None:
            failure = outcome.failure
            if (
                failure.error_type in ("StartToClose", "NO_WORKER_AVAILABLE")
                and not failure.stack_trace
            ):
                failure.detail = f"deadline exceeded: {failure.detail}"
            raise _errors.worker_api_error(failure)
        assert isinstance(outcome.result, pb.InvokeWorkerRPCResponse)
        return outcome.result

    def _apply_rpc(
        self,
        conn: sqlite3.Connection,
        run_id: str,
        request: pb.InvokeRPCRequest,
        response: pb.InvokeWorkerRPCResponse,
        *,
        strict: bool,
    ) -> None:
        engine = self.engine
        decision = response.step_decision
        problem = engine.check_writes(
            response.upsert_attributes, response.publish_to_channel, response.delete_from_channel
        )
        problem = problem or engine.validate_decision(decision, in_rpc=True)
        if problem is not None:
            raise _errors.worker_api_error(
                _errors.WorkerFailure(f"invalid RPC result: {problem}", "InvalidResult", 3)
            )
        has_effects = bool(
            response.upsert_attributes
            or response.publish_to_channel
            or response.delete_from_channel
            or response.record_events
            or decision.next_steps
            or decision.cancel_step_types
        )
        if not has_effects:
            return
        run = engine.run_row(run_id)
        if run["status"] != RUNNING:
            raise _errors.flow_not_found(run["flow_id"])
        engine.apply_writes(
            conn,
            run_id,
            response.upsert_attributes,
            response.publish_to_channel,
            response.delete_from_channel,
            strict_deletions=strict,
        )
        engine.cancel_types(conn, run_id, list(decision.cancel_step_types), [])
        for movement in decision.next_steps:
            clean = pb.StepMovement()
            clean.CopyFrom(movement)
            clean.ClearField("recovery_error_internal_only")
            engine.enqueue(conn, run_id, clean, f"__rpc/{request.rpc_name}")
        engine.event(
            conn,
            run_id,
            rpc_execution_completed=pb.RpcExecutionCompletedEvent(
                rpc_name=request.rpc_name,
                input=request.input,
                output=response.output,
                step_decision=decision,
                upsert_attributes=response.upsert_attributes,
                record_events=response.record_events,
                publish_to_channel=response.publish_to_channel,
                delete_from_channel=response.delete_from_channel,
            ),
        )
        engine.settle(conn, run_id)

    # -- timers and durable waits --------------------------------------------------

    def skip_timer(self, request: pb.SkipTimerRequest) -> None:
        check_identifier(request.flow_id, "flow_id")
        if not request.step_execution_id:
            raise _errors.invalid("step_execution_id is required")
        with self.engine.tx() as conn:
            run = self.engine.running_run(request.flow_id, request.run_id)
            run_id = run["run_id"]
            if request.timer_condition_id:
                row = conn.execute(
                    "SELECT idx FROM timers WHERE run_id=? AND exec_id=? AND condition_id=?"
                    " AND status=? ORDER BY idx LIMIT 1",
                    (
                        run_id,
                        request.step_execution_id,
                        request.timer_condition_id,
                        pb.INTERNAL_TIMER_STATUS_PENDING,
                    ),
                ).fetchone()
            else:
                index = (
                    request.timer_condition_index
                    if request.HasField("timer_condition_index")
                    else 0
                )
                row = conn.execute(
                    "SELECT idx FROM timers WHERE run_id=? AND exec_id=? AND idx=? AND status=?",
                    (run_id, request.step_execution_id, index, pb.INTERNAL_TIMER_STATUS_PENDING),
                ).fetchone()
            if row is None:
                raise _errors.invalid("requested timer condition does not exist or is not pending")
            conn.execute(
                "UPDATE timers SET status=? WHERE run_id=? AND exec_id=? AND idx=?",
                (pb.INTERNAL_TIMER_STATUS_SKIPPED, run_id, request.step_execution_id, row[0]),
            )
            self.engine.evaluate_waits(conn, run_id)

    def wait_for_step(self, request: pb.WaitForStepCompletionRequest) -> None:
        check_identifier(request.flow_id, "flow_id")
        check_identifier(request.step_type, "step_type")
        try:
            number = int(request.step_execution_number)
        except ValueError:
            raise _errors.invalid("step_execution_number must be a positive decimal") from None
        if number <= 0:
            raise _errors.invalid("step_execution_number must be a positive decimal")
        exec_id = f"{request.step_type}-{number}"
        engine = self.engine
        with engine.changed:
            found = engine.find_run(request.flow_id)
            if found is None:
                raise _errors.flow_not_found(request.flow_id)
            run_id = found["run_id"]

        def check() -> bool | None:
            step = engine.step_row(run_id, exec_id)
            if step is not None and step["state"] == COMPLETED:
                return True
            if engine.run_row(run_id)["status"] != RUNNING:
                raise _errors.flow_not_found(request.flow_id)
            return None

        self._wait(float(request.request_timeout_seconds), check, f"step {exec_id!r}")

    def wait_for_attribute(self, request: pb.WaitForAttributeRequest) -> pb.Value:
        check_identifier(request.flow_id, "flow_id")
        match = request.match
        if not match.key:
            raise _errors.invalid("match.key is required")
        if match.operator == pb.ATTRIBUTE_MATCH_OPERATOR_UNSPECIFIED:
            raise _errors.invalid("match.operator is required")
        engine = self.engine
        with engine.changed:
            run = engine.running_run(request.flow_id)
            run_id = run["run_id"]

        def check() -> pb.Value | None:
            row = engine.db.conn.execute(
                "SELECT value FROM attrs WHERE run_id=? AND key=?", (run_id, match.key)
            ).fetchone()
            current = null_value()
            if row is not None:
                current = pb.Value()
                current.ParseFromString(row[0])
            if _compare(current, match.operator, match.operand):
                return current
            if engine.run_row(run_id)["status"] != RUNNING:
                raise _errors.flow_not_found(request.flow_id)
            return None

        return self._wait(float(request.request_timeout_seconds), check, "the attribute to match")

    # -- channels and attributes (raw API) -----------------------------------------

    def publish(self, request: pb.PublishToChannelRequest) -> None:
        check_identifier(request.flow_id, "flow_id")
        for message in request.messages:
            if not message.channel_name:
                raise _errors.invalid("messages.channel_name is required")
            require_value(
                message.value, f"channel {message.channel_name!r}", self._options.max_value_bytes
            )
        with self.engine.tx() as conn:
            run = self.engine.running_run(request.flow_id, request.run_id)
            stored = self.engine.publish(conn, run["run_id"], request.messages)
            self.engine.event(
                conn,
                run["run_id"],
                channel_external_publish=pb.ChannelExternalPublishEvent(messages=stored),
            )
            self.engine.evaluate_waits(conn, run["run_id"])

    def channel_messages(self, request: pb.GetChannelMessagesRequest) -> list[pb.ChannelMessage]:
        check_identifier(request.flow_id, "flow_id")
        if not request.channel_name:
            raise _errors.invalid("channel_name is required")
        with self.engine.db.lock:
            run = self.engine.find_run(request.flow_id, request.run_id)
            if run is None:
                raise _errors.flow_not_found(request.flow_id)
            result = []
            for message_id_, blob in self.engine.db.conn.execute(
                "SELECT message_id, value FROM msgs WHERE run_id=? AND channel=? ORDER BY seq",
                (run["run_id"], request.channel_name),
            ):
                message = pb.ChannelMessage(
                    channel_name=request.channel_name, message_id=message_id_
                )
                message.value.ParseFromString(blob)
                result.append(message)
            return result

    def delete_message(self, request: pb.DeleteChannelMessageRequest) -> None:
        check_identifier(request.flow_id, "flow_id")
        if not request.channel_name or not request.message_id:
            raise _errors.invalid("channel_name and message_id are required")
        with self.engine.tx() as conn:
            run = self.engine.running_run(request.flow_id, request.run_id)
            deletion = pb.ChannelMessageDeletion(
                channel_name=request.channel_name, message_id=request.message_id
            )
            self.engine.apply_writes(conn, run["run_id"], [], [], [deletion], strict_deletions=True)
            self.engine.event(
                conn,
                run["run_id"],
                channel_external_delete=pb.ChannelExternalDeleteEvent(messages=[deletion]),
            )

    def get_attributes(self, request: pb.GetAttributesRequest) -> list[pb.KV]:
        check_identifier(request.flow_id, "flow_id")
        with self.engine.db.lock:
            run = self.engine.find_run(request.flow_id, request.run_id)
            if run is None:
                raise _errors.flow_not_found(request.flow_id)
            everything = _snapshot.attributes(self.engine.db.conn, run["run_id"], None)
        wanted = set(request.keys)
        return [kv for kv in everything if request.all_keys or kv.key in wanted]

    def set_attributes(self, request: pb.SetAttributesRequest) -> None:
        check_identifier(request.flow_id, "flow_id")
        problem = self.engine.check_writes(request.attributes, [], [])
        if problem:
            raise _errors.invalid(problem)
        with self.engine.tx() as conn:
            run = self.engine.running_run(request.flow_id, request.run_id)
            self.engine.apply_writes(conn, run["run_id"], request.attributes, [], [])
            self.engine.event(
                conn,
                run["run_id"],
                rpc_execution_completed=pb.RpcExecutionCompletedEvent(
                    upsert_attributes=request.attributes, is_set_attribute_api=True
                ),
            )

    # -- history and state ---------------------------------------------------------

    def history(self, request: pb.GetHistoryEventsRequest) -> pb.GetHistoryEventsResponse:
        check_identifier(request.flow_id, "flow_id")
        if not request.run_id:
            raise _errors.invalid("run_id is required")
        start = request.start_internal_event_id or 1
        if request.next_page_token:
            start = _token_number(
                request.next_page_token.decode(errors="replace"), "next_page_token"
            )
        size = request.estimate_page_size or 100
        with self.engine.db.lock:
            run = self.engine.find_run(request.flow_id, request.run_id)
            if run is None:
                raise _errors.flow_not_found(request.flow_id)
            rows = self.engine.db.conn.execute(
                "SELECT event_id, payload FROM history WHERE run_id=? AND event_id>=?"
                " ORDER BY event_id LIMIT ?",
                (request.run_id, start, size + 1),
            ).fetchall()
        response = pb.GetHistoryEventsResponse()
        for _, payload in rows[:size]:
            response.events.add().ParseFromString(payload)
        last = rows[min(len(rows), size) - 1][0] if rows else start - 1
        response.next_internal_event_id = last + 1
        if len(rows) > size:
            response.next_page_token = str(last + 1).encode()
        return response

    def wait_for_history(
        self, request: pb.WaitForHistoryEventRequest
    ) -> pb.WaitForHistoryEventResponse:
        check_identifier(request.flow_id, "flow_id")
        if request.next_internal_event_id <= 0:
            raise _errors.invalid("next_internal_event_id must be positive")
        engine = self.engine
        with engine.changed:
            run = engine.find_run(request.flow_id, request.run_id)
            if run is None:
                raise _errors.flow_not_found(request.flow_id)
            run_id = run["run_id"]

        def check() -> pb.WaitForHistoryEventResponse | None:
            row = engine.run_row(run_id)
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
        engine = self.engine
        with engine.db.lock:
            conn = engine.db.conn
            run = engine.find_run(request.flow_id, request.run_id)
            if run is None:
                raise _errors.flow_not_found(request.flow_id)
            run_id = run["run_id"]
            response = pb.GetFlowStateResponse(flow_config=engine.config(run))
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
                    movement=engine.movement(step),
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
            response.completed_steps.extend(engine.flow_result(conn, run_id).results)
            response.sticky_app_worker_id = engine._sticky.get(run_id, "")
        return response

    def load_blobs(self, request: pb.LoadBlobsRequest) -> pb.LoadBlobsResponse:
        """dexlite never emits blob references, so every requested ID is unknown."""
        if request.entries:
            raise _errors.ServiceError(
                grpc.StatusCode.NOT_FOUND, "dexlite sends values inline and stores no blobs"
            )
        return pb.LoadBlobsResponse()


def _token_number(text: str, field: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise _errors.invalid(f"{field} is malformed") from None
    if value < 0:
        raise _errors.invalid(f"{field} is malformed")
    return value


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


def _number(value: pb.Value) -> float | None:
    kind = value.WhichOneof("kind")
    if kind == "int_value":
        return float(value.int_value)
    if kind == "double_value":
        return value.double_value
    return None


def _compare(current: pb.Value, operator: int, operand: pb.Value) -> bool:
    if is_null(operand):
        return (
            is_null(current)
            if operator == pb.ATTRIBUTE_MATCH_OPERATOR_EQUAL
            else not is_null(current)
        )
    left, right = _number(current), _number(operand)
    if left is not None and right is not None:
        checks: dict[int, bool] = {
            pb.ATTRIBUTE_MATCH_OPERATOR_EQUAL: left == right,
            pb.ATTRIBUTE_MATCH_OPERATOR_NOT_EQUAL: left != right,
            pb.ATTRIBUTE_MATCH_OPERATOR_GREATER_THAN: left > right,
            pb.ATTRIBUTE_MATCH_OPERATOR_GREATER_THAN_OR_EQUAL: left >= right,
            pb.ATTRIBUTE_MATCH_OPERATOR_LESS_THAN: left < right,
            pb.ATTRIBUTE_MATCH_OPERATOR_LESS_THAN_OR_EQUAL: left <= right,
        }
        return checks.get(operator, False)
    same: bool = current.SerializeToString(deterministic=True) == operand.SerializeToString(
        deterministic=True
    )
    if operator == pb.ATTRIBUTE_MATCH_OPERATOR_EQUAL:
        return same
    if operator == pb.ATTRIBUTE_MATCH_OPERATOR_NOT_EQUAL:
        return not same
    return False
