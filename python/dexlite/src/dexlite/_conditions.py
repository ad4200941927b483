"""Waiting-condition validation and the candidate planner.

The planner is a pure function of the persisted condition, the pending count per
channel and the set of completed timers, so it can be re-run after any change,
including a restart, and always reaches the same decision.
"""

from __future__ import annotations

from dataclasses import dataclass

from dex.dexpb import dex_pb2 as pb

_ALL = pb.WAITING_CONDITION_TYPE_ALL_COMPLETED
_ANY = pb.WAITING_CONDITION_TYPE_ANY_COMPLETED
_COMBINATION = pb.WAITING_CONDITION_TYPE_ANY_COMBINATION_COMPLETED


@dataclass(frozen=True, kw_only=True)
class Plan:
    """The winning candidate of a satisfied wait."""

    channel_takes: dict[int, int]
    """Channel-condition index -> number of messages it consumes (winners only)."""


def validate(condition: pb.WaitingCondition) -> str | None:
    """Returns why a worker-supplied condition is invalid, or None."""
    kind = condition.waiting_condition_type
    if kind not in (_ALL, _ANY, _COMBINATION):
        return "waiting_condition_type must be ALL, ANY or ANY_COMBINATION"
    if condition.sub_flow_conditions:
        return "sub_flow_conditions are not supported by dexlite"
    ids: list[str] = []
    for timer in condition.timer_conditions:
        if timer.firing_unix_timestamp_seconds:
            return "timer_conditions.firing_unix_timestamp_seconds must not be set by workers"
        if timer.duration_seconds < 0:
            return "timer_conditions.duration_seconds must not be negative"
        ids.append(timer.condition_id)
    for channel in condition.channel_conditions:
        if not channel.channel_name:
            return "channel_conditions.channel_name is required"
        low = channel.at_least if channel.HasField("at_least") else None
        high = channel.at_most if channel.HasField("at_most") else None
        if (low is not None and low < 0) or (high is not None and high < 0):
            return "channel_conditions bounds must not be negative"
        if low is not None and high is not None and high < low:
            return "channel_conditions.at_most must not be below at_least"
        ids.append(channel.condition_id)
    named = [i for i in ids if i]
    if len(named) != len(set(named)):
        return "condition ids must be unique within a wait"
    if kind == _COMBINATION:
        if len(named) != len(ids):
            return "every condition of ANY_COMBINATION needs a non-empty condition_id"
        known = set(ids)
        if not condition.condition_combinations:
            return "ANY_COMBINATION needs condition_combinations"
        for combination in condition.condition_combinations:
            if not combination.condition_ids or any(
                i not in known for i in combination.condition_ids
            ):
                return "condition_combinations reference unknown condition ids"
    elif condition.condition_combinations:
        return "condition_combinations are only valid for ANY_COMBINATION"
    return None


def _bounds(channel: pb.ChannelCondition) -> tuple[int, int | None]:
    has_low = channel.HasField("at_least")
    has_high = channel.HasField("at_most")
    if not has_low and not has_high:
        return 1, 1
    low = channel.at_least if has_low else 0
    high = channel.at_most if has_high else None
    return low, high


def _candidates(condition: pb.WaitingConditionState) -> list[tuple[list[int], list[int]]]:
    timers = list(range(len(condition.timer_conditions)))
    channels = list(range(len(condition.channel_conditions)))
    kind = condition.waiting_condition_type
    if kind == _ALL or (not timers and not channels):
        return [(timers, channels)]
    if kind == _ANY:
        return [([t], []) for t in timers] + [([], [c]) for c in channels]
    by_id_timer = {t.condition_id: i for i, t in enumerate(condition.timer_conditions)}
    by_id_channel = {c.condition_id: i for i, c in enumerate(condition.channel_conditions)}
    result: list[tuple[list[int], list[int]]] = []
    for combination in condition.condition_combinations:
        ids = set(combination.condition_ids)
        result.append(
            (
                [i for cid, i in by_id_timer.items() if cid in ids],
                sorted(i for cid, i in by_id_channel.items() if cid in ids),
            )
        )
    return result


def plan(
    condition: pb.WaitingConditionState, pending: dict[str, int], fired: set[int]
) -> Plan | None:
    """Picks the first satisfiable candidate in canonical order, or None."""
    for timers, channels in _candidates(condition):
        if any(t not in fired for t in timers):
            continue
        used: dict[str, int] = {}
        takes: dict[int, int] = {}
        feasible = True
        for index in channels:
            channel = condition.channel_conditions[index]
            low, _ = _bounds(channel)
            remaining = pending.get(channel.channel_name, 0) - used.get(channel.channel_name, 0)
            if remaining < low:
                feasible = False
                break
            used[channel.channel_name] = used.get(channel.channel_name, 0) + low
            takes[index] = low
        if not feasible:
            continue
        for index in channels:
            channel = condition.channel_conditions[index]
            low, high = _bounds(channel)
            remaining = pending.get(channel.channel_name, 0) - used.get(channel.channel_name, 0)
            extra = remaining if high is None else min(high - low, remaining)
            if extra > 0:
                takes[index] += extra
                used[channel.channel_name] = used.get(channel.channel_name, 0) + extra
        return Plan(channel_takes=takes)
    return None


def to_state(condition: pb.WaitingCondition, now: int) -> pb.WaitingConditionState:
    """Persistable form: timers become absolute firing times (whole Unix seconds)."""
    state = pb.WaitingConditionState(waiting_condition_type=condition.waiting_condition_type)
    for timer in condition.timer_conditions:
        state.timer_conditions.add(
            condition_id=timer.condition_id,
            duration_seconds=timer.duration_seconds,
            firing_unix_timestamp_seconds=now + timer.duration_seconds,
        )
    state.channel_conditions.extend(condition.channel_conditions)
    state.condition_combinations.extend(condition.condition_combinations)
    return state
