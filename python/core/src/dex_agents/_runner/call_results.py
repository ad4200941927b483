"""The results of a turn's deferred calls, from their records back to the framework.

A runner that paused on tool calls remembers them as `PendingCall`s in its run
state; the next RunModel hands the framework each call's model-visible result
from the call's final record, an unfinished turn shows a note for a call that
never ran, and a framework that runs a gated tool's body in RunModel (to
finish the call it paused on) gets the stored result from `stored_result`.
"""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Iterator, Mapping, Sequence
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar

from dex_agents_contracts import AgentToolCall

from dex_agents._runner.errors import RunStateError
from dex_agents.results import (
    NO_RESULT_TEXT,
    is_final,
    model_visible_result,
    tool_call_status_text,
)

__all__ = [
    "PendingCall",
    "pending_records",
    "result_text",
    "result_texts",
    "stored_result",
    "with_stored_results",
]


class _Call(Protocol):
    """A paused call as any runner remembers it (a `PendingCall`, a Stepwise item, ...)."""

    @property
    def tool_call_id(self) -> str: ...

    @property
    def tool_name(self) -> str: ...


CallT = TypeVar("CallT", bound=_Call)
PendingT = TypeVar("PendingT", bound="PendingCall")


@dataclass(frozen=True, kw_only=True)
class PendingCall:
    """A deferred call the framework waits on; Dex supplies its result on resume.

    An adapter that needs more per call (LangGraph's interrupt ID) subclasses it
    with more string fields; `to_json`/`from_json` carry them all.
    """

    tool_call_id: str
    tool_name: str

    def to_json(self) -> dict[str, str]:
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}

    @classmethod
    def from_json(cls: type[PendingT], data: Mapping[str, Any]) -> PendingT:
        """Raises KeyError for a missing field (the run state codec reports it)."""
        return cls(**{f.name: str(data[f.name]) for f in dataclasses.fields(cls)})


def pending_records(
    pending: Sequence[CallT], records: Sequence[AgentToolCall], *, strict: bool
) -> list[tuple[CallT, AgentToolCall | None]]:
    """Each pending call with its final record, in the pending order.

    Strict (RunModel, where every record is final) raises for a missing or
    unfinished record; otherwise such a call pairs with None.

    Raises:
        RunStateError: strict, and a call has no final record.
    """
    by_id = {record.tool_call_id: record for record in records}
    paired: list[tuple[CallT, AgentToolCall | None]] = []
    for call in pending:
        record = by_id.get(call.tool_call_id)
        if record is None and strict:
            raise RunStateError(
                f"the turn has no tool call record for {call.tool_call_id!r} "
                f"({call.tool_name!r}), which the run state is waiting for"
            )
        if record is not None and not is_final(record.status):
            if strict:
                raise RunStateError(
                    f"tool call {call.tool_call_id!r} ({call.tool_name!r}) is not final: "
                    f"its status is {tool_call_status_text(record.status)}"
                )
            record = None
        paired.append((call, record))
    return paired


def result_text(record: AgentToolCall | None) -> str:
    """What the model sees for a call: its final record's result, or that it never ran."""
    if record is None or not is_final(record.status):
        return NO_RESULT_TEXT
    return model_visible_result(record)


def result_texts(
    pending: Sequence[_Call], records: Sequence[AgentToolCall], *, strict: bool
) -> dict[str, str]:
    """Each pending call's model-visible result by tool call ID (see `pending_records`)."""
    return {
        call.tool_call_id: result_text(record)
        for call, record in pending_records(pending, records, strict=strict)
    }


_STORED_RESULTS: ContextVar[Mapping[str, str] | None] = ContextVar(
    "dex_agents_stored_results", default=None
)


@contextlib.contextmanager
def with_stored_results(results: Mapping[str, str]) -> Iterator[None]:
    """The model-visible results of the turn's final tool calls, by tool call ID, for
    the gated tool bodies a framework runs inside this block."""
    token = _STORED_RESULTS.set(results)
    try:
        yield
    finally:
        _STORED_RESULTS.reset(token)


def stored_result(tool_name: str, tool_call_id: str) -> str:
    """The stored result a gated tool returns in a RunModel Step instead of running.

    Raises:
        RuntimeError: The call has no stored result. A runner lets a gated body run
            only for a call whose record is final, so this is a bug, never the model's.
    """
    results = _STORED_RESULTS.get()
    if results is None or tool_call_id not in results:
        raise RuntimeError(
            f"tool {tool_name!r} (call {tool_call_id!r}) was about to run inside a RunModel "
            "Step without a stored Dex result; a runner runs tools only in tool Steps"
        )
    return results[tool_call_id]
