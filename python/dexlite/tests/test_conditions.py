"""The condition planner (spec §4.4) as a pure function.

These reach into ``dexlite._conditions`` on purpose: the selection order and
the reservation rules are easier to pin down exhaustively here than through
Workers, and the integration tests cover the same code end to end.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest
from dex.dexpb import dex_pb2 as pb
from dexlite import _conditions

ALL = pb.WAITING_CONDITION_TYPE_ALL_COMPLETED
ANY = pb.WAITING_CONDITION_TYPE_ANY_COMPLETED
COMBO = pb.WAITING_CONDITION_TYPE_ANY_COMBINATION_COMPLETED


def channel(
    name: str, low: int | None = None, high: int | None = None, cid: str = ""
) -> pb.ChannelCondition:
    condition = pb.ChannelCondition(channel_name=name, condition_id=cid)
    if low is not None:
        condition.at_least = low
    if high is not None:
        condition.at_most = high
    return condition


@dataclass(frozen=True)
class Case:
    id: str
    kind: int
    channels: list[pb.ChannelCondition]
    pending: dict[str, int]
    expected: dict[int, int] | None
    timers: int = 0
    fired: set[int] = field(default_factory=set)
    combos: list[list[str]] = field(default_factory=list)


CASES = [
    Case("one/exact/ready", ALL, [channel("a", 1, 1)], {"a": 3}, {0: 1}),
    Case("one/exact/empty", ALL, [channel("a", 1, 1)], {}, None),
    Case("at_most/alone/never-blocks", ALL, [channel("a", None, 2)], {}, {0: 0}),
    Case("at_most/takes-up-to-n", ALL, [channel("a", None, 2)], {"a": 5}, {0: 2}),
    Case("at_least/takes-everything", ALL, [channel("a", 2)], {"a": 5}, {0: 5}),
    Case("at_least/not-enough", ALL, [channel("a", 2)], {"a": 1}, None),
    Case("default-bounds/exactly-one", ALL, [channel("a")], {"a": 2}, {0: 1}),
    Case(
        "same-channel/reserves-minimums-first",
        ALL,
        [channel("a", None, 3), channel("a", 2, 2)],
        {"a": 3},
        {0: 1, 1: 2},
    ),
    Case(
        "same-channel/insufficient", ALL, [channel("a", 2, 2), channel("a", 2, 2)], {"a": 3}, None
    ),
    Case("any/timers-first", ANY, [channel("a", 1, 1)], {"a": 1}, {}, timers=1, fired={0}),
    Case("any/later-channel-wins", ANY, [channel("a", 1, 1), channel("b", 1, 1)], {"b": 1}, {1: 1}),
    Case("any/timer-pending-channel-ready", ANY, [channel("a", 1, 1)], {"a": 1}, {0: 1}, timers=1),
    Case("all/timer-pending-blocks", ALL, [channel("a", 1, 1)], {"a": 1}, None, timers=1),
    Case(
        "combo/declaration-order",
        COMBO,
        [channel("a", 1, 1, "x"), channel("b", 1, 1, "y")],
        {"a": 1, "b": 1},
        {0: 1, 1: 1},
        combos=[["x", "y"], ["y"]],
    ),
    Case(
        "combo/second-when-first-blocked",
        COMBO,
        [channel("a", 1, 1, "x"), channel("b", 1, 1, "y")],
        {"b": 1},
        {1: 1},
        combos=[["x", "y"], ["y"]],
    ),
    Case("empty/satisfied-at-once", ALL, [], {}, {}),
]


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_plan(case: Case) -> None:
    state = pb.WaitingConditionState(waiting_condition_type=case.kind)  # type: ignore[arg-type]
    state.channel_conditions.extend(case.channels)
    for index in range(case.timers):
        state.timer_conditions.add(condition_id=f"t{index}" if case.combos else "")
    for ids in case.combos:
        state.condition_combinations.add(condition_ids=ids)
    plan = _conditions.plan(state, case.pending, case.fired)
    assert (plan.channel_takes if plan else None) == case.expected


@pytest.mark.parametrize(
    ("condition", "problem"),
    [
        (pb.WaitingCondition(), "waiting_condition_type"),
        (
            pb.WaitingCondition(
                waiting_condition_type=ALL, channel_conditions=[channel("a", 3, 2)]
            ),
            "at_most",
        ),
        (
            pb.WaitingCondition(waiting_condition_type=ALL, channel_conditions=[channel("")]),
            "channel_name",
        ),
        (
            pb.WaitingCondition(
                waiting_condition_type=ALL,
                channel_conditions=[channel("a", cid="x"), channel("b", cid="x")],
            ),
            "unique",
        ),
        (
            pb.WaitingCondition(waiting_condition_type=COMBO, channel_conditions=[channel("a")]),
            "condition_id",
        ),
        (
            pb.WaitingCondition(
                waiting_condition_type=ALL,
                timer_conditions=[pb.TimerCondition(firing_unix_timestamp_seconds=5)],
            ),
            "firing_unix_timestamp_seconds",
        ),
    ],
)
def test_invalid_conditions_are_named(condition: pb.WaitingCondition, problem: str) -> None:
    assert problem in (_conditions.validate(condition) or "")
