"""A scripted runner: model turns come from a script, tools from a table.

Independent of any model client or loop, so session tests need no model key.
The script is indexed by turn number and model call within the turn (kept in
the framework run state), so a retried or re-run model call gets the same reply.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from dex_agents import (
    AgentTurnContext,
    AgentTurnOutcome,
    DeferredToolCall,
    DeferredToolExecution,
    FrameworkMessage,
    ToolCallsRequested,
    ToolExecutionError,
    ToolExecutionResult,
    TurnCompleted,
    model_visible_result,
)
from dex_agents_contracts import AgentUsage, ToolEffect

from dex_agents_testing.runlog import RunLog

__all__ = [
    "ModelReply",
    "ScriptedRunner",
    "ScriptedTool",
    "ScriptedToolCall",
]

_GATE_POLL_SECONDS = 0.02


@dataclass(frozen=True, kw_only=True)
class ScriptedToolCall:
    """A tool call the scripted model asks for."""

    tool_call_id: str
    tool_name: str
    arguments: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, kw_only=True)
class ModelReply:
    """One model call: a text answer or tool calls, optionally held or failing."""

    text: str | None = None
    tool_calls: Sequence[ScriptedToolCall] = ()
    error: str | None = None
    """Raise RuntimeError(error) on every attempt (the turn fails after its retries)."""
    fail_attempts: int = 0
    """Raise on attempts up to this number, then answer."""
    gate: str | None = None
    """A file whose existence lets the call answer; the call waits for it."""


@dataclass(frozen=True, kw_only=True)
class ScriptedTool:
    """A tool that logs each run, then answers, fails, crashes or waits as told."""

    name: str
    effect: ToolEffect = ToolEffect.READ
    output: str = "ok"
    error: str | None = None
    """Raise ToolExecutionError(error): a failure the model sees."""
    crash_attempts: int = 0
    """Raise RuntimeError on attempts up to this number (a Step failure)."""
    gate: str | None = None


async def _wait_gate(gate: str | None) -> None:
    """Holds a model call or tool until the test creates the gate file."""
    if gate is None:
        return
    path = Path(gate)
    # Polling a file, not an in-process event: the gate crosses processes.
    while not await asyncio.to_thread(path.exists):  # noqa: ASYNC110
        await asyncio.sleep(_GATE_POLL_SECONDS)


class ScriptedRunner:
    """An AgentFrameworkRunner whose model is `script[turn - 1][call]`.

    Every model call and tool run is appended to `log` (kinds `model` and
    `tool`), with what the model saw, so tests can count runs across processes.
    A turn past the script answers "(script ended)".
    """

    def __init__(
        self,
        script: Sequence[Sequence[ModelReply]],
        tools: Sequence[ScriptedTool],
        log: RunLog,
    ) -> None:
        self.script = [list(turn) for turn in script]
        self.tools = {tool.name: tool for tool in tools}
        self.log = log

    # --- serialization for child Worker processes -------------------------------------

    def to_json(self) -> dict[str, Any]:
        return {
            "script": [[_reply_to_json(r) for r in turn] for turn in self.script],
            "tools": [{**asdict(t), "effect": int(t.effect)} for t in self.tools.values()],
            "log": self.log.path,
        }

    @staticmethod
    def from_json(data: Mapping[str, Any]) -> ScriptedRunner:
        return ScriptedRunner(
            [[_reply_from_json(r) for r in turn] for turn in data["script"]],
            [ScriptedTool(**{**t, "effect": ToolEffect(t["effect"])}) for t in data["tools"]],
            RunLog(data["log"]),
        )

    # --- AgentFrameworkRunner ----------------------------------------------------------

    def build_user_message(self, text: str) -> FrameworkMessage:
        return FrameworkMessage(
            role="user",
            text=text,
            framework_item=json.dumps({"role": "user", "text": text}),
        )

    async def run_model_step(self, turn: AgentTurnContext) -> AgentTurnOutcome:
        state = json.loads(turn.framework_run_state or '{"calls":0,"items":[]}')
        call = int(state["calls"])
        items: list[dict[str, Any]] = list(state["items"])
        recorded = {item["tool_call_id"] for item in items if item["role"] == "tool"}
        for record in turn.tool_calls:
            if record.tool_call_id not in recorded:
                items.append(
                    {
                        "role": "tool",
                        "tool_call_id": record.tool_call_id,
                        "tool_name": record.tool_name,
                        "output": model_visible_result(record),
                    }
                )
        turn_number = int(turn.turn_id.rsplit("-", 1)[-1])
        self.log.append(
            "model",
            turn=turn.turn_id,
            call=call,
            attempt=turn.attempt,
            seen=[m.text for m in turn.messages],
            seen_roles=[int(m.role) for m in turn.messages],
            tool_results={r.tool_call_id: model_visible_result(r) for r in turn.tool_calls},
            settings=dict(turn.session_settings),
        )
        reply = self._reply(turn_number, call)
        await _wait_gate(reply.gate)
        if reply.error is not None:
            raise RuntimeError(reply.error)
        if turn.attempt <= reply.fail_attempts:
            raise RuntimeError(f"scripted model failure on attempt {turn.attempt}")
        usage = AgentUsage(model_calls=1, input_tokens=10, output_tokens=5)
        if reply.tool_calls:
            deferred = []
            for scripted in reply.tool_calls:
                tool = self.tools.get(scripted.tool_name)
                arguments = json.dumps(dict(scripted.arguments), separators=(",", ":"))
                deferred.append(
                    DeferredToolCall(
                        tool_call_id=scripted.tool_call_id,
                        tool_name=scripted.tool_name,
                        arguments=arguments,
                        policy=turn.resolve_tool_policy(
                            scripted.tool_name, tool.effect if tool is not None else None
                        ),
                    )
                )
                items.append(
                    {
                        "role": "assistant",
                        "tool_call_id": scripted.tool_call_id,
                        "tool_name": scripted.tool_name,
                        "arguments": arguments,
                    }
                )
            run_state = json.dumps({"calls": call + 1, "items": items})
            return ToolCallsRequested(
                framework_run_state=run_state, tool_calls=deferred, usage=usage
            )
        items.append({"role": "assistant", "text": reply.text or ""})
        return TurnCompleted(new_messages=[_message(item) for item in items], usage=usage)

    def build_unfinished_turn_messages(self, turn: AgentTurnContext) -> Sequence[FrameworkMessage]:
        """The turn's tool calls and results from run state, so a failed turn keeps them."""
        if turn.framework_run_state is None:
            return []
        items: list[dict[str, Any]] = json.loads(turn.framework_run_state)["items"]
        recorded = {item["tool_call_id"] for item in items if item["role"] == "tool"}
        for record in turn.tool_calls:
            if record.tool_call_id not in recorded:
                items.append(
                    {
                        "role": "tool",
                        "tool_call_id": record.tool_call_id,
                        "tool_name": record.tool_name,
                        "output": model_visible_result(record),
                    }
                )
        return [_message(item) for item in items]

    async def execute_deferred_tool_call(self, call: DeferredToolExecution) -> ToolExecutionResult:
        record = call.tool_call
        tool = self.tools.get(record.tool_name)
        self.log.append(
            "tool",
            name=record.tool_name,
            tool_call_id=record.tool_call_id,
            key=call.idempotency_key,
            attempt=call.attempt,
        )
        if tool is None:
            raise ToolExecutionError(f"unknown tool {record.tool_name!r}")
        await _wait_gate(tool.gate)
        if call.attempt <= tool.crash_attempts:
            raise RuntimeError(f"scripted tool crash on attempt {call.attempt}")
        if tool.error is not None:
            raise ToolExecutionError(tool.error)
        return ToolExecutionResult(output=tool.output)

    def _reply(self, turn_number: int, call: int) -> ModelReply:
        if 1 <= turn_number <= len(self.script) and call < len(self.script[turn_number - 1]):
            return self.script[turn_number - 1][call]
        return ModelReply(text="(script ended)")


def _message(item: Mapping[str, Any]) -> FrameworkMessage:
    framework_item = json.dumps(dict(item), separators=(",", ":"))
    if item["role"] == "tool":
        return FrameworkMessage(
            role="tool",
            tool_call_id=item["tool_call_id"],
            tool_name=item["tool_name"],
            tool_output=item["output"],
            framework_item=framework_item,
        )
    if "tool_call_id" in item:
        return FrameworkMessage(
            role="assistant",
            tool_call_id=item["tool_call_id"],
            tool_name=item["tool_name"],
            tool_arguments=item["arguments"],
            framework_item=framework_item,
        )
    return FrameworkMessage(role="assistant", text=item["text"], framework_item=framework_item)


def _reply_to_json(reply: ModelReply) -> dict[str, Any]:
    return {
        "text": reply.text,
        "tool_calls": [
            {
                "tool_call_id": c.tool_call_id,
                "tool_name": c.tool_name,
                "arguments": dict(c.arguments),
            }
            for c in reply.tool_calls
        ],
        "error": reply.error,
        "fail_attempts": reply.fail_attempts,
        "gate": reply.gate,
    }


def _reply_from_json(data: Mapping[str, Any]) -> ModelReply:
    return ModelReply(
        text=data["text"],
        tool_calls=tuple(ScriptedToolCall(**c) for c in data["tool_calls"]),
        error=data["error"],
        fail_attempts=data["fail_attempts"],
        gate=data["gate"],
    )
