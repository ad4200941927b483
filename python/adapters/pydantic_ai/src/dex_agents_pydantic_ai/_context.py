"""What a Pydantic AI tool or deps factory learns about the Dex Step it runs in.

The runner hands a tool the kit's `DexRunInfo` through `RunContext.tool_call_metadata`
(the metadata Pydantic AI attaches to a resolved deferred call), so a tool needs
no Dex-specific deps type to read it; `deps_factory` gets the same record for
applications that prefer to thread it through their own deps.
"""

from __future__ import annotations

from typing import Any

from dex_agents.runner import DexRunInfo
from pydantic_ai import RunContext

__all__ = ["DEX_METADATA_KEY", "DexRunInfo", "dex_run_info"]

DEX_METADATA_KEY = "dex_agents"
"""Key of the Dex record in `RunContext.tool_call_metadata` during a tool Step."""


def dex_run_info(ctx: RunContext[Any]) -> DexRunInfo | None:
    """The Dex tool Step a tool runs in, or None when it runs outside `PydanticAiRunner`.

    Call it from a tool that takes `RunContext`; use `idempotency_key` to make a
    write safe to repeat, because a read or idempotent_write Step may run again.
    """
    metadata = ctx.tool_call_metadata
    if not isinstance(metadata, dict):
        return None
    return DexRunInfo.from_json(metadata.get(DEX_METADATA_KEY))
