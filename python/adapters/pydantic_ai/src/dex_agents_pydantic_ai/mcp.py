"""MCP servers' tools for a Pydantic AI agent run by `PydanticAiRunner`.

```python
from dex_agents.mcp import McpStdioServer, McpToolSource
from dex_agents_pydantic_ai.mcp import McpSourceToolset

source = McpToolSource(servers=[McpStdioServer(name="files", command="files-mcp")])
agent = Agent(model, toolsets=[McpSourceToolset(source)])
runner = PydanticAiRunner(agent)
```

Each MCP tool becomes a Pydantic AI tool named `<server>__<tool>`. Its
definition's metadata carries the MCP annotations (so readOnlyHint and
idempotentHint give the call's effect; a `ToolPolicy` still wins) and the
reference its tool Step calls by. `PydanticAiRunner` hands the tool Step to the
source whole (`McpToolSource.execute_deferred_tool_call`, with the Step's
idempotency key), so the Step needs no listing and a Streamable HTTP server's
task is followed by PollToolTask Steps; outside that path a call is
`McpToolSource.call_tool`, which follows a task inside the call. Import this module only
with the `mcp` extra installed: `import dex_agents_pydantic_ai` never loads it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pydantic_core
from dex_agents.mcp import McpToolSource
from dex_agents.runner import ToolExecutionError
from pydantic_ai import RunContext, ToolDefinition
from pydantic_ai.toolsets import AbstractToolset, ToolsetTool

from dex_agents_pydantic_ai._context import dex_run_info
from dex_agents_pydantic_ai._policies import TOOL_SOURCE_REFERENCE_METADATA_KEY

__all__ = ["TOOL_SOURCE_REFERENCE_METADATA_KEY", "McpSourceToolset"]

# The server validates the arguments against its own schema; here they only
# need to be a JSON object.
_ARGUMENTS = pydantic_core.SchemaValidator(
    schema=pydantic_core.core_schema.dict_schema(
        pydantic_core.core_schema.str_schema(), pydantic_core.core_schema.any_schema()
    )
)


@dataclass
class McpSourceToolset(AbstractToolset[Any]):
    """The tools of an `McpToolSource`, listed once per Worker and cached by the source."""

    source: McpToolSource
    toolset_id: str | None = None

    @property
    def id(self) -> str | None:
        return self.toolset_id

    async def get_tools(self, ctx: RunContext[Any]) -> dict[str, ToolsetTool[Any]]:
        tools: dict[str, ToolsetTool[Any]] = {}
        for tool in await self.source.list_tools():
            definition = ToolDefinition(
                name=tool.name,
                description=tool.description,
                parameters_json_schema=dict(tool.parameters),
                metadata={
                    "annotations": dict(tool.annotations) if tool.effect is not None else {},
                    TOOL_SOURCE_REFERENCE_METADATA_KEY: tool.reference,
                },
            )
            tools[tool.name] = ToolsetTool(
                toolset=self,
                tool_def=definition,
                max_retries=ctx.max_retries,
                args_validator=_ARGUMENTS,
            )
        return tools

    def task_source_for(self, tool_source_reference: str) -> McpToolSource | None:
        """The source, for a call it owns: `PydanticAiRunner` hands it such calls whole."""
        return self.source if self.source.owns(tool_source_reference) else None

    async def call_tool(
        self, name: str, tool_args: dict[str, Any], ctx: RunContext[Any], tool: ToolsetTool[Any]
    ) -> Any:
        info = dex_run_info(ctx)
        if info is None or info.idempotency_key is None:
            raise ToolExecutionError(
                f"MCP tool {name!r} runs only in a Dex tool Step (through PydanticAiRunner)"
            )
        metadata = tool.tool_def.metadata or {}
        reference = info.tool_source_reference or metadata.get(TOOL_SOURCE_REFERENCE_METADATA_KEY)
        return await self.source.call_tool(
            name,
            tool_args,
            idempotency_key=info.idempotency_key,
            tool_source_reference=reference if isinstance(reference, str) else None,
        )
