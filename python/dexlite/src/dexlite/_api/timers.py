"""Skipping timers and waiting on steps and attributes."""

from __future__ import annotations

from dex.dexpb import dex_pb2 as pb

from dexlite import _errors
from dexlite._engine import rows, waits
from dexlite._model import COMPLETED, RUNNING, check_identifier, is_null, null_value

from .base import OpsBase


class TimerCalls(OpsBase):
    """Timers and durable waits that clients drive or await."""

    def skip_timer(self, request: pb.SkipTimerRequest) -> None:
        check_identifier(request.flow_id, "flow_id")
        if not request.step_execution_id:
            raise _errors.invalid("step_execution_id is required")
        with self.state.tx() as conn:
            run = rows.running_run(self.state, request.flow_id, request.run_id)
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
            waits.evaluate_waits(self.state, conn, run_id)

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
        state = self.state
        run_id = self._run_id(request.flow_id)

        def check() -> bool | None:
            step = rows.step_row(state, run_id, exec_id)
            if step is not None and step["state"] == COMPLETED:
                return True
            if rows.run_row(state, run_id)["status"] != RUNNING:
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
        state = self.state
        with state.changed:
            run = rows.running_run(state, request.flow_id)
            run_id = run["run_id"]

        def check() -> pb.Value | None:
            row = state.db.conn.execute(
                "SELECT value FROM attrs WHERE run_id=? AND key=?", (run_id, match.key)
            ).fetchone()
            current = null_value()
            if row is not None:
                current = pb.Value()
                current.ParseFromString(row[0])
            if _compare(current, match.operator, match.operand):
                return current
            if rows.run_row(state, run_id)["status"] != RUNNING:
                raise _errors.flow_not_found(request.flow_id)
            return None

        return self._wait(float(request.request_timeout_seconds), check, "the attribute to match")


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
