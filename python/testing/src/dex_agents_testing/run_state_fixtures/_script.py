"""`ModelScript`: the next model replies of a resumed run, in one JSON form for every app.

A reply is `{"text": ...}` or `{"tool_calls": [{"id", "name", "arguments"}]}`.
A text may hold `{results}` (the turn's tool results the model sees, as
`name=output; ...`), `{result:NAME}` (the output of the tool NAME) and `{tools}`
(the tool names it is offered, sorted, comma separated), so the answer shows
what the resumed framework gave the model: a run state that lost a result
changes the text. `"expect_tools": [...]` on a reply fails the call unless the
model is offered exactly those tools (the active agent after a handoff).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

__all__ = ["ModelScript"]


@dataclass
class ModelScript:
    """Hands out the replies in order; a test app turns each into its framework's response."""

    replies: Sequence[Mapping[str, Any]]
    used: int = field(default=0, init=False)

    def next_reply(
        self, *, results: Sequence[tuple[str, str]], tools: Sequence[str] = ()
    ) -> Mapping[str, Any]:
        """The next reply, its text filled in; `results` are `(tool name, output)` pairs."""
        if self.used >= len(self.replies):
            raise AssertionError(
                f"the model was called {self.used + 1} times; the script has "
                f"{len(self.replies)} replies"
            )
        reply = self.replies[self.used]
        self.used += 1
        expected_tools = reply.get("expect_tools")
        if expected_tools is not None and sorted(expected_tools) != sorted(tools):
            raise AssertionError(
                f"model call {self.used}: offered tools {sorted(tools)}, "
                f"the script expects {sorted(expected_tools)}"
            )
        if "text" not in reply:
            return reply
        outputs = dict(results)
        shown = "; ".join(f"{name}={output}" for name, output in results)
        text = str(reply["text"]).replace("{results}", shown)
        text = text.replace("{tools}", ",".join(sorted(tools)))
        text = re.sub(r"\{result:([^}]+)\}", lambda m: outputs.get(m[1], "<none>"), text)
        return {"text": text}
