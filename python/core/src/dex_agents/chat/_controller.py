"""What each typed line and each background report does to the chat (no rendering).

A plain line is a message (or, while an approval or question waits, its answer);
a line starting with `/` is a command (`/help` lists them).
"""

from __future__ import annotations

import json
from collections.abc import Callable

from dex_agents_contracts import InterruptKind, struct_to_json

from dex_agents.chat._errors import describe_error
from dex_agents.chat._session import ChatSession, Report
from dex_agents.chat._state import ChatState, Output, transcript_line

__all__ = ["HELP", "ChatController"]

HELP = """commands:
  <text>              send a message (queued while a turn runs)
  y | n [reason]      approve or reject the pending approval
  <answer> | <n>      answer the pending question (a number picks a choice); /decline
  /steer <text>       redirect the running turn with new text
  /cancel             stop the running turn
  /plan [text]        show the plan, or send text as a planning message
  /execute            run the plan's current revision
  /settings [json]    show the session settings, or replace them (`{}` clears)
  /history [n]        the last n stored messages (20)
  /inspect            the Step timeline from the Flow history
  /quit               leave (the session goes on; --session resumes it)"""


class ChatController:
    def __init__(
        self,
        state: ChatState,
        session: ChatSession,
        *,
        inspect: Callable[[], list[Output] | None] | None = None,
    ) -> None:
        self.state = state
        self.session = session
        self.quit = False
        self._inspect = inspect

    # --- typed lines ----------------------------------------------------------------

    def handle_line(self, line: str) -> list[Output]:
        text = line.strip()
        if not text:
            return []
        if text.startswith("/"):
            command, _, rest = text.partition(" ")
            return self._command(command[1:].lower(), rest.strip())
        pending = self.state.first_pending()
        if pending is not None and pending.kind is InterruptKind.TOOL_APPROVAL:
            word, _, reason = text.partition(" ")
            if word.lower() in ("y", "yes"):
                return self._resolve(True, None)
            if word.lower() in ("n", "no"):
                return self._resolve(False, reason.strip() or None)
        if pending is not None and pending.kind is InterruptKind.QUESTION:
            answer = text
            if text.isdigit() and 1 <= int(text) <= len(pending.choices):
                answer = pending.choices[int(text) - 1]
            sid, iid = self.session.session_id, pending.interrupt_id
            self.state.pending = [i for i in self.state.pending if i.interrupt_id != iid]
            self.session.rpc(
                f"answered {iid}",
                lambda: self.session.client.answer_question(sid, iid, answer),
                f"the answer to {iid} was refused (not pending, past its deadline, or not "
                "a choice)",
            )
            return [Output(f"you > {answer}")]
        return self._send(text, plan_mode=False)

    def _send(self, text: str, *, plan_mode: bool) -> list[Output]:
        sid = self.session.session_id
        queued = " (queued: a turn is running)" if self.state.busy() else ""
        self.session.rpc(
            "",
            lambda: self.session.client.send_user_message(sid, text, plan_mode=plan_mode),
            "the session refused the message (blank, or plan mode is off for this agent)",
        )
        prefix = "you (plan) > " if plan_mode else "you > "
        return [Output(f"{prefix}{text}{queued}")]

    def _resolve(self, approved: bool, reason: str | None) -> list[Output]:
        pending = self.state.first_pending()
        if pending is None:
            return [Output("nothing waits for an approval", "yellow")]
        sid, iid = self.session.session_id, pending.interrupt_id
        verdict = "approve" if approved else "reject"
        self.session.rpc(
            "",
            lambda: self.session.client.resolve_interrupt(
                sid, iid, approved=approved, rejection_message=reason
            ),
            f"could not {verdict} {iid}: it is no longer pending (resolved, steered, or past "
            f"its deadline)",
        )
        self.state.pending = [i for i in self.state.pending if i.interrupt_id != iid]
        return [Output(f"you > {verdict} {iid}" + (f": {reason}" if reason else ""))]

    def _command(self, name: str, rest: str) -> list[Output]:
        sid = self.session.session_id
        client = self.session.client
        if name in ("quit", "exit", "q"):
            self.quit = True
            return []
        if name == "help":
            return [Output(HELP, "dim")]
        if name == "steer":
            if not rest:
                return [Output("usage: /steer <text>", "yellow")]
            self.session.rpc(
                "steered: the running turn ends and your text starts the next one",
                lambda: client.steer_user_message(sid, text=rest),
                "the steer was refused (blank text, or the turn does not accept steering)",
            )
            return [Output(f"you (steer) > {rest}")]
        if name == "cancel":
            self.session.rpc(
                "cancel requested", lambda: client.cancel_turn(sid), "no turn is running"
            )
            return []
        if name in ("approve", "reject"):
            return self._resolve(name == "approve", rest or None)
        if name == "decline":
            pending = self.state.first_pending()
            if pending is None:
                return [Output("no question is pending", "yellow")]
            iid = pending.interrupt_id
            self.session.rpc(
                f"declined {iid}",
                lambda: client.resolve_interrupt(sid, iid, approved=False),
                f"{iid} is no longer pending",
            )
            return []
        if name == "plan":
            if rest:
                return self._send(rest, plan_mode=True)
            self.session.rpc("", lambda: _plan_text(self.session), "")
            return []
        if name == "execute":
            self.session.rpc("", lambda: _execute_plan(self.session), "")
            return []
        if name == "settings":
            return self._settings(rest)
        if name == "history":
            count = int(rest) if rest.isdigit() else 20
            self.session.rpc("", lambda: _history_text(self.session, count), "")
            return []
        if name == "inspect" and self._inspect is not None:
            return self._inspect() or []
        return [Output(f"unknown command /{name} (/help lists them)", "yellow")]

    def _settings(self, rest: str) -> list[Output]:
        sid = self.session.session_id
        client = self.session.client
        if not rest:

            def show() -> str:
                settings = self.session.snapshot().session_settings
                return "settings: " + json.dumps(struct_to_json(settings) if settings else {})

            self.session.rpc("", show, "")
            return []
        try:
            value = json.loads(rest)
        except ValueError as error:
            return [Output(f"/settings needs a JSON object: {error}", "yellow")]
        if not isinstance(value, dict):
            return [Output('/settings needs a JSON object, such as {"temperature": 0}', "yellow")]
        self.session.rpc(
            "settings saved; the next turn starts with them",
            lambda: client.update_session_settings(sid, value),
            "the session refused the settings (too large, or it has not started)",
        )
        return []

    # --- background reports ---------------------------------------------------------

    def handle_report(self, report: Report) -> list[Output]:
        state = self.state
        if report.kind == "event" and report.event is not None:
            return [o for o in state.apply(report.event) if o.text]
        if report.kind == "interrupt":
            if report.interrupt is not None:
                state.add_pending(report.interrupt)
            return []
        if report.kind == "turn_end" and report.snapshot is not None:
            out = state.finish_turn(report.turn_id, report.snapshot)
            if state.usage_line:
                out.append(Output(f"usage: {state.usage_line}", "dim"))
            return out
        if report.kind == "notice":
            return [Output(report.text, "yellow")] if report.text else []
        if report.kind == "error":
            return [Output(f"error: {report.text}", "red")]
        if report.kind == "lost":
            state.problem = report.text
            return [Output(f"{report.text}; retrying", "bold red")]
        if report.kind == "back":
            state.problem = None
            return [Output(report.text, "green")]
        if report.kind == "closed":
            state.closed = report.text
            return [Output(f"{report.text}; /quit to leave", "bold red")]
        return []


def _plan_text(session: ChatSession) -> str:
    plan = session.snapshot().plan
    if plan is None or not plan.tasks:
        return "no plan yet (/plan <text> asks the agent for one)"
    lines = [f"plan revision {plan.revision} ({plan.status.name.lower()}):"]
    lines += [f"  [{t.status.name.lower()}] {t.content}" for t in plan.tasks]
    return "\n".join(lines)


def _execute_plan(session: ChatSession) -> str:
    plan = session.snapshot().plan
    if plan is None:
        return "no plan to execute"
    if session.client.execute_plan(session.session_id, plan.revision):
        return f"executing plan revision {plan.revision}"
    return (
        f"plan revision {plan.revision} cannot run now (the session is busy, a message or "
        f"interrupt is pending, or the plan is not draft/active)"
    )


def _history_text(session: ChatSession, count: int) -> str:
    page = session.client.list_messages(session.session_id, limit=max(1, min(count, 200)))
    if not page.messages:
        return "no messages yet"
    return "\n".join(transcript_line(m).text for m in page.messages)


def error_line(error: BaseException, address: str) -> Output:
    return Output(describe_error(error, address=address), "red")
