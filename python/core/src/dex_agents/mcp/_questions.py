"""A task's input request as a session question, and the resolution sent back once.

Only one form elicitation with a single string, enum or boolean field becomes a
question; anything else is input the session cannot give. A question's
continuation names the request by its key and a SHA-256 fingerprint of its
canonical JSON, so an answer only ever reaches the request it was asked for.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from dex_agents_contracts import QuestionAnswer, QuestionResolution

from dex_agents._runner.values import ToolInputRequested

__all__ = [
    "SENT_WORKING_SECONDS",
    "Continuation",
    "TaskQuestion",
    "fingerprint",
    "input_response",
    "task_question",
]

SENT_WORKING_SECONDS = 10.0
"""How long after a send a still-listed request reads as the task working on it."""
_BOOLEAN_CHOICES = ("yes", "no")


def fingerprint(request: object) -> str:
    """SHA-256 of the request's canonical JSON (sorted keys, compact)."""
    text = json.dumps(request, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


@dataclass(frozen=True, kw_only=True)
class TaskQuestion:
    """The one simple field a task asks for, under its request key."""

    key: str
    fingerprint: str
    field: str
    kind: str  # "string", "enum" or "boolean"
    question: str
    choices: tuple[str, ...] = ()

    def asked(self, status: str) -> ToolInputRequested:
        continuation = Continuation(status=status, key=self.key, fingerprint=self.fingerprint)
        return ToolInputRequested(
            question=self.question,
            choices=self.choices,
            allows_free_text=self.kind == "string",
            continuation=continuation.encode(),
        )


def task_question(requests: Mapping[str, Any] | None) -> TaskQuestion | None:
    """The task's question when it asks exactly one simple form field, else None."""
    if not requests or len(requests) != 1:
        return None
    ((key, request),) = requests.items()
    if not isinstance(request, Mapping) or request.get("method") != "elicitation/create":
        return None
    params = request.get("params")
    if not isinstance(params, Mapping) or params.get("mode", "form") != "form":
        return None
    schema = params.get("requestedSchema")
    properties = schema.get("properties") if isinstance(schema, Mapping) else None
    if not isinstance(properties, Mapping) or len(properties) != 1:
        return None
    ((field, spec),) = properties.items()
    if not isinstance(spec, Mapping):
        return None
    kind, choices = _field_kind(spec)
    if kind is None:
        return None
    message = params.get("message")
    question = message if isinstance(message, str) and message else str(field)
    return TaskQuestion(
        key=str(key),
        fingerprint=fingerprint(request),
        field=str(field),
        kind=kind,
        question=question,
        choices=choices,
    )


def _field_kind(spec: Mapping[str, Any]) -> tuple[str | None, tuple[str, ...]]:
    enum = spec.get("enum")
    if isinstance(enum, Sequence) and not isinstance(enum, str):
        values = tuple(enum)
        if values and all(isinstance(v, str) for v in values):
            return "enum", values
        return None, ()
    one_of = spec.get("oneOf")
    if isinstance(one_of, Sequence) and not isinstance(one_of, str):
        consts = tuple(o.get("const") for o in one_of if isinstance(o, Mapping))
        if consts and len(consts) == len(one_of) and all(isinstance(c, str) for c in consts):
            return "enum", tuple(str(c) for c in consts)
        return None, ()
    if spec.get("type") == "string":
        return "string", ()
    if spec.get("type") == "boolean":
        return "boolean", _BOOLEAN_CHOICES
    return None, ()


def input_response(question: TaskQuestion, answer: QuestionAnswer) -> dict[str, Any]:
    """The `inputResponses` value for a resolution: accept, decline or cancel."""
    if answer.resolution is QuestionResolution.DECLINED:
        return {"action": "decline"}
    if answer.resolution is QuestionResolution.DEADLINE_PASSED:
        return {"action": "cancel"}
    value: object = answer.answer
    if question.kind == "boolean":
        value = answer.answer.strip().lower() in ("yes", "true")
    return {"action": "accept", "content": {question.field: value}}


@dataclass(frozen=True, kw_only=True)
class Continuation:
    """What a poll leaves the next one: the status seen, and the request asked or sent."""

    status: str | None = None
    key: str | None = None
    fingerprint: str | None = None
    sent_at: float | None = None
    """The Worker clock's time (epoch seconds) at which the resolution went out."""

    def names(self, question: TaskQuestion | None) -> bool:
        return (
            question is not None
            and self.key == question.key
            and self.fingerprint == question.fingerprint
        )

    def encode(self) -> str:
        value: dict[str, object] = {"status": self.status}
        if self.key is not None:
            value.update(key=self.key, fingerprint=self.fingerprint)
        if self.sent_at is not None:
            value["sent_at"] = self.sent_at
        return json.dumps(value, separators=(",", ":"))

    @classmethod
    def decode(cls, text: str | None) -> Continuation:
        try:
            value = json.loads(text) if text else {}
        except ValueError:
            value = {}
        if not isinstance(value, dict):
            value = {}
        fields = ("status", "key", "fingerprint", "sent_at")
        status, key, mark, sent = (value.get(name) for name in fields)
        return cls(
            status=status if isinstance(status, str) else None,
            key=key if isinstance(key, str) else None,
            fingerprint=mark if isinstance(mark, str) else None,
            sent_at=float(sent) if isinstance(sent, int | float) else None,
        )
