"""The attribute keys and span shapes of each supported conventions version.

Every key that differs between versions lives here, so a change upstream (a
renamed usage key, a new root operation) is a one-line edit.
"""

from __future__ import annotations

from dataclasses import dataclass

from dex_agents.tracing._options import CONVENTIONS_1_36, Conventions

__all__ = ["ConventionProfile", "profile_for"]


@dataclass(frozen=True)
class ConventionProfile:
    """What one conventions version names and how it shapes the root."""

    schema_url: str
    provider_key: str
    """`gen_ai.provider.name` now; `gen_ai.system` in 1.36.0."""
    provider_on_root: bool
    """1.36.0 puts the provider on `invoke_agent` too (as `_OTHER` when unknown)."""
    root_is_client: bool
    """1.36.0 has one `invoke_agent` span type, of kind CLIENT."""
    tool_type_key: str | None
    """`gen_ai.tool.type`, which 1.36.0 leaves out."""
    usage_keys: tuple[tuple[str, str], ...]
    """(AgentUsage field, attribute key) pairs a CLIENT chat span carries."""


_CURRENT = ConventionProfile(
    schema_url="https://opentelemetry.io/schemas/gen-ai-dev/1.42.0-dev",
    provider_key="gen_ai.provider.name",
    provider_on_root=False,
    root_is_client=False,
    tool_type_key="gen_ai.tool.type",
    usage_keys=(
        ("input_tokens", "gen_ai.usage.input_tokens"),
        ("output_tokens", "gen_ai.usage.output_tokens"),
        ("cached_input_tokens", "gen_ai.usage.cache_read.input_tokens"),
        ("reasoning_tokens", "gen_ai.usage.reasoning.output_tokens"),
    ),
)

_V1_36 = ConventionProfile(
    schema_url="https://opentelemetry.io/schemas/1.36.0",
    provider_key="gen_ai.system",
    provider_on_root=True,
    root_is_client=True,
    tool_type_key=None,
    usage_keys=(
        ("input_tokens", "gen_ai.usage.input_tokens"),
        ("output_tokens", "gen_ai.usage.output_tokens"),
    ),
)


def profile_for(conventions: Conventions) -> ConventionProfile:
    return _V1_36 if conventions == CONVENTIONS_1_36 else _CURRENT
