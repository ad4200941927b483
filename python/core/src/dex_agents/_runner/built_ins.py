"""The model-facing definitions of the session's built-in tools.

The session validates and runs these calls itself (RunModel routes them to their
own Steps); a runner only offers the enabled ones to its model like any tool,
translated to its framework's tool definition.
"""

from __future__ import annotations

from collections.abc import Mapping

from dex_agents._runner.policies import BuiltInToolName
from dex_agents.models import ToolDefinition

BUILT_IN_TOOL_DEFINITIONS: Mapping[BuiltInToolName, ToolDefinition] = {
    "ask_user": ToolDefinition(
        name="ask_user",
        description=(
            "Ask the user a question and wait for the answer. Use it when you cannot "
            "continue without information only the user has."
        ),
        parameters={
            "type": "object",
            "properties": {
                "question": {"type": "string", "description": "The question to ask."},
                "choices": {
                    "type": ["array", "null"],
                    "items": {"type": "string"},
                    "description": "Answers the user may pick from; omit for a free answer.",
                },
                "allows_free_text": {
                    "type": ["boolean", "null"],
                    "description": "Whether the user may answer outside `choices` (default true).",
                },
            },
            "required": ["question"],
            "additionalProperties": False,
        },
    ),
    "durable_wait": ToolDefinition(
        name="durable_wait",
        description=("Wait for a number of seconds before continuing; the wait survives restarts."),
        parameters={
            "type": "object",
            "properties": {
                "seconds": {"type": "integer", "minimum": 1, "description": "How long to wait."},
                "reason": {"type": "string", "description": "Why the wait is needed."},
            },
            "required": ["seconds", "reason"],
            "additionalProperties": False,
        },
    ),
    "write_todos": ToolDefinition(
        name="write_todos",
        description=(
            "Replace the plan with this task list. Keep each task's status current; "
            "an empty list clears the plan."
        ),
        parameters={
            "type": "object",
            "properties": {
                "todos": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "properties": {
                            "content": {"type": "string"},
                            "status": {
                                "type": "string",
                                "enum": ["pending", "in_progress", "completed"],
                            },
                        },
                        "required": ["content", "status"],
                        "additionalProperties": False,
                    },
                }
            },
            "required": ["todos"],
            "additionalProperties": False,
        },
    ),
}
