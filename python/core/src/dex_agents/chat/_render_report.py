"""Rich renderables of an inspect report: the timeline table and the snapshot's parts."""

from __future__ import annotations

import json
from collections.abc import Iterator

from dex_agents_contracts import AgentMessage, AgentSnapshot, MessageRole, struct_to_json
from rich.console import RenderableType
from rich.table import Table
from rich.text import Text

from dex_agents.chat._inspect import SessionReport
from dex_agents.chat._timeline import TimelineEntry

__all__ = ["message_line", "report_renderables", "timeline_table"]

_KIND_STYLES = {
    "execute": "",
    "wait": "dim",
    "rpc": "cyan",
    "closed": "bold red",
    "running": "bold yellow",
    "waiting": "yellow",
}


def _duration(entry: TimelineEntry) -> str:
    if entry.duration_seconds is None:
        return ""
    if entry.duration_seconds < 1:
        return f"{entry.duration_seconds * 1000:.1f} ms"
    return f"{entry.duration_seconds:.2f} s"


def timeline_table(entries: list[TimelineEntry]) -> Table:
    table = Table(title="Step timeline (Flow history)", expand=False, show_lines=False)
    for column in ("turn", "at", "step", "phase", "took", "attempts", "notes"):
        table.add_column(column, overflow="fold")
    for entry in entries:
        style = "red" if entry.failed else _KIND_STYLES.get(entry.kind, "")
        notes = "; ".join(entry.notes)
        table.add_row(
            str(entry.turn) if entry.turn else "",
            f"+{entry.at_seconds:.3f}s",
            entry.name,
            entry.kind,
            _duration(entry),
            str(entry.attempts) if entry.kind in ("execute", "wait") else "",
            notes,
            style=style,
        )
    return table


def message_line(message: AgentMessage) -> Text:
    role = message.role.name.lower()
    if message.role is MessageRole.TOOL:
        body = f"{message.tool_name} -> {message.tool_output}"
    elif message.tool_call_id:
        body = f"calls {message.tool_name}({message.tool_arguments}) [{message.tool_call_id}]"
    else:
        body = message.text or ""
    line = Text(f"{message.sequence:>4} {message.turn_id:<8} {role:<9} ", style="dim")
    line.append(body, style="bold" if message.role is MessageRole.ASSISTANT else "")
    return line


def _snapshot_parts(snapshot: AgentSnapshot) -> Iterator[RenderableType]:
    state = snapshot.state
    if state is not None:
        active = state.active_turn_id or "none"
        yield Text(
            f"state: {state.status.name.lower()}, {state.turn_count} turn(s) ended, active turn "
            f"{active}, mode {state.interaction_mode.name.lower()}"
        )
        if state.last_turn_error:
            yield Text(f"last turn error: {state.last_turn_error}", style="red")
    yield Text("messages:", style="bold")
    for message in snapshot.messages:
        yield message_line(message)
    yield Text("pending interrupts:", style="bold")
    if not snapshot.pending_interrupts:
        yield Text("  none")
    for interrupt in snapshot.pending_interrupts:
        deadline = interrupt.deadline.isoformat() if interrupt.deadline else "no deadline"
        what = interrupt.question or f"{interrupt.tool_name}({interrupt.arguments})"
        yield Text(f"  {interrupt.interrupt_id} {interrupt.kind.name.lower()}: {what} ({deadline})")
    for call in snapshot.tool_calls:
        yield Text(
            f"  tool call {call.tool_call_id} {call.tool_name} {call.effect.name.lower()}: "
            f"{call.status.name.lower()}"
        )
    yield Text("plan:", style="bold")
    plan = snapshot.plan
    if plan is None or not plan.tasks:
        yield Text("  none")
    else:
        yield Text(f"  revision {plan.revision}, {plan.status.name.lower()}")
        for task in plan.tasks:
            yield Text(f"  [{task.status.name.lower()}] {task.content}")
    usage = snapshot.usage
    if usage is not None:
        yield Text(
            f"usage: {usage.model_calls} model calls, {usage.input_tokens} input tokens "
            f"({usage.cached_input_tokens} cached), {usage.output_tokens} output tokens, "
            f"{usage.reasoning_tokens} reasoning tokens",
            style="bold",
        )
    if snapshot.queued_messages:
        yield Text(f"queued messages: {len(snapshot.queued_messages)}")
    if snapshot.session_settings is not None:
        yield Text(f"settings: {json.dumps(struct_to_json(snapshot.session_settings))}")


def report_renderables(report: SessionReport) -> Iterator[RenderableType]:
    yield Text(
        f"Session {report.session_id} ({report.flow_type}), run {report.run_id}: {report.status}",
        style="bold",
    )
    yield timeline_table(report.timeline)
    if report.snapshot is not None:
        yield from _snapshot_parts(report.snapshot)
    if report.snapshot_problem:
        yield Text(report.snapshot_problem, style="yellow")
