"""Small shared definitions of the engine: states, defaults, validation helpers."""

from __future__ import annotations

import threading
import time
import uuid
from typing import TYPE_CHECKING, Literal

from dex.dexpb import dex_pb2 as pb

from . import _errors

if TYPE_CHECKING:
    from google.protobuf.message import Message  # type: ignore[import-untyped,unused-ignore]

Method = Literal["wait_for", "execute"]

WAITFOR_RUNNING = "WAITFOR_RUNNING"
WAITING = "WAITING"
EXECUTE_RUNNING = "EXECUTE_RUNNING"
COMPLETED = "COMPLETED"
RUNNING_STATES = (WAITFOR_RUNNING, EXECUTE_RUNNING)

RUNNING = pb.FLOW_STATUS_RUNNING
TIMEOUT_HANDLER_TYPE = "sys:timeout_handler"
TIMEOUT_HANDLER_ID = "sys:timeout_handler-1"
START_FROM_ID = "__start__"

_RESERVED = ("/", "$", ":")


def check_identifier(value: str, field: str) -> None:
    """Flow IDs and step types: non-empty and free of reserved characters."""
    if not value:
        raise _errors.invalid(f"{field} is required")
    if any(ch in value for ch in _RESERVED):
        raise _errors.invalid(f"{field} must not contain '/', '$' or ':': {value!r}")


def step_type_problem(step_type: str) -> str | None:
    if not step_type:
        return "step_type is required"
    if any(ch in step_type for ch in _RESERVED):
        return f"step_type {step_type!r} contains a reserved character"
    return None


def _negative_field(message: Message, names: tuple[str, ...], where: str) -> str | None:
    """The first of the numeric ``names`` below zero, as a problem text naming it."""
    for name in names:
        if getattr(message, name) < 0:
            return f"{where}.{name} must not be negative"
    return None


def _retry_problem(policy: pb.RetryPolicy, where: str) -> str | None:
    problem = _negative_field(
        policy,
        (
            "initial_interval_seconds",
            "maximum_interval_seconds",
            "maximum_attempts",
            "total_duration_seconds",
        ),
        where,
    )
    if problem:
        return problem
    if policy.backoff_coefficient < 0 or policy.backoff_coefficient != policy.backoff_coefficient:
        return f"{where}.backoff_coefficient must be a non-negative number"
    return None


def step_options_problem(options: pb.StepOptions, where: str) -> str | None:
    """Why client- or worker-supplied StepOptions are unusable, or None."""
    problem = _negative_field(
        options,
        ("wait_for_timeout_seconds", "execute_timeout_seconds", "heartbeat_timeout_seconds"),
        where,
    )
    if problem:
        return problem
    for name in ("wait_for_retry_policy", "execute_retry_policy"):
        problem = _retry_problem(getattr(options, name), f"{where}.{name}")
        if problem:
            return problem
    if options.execute_failure_proceed_step_type:
        problem = step_type_problem(options.execute_failure_proceed_step_type)
        if problem:
            return f"{where}.execute_failure_proceed_step_type: {problem}"
    if options.HasField("execute_failure_proceed_step_options"):
        return step_options_problem(
            options.execute_failure_proceed_step_options,
            f"{where}.execute_failure_proceed_step_options",
        )
    return None


def check_value(value: pb.Value, where: str, limit: int) -> str | None:
    """Why a client or worker value is unacceptable, or None."""
    kind = value.WhichOneof("kind")
    if kind is None:
        return f"{where}: value has no concrete kind"
    if kind in ("internal_blob_id_for_string_value", "internal_blob_id_for_obj_value"):
        return f"{where}: blob references are server-assigned and may not be sent"
    size = value.ByteSize()
    if size > limit:
        return f"value too large: {where} {size} bytes > {limit}"
    return None


def require_value(value: pb.Value, where: str, limit: int) -> None:
    problem = check_value(value, where, limit)
    if problem is not None:
        raise _errors.invalid(problem)


def is_null(value: pb.Value) -> bool:
    return bool(value.WhichOneof("kind") == "null_value")


def null_value() -> pb.Value:
    value = pb.Value()
    value.null_value = 0  # type: ignore[assignment,unused-ignore]
    return value


_ID_LOCK = threading.Lock()
_last_id = [0, 0]  # [unix ms, counter within that ms]


def message_id() -> str:
    """A UUIDv7 string, as the SDK documents for message IDs.

    The 12-bit ``rand_a`` field carries a counter within the millisecond, so IDs
    sort in acceptance order even when many are issued at once (RFC 9562 §6.2).
    """
    with _ID_LOCK:
        ms = max(int(time.time() * 1000), _last_id[0])
        counter = _last_id[1] + 1 if ms == _last_id[0] else 0
        if counter > 0xFFF:
            ms, counter = ms + 1, 0
        _last_id[0], _last_id[1] = ms, counter
    rand_b = uuid.uuid4().int & ((1 << 62) - 1)
    value = (ms << 80) | (0x7 << 76) | (counter << 64) | (0b10 << 62) | rand_b
    return str(uuid.UUID(int=value))


def retry_delay(policy: pb.RetryPolicy, failed_attempt: int) -> float:
    initial = policy.initial_interval_seconds or 1
    coefficient = policy.backoff_coefficient or 2.0
    maximum = policy.maximum_interval_seconds or 100
    return float(min(initial * coefficient ** (failed_attempt - 1), maximum))


def handler_step_options(options: pb.FlowTimeoutHandlerOptions) -> pb.StepOptions:
    """The timeout handler runs as an Execute-only pseudo-step with these options."""
    step = pb.StepOptions(
        execute_timeout_seconds=options.method_timeout_seconds,
        heartbeat_timeout_seconds=options.heartbeat_timeout_seconds,
        skip_wait_for=True,
        execute_failure_policy=options.failure_policy,
        execute_failure_proceed_step_type=options.failure_proceed_step_type,
        execute_durability_override=options.durability_override,
    )
    if options.HasField("retry_policy"):
        step.execute_retry_policy.CopyFrom(options.retry_policy)
    if options.HasField("failure_proceed_step_options"):
        step.execute_failure_proceed_step_options.CopyFrom(options.failure_proceed_step_options)
    step.execute_lock_attribute_keys.extend(options.lock_attribute_keys)
    step.execute_load_attribute_map_instances.extend(options.load_attribute_map_instances)
    step.execute_load_channel_names.extend(options.load_channel_names)
    step.execute_load_channel_map_instances.extend(options.load_channel_map_instances)
    return step
