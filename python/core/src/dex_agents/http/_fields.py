"""Typed reads of request-body fields, each refusal naming the field and what it needs."""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import Any

from dex_agents.http._responses import BadRequest

__all__ = ["check_known", "optional_bool", "optional_str", "required_bool", "required_str"]


def check_known(body: Mapping[str, Any], known: Collection[str], what: str) -> None:
    unknown = sorted(set(body) - set(known))
    if unknown:
        allowed = ", ".join(sorted(known)) or "none"
        raise BadRequest(f"{what}: unknown field {unknown[0]!r} (allowed: {allowed})")


def required_str(body: Mapping[str, Any], name: str, what: str) -> str:
    if name not in body:
        raise BadRequest(f"{what}: field {name!r} is required")
    value = body[name]
    if not isinstance(value, str):
        raise BadRequest(f"{what}: field {name!r} must be a string, got {_kind(value)}")
    return value


def optional_str(body: Mapping[str, Any], name: str, what: str) -> str | None:
    value = body.get(name)
    if value is None:
        return None
    if not isinstance(value, str):
        raise BadRequest(f"{what}: field {name!r} must be a string or null, got {_kind(value)}")
    return value


def required_bool(body: Mapping[str, Any], name: str, what: str) -> bool:
    if name not in body:
        raise BadRequest(f"{what}: field {name!r} is required")
    value = body[name]
    if not isinstance(value, bool):
        raise BadRequest(f"{what}: field {name!r} must be true or false, got {_kind(value)}")
    return value


def optional_bool(body: Mapping[str, Any], name: str, what: str, default: bool) -> bool:
    if body.get(name) is None:
        return default
    return required_bool(body, name, what)


def _kind(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    return "an object"
