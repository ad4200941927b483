"""McpSources without an MCP SDK: name clashes, ownership and task delegation."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any, cast

import pytest
from dex_agents.runner import McpSources


@dataclass(frozen=True)
class _Tool:
    name: str


@dataclass
class _Source:
    """A stand-in McpToolSource: listed tools, one reference prefix, logged task calls."""

    prefix: str
    names: Sequence[str]
    calls: list[tuple[str, str]] = field(default_factory=list)

    async def list_tools(self, *, taken: Sequence[str] = ()) -> list[_Tool]:
        return [_Tool(n) for n in self.names if n not in taken]

    def tool(self, name: str) -> _Tool | None:
        return _Tool(name) if name in self.names else None

    def owns(self, tool_source_reference: str) -> bool:
        return tool_source_reference.startswith(self.prefix)

    async def execute_deferred_tool_call(self, call: Any) -> Any:
        raise AssertionError("not used here")

    async def poll_tool_task(self, poll: Any) -> Any:
        self.calls.append(("poll", poll.tool_call.tool_name))
        return f"polled by {self.prefix}"

    async def cancel_tool_task(self, cancellation: Any) -> None:
        self.calls.append(("cancel", cancellation.tool_call.tool_name))


def _attempt(tool_name: str, reference: str | None) -> Any:
    return SimpleNamespace(
        tool_call=SimpleNamespace(tool_name=tool_name, tool_source_reference=reference)
    )


def test_a_name_taken_by_the_agent_or_an_earlier_source_is_left_out() -> None:
    first = _Source("a:", ["a__read", "shared"])
    second = _Source("b:", ["shared", "b__write"])
    sources = McpSources([first, second])
    listed = asyncio.run(sources.list_tools(taken=["a__read"]))
    assert [t.name for t in listed] == ["shared", "b__write"]
    assert sources.listed("b__write") == _Tool("b__write")
    assert sources.listed("agent_tool") is None


def test_tasks_go_to_the_source_that_owns_the_record() -> None:
    first, second = _Source("a:", ["x"]), _Source("b:", ["y"])
    sources = McpSources([first, second])
    polled: object = asyncio.run(sources.poll_tool_task(cast(Any, _attempt("y", "b:1"))))
    assert polled == "polled by b:"
    asyncio.run(sources.cancel_tool_task(cast(Any, _attempt("x", "a:7"))))
    assert (first.calls, second.calls) == ([("cancel", "x")], [("poll", "y")])


def test_a_task_no_source_owns_fails_its_poll_and_has_nothing_to_cancel() -> None:
    source = _Source("a:", ["x"])
    sources = McpSources([source])
    with pytest.raises(RuntimeError, match="no MCP source of this runner owns the task of 'z'"):
        asyncio.run(sources.poll_tool_task(cast(Any, _attempt("z", None))))
    asyncio.run(sources.cancel_tool_task(cast(Any, _attempt("z", "other:1"))))
    assert source.calls == []


def test_importing_the_runner_api_does_not_load_the_mcp_sdk() -> None:
    probe = (
        "import sys, dex_agents.runner; "
        "assert dex_agents.runner.McpSources; "
        "print(sorted(m for m in sys.modules"
        " if m == 'mcp' or m.startswith(('mcp.', 'dex_agents.mcp'))))"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=False, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"
