"""The rules `dex_agents.runner` gives adapters: tool-call IDs, effects, policies."""

from __future__ import annotations

import pytest
from dex_agents import ToolEffect, ToolPolicy
from dex_agents._runner.policies import (
    ResolvedToolPolicy,
    resolve_tool_policy,
    tool_effect_from_annotations,
    tool_effect_named,
)
from dex_agents._runner.tool_call_ids import invalid_tool_call_ids, model_tool_call_id_problem
from dex_agents._runner.values import deferred_tool_call, pending_record
from dex_agents.runner import DeferredToolCall

_READ = ResolvedToolPolicy(effect=ToolEffect.READ, requires_approval=False)


def _call(tool_call_id: str) -> DeferredToolCall:
    return deferred_tool_call(
        tool_call_id=tool_call_id, tool_name="t", arguments="{}", policy=_READ
    )


@pytest.mark.parametrize(
    ("ids", "earlier", "problem"),
    [
        (["a", "b"], [], None),
        (["a"], ["c0"], None),
        (["c0"], ["c0"], "dex-agents: tool call ID 'c0' is used twice in one turn"),
        (["a", "a"], [], "dex-agents: tool call ID 'a' is used twice in one turn"),
        ([""], [], "dex-agents: a tool call ID must not be empty"),
        (["a/b"], [], "dex-agents: tool call ID 'a/b' must not contain '/'"),
    ],
)
def test_the_session_check_words_each_fault(
    ids: list[str], earlier: list[str], problem: str | None
) -> None:
    calls = [_call(i) for i in ids]
    records = [pending_record(_call(i), turn_id="t", deferral_order=0) for i in earlier]
    # The texts the session records as the turn error (test_session_lifecycle).
    assert invalid_tool_call_ids(calls, records) == problem


def test_the_adapter_check_names_the_call() -> None:
    used = {"x"}
    assert model_tool_call_id_problem("f", "y", used) is None
    assert model_tool_call_id_problem("f", "", used) == (
        "the model's call of 'f' (ID '') has an empty tool call ID"
    )
    assert model_tool_call_id_problem("f", "a/b", used) == (
        "the model's call of 'f' (ID 'a/b') has a tool call ID that contains '/'"
    )
    assert model_tool_call_id_problem("f", "x", used) == (
        "the model's call of 'f' (ID 'x') reuses a tool call ID of this turn; "
        "IDs must be unique within a turn"
    )


def test_effects_from_names_and_annotations() -> None:
    assert tool_effect_named("idempotent_write", tool_name="t", source="k") == (
        ToolEffect.IDEMPOTENT_WRITE
    )
    with pytest.raises(ValueError, match=r"tool 't' declares k='write'; expected one of read, "):
        tool_effect_named("write", tool_name="t", source="k")
    assert tool_effect_from_annotations({"readOnlyHint": True}) is ToolEffect.READ
    assert tool_effect_from_annotations({"idempotentHint": True}) is ToolEffect.IDEMPOTENT_WRITE
    assert tool_effect_from_annotations({"readOnlyHint": "yes"}) is None


def test_a_framework_approval_counts_only_without_a_policy() -> None:
    def resolve(policies: dict[str, ToolPolicy], approval: bool | None) -> ResolvedToolPolicy:
        return resolve_tool_policy(
            "t",
            tool_policies=policies,
            framework_effect=ToolEffect.READ,
            framework_requires_approval=approval,
        )

    assert resolve({}, None) == _READ
    assert resolve({}, True) == ResolvedToolPolicy(effect=ToolEffect.READ, requires_approval=True)
    policy = ToolPolicy(effect=ToolEffect.NON_IDEMPOTENT_WRITE, requires_approval=False)
    assert resolve({"t": policy}, True) == ResolvedToolPolicy(
        effect=ToolEffect.NON_IDEMPOTENT_WRITE, requires_approval=False
    )
