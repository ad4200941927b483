"""Run a LangGraph graph or a LangChain `create_agent` agent as a durable Dex agent session.

`LangGraphRunner` drives the graph in Step mode: one model call per RunModel
Step, every tool call in its own tool Step. The graph needs
`checkpointer=DexCheckpointSaver()` and, for `create_agent`, the
`DexStepMiddleware`; see the package README.
"""

from dex_agents.runner import RunStateError, dex_run_info

from dex_agents_langgraph._mcp_tools import langchain_mcp_tools
from dex_agents_langgraph._middleware import DexStepMiddleware, defer_tool_call
from dex_agents_langgraph._runner import LangGraphRunner
from dex_agents_langgraph._saver import CheckpointImportError, DexCheckpointSaver
from dex_agents_langgraph._tool_context import DexToolContext

__all__ = [
    "CheckpointImportError",
    "DexCheckpointSaver",
    "DexStepMiddleware",
    "DexToolContext",
    "LangGraphRunner",
    "RunStateError",
    "defer_tool_call",
    "dex_run_info",
    "langchain_mcp_tools",
]
