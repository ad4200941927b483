"""Client RPCs: a Worker answers, the engine applies its effects."""

from __future__ import annotations

import time
import uuid
from typing import TYPE_CHECKING

from dex.dexpb import dex_pb2 as pb

from dexlite import _errors, _snapshot
from dexlite._calls import CallHandle, CallSpec
from dexlite._engine import cancellation, locks, queue, results, rows, waits, writes
from dexlite._model import RUNNING, check_identifier, null_value, require_value

from .base import OpsBase, not_negative, require_fields

if TYPE_CHECKING:
    import sqlite3

    from .replays import Replay

_REPLAY_WAIT_SLACK_SECONDS = 5.0
"""How much longer than a call may run a replay of it waits for its answer."""


class RpcCalls(OpsBase):
    """InvokeRPC: locks, the Worker call, then one transaction with its effects.

    An RPC with effects stores its output under its request ID in their
    transaction; a replay gets that output (``replays``). One without effects
    changed nothing, so its replay runs as a new call.
    """

    def invoke_rpc(self, request: pb.InvokeRPCRequest) -> pb.Value:
        check_identifier(request.flow_id, "flow_id")
        require_fields(request, "rpc_name", "request_id")
        not_negative(request.timeout_seconds, "timeout_seconds")
        if any(not key for key in request.lock_attribute_keys):
            raise _errors.invalid("lock_attribute_keys must not contain empty keys")
        rpc_input = request.input if request.HasField("input") else null_value()
        require_value(rpc_input, "input", self._options.max_value_bytes)
        budget = self._options.rpc_max_seconds + _REPLAY_WAIT_SLACK_SECONDS
        with self.replays.first_call(
            "InvokeRPC", request, request.flow_id, request.request_id, budget
        ) as replay:
            if replay.response is not None:
                stored = pb.Value()
                stored.ParseFromString(replay.response)
                return stored
            return self._invoke(request, rpc_input, replay)

    def _invoke(
        self, request: pb.InvokeRPCRequest, rpc_input: pb.Value, replay: Replay
    ) -> pb.Value:
        keys = sorted(set(request.lock_attribute_keys))
        transactional = request.is_transactional or bool(keys)
        state = self.state
        holder = f"rpc:{uuid.uuid4().hex}"
        with state.db.lock:
            run = rows.find_run(state, request.flow_id, request.run_id)
            if run is None or (transactional and run["status"] != RUNNING):
                raise _errors.flow_not_found(request.flow_id)
            run_id = run["run_id"]
            if keys:
                held = state.locks.setdefault(run_id, {})
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
            _snapshot.fill(state.db.conn, run_id, loads, worker_request)
            target = rows.config(run).worker_target
        try:
            response = self._call_worker(run_id, run["flow_type"], target, worker_request, request)
            with state.tx() as conn:
                self._apply_rpc(conn, run_id, request, response, replay, strict=transactional)
                locks.release_locks(state, conn, run_id, holder)
                locks.grant_locks(state, conn, run_id)
        finally:
            with state.db.lock:
                if any(h == holder for h in state.locks.get(run_id, {}).values()):
                    with state.tx() as conn:
                        locks.release_locks(state, conn, run_id, holder)
                        locks.grant_locks(state, conn, run_id)
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
            sticky_worker=self.state.sticky.get(run_id, ""),
        )
        outcome = self.state.transport(target).invoke(spec, handle)
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
        replay: Replay,
        *,
        strict: bool,
    ) -> None:
        state = self.state
        decision = response.step_decision
        problem = writes.check_effects(state, response)
        problem = problem or results.validate_decision(state, decision, in_rpc=True)
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
            return  # nothing to apply twice: a replay is answered afresh
        run = rows.run_row(state, run_id)
        if run["status"] != RUNNING:
            raise _errors.flow_not_found(run["flow_id"])
        writes.apply_effects(conn, run_id, response, strict_deletions=strict)
        output = response.output if response.HasField("output") else null_value()
        self.replays.record(conn, replay, output.SerializeToString())
        cancellation.cancel_types(state, conn, run_id, list(decision.cancel_step_types), [])
        queue.enqueue_next(state, conn, run_id, f"__rpc/{request.rpc_name}", decision.next_steps)
        rows.event(
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
        waits.settle(state, conn, run_id)
