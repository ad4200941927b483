"""The conformance data file reads strictly: the checked-in file parses, and a file out
of shape fails naming where."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from dex_agents._runner.declared import CAPABILITIES, declare_capabilities
from dex_agents._runner.policies import BUILT_IN_TOOL_NAMES
from dex_agents_testing.conformance import (
    CasesError,
    _check_declared,
    flow_options,
    load_cases,
    locate_cases,
    parse_cases,
)
from dex_agents_testing.conformance._cases import FLOWS
from dex_agents_testing.conformance._flows import FLOW_OPTIONS


def _raw() -> Any:
    return json.loads(locate_cases().read_text(encoding="utf-8"))


def test_the_checked_in_cases_parse_and_cover_items_1_to_11() -> None:
    cases = load_cases()
    covered = {item for case in cases.cases for item in case.covers}
    assert {f"item {n}" for n in range(1, 12)} <= covered
    called = {c.name for r in cases.replies for c in r.calls}
    # The `mcp` and `mcp_tasks` flows' servers' tools.
    mcp = {name for name in called if name.startswith(("notes__", "jobs__"))}
    assert called - mcp <= set(cases.tools) | set(BUILT_IN_TOOL_NAMES)


def test_each_flow_is_build_flow_s_keyword_arguments() -> None:
    assert set(FLOW_OPTIONS) == set(FLOWS)
    assert flow_options(None) == {}
    assert flow_options("built_ins") == {"built_in_tools": True}
    assert set(flow_options("mcp")) == set(flow_options("mcp_tasks")) == {"mcp"}
    with pytest.raises(CasesError, match="no app flow 'gossip'"):
        flow_options("gossip")


def test_each_capability_case_names_a_declared_capability_once() -> None:
    shown = [c.capability for c in load_cases().cases if c.capability is not None]
    assert len(shown) == len(set(shown))
    assert set(shown) <= set(CAPABILITIES)
    flows = {c.id: c.flow for c in load_cases().cases if c.flow is not None}
    assert flows == {
        "built_in_ask_user": "built_ins",
        "mcp_source_tool": "mcp",
        "mcp_task_is_polled": "mcp_tasks",
        "plan_mode": "plan_mode",
    }


@pytest.mark.parametrize(
    ("change", "where"),
    [
        (
            lambda raw: raw["cases"][0].update(surprise=1),
            "cases[0]: missing [], unknown ['surprise']",
        ),
        (lambda raw: raw["cases"][0]["steps"].append({"teleport": 1}), "exactly one operation"),
        (lambda raw: raw["cases"][1]["steps"][-1]["expect"].update(vibes=1), "unknown ['vibes']"),
        (lambda raw: raw["tools"]["charge"].pop("returns"), "tools.charge: missing ['returns']"),
        (lambda raw: raw["cases"].append(raw["cases"][0]), "case ids repeat"),
        (lambda raw: raw.update(version=2), "version 2"),
        (
            lambda raw: raw["cases"][0].update(capability="telepathy"),
            "cases[0].capability: 'telepathy' is no runner capability",
        ),
        (
            lambda raw: [c.update(capability="usage") for c in raw["cases"][:2]],
            "two cases show one capability",
        ),
        (lambda raw: raw["cases"][0].update(flow="yes"), "cases[0].flow: 'yes' is none of"),
        (
            lambda raw: raw["cases"][0]["steps"].append({"answer": {}, "timeout": 1, "x": 2}),
            "unknown ['x']",
        ),
        (
            lambda raw: raw["cases"][0]["steps"].append({"start": "hi", "plan_mode": True}),
            "only a send step has plan_mode",
        ),
    ],
)
def test_a_file_out_of_shape_fails_naming_where(change: Any, where: str) -> None:
    raw = copy.deepcopy(_raw())
    change(raw)
    with pytest.raises(CasesError, match=None) as failure:
        parse_cases(raw)
    assert where in str(failure.value)


def test_a_capability_case_is_nonconforming_exactly_when_the_runner_leaves_it_out() -> None:
    case = next(c for c in load_cases().cases if c.capability == "handoffs")
    others = [name for name in CAPABILITIES if name != "handoffs"]
    declared = declare_capabilities(supported=["handoffs"], unsupported=dict.fromkeys(others, "x"))
    missing = declare_capabilities(
        supported=others, unsupported={"handoffs": "the framework has none"}
    )
    _check_declared("Declared", declared, case, None)
    _check_declared("Missing", missing, case, "the framework's reason")
    with pytest.raises(AssertionError, match="declares handoffs, yet its app lists"):
        _check_declared("Declared", declared, case, "a stale reason")
    with pytest.raises(AssertionError, match=r"unsupported \(the framework has none\)"):
        _check_declared("Missing", missing, case, None)
