"""Model clients for the Stepwise loop: one `complete` call is one model call.

`ScriptedModelClient` replays a script, for tests and demos without a model key.
`dex_agents.models.litellm.LiteLLMModelClient` (the `dex-agents[litellm]` extra)
reaches real providers; import it from that module.
"""

from __future__ import annotations

from dex_agents.models._scripted import (
    ScriptedError,
    ScriptedModelClient,
    ScriptedResponse,
    ScriptEntry,
    ScriptExhaustedError,
    scripted_answer,
    scripted_tool_calls,
)
from dex_agents.models._types import (
    AssistantMessage,
    DeltaCallback,
    ModelClient,
    ModelDelta,
    ModelMessage,
    ModelRequest,
    ModelResponse,
    ModelSettings,
    ModelToolCall,
    ModelToolChoice,
    ModelUsage,
    NamedToolChoice,
    ToolDefinition,
    ToolResultMessage,
    UserMessage,
)

__all__ = [
    "AssistantMessage",
    "DeltaCallback",
    "ModelClient",
    "ModelDelta",
    "ModelMessage",
    "ModelRequest",
    "ModelResponse",
    "ModelSettings",
    "ModelToolCall",
    "ModelToolChoice",
    "ModelUsage",
    "NamedToolChoice",
    "ScriptEntry",
    "ScriptExhaustedError",
    "ScriptedError",
    "ScriptedModelClient",
    "ScriptedResponse",
    "ToolDefinition",
    "ToolResultMessage",
    "UserMessage",
    "scripted_answer",
    "scripted_tool_calls",
]
