"""A terminal for the chat tests: tmux on a private socket, keys in, the screen out."""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
import uuid
from collections.abc import Callable, Sequence
from pathlib import Path

from dex_agents_testing import child_env, wait_until

__all__ = ["Tmux", "run_cli"]


class Tmux:
    """One tmux server of this test's own, running the `dex-agents` command in a pane."""

    def __init__(self, root: Path, env: dict[str, str] | None = None) -> None:
        self.socket = str(root / f"tmux-{uuid.uuid4().hex[:8]}")
        self.root = root
        self.env = {**child_env(), **(env or {})}

    def _tmux(self, *args: str) -> str:
        return subprocess.run(
            ["tmux", "-S", self.socket, *args], check=True, capture_output=True, text=True
        ).stdout

    def start(self, cli_args: Sequence[str], name: str = "chat") -> None:
        """Runs `python -m dex_agents._cli ARGS` in a new 160x50 window."""
        script = self.root / f"{name}-{uuid.uuid4().hex[:6]}.sh"
        exports = "".join(
            f"export {k}={shlex.quote(v)}\n" for k, v in self.env.items() if k.isidentifier()
        )
        command = shlex.join([sys.executable, "-m", "dex_agents._cli", *cli_args])
        script.write_text(f"#!/bin/sh\n{exports}exec {command}\n")
        script.chmod(0o755)
        if Path(self.socket).exists():
            self._tmux("new-window", "-t", "main", "-n", name, str(script))
        else:
            self._tmux(
                "new-session", "-d", "-s", "main", "-n", name, "-x", "160", "-y", "50", str(script)
            )
        self._tmux("set-option", "-t", "main", "remain-on-exit", "on")

    def keys(self, text: str, *, enter: bool = True) -> None:
        self._tmux("send-keys", "-t", "main", "-l", text)
        if enter:
            self._tmux("send-keys", "-t", "main", "Enter")

    def screen(self) -> str:
        """The pane and its scrollback, whitespace runs made one space: rich wraps long
        lines at the pane's width, so a check never depends on where a line breaks."""
        text = self._tmux("capture-pane", "-p", "-J", "-S", "-2000", "-t", "main")
        return re.sub(r"\s+", " ", text)

    def wait_for(self, check: str | Callable[[str], bool], *, timeout: float = 60.0) -> str:
        """The screen once it contains `check` (or `check(screen)` holds)."""
        test = (lambda s: check in s) if isinstance(check, str) else check
        what = repr(check) if isinstance(check, str) else "a screen condition"

        def probe() -> str | None:
            screen = self.screen()
            return screen if test(screen) else None

        try:
            return wait_until(probe, timeout=timeout, what=f"{what} on the chat screen")
        except AssertionError as error:
            raise AssertionError(f"{error}\n--- screen ---\n{self.screen()}") from None

    def pane_pid(self) -> int:
        return int(self._tmux("display-message", "-p", "-t", "main", "#{pane_pid}").strip())

    def close(self) -> None:
        if Path(self.socket).exists():
            subprocess.run(
                ["tmux", "-S", self.socket, "kill-server"], check=False, capture_output=True
            )


def run_cli(
    args: Sequence[str], env: dict[str, str] | None = None, timeout: float = 120.0
) -> subprocess.CompletedProcess[str]:
    """`dex-agents ARGS` without a terminal, wide, for inspect and the error paths."""
    return subprocess.run(
        [sys.executable, "-m", "dex_agents._cli", *args],
        env={**child_env(), "COLUMNS": "220", **(env or {})},
        capture_output=True,
        text=True,
        timeout=timeout,
        stdin=subprocess.DEVNULL,
        check=False,
    )
