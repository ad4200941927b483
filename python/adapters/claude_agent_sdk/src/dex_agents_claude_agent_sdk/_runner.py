"""`ClaudeAgentRunner`: a Claude Agent SDK agent as the session's whole-turn harness.

The bundled CLI runs a turn's model calls and tools itself, so one RunModel Step
runs the CLI until it answers or stops at a tool it must not run. A PreToolUse
hook decides every tool call: an unapproved read runs inline (at least once: a
retried RunModel repeats it), any other call of a tool the runner owns is
deferred (`defer`, the run ends with `tool_deferred`) and becomes a tool Step,
and a tool the runner cannot run (a CLI built-in, a server in
`options.mcp_servers`) runs inline only when its policy is an unapproved read,
else the hook denies it. When the next RunModel resumes the session, the CLI
re-runs the deferred call and the runner's server answers it from the record.
A response that deferred several calls is fed back one tool Step at a time
instead (see `_feedback`).
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import shutil
import tempfile
import uuid
from collections.abc import AsyncIterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, cast

from claude_agent_sdk import (
    AssistantMessage,
    ClaudeAgentOptions,
    ClaudeSDKError,
    HookContext,
    HookInput,
    HookMatcher,
    PreToolUseHookSpecificOutput,
    ResultMessage,
    SdkMcpTool,
    StreamEvent,
    SystemMessage,
    query,
)
from claude_agent_sdk.types import SessionStore, SyncHookJSONOutput
from dex_agents import ToolPolicy
from dex_agents._runner.deltas import write_deltas
from dex_agents._runner.errors import TurnFailed
from dex_agents._runner.heartbeats import DEFAULT_HEARTBEAT_INTERVAL_SECONDS
from dex_agents._runner.mcp_sources import McpSourceTasks
from dex_agents._runner.policies import ResolvedToolPolicy
from dex_agents._runner.values import deferred_tool_call
from dex_agents.results import is_final, model_visible_result
from dex_agents.runner import (
    AgentTurnContext,
    AgentTurnOutcome,
    DeferredToolCall,
    DeferredToolExecution,
    DeferredToolOutcome,
    FrameworkMessage,
    McpSources,
    ModelCallMetadata,
    RunnerCapabilities,
    ToolCallsRequested,
    ToolRouter,
    TurnCompleted,
    heartbeats,
)
from dex_agents_contracts import AgentUsage, MessageRole, ToolEffect

from dex_agents_claude_agent_sdk._capabilities import capabilities
from dex_agents_claude_agent_sdk._feedback import CONTINUE_PROMPT, feed_back, in_response_order
from dex_agents_claude_agent_sdk._store import RunSessionStore
from dex_agents_claude_agent_sdk._tools import (
    RunCalls,
    ToolTable,
    built_in_named,
    built_in_server,
    canonical_arguments,
)
from dex_agents_claude_agent_sdk._transcript import (
    TranscriptEntry,
    decode_run_state,
    encode_item,
    encode_run_state,
    project_turn,
    session_transcript,
)

if TYPE_CHECKING:
    from dex_agents.mcp import McpToolSource

__all__ = ["DEFAULT_MAX_TURNS", "STRUCTURED_OUTPUT_TOOL", "ClaudeAgentRunner", "session_uuid"]

DEFAULT_MAX_TURNS = 20
"""The CLI's turn bound when `options.max_turns` is unset, so a run always ends."""

STRUCTURED_OUTPUT_TOOL = "StructuredOutput"
"""The tool the CLI gives the model for its answer when `options.output_format` is set;
its input, checked against the schema, is the run's `ResultMessage.structured_output`."""

_NAMESPACE = uuid.UUID("6f1c2a8e-4d3b-5e7f-9a0b-1c2d3e4f5a6b")


def session_uuid(flow_id: str) -> str:
    """The CLI session ID of a Dex session (the CLI takes only UUIDs)."""
    return str(uuid.uuid5(_NAMESPACE, flow_id))


def max_turns_error(max_turns: int) -> str:
    return f"the Claude Code run stopped at max_turns={max_turns} before Claude answered"


def denied_text(tool_name: str) -> str:
    return (
        f"The tool {tool_name} was not run: it runs inside the Claude Code harness, where "
        "only unapproved read tools may run in this durable session."
    )


class _Run:
    """One CLI run's hook decisions."""

    def __init__(self, runner: ClaudeAgentRunner, turn: AgentTurnContext) -> None:
        self.runner = runner
        self.turn = turn
        self.calls = RunCalls()
        self.records = {r.tool_call_id: r for r in turn.tool_calls if is_final(r.status)}
        self.router = ToolRouter(
            turn, tool_policies=runner.tool_policies, default_tool_effect=runner.default_tool_effect
        )
        self.deferred: dict[str, DeferredToolCall] = {}
        self.problem: str | None = None

    async def pre_tool_use(
        self, hook_input: HookInput, tool_use_id: str | None, context: HookContext
    ) -> SyncHookJSONOutput:
        fields: Mapping[str, Any] = hook_input
        name = str(fields.get("tool_name", ""))
        arguments = fields.get("tool_input") or {}
        call_id = tool_use_id or str(fields.get("tool_use_id", ""))
        key = (name, canonical_arguments(arguments))
        record = self.records.get(call_id)
        if record is not None:
            self.calls.recorded[key] = record
            return _decision("allow")
        if name == STRUCTURED_OUTPUT_TOOL and self.runner.options.output_format is not None:
            return _decision("allow")  # the CLI checks the answer against the schema: no effect
        built_in = built_in_named(name, self.turn.enabled_built_in_tools)
        if built_in is not None:  # the session runs it: recorded by its own name
            return self.defer(built_in, call_id, arguments, self.router.policy(built_in))
        tool = self.runner.tools.get(name)
        policy = self.policy(
            name, tool.bare_name if tool else name, tool.framework_effect if tool else None
        )
        inline = policy.effect is ToolEffect.READ and not policy.requires_approval
        if tool is None:
            return _decision("allow") if inline else _decision("deny", denied_text(name))
        if inline:
            self.calls.inline[key] = call_id
            return _decision("allow")
        reference = tool.mcp_tool.reference if tool.mcp_tool else None
        return self.defer(name, call_id, arguments, policy, reference)

    def defer(
        self,
        name: str,
        call_id: str,
        arguments: Mapping[str, Any],
        policy: ResolvedToolPolicy,
        reference: str | None = None,
    ) -> SyncHookJSONOutput:
        """Ends the run at this call, which becomes the session's tool call `name`."""
        problem = self.router.claim_id(name, call_id)
        if problem is not None:
            self.problem = problem
            return _decision("deny", problem)
        self.deferred[call_id] = deferred_tool_call(
            tool_call_id=call_id,
            tool_name=name,
            arguments=json.dumps(arguments, ensure_ascii=False),
            policy=policy,
            tool_source_reference=reference,
        )
        return _decision("defer")

    def policy(
        self, name: str, bare_name: str, framework_effect: ToolEffect | None
    ) -> ResolvedToolPolicy:
        """The runner's policies win over the session's; either may name a tool by
        its CLI name (`mcp__<server>__<tool>`) or by its own name."""
        policies = self.router.tool_policies
        key = name if name in policies else bare_name if bare_name in policies else name
        return self.router.policy(name, framework_effect=framework_effect, policy_name=key)


def _decision(
    decision: Literal["allow", "deny", "defer"], reason: str | None = None
) -> SyncHookJSONOutput:
    output: PreToolUseHookSpecificOutput = {
        "hookEventName": "PreToolUse",
        "permissionDecision": decision,
    }
    if reason is not None:
        output["permissionDecisionReason"] = reason
    return {"hookSpecificOutput": output}


class ClaudeAgentRunner(McpSourceTasks):
    """Runs each turn of a Claude Agent SDK agent inside RunModel, its writes in tool Steps.

    `options` is the agent (model, system prompt, CLI tools, permission rules,
    `env` for the CLI); the runner sets its own hooks, session store, session ID
    and a fresh `CLAUDE_CONFIG_DIR` per run, and asks for the CLI's partial messages
    (`include_partial_messages`) so the agent's text and thinking reach the session
    as `text_delta` / `reasoning_delta` events while the run lasts. `tools` are
    in-process SDK MCP tools by server name (`create_sdk_mcp_server`'s name), the
    tools that can be deferred.
    """

    def __init__(
        self,
        options: ClaudeAgentOptions,
        *,
        tools: Mapping[str, Sequence[SdkMcpTool[Any]]] | None = None,
        mcp_sources: Sequence[McpToolSource] = (),
        tool_policies: Mapping[str, ToolPolicy] | None = None,
        default_tool_effect: ToolEffect | None = None,
        heartbeat_interval_seconds: float = DEFAULT_HEARTBEAT_INTERVAL_SECONDS,
    ) -> None:
        for field_name in ("resume", "session_id", "session_store"):
            if getattr(options, field_name):
                raise ValueError(f"options.{field_name} is the runner's; leave it unset")
        if options.continue_conversation or options.fork_session:
            raise ValueError("options.continue_conversation and fork_session are not supported")
        if options.hooks and "PreToolUse" in options.hooks:
            raise ValueError("options.hooks has PreToolUse hooks; the runner owns PreToolUse")
        taken = list(options.mcp_servers) if isinstance(options.mcp_servers, dict) else []
        self.options = options
        self.tools = ToolTable(tools or {}, mcp_sources, taken)
        self._mcp: McpSources[Any] = McpSources(mcp_sources)
        self.tool_policies = dict(tool_policies or {})
        self.default_tool_effect = default_tool_effect
        self.heartbeat_interval_seconds = heartbeat_interval_seconds

    # --- the protocol -------------------------------------------------------------

    def describe(self) -> RunnerCapabilities:
        """What this adapter supports, each gap with its reason (docs/adapters.md)."""
        return capabilities()

    def build_user_message(self, text: str) -> FrameworkMessage:
        return FrameworkMessage(
            role=MessageRole.USER, framework_item=encode_item([], text), text=text
        )

    async def run_model_step(self, turn: AgentTurnContext) -> AgentTurnOutcome:
        await self.tools.list_sources()
        history = session_transcript(turn.messages)
        session_id = session_uuid(turn.flow_id)
        turn_entries: list[TranscriptEntry] = []
        prompt: list[str] | None = None  # None: the CLI's own resume of a deferred call
        if turn.framework_run_state is not None:
            state = decode_run_state(turn.framework_run_state)
            turn_entries = state.entries
            if state.deferred:  # several calls of one response: one tool Step at a time
                fed = feed_back(
                    state.deferred, turn.tool_calls, turn_entries, history.entries, session_id
                )
                if fed.next is not None:  # its Step comes before Claude sees any result
                    return ToolCallsRequested(
                        framework_run_state=encode_run_state(fed.entries, state.deferred),
                        tool_calls=[fed.next],
                        usage=AgentUsage(),
                    )
                turn_entries = fed.entries
                prompt = [CONTINUE_PROMPT]
        else:
            if not history.pending_user_texts:
                raise TurnFailed("the turn has no user message to send to Claude")
            prompt = history.pending_user_texts
        run = _Run(self, turn)
        store = RunSessionStore(session_id, history.entries + turn_entries)
        config_dir = tempfile.mkdtemp(prefix="dex-claude-")
        try:
            async with heartbeats(turn.heartbeat, self.heartbeat_interval_seconds):
                result, assistants = await self._run_cli(
                    run,
                    store,
                    config_dir,
                    session_id,
                    prompt,
                    resume=bool(history.entries or turn_entries),
                )
        finally:
            shutil.rmtree(config_dir, ignore_errors=True)
        turn_entries = turn_entries + store.appended
        usage = _usage(result, assistants)
        metadata = _metadata(self.options, assistants)
        if run.problem is not None:
            return TurnCompleted(
                new_messages=project_turn(turn_entries),
                usage=usage,
                model_call_metadata=metadata,
                turn_error=run.problem,
            )
        if result.stop_reason == "tool_deferred":
            deferred = result.deferred_tool_use
            call = run.deferred.get(deferred.id) if deferred is not None else None
            if call is None:
                raise RuntimeError(
                    f"the CLI deferred a tool call the runner's hook did not defer: {deferred!r}"
                )
            # The CLI reports, and on resume re-runs, only the last deferred call, so
            # several are fed back by the runner, first to last (see `_feedback`).
            several = in_response_order(run.deferred.values(), turn_entries)
            if len(several) == 1:
                several = []
            return ToolCallsRequested(
                framework_run_state=encode_run_state(turn_entries, several),
                tool_calls=[several[0] if several else call],
                usage=usage,
                model_call_metadata=metadata,
            )
        if result.subtype == "error_max_turns":
            return TurnCompleted(
                new_messages=project_turn(turn_entries),
                usage=usage,
                model_call_metadata=metadata,
                turn_error=max_turns_error(self.options.max_turns or DEFAULT_MAX_TURNS),
            )
        if result.is_error or result.subtype != "success":
            detail = "; ".join(result.errors or []) or (result.result or "")
            raise RuntimeError(f"the Claude Code run failed ({result.subtype}): {detail}")
        return TurnCompleted(
            new_messages=project_turn(turn_entries), usage=usage, model_call_metadata=metadata
        )

    async def _run_cli(
        self,
        run: _Run,
        store: RunSessionStore,
        config_dir: str,
        session_id: str,
        prompt: list[str] | None,
        *,
        resume: bool,
    ) -> tuple[ResultMessage, list[AssistantMessage]]:
        base = self.options
        servers: dict[str, Any] | str | Path = base.mcp_servers
        own = {
            **self.tools.servers(run.turn.flow_id, run.turn.turn_id, run.calls),
            **built_in_server(run.turn.enabled_built_in_tools, run.calls),
        }
        if own:
            if not isinstance(base.mcp_servers, dict):
                raise ValueError("options.mcp_servers must be a dict when the runner has tools")
            servers = {**base.mcp_servers, **own}
        hooks = dict(base.hooks or {})
        hooks["PreToolUse"] = [HookMatcher(matcher=None, hooks=[run.pre_tool_use])]
        options = dataclasses.replace(
            base,
            mcp_servers=servers,
            hooks=hooks,
            session_store=cast("SessionStore", store),
            resume=session_id if resume else None,
            session_id=None if resume else session_id,
            max_turns=base.max_turns or DEFAULT_MAX_TURNS,
            include_partial_messages=True,
            env={**base.env, "CLAUDE_CONFIG_DIR": config_dir},
            cwd=base.cwd or config_dir,
        )
        done = asyncio.Event()

        async def messages() -> AsyncIterator[dict[str, Any]]:
            if prompt is not None:
                yield {
                    "type": "user",
                    "message": {
                        "role": "user",
                        "content": [{"type": "text", "text": text} for text in prompt],
                    },
                    "parent_tool_use_id": None,
                    "session_id": session_id,
                }
            await done.wait()  # the SDK servers answer over this stream until the result

        result: ResultMessage | None = None
        assistants: list[AssistantMessage] = []
        try:
            async for message in query(prompt=messages(), options=options):
                if isinstance(message, StreamEvent) and message.parent_tool_use_id is None:
                    _write_delta(message.event, run.turn)
                elif isinstance(message, AssistantMessage) and message.parent_tool_use_id is None:
                    assistants.append(message)
                elif isinstance(message, SystemMessage) and message.subtype == "mirror_error":
                    raise RuntimeError(f"the session transcript was not stored: {message.data}")
                elif isinstance(message, ResultMessage):
                    result = message
                    done.set()
        except ClaudeSDKError:
            # The CLI exits non-zero after an error result (max_turns, an API
            # error); the result, when it came, says what happened.
            if result is None:
                raise
        finally:
            done.set()
        if result is None:
            raise RuntimeError("the Claude Code CLI ended without a result")
        return result, assistants

    async def execute_deferred_tool_call(self, call: DeferredToolExecution) -> DeferredToolOutcome:
        async with heartbeats(call.heartbeat, self.heartbeat_interval_seconds):
            return await self.tools.execute(call)

    # --- an unfinished turn -------------------------------------------------------

    def build_unfinished_turn_messages(self, turn: AgentTurnContext) -> Sequence[FrameworkMessage]:
        """A steered, cancelled or failed turn's transcript up to its last answered
        tool call, then each final record the transcript lacks (for display only:
        the next turn's prompt and the session's note tell the model what ran)."""
        entries = (
            decode_run_state(turn.framework_run_state).entries
            if turn.framework_run_state is not None
            else []
        )
        kept = _without_unanswered_tail(entries)
        messages = [m for m in project_turn(kept) if m.text or m.tool_call_id] if kept else []
        if messages:
            messages = project_turn(kept)
        shown = {m.tool_call_id for m in messages if m.role == MessageRole.TOOL}
        empty = encode_item([])
        for record in sorted(turn.tool_calls, key=lambda r: r.deferral_order):
            if record.tool_call_id in shown or not is_final(record.status):
                continue
            messages.append(
                FrameworkMessage(
                    role=MessageRole.ASSISTANT,
                    framework_item=empty,
                    tool_call_id=record.tool_call_id,
                    tool_name=record.tool_name,
                    tool_arguments=record.arguments,
                )
            )
            messages.append(
                FrameworkMessage(
                    role=MessageRole.TOOL,
                    framework_item=empty,
                    tool_call_id=record.tool_call_id,
                    tool_name=record.tool_name,
                    tool_output=model_visible_result(record),
                )
            )
        return messages


def _write_delta(event: Mapping[str, Any], turn: AgentTurnContext) -> None:
    """A streamed text or thinking delta of the turn's agent (a sub-agent's are not the
    turn's answer), as the session's delta event."""
    delta = event.get("delta") if event.get("type") == "content_block_delta" else None
    if not isinstance(delta, dict):
        return
    if delta.get("type") == "text_delta":
        write_deltas(turn.events, text=delta.get("text"))
    elif delta.get("type") == "thinking_delta":
        write_deltas(turn.events, reasoning=delta.get("thinking"))


def _without_unanswered_tail(entries: list[TranscriptEntry]) -> list[TranscriptEntry]:
    """The entries before the first response with a tool use that got no result. The CLI
    writes each content block of a response as an entry of its own, so the cut is at the
    response's first entry: no kept call lacks its result."""
    answered: set[str] = set()
    for _, entry in entries:
        if entry.get("type") == "user":
            answered.update(
                str(b.get("tool_use_id")) for b in _blocks(entry) if b.get("type") == "tool_result"
            )
    for index, (_, entry) in enumerate(entries):
        uses = [str(b.get("id")) for b in _blocks(entry) if b.get("type") == "tool_use"]
        if entry.get("type") != "assistant" or all(u in answered for u in uses):
            continue
        response = _response_id(entry)
        first = next(
            (
                i
                for i, (_, e) in enumerate(entries)
                if response is not None
                and e.get("type") == "assistant"
                and _response_id(e) == response
            ),
            index,
        )
        return entries[: min(first, index)]
    return entries


def _blocks(entry: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    message = entry.get("message")
    content = message.get("content") if isinstance(message, dict) else None
    return [b for b in content if isinstance(b, dict)] if isinstance(content, list) else []


def _response_id(entry: Mapping[str, Any]) -> str | None:
    message = entry.get("message")
    found = message.get("id") if isinstance(message, dict) else None
    return found if isinstance(found, str) else None


def _usage(result: ResultMessage, assistants: Sequence[AssistantMessage]) -> AgentUsage:
    usage = result.usage or {}
    calls = len({m.message_id or id(m) for m in assistants})
    return AgentUsage(
        model_calls=calls,
        input_tokens=int(usage.get("input_tokens") or 0),
        output_tokens=int(usage.get("output_tokens") or 0),
        cached_input_tokens=int(usage.get("cache_read_input_tokens") or 0),
    )


def _metadata(
    options: ClaudeAgentOptions, assistants: Sequence[AssistantMessage]
) -> ModelCallMetadata:
    last = assistants[-1] if assistants else None
    return ModelCallMetadata(
        request_model=options.model,
        response_model=last.model if last else None,
        provider_name="anthropic",
        response_id=last.message_id if last else None,
        finish_reasons=[last.stop_reason] if last and last.stop_reason else [],
    )
