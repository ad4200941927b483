"""The Step state machine (spec §4): queueing, locks, dispatch, results, retries, waits.

Concurrency model: one engine lock (the database lock) serialises every state
change; each change is one SQLite transaction, committed before anything is
acknowledged or acted on. Worker calls run on a thread pool outside the lock
and re-enter it only to commit their outcome. SQLite is the source of truth;
memory holds only in-flight call handles, attribute locks (rebuilt from the
``locks_held`` column on start), heartbeat values not yet flushed, and copies of
committed method requests (read back from their rows when missing).
"""

from __future__ import annotations

import functools
import logging
import sqlite3
import threading
import time
from collections import OrderedDict
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING

import grpc
from dex.dexpb import dex_pb2 as pb

from . import _errors, _results, _snapshot, _waits
from ._dispatch import CallHandle, CallSpec, Outcome, cancelled_failure
from ._errors import WorkerFailure
from ._model import (
    COMPLETED,
    EXECUTE_RUNNING,
    RUNNING,
    RUNNING_STATES,
    TIMEOUT_HANDLER_ID,
    WAITFOR_RUNNING,
    Method,
    check_value,
    is_null,
    message_id,
    null_value,
)

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator, Sequence

    from google.protobuf.message import Message  # type: ignore[import-untyped,unused-ignore]

    from ._dispatch import Transport
    from ._options import ServerOptions
    from ._storage import Database
    from ._streams import StreamStore

_LOGGER = logging.getLogger(__name__)
# Below the SDK's 4 MiB gRPC receive limit, with room for framing (spec §5.5).
_MAX_REQUEST_BYTES = 3_500_000
_BUILT_REQUESTS = 1024
"""Built method requests kept in memory, so dispatch neither reads nor parses them back."""

Request = pb.InvokeWaitForMethodRequest | pb.InvokeExecuteMethodRequest


def _empty_request(method: Method) -> Request:
    return (
        pb.InvokeWaitForMethodRequest() if method == "wait_for" else pb.InvokeExecuteMethodRequest()
    )


@dataclass
class _Inflight:
    method: Method
    attempt: int
    handle: CallHandle
    flow_type: str
    flow_id: str


class Engine:
    """Owns runs and step executions; the gRPC layer calls its public methods."""

    def __init__(
        self,
        *,
        db: Database,
        options: ServerOptions,
        streams: StreamStore,
        listening: Transport,
        pull: Transport,
        changed: threading.Condition,
    ) -> None:
        self.db = db
        self.options = options
        self.changed = changed
        self._streams = streams
        self._listening = listening
        self._pull = pull
        self._inflight: dict[tuple[str, str], _Inflight] = {}
        self._locks: dict[str, dict[str, str]] = {}
        self._hb_dirty: dict[tuple[str, str], bytes | None] = {}
        self._sticky: dict[str, str] = {}
        self._post_commit: list[Callable[[], None]] = []
        # (run_id, exec_id) -> (lock_order, request): the snapshot grant_locks built for
        # that method entry (lock_order is unique per entry), added once committed.
        self._built: OrderedDict[tuple[str, str], tuple[int, Request]] = OrderedDict()
        # Every steps column but the snapshot, which can be the size of everything a
        # method loads: reading a step row should not copy it.
        columns = [
            row[1]
            for row in db.conn.execute("PRAGMA table_info(steps)").fetchall()
            if row[1] != "snapshot"
        ]
        self._step_columns = ", ".join(columns)
        self._step_columns_of_s = ", ".join(f"s.{column}" for column in columns)
        self._order = 0
        self._pool = ThreadPoolExecutor(max_workers=256, thread_name_prefix="dexlite-call")
        self._stop = threading.Event()
        self._maintenance = threading.Thread(
            target=self._maintain, name="dexlite-maintenance", daemon=True
        )

    # -- lifecycle -----------------------------------------------------------------

    def _next_order(self) -> int:
        """Monotonic counter for lock FIFO order and waiter age (no table scans)."""
        self._order += 1
        return self._order

    def start(self) -> None:
        """Recovers in-flight work from the database, then starts background work."""
        self._order = int(
            self.db.conn.execute(
                "SELECT MAX(COALESCE(MAX(lock_order), 0), COALESCE(MAX(wait_seq), 0)) FROM steps"
            ).fetchone()[0]
        )
        with self.tx() as conn:
            self._recover(conn)
        self._maintenance.start()

    def stop(self) -> None:
        self._stop.set()
        with self.db.lock:
            handles = [i.handle for i in self._inflight.values()]
        for handle in handles:
            handle.cancel("shutdown")
        if self._maintenance.is_alive():
            self._maintenance.join(timeout=5)
        self._pool.shutdown(wait=False, cancel_futures=True)

    @contextmanager
    def tx(self) -> Iterator[sqlite3.Connection]:
        """One committed state change, then wake waiters and dispatch ready work."""
        with self.db.lock:
            outer = not self.db.in_transaction
            try:
                with self.db.transaction() as conn:
                    yield conn
            except BaseException:
                if outer:
                    self._post_commit.clear()
                raise
            if outer:
                actions, self._post_commit = self._post_commit, []
                self.changed.notify_all()
                for action in actions:
                    action()
                self._pump()

    # -- small data helpers --------------------------------------------------------

    def run_row(self, run_id: str) -> sqlite3.Row:
        row: sqlite3.Row | None = self.db.conn.execute(
            "SELECT * FROM runs WHERE run_id=?", (run_id,)
        ).fetchone()
        if row is None:
            raise _errors.ServiceError(grpc.StatusCode.INTERNAL, f"run {run_id!r} vanished")
        return row

    def find_run(self, flow_id: str, run_id: str = "") -> sqlite3.Row | None:
        if run_id:
            row: sqlite3.Row | None = self.db.conn.execute(
                "SELECT * FROM runs WHERE run_id=? AND flow_id=?", (run_id, flow_id)
            ).fetchone()
            return row
        row = self.db.conn.execute(
            "SELECT * FROM runs WHERE flow_id=? ORDER BY seq DESC LIMIT 1", (flow_id,)
        ).fetchone()
        return row

    def running_run(self, flow_id: str, run_id: str = "") -> sqlite3.Row:
        row = self.find_run(flow_id, run_id)
        if row is None or row["status"] != RUNNING:
            raise _errors.flow_not_found(flow_id)
        return row

    @staticmethod
    def config(run: sqlite3.Row) -> pb.FlowConfig:
        config = pb.FlowConfig()
        config.ParseFromString(run["config"])
        return config

    def step_row(self, run_id: str, exec_id: str) -> sqlite3.Row | None:
        """The step's columns, without its snapshot."""
        row: sqlite3.Row | None = self.db.conn.execute(
            f"SELECT {self._step_columns} FROM steps WHERE run_id=? AND exec_id=?",
            (run_id, exec_id),
        ).fetchone()
        return row

    @staticmethod
    def movement(step: sqlite3.Row) -> pb.StepMovement:
        movement = pb.StepMovement()
        movement.ParseFromString(step["movement"])
        return movement

    def event(self, conn: sqlite3.Connection, run_id: str, **payload: Message) -> None:
        """Appends one history event in the current transaction (dense IDs from 1)."""
        # RETURNING saves a second statement per event; fetchall() steps the statement to
        # completion so nothing is left in progress at COMMIT.
        event_id = conn.execute(
            "UPDATE runs SET event_seq=event_seq+1 WHERE run_id=? RETURNING event_seq", (run_id,)
        ).fetchall()[0][0]
        event = pb.FlowHistoryEvent(event_id=event_id, run_attempt=1)
        for name, message in payload.items():
            getattr(event, name).CopyFrom(message)
        event.event_time.GetCurrentTime()
        conn.execute(
            "INSERT INTO history(run_id, event_id, payload) VALUES (?,?,?)",
            (run_id, event_id, event.SerializeToString()),
        )

    # -- state mutations shared by steps and RPCs ----------------------------------

    def check_writes(
        self,
        writes: Sequence[pb.AttributeWrite],
        publishes: Sequence[pb.ChannelMessage],
        deletions: Sequence[pb.ChannelMessageDeletion],
    ) -> str | None:
        limit = self.options.max_value_bytes
        for write in writes:
            if not write.key:
                return "upsert_attributes.key is required"
            if not write.HasField("value"):
                return f"upsert_attributes[{write.key!r}].value is required"
            problem = check_value(write.value, f"attribute {write.key!r}", limit)
            if problem:
                return problem
        for message in publishes:
            if not message.channel_name:
                return "publish_to_channel.channel_name is required"
            if not message.HasField("value"):
                return f"publish_to_channel[{message.channel_name!r}].value is required"
            problem = check_value(message.value, f"channel {message.channel_name!r}", limit)
            if problem:
                return problem
        for deletion in deletions:
            if not deletion.channel_name or not deletion.message_id:
                return "delete_from_channel needs channel_name and message_id"
        return None

    def apply_writes(
        self,
        conn: sqlite3.Connection,
        run_id: str,
        writes: Sequence[pb.AttributeWrite],
        publishes: Sequence[pb.ChannelMessage],
        deletions: Sequence[pb.ChannelMessageDeletion],
        *,
        strict_deletions: bool = False,
    ) -> None:
        """Attribute writes, then deletions, then publishes (spec §4.6 order)."""
        for write in writes:
            if is_null(write.value):
                conn.execute("DELETE FROM attrs WHERE run_id=? AND key=?", (run_id, write.key))
            else:
                index_key = ""
                if write.index_config.enable:
                    index_key = write.index_config.index_key or write.key
                conn.execute(
                    "INSERT INTO attrs(run_id, key, value, index_key) VALUES (?,?,?,?)"
                    " ON CONFLICT(run_id, key) DO UPDATE SET value=excluded.value,"
                    " index_key=excluded.index_key",
                    (run_id, write.key, write.value.SerializeToString(), index_key),
                )
        for deletion in deletions:
            cursor = conn.execute(
                "DELETE FROM msgs WHERE run_id=? AND channel=? AND message_id=?",
                (run_id, deletion.channel_name, deletion.message_id),
            )
            if cursor.rowcount == 0 and strict_deletions:
                raise _errors.message_not_found(deletion.channel_name, deletion.message_id)
        self.publish(conn, run_id, publishes)

    def publish(
        self, conn: sqlite3.Connection, run_id: str, messages: Sequence[pb.ChannelMessage]
    ) -> list[pb.ChannelMessage]:
        stored: list[pb.ChannelMessage] = []
        for message in messages:
            assigned = pb.ChannelMessage(
                channel_name=message.channel_name, value=message.value, message_id=message_id()
            )
            conn.execute(
                "INSERT INTO msgs(run_id, channel, message_id, value) VALUES (?,?,?,?)",
                (
                    run_id,
                    message.channel_name,
                    assigned.message_id,
                    message.value.SerializeToString(),
                ),
            )
            stored.append(assigned)
        return stored

    # -- creating step executions --------------------------------------------------

    def enqueue(
        self,
        conn: sqlite3.Connection,
        run_id: str,
        movement: pb.StepMovement,
        from_id: str,
        *,
        not_before: float = 0.0,
        exec_id: str = "",
    ) -> str:
        """Creates one execution; its ID is assigned now, in queue order."""
        step_type = movement.step_type
        if not exec_id:
            n = conn.execute(
                "INSERT INTO counters(run_id, step_type, n) VALUES (?,?,1)"
                " ON CONFLICT(run_id, step_type) DO UPDATE SET n=n+1 RETURNING n",
                (run_id, step_type),
            ).fetchall()[0][0]
            exec_id = f"{step_type}-{n}"
        stored = pb.StepMovement()
        stored.CopyFrom(movement)
        stored.from_step_execution_id_internal_only = from_id
        conn.execute(
            "INSERT INTO steps(run_id, exec_id, step_type, from_id, state, movement)"
            " VALUES (?,?,?,?,?,?)",
            (run_id, exec_id, step_type, from_id, WAITFOR_RUNNING, stored.SerializeToString()),
        )
        method: Method = "execute" if movement.step_options.skip_wait_for else "wait_for"
        self.enter_method(conn, run_id, exec_id, method, not_before=not_before)
        return exec_id

    def enter_method(
        self,
        conn: sqlite3.Connection,
        run_id: str,
        exec_id: str,
        method: Method,
        *,
        not_before: float = 0.0,
        cond_results: pb.ConditionResults | None = None,
        method_error: pb.RecoveryErrorInfo | None = None,
    ) -> None:
        now = time.time()
        state = WAITFOR_RUNNING if method == "wait_for" else EXECUTE_RUNNING
        order = self._next_order()
        conn.execute(
            "UPDATE steps SET state=?, attempt=1, first_attempt_ts=?, method_started_ts=?,"
            " next_due=?, lock_order=?, locks_held=0, snapshot=NULL, hb_value=NULL,"
            " cond_results=COALESCE(?, cond_results), method_error=COALESCE(?, method_error),"
            " last_failure=NULL, condition=NULL WHERE run_id=? AND exec_id=?",
            (
                state,
                now,
                now,
                max(now, not_before),
                order,
                cond_results.SerializeToString() if cond_results is not None else None,
                method_error.SerializeToString() if method_error is not None else None,
                run_id,
                exec_id,
            ),
        )
        self._hb_dirty.pop((run_id, exec_id), None)
        self.grant_locks(conn, run_id)

    @staticmethod
    def lock_keys(movement: pb.StepMovement, method: Method) -> list[str]:
        options = movement.step_options
        keys = (
            options.wait_for_lock_attribute_keys
            if method == "wait_for"
            else options.execute_lock_attribute_keys
        )
        return sorted(set(keys))

    def grant_locks(self, conn: sqlite3.Connection, run_id: str) -> None:
        """Gives locks to waiting methods in FIFO order, then snapshots their state."""
        held = self._locks.setdefault(run_id, {})
        blocked: set[str] = set()
        rows = conn.execute(
            "SELECT * FROM steps WHERE run_id=? AND state IN (?,?) AND snapshot IS NULL"
            " ORDER BY lock_order",
            (run_id, *RUNNING_STATES),
        ).fetchall()
        for step in rows:
            method: Method = "wait_for" if step["state"] == WAITFOR_RUNNING else "execute"
            movement = self.movement(step)
            keys = self.lock_keys(movement, method)
            if any(k in held or k in blocked for k in keys):
                blocked.update(keys)
                continue
            for key in keys:
                held[key] = f"step:{step['exec_id']}"
            request = self._build_request(conn, step, movement, method)
            conn.execute(
                "UPDATE steps SET locks_held=?, snapshot=? WHERE run_id=? AND exec_id=?",
                (1 if keys else 0, request.SerializeToString(), run_id, step["exec_id"]),
            )
            self._post_commit.append(
                functools.partial(
                    self._remember, (run_id, step["exec_id"]), (step["lock_order"], request)
                )
            )

    def _remember(self, key: tuple[str, str], built: tuple[int, Request]) -> None:
        self._built[key] = built
        self._built.move_to_end(key)
        while len(self._built) > _BUILT_REQUESTS:
            self._built.popitem(last=False)

    def _snapshot_request(self, step: sqlite3.Row, method: Method) -> Request:
        """The request built for this method entry: from memory, else from its row."""
        key = (step["run_id"], step["exec_id"])
        built = self._built.get(key)
        if built is not None and built[0] == step["lock_order"]:
            return built[1]  # dispatch rewrites only attempt and last_heartbeat_value
        request = _empty_request(method)
        blob = self.db.conn.execute(
            "SELECT snapshot FROM steps WHERE run_id=? AND exec_id=?", key
        ).fetchone()[0]
        request.ParseFromString(blob)
        self._remember(key, (step["lock_order"], request))
        return request

    def release_locks(self, conn: sqlite3.Connection, run_id: str, holder: str) -> None:
        held = self._locks.get(run_id, {})
        for key in [k for k, h in held.items() if h == holder]:
            del held[key]
        if holder.startswith("step:"):
            conn.execute(
                "UPDATE steps SET locks_held=0 WHERE run_id=? AND exec_id=?",
                (run_id, holder[len("step:") :]),
            )

    def _build_request(
        self, conn: sqlite3.Connection, step: sqlite3.Row, movement: pb.StepMovement, method: Method
    ) -> Request:
        # Only the run's immutable identity is needed; skipping the config blob and the
        # other columns makes this per-dispatch read cheaper.
        run = conn.execute(
            "SELECT run_id, flow_id, flow_type, start_ts FROM runs WHERE run_id=?",
            (step["run_id"],),
        ).fetchone()
        request = _empty_request(method)
        context = request.context
        context.flow_id = run["flow_id"]
        context.run_id = run["run_id"]
        context.flow_started_timestamp = int(run["start_ts"])
        context.step_execution_id = step["exec_id"]
        context.from_step_execution_id = step["from_id"]
        context.first_attempt_timestamp = int(step["first_attempt_ts"])
        context.run_attempt = 1
        if movement.HasField("recovery_error_internal_only"):
            context.recovery_error.CopyFrom(movement.recovery_error_internal_only)
        elif method == "execute" and step["method_error"] is not None:
            context.recovery_error.ParseFromString(step["method_error"])
        request.flow_type = run["flow_type"]
        request.step_type = movement.step_type
        if movement.HasField("step_input"):
            request.step_input.CopyFrom(movement.step_input)
        elif method == "wait_for":
            request.step_input.CopyFrom(null_value())
        _snapshot.fill(
            conn, run["run_id"], _snapshot.method_loads(movement.step_options, method), request
        )
        if isinstance(request, pb.InvokeExecuteMethodRequest):
            if step["locals"] is not None:
                holder = pb.GetAttributesResponse()
                holder.ParseFromString(step["locals"])
                request.step_exe_locals.extend(holder.attributes)
            if step["cond_results"] is not None:
                request.condition_results.ParseFromString(step["cond_results"])
        return request

    # -- dispatch ------------------------------------------------------------------

    def _pump(self) -> None:
        """Starts every method call that is ready, due and not already in flight."""
        if self._stop.is_set():
            return
        now = time.time()
        rows = self.db.conn.execute(
            f"SELECT {self._step_columns_of_s}, r.flow_type AS flow_type, r.flow_id AS flow_id,"
            " r.config AS config FROM steps s JOIN runs r ON r.run_id=s.run_id"
            " WHERE s.state IN (?,?) AND s.snapshot IS NOT NULL AND s.next_due<=?"
            " AND r.status=?",
            (*RUNNING_STATES, now, RUNNING),
        ).fetchall()
        for step in rows:
            key = (step["run_id"], step["exec_id"])
            if key not in self._inflight:
                self._dispatch(step)

    def _dispatch(self, step: sqlite3.Row) -> None:
        method: Method = "wait_for" if step["state"] == WAITFOR_RUNNING else "execute"
        movement = self.movement(step)
        options = movement.step_options
        request = self._snapshot_request(step, method)
        request.context.attempt = step["attempt"]
        request.context.ClearField("last_heartbeat_value")
        key = (step["run_id"], step["exec_id"])
        hb = (
            self._hb_dirty.get(key, step["hb_value"]) if key in self._hb_dirty else step["hb_value"]
        )
        if hb is not None and step["attempt"] > 1:
            request.context.last_heartbeat_value.ParseFromString(hb)
        timeout = (
            options.wait_for_timeout_seconds
            if method == "wait_for"
            else options.execute_timeout_seconds
        ) or self.options.default_method_timeout_seconds
        config = pb.FlowConfig()
        config.ParseFromString(step["config"])
        handle = CallHandle(
            deadline=time.monotonic() + timeout,
            heartbeat_timeout=float(
                options.heartbeat_timeout_seconds or self.options.default_heartbeat_timeout_seconds
            ),
        )
        inflight = _Inflight(method, step["attempt"], handle, step["flow_type"], step["flow_id"])
        self._inflight[key] = inflight
        source = f"#{step['exec_id']}"

        def on_frame(frame: Message) -> None:
            self._on_frame(key, inflight, source, frame)

        run_id = step["run_id"]
        spec = CallSpec(
            kind=method,
            request=request,
            target=config.worker_target,
            flow_type=step["flow_type"],
            name=movement.step_type,
            timeout=float(timeout),
            on_frame=on_frame,
            sticky_worker=self._sticky.get(run_id, ""),
            on_served_by=lambda worker: self._sticky.__setitem__(run_id, worker),
        )
        self._pool.submit(self._call, key, inflight, spec)

    def transport(self, target: pb.WorkerTarget) -> Transport:
        return self._pull if target.is_pull_mode else self._listening

    def _call(self, key: tuple[str, str], inflight: _Inflight, spec: CallSpec) -> None:
        size = spec.request.ByteSize()
        if size > _MAX_REQUEST_BYTES:
            # The SDK's 4 MiB receive limit would reject it; fail the attempt clearly.
            outcome = Outcome(
                failure=WorkerFailure(
                    f"value too large: {spec.kind} request {size} bytes > {_MAX_REQUEST_BYTES}",
                    "ValueTooLarge",
                    grpc.StatusCode.RESOURCE_EXHAUSTED.value[0],
                    server_side=True,
                )
            )
        else:
            outcome = self._invoke(spec, inflight)
        if self._stop.is_set():
            return  # shutting down: the restart counts this attempt as interrupted
        try:
            with self.tx() as conn:
                self._finish_call(conn, key, inflight, outcome)
        except Exception:
            _LOGGER.exception("applying a worker outcome failed")
            with self.db.lock:
                if self._inflight.get(key) is inflight:
                    del self._inflight[key]

    def _invoke(self, spec: CallSpec, inflight: _Inflight) -> Outcome:
        try:
            outcome = self.transport(spec.target).invoke(spec, inflight.handle)
        except Exception as error:  # a transport bug fails the attempt, not the server
            _LOGGER.exception("worker call failed")
            outcome = Outcome(
                failure=WorkerFailure(
                    f"dexlite transport error: {error}", "INTERNAL", 13, server_side=True
                )
            )
        return outcome

    def _on_frame(
        self, key: tuple[str, str], inflight: _Inflight, source: str, frame: Message
    ) -> None:
        assert isinstance(frame, pb.InvokeWaitForMethodOutput | pb.InvokeExecuteMethodOutput)
        kind = frame.WhichOneof("output")
        if kind == "heartbeat":
            with self.db.lock:
                if self._inflight.get(key) is inflight:
                    beat = frame.heartbeat
                    self._hb_dirty[key] = (
                        beat.value.SerializeToString() if beat.HasField("value") else None
                    )
        elif kind == "stream_write":
            write = frame.stream_write
            self._streams.append(
                flow_type=inflight.flow_type,
                flow_id=inflight.flow_id,
                name=write.stream_name,
                capacity=write.stream_capacity_bytes,
                value=write.value,
                source=source,
            )

    def _finish_call(
        self, conn: sqlite3.Connection, key: tuple[str, str], inflight: _Inflight, outcome: Outcome
    ) -> None:
        if self._inflight.get(key) is inflight:
            del self._inflight[key]
        if inflight.handle.reason in ("cancelled", "shutdown"):
            return
        if inflight.handle.reason is not None:  # timed out: a late result does not count
            outcome = Outcome(failure=cancelled_failure(inflight.handle))
        step = self.step_row(*key)
        expected = WAITFOR_RUNNING if inflight.method == "wait_for" else EXECUTE_RUNNING
        if step is None or step["state"] != expected or step["attempt"] != inflight.attempt:
            return
        run = self.run_row(key[0])
        if run["status"] != RUNNING:
            return
        self._flush_heartbeat(conn, key)
        if outcome.result is not None:
            if inflight.method == "wait_for":
                assert isinstance(outcome.result, pb.InvokeWaitForMethodResponse)
                problem = _results.apply_wait_for(self, conn, run, step, outcome.result)
            else:
                assert isinstance(outcome.result, pb.InvokeExecuteMethodResponse)
                problem = _results.apply_execute(self, conn, run, step, outcome.result)
            if problem is None:
                return
            outcome = Outcome(
                failure=WorkerFailure(
                    f"invalid worker result: {problem}", "InvalidResult", 3, server_side=True
                )
            )
        assert outcome.failure is not None
        self.record_failure(conn, run, step, outcome.failure)

    def _flush_heartbeat(self, conn: sqlite3.Connection, key: tuple[str, str]) -> None:
        if key in self._hb_dirty:
            conn.execute(
                "UPDATE steps SET hb_value=? WHERE run_id=? AND exec_id=?",
                (self._hb_dirty.pop(key), *key),
            )

    # -- results -------------------------------------------------------------------

    def evaluate_waits(self, conn: sqlite3.Connection, run_id: str) -> None:
        _waits.evaluate_waits(self, conn, run_id)

    def record_failure(
        self, conn: sqlite3.Connection, run: sqlite3.Row, step: sqlite3.Row, failure: WorkerFailure
    ) -> None:
        _results.record_failure(self, conn, run, step, failure)

    def validate_decision(self, decision: pb.StepDecision, *, in_rpc: bool) -> str | None:
        return _results.validate_decision(self, decision, in_rpc=in_rpc)

    def settle(self, conn: sqlite3.Connection, run_id: str) -> None:
        """Re-evaluates waits and locks, and completes a gracefully finished flow."""
        self.evaluate_waits(conn, run_id)
        self.grant_locks(conn, run_id)
        run = conn.execute("SELECT status, graceful FROM runs WHERE run_id=?", (run_id,)).fetchone()
        if run is not None and run["status"] == RUNNING and run["graceful"]:
            active = conn.execute(
                "SELECT COUNT(*) FROM steps WHERE run_id=? AND state<>? AND exec_id<>?",
                (run_id, COMPLETED, TIMEOUT_HANDLER_ID),
            ).fetchone()[0]
            if active == 0:
                self.close_run(
                    conn, run_id, pb.FLOW_STATUS_COMPLETED, pb.FLOW_ERROR_TYPE_UNSPECIFIED, ""
                )

    def _complete_step(
        self, conn: sqlite3.Connection, run_id: str, exec_id: str, outcome: str
    ) -> None:
        conn.execute(
            "UPDATE steps SET state=?, outcome=?, snapshot=NULL, condition=NULL"
            " WHERE run_id=? AND exec_id=?",
            (COMPLETED, outcome, run_id, exec_id),
        )
        conn.execute("DELETE FROM timers WHERE run_id=? AND exec_id=?", (run_id, exec_id))
        self.release_locks(conn, run_id, f"step:{exec_id}")
        self._hb_dirty.pop((run_id, exec_id), None)
        self._built.pop((run_id, exec_id), None)

    def _event_context(
        self, step: sqlite3.Row, movement: pb.StepMovement, method: Method
    ) -> pb.StepMethodEventContext:
        options = movement.step_options
        context = pb.StepMethodEventContext(
            step_execution_id=step["exec_id"],
            from_step_execution_id=step["from_id"],
            step_type=step["step_type"],
            durability=(
                options.wait_for_durability_override
                if method == "wait_for"
                else options.execute_durability_override
            ),
            final_attempt=step["attempt"],
            method_options=pb.StepMethodOptions(
                timeout_seconds=(
                    options.wait_for_timeout_seconds
                    if method == "wait_for"
                    else options.execute_timeout_seconds
                )
                or self.options.default_method_timeout_seconds,
                retry_policy=(
                    options.wait_for_retry_policy
                    if method == "wait_for"
                    else options.execute_retry_policy
                ),
                heartbeat_timeout_seconds=options.heartbeat_timeout_seconds,
            ),
        )
        context.started_time.FromNanoseconds(int(step["method_started_ts"] * 1e9))
        context.duration.FromNanoseconds(
            int(max(0.0, time.time() - step["method_started_ts"]) * 1e9)
        )
        if step["last_failure"] is not None:
            context.last_failure_info.ParseFromString(step["last_failure"])
        return context

    # -- failures and retries ------------------------------------------------------

    # -- cancellation and closing --------------------------------------------------

    def cancel_step(self, conn: sqlite3.Connection, run_id: str, exec_id: str) -> None:
        """Cancels one non-completed execution (spec §4.10)."""
        self._complete_step(conn, run_id, exec_id, "cancelled")
        inflight = self._inflight.pop((run_id, exec_id), None)
        if inflight is not None:
            handle = inflight.handle
            self._post_commit.append(lambda: handle.cancel("cancelled"))

    def cancel_types(
        self,
        conn: sqlite3.Connection,
        run_id: str,
        global_types: list[str],
        sibling_types: list[str],
        *,
        exclude: str = "",
        siblings_of: str = "",
    ) -> None:
        sibling_only = set(sibling_types) - set(global_types)
        targets = conn.execute(
            "SELECT exec_id, step_type, from_id FROM steps WHERE run_id=? AND state<>?",
            (run_id, COMPLETED),
        ).fetchall()
        for exec_id, step_type, from_id in targets:
            if exec_id == exclude:
                continue
            if step_type in global_types or (step_type in sibling_only and from_id == siblings_of):
                self.cancel_step(conn, run_id, exec_id)

    def close_run(
        self, conn: sqlite3.Connection, run_id: str, status: int, error_type: int, message: str
    ) -> None:
        for (exec_id,) in conn.execute(
            "SELECT exec_id FROM steps WHERE run_id=? AND state<>?", (run_id, COMPLETED)
        ).fetchall():
            self.cancel_step(conn, run_id, exec_id)
        conn.execute(
            "UPDATE runs SET status=?, error_type=?, error_message=?, close_ts=?, timeout_at=NULL"
            " WHERE run_id=?",
            (status, error_type, message, time.time(), run_id),
        )
        self._locks.pop(run_id, None)
        self._sticky.pop(run_id, None)
        result = self.flow_result(conn, run_id)
        self.event(
            conn,
            run_id,
            flow_closed=pb.FlowClosedHistoryEvent(
                flow_status=status,  # type: ignore[arg-type]
                results=result.results,
                error_type=error_type,  # type: ignore[arg-type]
                error_message=message,
            ),
        )

    def flow_result(self, conn: sqlite3.Connection, run_id: str) -> pb.FlowResult:
        run = conn.execute("SELECT * FROM runs WHERE run_id=?", (run_id,)).fetchone()
        result = pb.FlowResult(
            flow_status=run["status"],
            error_type=run["error_type"],
            error_message=run["error_message"],
        )
        if run["status"] in (pb.FLOW_STATUS_CANCELED, pb.FLOW_STATUS_TERMINATED):
            return result
        for step_type, exec_id, blob in conn.execute(
            "SELECT step_type, exec_id, value FROM outputs WHERE run_id=? ORDER BY seq", (run_id,)
        ):
            output = result.results.add(
                completed_step_type=step_type, completed_step_execution_id=exec_id
            )
            output.completed_step_output.ParseFromString(blob)
        return result

    # -- waits and timers ----------------------------------------------------------

    def _check_liveness(self) -> None:
        now = time.monotonic()
        with self.db.lock:
            inflight = list(self._inflight.values())
        for call in inflight:
            handle = call.handle
            if now >= handle.deadline:
                handle.cancel("StartToClose")
            elif (
                handle.heartbeat_timeout > 0 and now - handle.last_frame > handle.heartbeat_timeout
            ):
                handle.cancel("Heartbeat")

    def _maintain(self) -> None:
        while not self._stop.wait(0.05):
            try:
                _waits.fire_due(self)
                self._check_liveness()
            except Exception:
                _LOGGER.exception("maintenance pass failed")

    # -- restart -------------------------------------------------------------------

    def _recover(self, conn: sqlite3.Connection) -> None:
        """Rebuilds locks and counts every interrupted method call as a failed attempt."""
        for run_id, exec_id in conn.execute(
            "SELECT run_id, exec_id FROM steps WHERE locks_held=1 AND state IN (?,?)"
            " ORDER BY lock_order",
            RUNNING_STATES,
        ).fetchall():
            step = self.step_row(run_id, exec_id)
            assert step is not None
            method: Method = "wait_for" if step["state"] == WAITFOR_RUNNING else "execute"
            for key in self.lock_keys(self.movement(step), method):
                self._locks.setdefault(run_id, {})[key] = f"step:{exec_id}"
        interrupted = conn.execute(
            "SELECT s.run_id, s.exec_id FROM steps s JOIN runs r ON r.run_id=s.run_id"
            " WHERE s.state IN (?,?) AND s.snapshot IS NOT NULL AND r.status=?",
            (*RUNNING_STATES, RUNNING),
        ).fetchall()
        for run_id, exec_id in interrupted:
            step = self.step_row(run_id, exec_id)
            run = self.run_row(run_id)
            if step is None or run["status"] != RUNNING or step["state"] not in RUNNING_STATES:
                continue
            if step["next_due"] > time.time():
                continue  # a retry was already scheduled; nothing was in flight
            self.record_failure(
                conn,
                run,
                step,
                WorkerFailure("server restarted during the call", "ServerRestart", 14),
            )
        for (run_id,) in conn.execute(
            "SELECT run_id FROM runs WHERE status=?", (RUNNING,)
        ).fetchall():
            self.settle(conn, run_id)
