"""The durable agent session: one Flow execution per session.

The package is layered so imports only go down (docs/architecture.md draws it):
`_flow` declares the Steps and RPCs; `_steps/` holds one module per Step family
and `_rpcs/` the RPC rules; both stand on `_rules/` (turn control, tool outcomes,
built-in calls, plan mode, compaction, questions), which stand on the runtime,
the stores (`_stores/`) and the schema. Steps of one family reach another's
Steps only through the Step table (`_step_table.SessionSteps`) that `_flow` fills.
"""

from __future__ import annotations

from dex_agents.session._flow import (
    DEFAULT_MESSAGE_PAGE_LIMIT,
    MAX_MESSAGE_PAGE_LIMIT,
    SNAPSHOT_MESSAGE_LIMIT,
    AgentSessionFlow,
)

__all__ = [
    "DEFAULT_MESSAGE_PAGE_LIMIT",
    "MAX_MESSAGE_PAGE_LIMIT",
    "SNAPSHOT_MESSAGE_LIMIT",
    "AgentSessionFlow",
]
