"""A run log in a file, so runs of a SIGKILLed Worker process still count."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["RunLog"]


@dataclass(frozen=True)
class RunLog:
    """Append-only JSON lines; each append is flushed to disk before the caller goes on."""

    path: str

    def append(self, kind: str, **fields: Any) -> None:
        line = json.dumps({"kind": kind, **fields}, separators=(",", ":")) + "\n"
        fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            os.write(fd, line.encode("utf-8"))
            os.fsync(fd)
        finally:
            os.close(fd)

    def entries(self, kind: str | None = None, **match: Any) -> list[dict[str, Any]]:
        """Entries of `kind` whose fields equal `match`, in append order."""
        path = Path(self.path)
        if not path.exists():
            return []
        found: list[dict[str, Any]] = []
        for line in path.read_text(encoding="utf-8").splitlines():
            if not line.strip():
                continue
            entry = json.loads(line)
            if not isinstance(entry, dict):
                continue
            if kind is not None and entry.get("kind") != kind:
                continue
            if all(entry.get(key) == value for key, value in match.items()):
                found.append(entry)
        return found

    def count(self, kind: str, **match: Any) -> int:
        return len(self.entries(kind, **match))
