"""The terminal loop: keys in, reports in, lines printed above a live area (rich)."""

from __future__ import annotations

import queue
import time
from collections.abc import Callable

from rich.console import Console, Group, RenderableType
from rich.live import Live
from rich.spinner import Spinner
from rich.text import Text

from dex_agents.chat._controller import ChatController
from dex_agents.chat._state import ChatState, Output, interrupt_prompt
from dex_agents.chat._terminal import LineEditor, cbreak, read_available

__all__ = ["run_loop"]

_LIVE_LINES = 12


def _print(console: Console, lines: list[Output]) -> None:
    for line in lines:
        console.print(Text(line.text, style=line.style))


def _live_area(state: ChatState, editor: LineEditor, spinner: Spinner) -> RenderableType:
    parts: list[RenderableType] = []
    for part in state.live.values():
        if part.reasoning:
            parts.append(Text(f"thinking: {part.reasoning}", style="dim italic"))
        if part.text:
            tail = "\n".join(part.text.splitlines()[-_LIVE_LINES:])
            parts.append(Text(f"agent > {tail}", style="bold"))
    if state.problem:
        parts.append(Text(f"⚠ {state.problem}", style="bold red"))
    elif state.busy() and state.first_pending() is not None:
        parts.append(Text(f"  {state.turn_id}: waiting for you", style="yellow"))
    elif state.busy():
        elapsed = time.monotonic() - state.step_since if state.step else 0.0
        step = state.step or "starting"
        spinner.text = Text(f" {state.turn_id}: {step} · {elapsed:.1f}s  (/steer, /cancel)")
        parts.append(spinner)
    pending = state.first_pending()
    if pending is not None:
        parts.append(Text(interrupt_prompt(pending), style="bold yellow"))
    parts.append(Text(f"> {editor.buffer}▏", style="bold"))
    return Group(*parts)


def run_loop(
    console: Console,
    controller: ChatController,
    reports: queue.Queue,  # type: ignore[type-arg]
    *,
    input_fd: int,
    tick: Callable[[], list[Output]] | None = None,
) -> None:
    """Runs until /quit, Ctrl-D or Ctrl-C; every Dex call happens off this thread."""
    editor = LineEditor()
    spinner = Spinner("dots")
    state = controller.state
    with (
        cbreak(input_fd),
        Live(
            _live_area(state, editor, spinner),
            console=console,
            auto_refresh=False,
            transient=True,
            redirect_stdout=False,
            redirect_stderr=False,
        ) as live,
    ):
        while not controller.quit and not editor.eof and not editor.interrupted:
            data = read_available(input_fd, 0.1)
            if data is None:
                break
            for line in editor.feed(data):
                _print(live.console, controller.handle_line(line))
            while True:
                try:
                    report = reports.get_nowait()
                except queue.Empty:
                    break
                _print(live.console, controller.handle_report(report))
            if tick is not None:
                _print(live.console, tick())
            live.update(_live_area(state, editor, spinner), refresh=True)
