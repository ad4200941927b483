"""Keys from the terminal without blocking, and the one input line the chat draws itself.

The terminal runs in cbreak mode (no echo, no line buffering) so typing never
tears the live area; the line being typed is part of what the chat renders.
"""

from __future__ import annotations

import codecs
import contextlib
import os
import select
import sys
from collections.abc import Iterator

__all__ = ["LineEditor", "cbreak", "read_available"]


class LineEditor:
    """A line buffer fed raw input: printable text, backspace, Enter, Ctrl-U, Ctrl-D."""

    def __init__(self) -> None:
        self.buffer = ""
        self.eof = False
        self.interrupted = False
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._escape = False

    def feed(self, data: bytes) -> list[str]:
        """The lines completed by `data` (Enter ends one)."""
        lines: list[str] = []
        for char in self._decoder.decode(data):
            if self._escape:  # skip an escape sequence (arrow keys): ESC [ ... letter
                if char.isalpha() or char == "~":
                    self._escape = False
                continue
            if char == "\x1b":
                self._escape = True
            elif char in ("\r", "\n"):
                lines.append(self.buffer)
                self.buffer = ""
            elif char in ("\x7f", "\b"):
                self.buffer = self.buffer[:-1]
            elif char == "\x15":  # Ctrl-U
                self.buffer = ""
            elif char == "\x04":  # Ctrl-D
                self.eof = True
            elif char == "\x03":  # Ctrl-C (when the terminal does not turn it into SIGINT)
                self.interrupted = True
            elif char == "\t":
                self.buffer += " "
            elif char.isprintable():
                self.buffer += char
        return lines


@contextlib.contextmanager
def cbreak(fd: int) -> Iterator[None]:
    """cbreak mode on a terminal (a pipe stays as it is); restored on the way out."""
    if not os.isatty(fd):
        yield
        return
    import termios  # noqa: PLC0415 - POSIX terminals only
    import tty  # noqa: PLC0415

    saved = termios.tcgetattr(fd)
    try:
        tty.setcbreak(fd)
        yield
    finally:
        termios.tcsetattr(fd, termios.TCSADRAIN, saved)


def read_available(fd: int, timeout: float) -> bytes | None:
    """What can be read within `timeout`: b"" when nothing came, None at end of input."""
    ready, _, _ = select.select([fd], [], [], timeout)
    if not ready:
        return b""
    data = os.read(fd, 4096)
    return data if data else None


def stdin_fd() -> int:
    return sys.stdin.fileno()
