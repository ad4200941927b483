"""The MCP tool source: the tools of a Worker's MCP servers as durable agent tools.

Install the extra: `pip install 'dex-agents[mcp]'`. `import dex_agents` never
loads this package or an MCP SDK.

```python
from dex_agents.mcp import McpHttpServer, McpStdioServer, McpToolSource
from dex_agents.stepwise import AgentDefinition

source = McpToolSource(
    servers=[
        McpStdioServer(name="files", command="files-mcp", args=("--root", "/srv")),
        McpHttpServer(name="crm", url="http://crm.internal/mcp"),
    ]
)
definition = AgentDefinition(model=..., tool_sources=[source])  # tools `files__read`, ...
```

Every call runs in its own tool Step on a new connection, with the call's
idempotency key in `_meta["io.superdurable.dex/idempotencyKey"]`; the core
README's MCP section says what is durable and what is at-least-once.
"""

from __future__ import annotations

try:
    import mcp as _mcp  # noqa: F401
except ImportError as _error:  # pragma: no cover - depends on the environment
    raise ImportError(
        "dex_agents.mcp needs the MCP SDK: `pip install 'dex-agents[mcp]'`"
    ) from _error

from dex_agents.mcp._config import (
    DEFAULT_CALL_TIMEOUT_SECONDS,
    DEFAULT_HANDSHAKE_TIMEOUT_SECONDS,
    McpHttpServer,
    McpServerConfig,
    McpStdioServer,
)
from dex_agents.mcp._errors import McpToolCallInterruptedError
from dex_agents.mcp._listing import McpTool
from dex_agents.mcp._naming import MAX_TOOL_NAME_LENGTH, split_qualified_name
from dex_agents.mcp._source import IDEMPOTENCY_KEY_META, McpToolSource

__all__ = [  # noqa: RUF022 - grouped by comment headers (docs/style.md)
    # the source
    "McpToolSource",
    "McpTool",
    # server configuration
    "McpStdioServer",
    "McpHttpServer",
    "McpServerConfig",
    "DEFAULT_HANDSHAKE_TIMEOUT_SECONDS",
    "DEFAULT_CALL_TIMEOUT_SECONDS",
    # names and wire keys
    "MAX_TOOL_NAME_LENGTH",
    "split_qualified_name",
    "IDEMPOTENCY_KEY_META",
    # errors
    "McpToolCallInterruptedError",
]
