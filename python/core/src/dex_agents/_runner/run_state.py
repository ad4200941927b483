"""The run-state envelope: every adapter's `FrameworkRunState`, versioned alike.

An adapter declares its `RunStateFormat` once (its name, its payload's schema
version, the framework it wraps) and hands it plain JSON data; the envelope
(`RunStateEnvelope` in runner.proto) says who wrote the payload and in which
layout, so a state another adapter wrote, or a layout this build cannot read,
fails with one `RunStateError` that names the adapter and both versions.

Run states written before the envelope (sessions in flight across an upgrade)
carry the adapter's own marker instead; the adapter's `legacy` reader turns
such a state into today's payload, so those turns resume as they would have.
"""

from __future__ import annotations

import functools
import importlib.metadata
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

from dex_agents_contracts import (
    RunStateEnvelope,
    WireFormatError,
    decode_run_state_envelope,
    encode_run_state_envelope,
)

from dex_agents._runner.errors import RunStateError

__all__ = ["RunStateFormat", "framework_version"]

T = TypeVar("T")

LegacyReader = Callable[[object], "Mapping[str, Any] | None"]
"""A pre-envelope state's parsed JSON to today's payload; None when it is not one."""


@functools.cache
def framework_version(distribution: str) -> str:
    """`<distribution> <version>` of an installed package; the bare name when it is not."""
    try:
        return f"{distribution} {importlib.metadata.version(distribution)}"
    except importlib.metadata.PackageNotFoundError:
        return distribution


def legacy_marked(field: str, value: object) -> LegacyReader:
    """The legacy reader of a pre-envelope layout that marked itself with `field`: `value`.

    Every adapter's first layout was its payload as a JSON object with such a
    marker (`"version": 1`, `"format": "<name>"`), so the reader is the object itself.
    """

    def read(data: object) -> Mapping[str, Any] | None:
        return data if isinstance(data, dict) and data.get(field) == value else None

    return read


@dataclass(frozen=True, kw_only=True)
class RunStateFormat:
    """How one adapter writes and reads its run state.

    Args:
        adapter: The adapter's name in the envelope (`openai_agents`, `stepwise`, ...).
        schema_version: The payload layout this build writes and reads; raise it
            when the layout changes, and read the old one through `legacy` or a
            reader of its own.
        framework: The framework's distribution name (`openai-agents`), whose
            installed version the envelope records for diagnosis.
        legacy: Reads a state written before the envelope (see the module doc);
            `RunStateFormat.marked` builds the usual one.
    """

    adapter: str
    schema_version: int = 1
    framework: str | None = None
    legacy: LegacyReader | None = None

    marked = staticmethod(legacy_marked)

    def encode(self, payload: object) -> str:
        """The envelope's wire JSON around `payload` (plain JSON data)."""
        return encode_run_state_envelope(
            RunStateEnvelope(
                adapter=self.adapter,
                framework_version=framework_version(self.framework) if self.framework else "",
                schema_version=self.schema_version,
                payload=json.dumps(payload, separators=(",", ":"), ensure_ascii=False),
            )
        )

    def decode(self, text: str, read: Callable[[Mapping[str, Any]], T]) -> T:
        """The state `read` builds from the payload of `text`.

        `read` may raise KeyError, TypeError or ValueError for a payload that lacks
        what it needs; they become a `RunStateError` too.

        Raises:
            RunStateError: Not this adapter's state, a schema version this build
                does not read, or a payload `read` cannot use.
        """
        payload = self._payload(text)
        try:
            return read(payload)
        except RunStateError:
            raise
        except (KeyError, TypeError, ValueError) as error:
            raise RunStateError(
                f"unreadable {self.adapter} run state (schema version "
                f"{self.schema_version}): {error!r}"
            ) from error

    def _payload(self, text: str) -> Mapping[str, Any]:
        try:
            envelope = decode_run_state_envelope(text)
        except WireFormatError as error:
            raise RunStateError(f"the run state is not a run state envelope: {error}") from None
        if not envelope.adapter:  # no envelope: written before it, or by nobody we know
            return self._legacy_payload(text)
        if envelope.adapter != self.adapter:
            raise RunStateError(
                f"the run state was not written by the {self.adapter} adapter but by "
                f"{envelope.adapter} (schema version {envelope.schema_version}, "
                f"{envelope.framework_version or 'framework version unknown'}); this "
                f"{self.adapter} runner reads schema version {self.schema_version}"
            )
        if envelope.schema_version != self.schema_version:
            raise RunStateError(
                f"the {self.adapter} run state has schema version {envelope.schema_version} "
                f"(written with {envelope.framework_version or 'an unknown framework version'}),"
                f" which this runner cannot read: it reads schema version {self.schema_version}"
            )
        try:
            payload = json.loads(envelope.payload)
        except ValueError as error:
            raise RunStateError(f"the {self.adapter} run state's payload is not JSON") from error
        if not isinstance(payload, dict):
            raise RunStateError(f"the {self.adapter} run state's payload is not a JSON object")
        return payload

    def _legacy_payload(self, text: str) -> Mapping[str, Any]:
        payload = self.legacy(json.loads(text)) if self.legacy is not None else None
        if payload is None:
            raise RunStateError(
                f"the run state was not written by the {self.adapter} adapter: it has no run "
                f"state envelope nor an earlier {self.adapter} layout; this runner reads "
                f"schema version {self.schema_version}: {text[:120]!r}"
            )
        return payload
