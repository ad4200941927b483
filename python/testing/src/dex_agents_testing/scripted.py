"""A scripted runner: model turns come from a script, tools from a table.

Independent of any model client or loop, so session tests need no model key.
The script is indexed by turn number and model call within the turn (kept in
the framework run state), so a retried or re-run model call gets the same reply.
"""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

from dex_agents._runner.capabilities import (
    ToolTaskCancellation,
    ToolTaskPending,
    ToolTaskPoll,
    ToolTaskPollOutcome,
)
from dex_agents._runner.values import deferred_tool_call
from dex_agents.results import model_visible_result
from dex_agents.runner import (
    AgentTurnContext,
    AgentTurnOutcome,
    DeferredToolExecution,
    DeferredToolOutcome,
    FrameworkMessage,
    ToolCallsRequested,
    ToolExecutionError,
    ToolExecutionResult,
    ToolInputRequested,
    ToolTaskStarted,
    TurnCompleted,
)
from dex_agents_contracts import AgentToolCall, AgentUsage, MessageRole, QuestionAnswer, ToolEffect

from dex_agents_testing.runlog import RunLog

__all__ = [
    "ModelReply",
    "ScriptedPoll",
    "ScriptedQuestion",
    "ScriptedRunner",
    "ScriptedTask",
    "ScriptedTool",
    "ScriptedToolCall",
    "TaskScriptedRunner",
    "answers_output",
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


ScriptedQuestion = ToolInputRequested
"""A question a tool, or a task's poll, asks the user: the very ToolInputRequested the
scripted tool returns (a task's poll replaces `continuation` with its own place)."""


@dataclass(frozen=True, kw_only=True)
class ScriptedPoll:
    """What one poll of a scripted task returns, by its place in `ScriptedTask.polls`.

    `kind` is `pending` (ToolTaskPending with `poll_interval_seconds`), `question`,
    `succeed` (`output` plus the answers the task received), or `fail`
    (ToolExecutionError(error)). Polls past the list succeed.
    """

    kind: str = "succeed"
    poll_interval_seconds: float = 1.0
    question: ScriptedQuestion | None = None
    output: str = "done"
    error: str | None = None
    crash_attempts: int = 0
    """Raise RuntimeError on poll attempts up to this number (a Step failure)."""
    gate: str | None = None


@dataclass(frozen=True, kw_only=True)
class ScriptedTask:
    """The tool starts a remote task instead of answering (ToolTaskStarted).

    It saves the task ID as its heartbeat checkpoint first, so a retried attempt
    returns the same task instead of starting another. Every start is logged
    (kind `task_start`), every resumed one too (`task_resume`).
    """

    poll_interval_seconds: float = 1.0
    task_id: str | None = None
    """The ID to return; None makes `task-<tool call ID>-<attempt>`, so a second start shows."""
    gate: str | None = None
    """Held after the checkpoint is saved, before the task is returned."""
    polls: Sequence[ScriptedPoll] = ()
    cancel_crash_attempts: int = 0
    """cancel_tool_task raises RuntimeError on attempts up to this number."""


@dataclass(frozen=True, kw_only=True)
class ScriptedTool:
    """A tool that logs each run, then answers, fails, crashes, waits, asks or starts a task."""

    name: str
    effect: ToolEffect = ToolEffect.READ
    output: str = "ok"
    error: str | None = None
    """Raise ToolExecutionError(error): a failure the model sees."""
    crash_attempts: int = 0
    """Raise RuntimeError on attempts up to this number (a Step failure)."""
    gate: str | None = None
    questions: Sequence[ScriptedQuestion] = ()
    """Asked one per run until each has an answer; then the output carries the answers."""
    task: ScriptedTask | None = None


def answers_output(output: str, answers: Sequence[QuestionAnswer]) -> str:
    """A tool's output followed by the answers it received: `out|a1|a2`."""
    return "|".join([output, *(answer.answer for answer in answers)])


def _answer_json(answer: QuestionAnswer | None) -> dict[str, Any] | None:
    if answer is None:
        return None
    return {
        "interrupt_id": answer.interrupt_id,
        "question": answer.question,
        "answer": answer.answer,
        "resolution": int(answer.resolution),
    }


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
    def from_json(data: Mapping[str, Any], *, task_runner: bool = False) -> ScriptedRunner:
        """The runner `to_json` described; `task_runner` picks TaskScriptedRunner."""
        runner_type = TaskScriptedRunner if task_runner else ScriptedRunner
        return runner_type(
            [[_reply_from_json(r) for r in turn] for turn in data["script"]],
            [_tool_from_json(t) for t in data["tools"]],
            RunLog(data["log"]),
        )

    # --- AgentFrameworkRunner ----------------------------------------------------------

    def build_user_message(self, text: str) -> FrameworkMessage:
        return FrameworkMessage(
            role=MessageRole.USER,
            text=text,
            framework_item=json.dumps({"role": "user", "text": text}),
        )

    async def run_model_step(self, turn: AgentTurnContext) -> AgentTurnOutcome:
        state = json.loads(turn.framework_run_state or '{"calls":0,"items":[]}')
        call = int(state["calls"])
        items: list[dict[str, Any]] = list(state["items"])
        _add_tool_results(items, turn.tool_calls)
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
                    deferred_tool_call(
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
        return TurnCompleted(new_messages=[item_message(item) for item in items], usage=usage)

    def build_unfinished_turn_messages(self, turn: AgentTurnContext) -> Sequence[FrameworkMessage]:
        """The turn's tool calls and results from run state, so a failed turn keeps them."""
        self.log.append(
            "unfinished",
            turn=turn.turn_id,
            records={
                r.tool_call_id: {
                    "status": int(r.status),
                    "error": r.error,
                    "cancellation_reason": (
                        int(r.cancellation_reason) if r.cancellation_reason is not None else None
                    ),
                }
                for r in turn.tool_calls
            },
        )
        if turn.framework_run_state is None:
            return []
        items: list[dict[str, Any]] = json.loads(turn.framework_run_state)["items"]
        _add_tool_results(items, turn.tool_calls)
        return [item_message(item) for item in items]

    async def execute_deferred_tool_call(self, call: DeferredToolExecution) -> DeferredToolOutcome:
        record = call.tool_call
        tool = self.tools.get(record.tool_name)
        self.log.append(
            "tool",
            name=record.tool_name,
            tool_call_id=record.tool_call_id,
            key=call.idempotency_key,
            attempt=call.attempt,
            input_answers=[_answer_json(a) for a in call.input_answers],
            continuation=record.input_continuation,
            checkpoint=call.heartbeat_checkpoint,
            supports_tool_tasks=call.supports_tool_tasks,
            pid=os.getpid(),  # which Worker process ran it, for kill tests
        )
        if tool is None:
            raise ToolExecutionError(f"unknown tool {record.tool_name!r}")
        await _wait_gate(tool.gate)
        if call.attempt <= tool.crash_attempts:
            raise RuntimeError(f"scripted tool crash on attempt {call.attempt}")
        if tool.error is not None:
            raise ToolExecutionError(tool.error)
        asked = len(call.input_answers)
        if asked < len(tool.questions):
            question = tool.questions[asked]
            return question
        if tool.task is not None:
            return await self._start_task(call, tool.task)
        if tool.questions:
            return ToolExecutionResult(output=answers_output(tool.output, call.input_answers))
        return ToolExecutionResult(output=tool.output)

    async def _start_task(self, call: DeferredToolExecution, task: ScriptedTask) -> ToolTaskStarted:
        record = call.tool_call
        if call.heartbeat_checkpoint is not None:
            # A retried attempt finds the task an earlier attempt started.
            self.log.append(
                "task_resume",
                tool_call_id=record.tool_call_id,
                task_id=call.heartbeat_checkpoint,
                attempt=call.attempt,
            )
            return ToolTaskStarted(
                task_id=call.heartbeat_checkpoint, poll_interval_seconds=task.poll_interval_seconds
            )
        task_id = (
            task.task_id
            if task.task_id is not None
            else f"task-{record.tool_call_id}-{call.attempt}"
        )
        self.log.append(
            "task_start", tool_call_id=record.tool_call_id, task_id=task_id, attempt=call.attempt
        )
        await call.save_heartbeat_checkpoint(task_id)
        # Written after the checkpoint's heartbeat, so a test that sees this event
        # knows Dex holds the checkpoint.
        call.events.write_raw(
            "scripted.task_checkpointed",
            json.dumps({"tool_call_id": record.tool_call_id, "task_id": task_id}),
        )
        await _wait_gate(task.gate)
        return ToolTaskStarted(task_id=task_id, poll_interval_seconds=task.poll_interval_seconds)

    def _reply(self, turn_number: int, call: int) -> ModelReply:
        if 1 <= turn_number <= len(self.script) and call < len(self.script[turn_number - 1]):
            return self.script[turn_number - 1][call]
        return ModelReply(text="(script ended)")


class TaskScriptedRunner(ScriptedRunner):
    """A ScriptedRunner that also polls and cancels its tools' tasks.

    A poll's place in `ScriptedTask.polls` travels in the continuation
    (`poll:<n>`), so a retried poll returns what the first attempt returned.
    Every poll is logged (kind `poll`), and every cancellation (`cancel_task`).
    """

    async def poll_tool_task(self, poll: ToolTaskPoll) -> ToolTaskPollOutcome:
        record = poll.tool_call
        continuation = record.input_continuation
        index = (
            int(continuation.split(":", 1)[1])
            if continuation is not None and continuation.startswith("poll:")
            else 0
        )
        self.log.append(
            "poll",
            tool_call_id=record.tool_call_id,
            task_id=record.task_id,
            index=index,
            attempt=poll.attempt,
            key=poll.idempotency_key,
            continuation=continuation,
            pending_answer=_answer_json(poll.pending_answer),
            interval=record.task_poll_interval_seconds,
        )
        tool = self.tools.get(record.tool_name)
        polls = tool.task.polls if tool is not None and tool.task is not None else ()
        step = polls[index] if index < len(polls) else ScriptedPoll()
        await _wait_gate(step.gate)
        if poll.attempt <= step.crash_attempts:
            raise RuntimeError(f"scripted poll crash on attempt {poll.attempt}")
        following = f"poll:{index + 1}"
        if step.kind == "pending":
            return ToolTaskPending(
                poll_interval_seconds=step.poll_interval_seconds, continuation=following
            )
        if step.kind == "question":
            if step.question is None:
                raise ValueError("a question poll needs a question")
            return replace(step.question, continuation=following)
        if step.kind == "fail":
            raise ToolExecutionError(step.error or "the task failed")
        return ToolExecutionResult(output=answers_output(step.output, poll.input_answers))

    async def cancel_tool_task(self, cancellation: ToolTaskCancellation) -> None:
        record = cancellation.tool_call
        self.log.append(
            "cancel_task",
            tool_call_id=record.tool_call_id,
            task_id=record.task_id,
            attempt=cancellation.attempt,
            key=cancellation.idempotency_key,
        )
        tool = self.tools.get(record.tool_name)
        task = tool.task if tool is not None else None
        if task is not None and cancellation.attempt <= task.cancel_crash_attempts:
            raise RuntimeError(f"scripted cancellation crash on attempt {cancellation.attempt}")


def _question_from_json(data: Mapping[str, Any] | None) -> ScriptedQuestion | None:
    if data is None:
        return None
    return ScriptedQuestion(
        question=data["question"],
        choices=tuple(data["choices"]),
        allows_free_text=data["allows_free_text"],
        continuation=data["continuation"],
    )


def _tool_from_json(data: Mapping[str, Any]) -> ScriptedTool:
    task = data.get("task")
    return ScriptedTool(
        **{
            **data,
            "effect": ToolEffect(data["effect"]),
            "questions": tuple(
                q for q in (_question_from_json(q) for q in data.get("questions", ())) if q
            ),
            "task": (
                ScriptedTask(
                    **{
                        **task,
                        "polls": tuple(
                            ScriptedPoll(**{**p, "question": _question_from_json(p["question"])})
                            for p in task["polls"]
                        ),
                    }
                )
                if task is not None
                else None
            ),
        }
    )


def item_message(item: Mapping[str, Any], *, sort_keys: bool = False) -> FrameworkMessage:
    """The FrameworkMessage of one scripted item (a tool result, a tool call or text),
    with the item itself as framework_item."""
    framework_item = json.dumps(dict(item), separators=(",", ":"), sort_keys=sort_keys)
    if item["role"] == "tool":
        return FrameworkMessage(
            role=MessageRole.TOOL,
            tool_call_id=item["tool_call_id"],
            tool_name=item["tool_name"],
            tool_output=item["output"],
            framework_item=framework_item,
        )
    if "tool_call_id" in item:
        return FrameworkMessage(
            role=MessageRole.ASSISTANT,
            tool_call_id=item["tool_call_id"],
            tool_name=item["tool_name"],
            tool_arguments=item["arguments"],
            framework_item=framework_item,
        )
    return FrameworkMessage(
        role=MessageRole.ASSISTANT, text=item["text"], framework_item=framework_item
    )


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


def _add_tool_results(items: list[dict[str, Any]], records: Sequence[AgentToolCall]) -> None:
    """Appends a tool item for each record the items do not answer yet."""
    recorded = {item["tool_call_id"] for item in items if item["role"] == "tool"}
    for record in records:
        if record.tool_call_id not in recorded:
            items.append(
                {
                    "role": "tool",
                    "tool_call_id": record.tool_call_id,
                    "tool_name": record.tool_name,
                    "output": model_visible_result(record),
                }
            )
