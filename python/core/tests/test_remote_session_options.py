"""`agent_session_options`: the session options a runner service serves, as the Flow's
`AgentSessionOptions`: every option, absent fields, and bad values."""

from __future__ import annotations

from datetime import timedelta

import pytest
from dex_agents import AgentSessionOptions, CompactionPolicy, ToolPolicy, UserError
from dex_agents._remote.session_options import agent_session_options
from dex_agents_contracts import (
    RunnerCompactionPolicy,
    RunnerSessionOptions,
    RunnerToolPolicy,
    ToolEffect,
)

EVERY_OPTION = RunnerSessionOptions(
    tool_policies=[
        RunnerToolPolicy(
            tool_name="deploy", effect=ToolEffect.NON_IDEMPOTENT_WRITE, requires_approval=True
        ),
        RunnerToolPolicy(tool_name="lookup", effect=ToolEffect.READ),
    ],
    default_tool_effect=ToolEffect.IDEMPOTENT_WRITE,
    interrupt_deadline_seconds=600,
    built_in_tools=["ask_user", "write_todos"],
    max_durable_wait_seconds=3600,
    plan_mode_enabled=True,
    compaction=RunnerCompactionPolicy(
        context_window_tokens=128000, trigger_percent=80, retained_percent=25
    ),
    retained_message_limit=0,
    max_value_bytes=4 * 1024 * 1024,
)
"""The message of the golden vector `valid/RunnerSessionOptions/every_option.json`."""


def test_every_served_option_reaches_agent_session_options() -> None:
    options = agent_session_options("Agent", EVERY_OPTION)
    assert options.tool_policies == {
        "deploy": ToolPolicy(effect=ToolEffect.NON_IDEMPOTENT_WRITE, requires_approval=True),
        "lookup": ToolPolicy(effect=ToolEffect.READ, requires_approval=None),
    }
    assert options.default_tool_effect is ToolEffect.IDEMPOTENT_WRITE
    assert options.interrupt_deadline == timedelta(minutes=10)
    assert options.built_in_tools == ("ask_user", "write_todos")
    assert options.max_durable_wait == timedelta(hours=1)
    assert options.plan_mode_enabled
    assert options.compaction == CompactionPolicy(
        context_window_tokens=128000, trigger_ratio=0.8, retained_ratio=0.25
    )
    assert options.retained_message_limit is None  # 0 on the wire: keep every message
    assert options.max_value_bytes == 4 * 1024 * 1024


def test_absent_options_keep_the_python_defaults() -> None:
    assert agent_session_options("Agent", RunnerSessionOptions()) == AgentSessionOptions()
    window_only = RunnerSessionOptions(
        compaction=RunnerCompactionPolicy(context_window_tokens=1000)
    )
    compaction = agent_session_options("Agent", window_only).compaction
    assert compaction == CompactionPolicy(context_window_tokens=1000)


@pytest.mark.parametrize(
    ("wire", "error"),
    [
        (
            RunnerSessionOptions(
                tool_policies=[RunnerToolPolicy(tool_name="a", effect=ToolEffect.UNSPECIFIED)]
            ),
            "`tool_policies['a'].effect` must be a tool effect",
        ),
        (
            RunnerSessionOptions(
                tool_policies=[
                    RunnerToolPolicy(tool_name="a", effect=ToolEffect.READ),
                    RunnerToolPolicy(tool_name="a", effect=ToolEffect.READ),
                ]
            ),
            "`tool_policies` names 'a' twice",
        ),
        (
            RunnerSessionOptions(built_in_tools=["shell"]),
            "`built_in_tools`: 'shell' is not a built-in tool",
        ),
        (RunnerSessionOptions(interrupt_deadline_seconds=0), "`interrupt_deadline` must be"),
        (
            RunnerSessionOptions(plan_mode_enabled=True),
            "`plan_mode_enabled` needs 'write_todos'",
        ),
        (
            RunnerSessionOptions(
                compaction=RunnerCompactionPolicy(context_window_tokens=10, retained_percent=90)
            ),
            "`retained_ratio` must be at least 0 and below `trigger_ratio`",
        ),
        (RunnerSessionOptions(retained_message_limit=-1), "`retained_message_limit`"),
        (RunnerSessionOptions(max_value_bytes=0), "`max_value_bytes` must be positive"),
    ],
)
def test_a_bad_served_option_names_the_flow_type_and_the_option(
    wire: RunnerSessionOptions, error: str
) -> None:
    with pytest.raises(UserError) as raised:
        agent_session_options("Refunds", wire)
    assert str(raised.value).startswith("the session options served for flow type 'Refunds': ")
    assert error in str(raised.value)
