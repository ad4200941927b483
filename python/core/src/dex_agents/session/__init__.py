"""The durable agent session: one Flow execution per session.

Imports only go down (docs/architecture.md draws the layers): `_flow` declares
the Steps and RPCs; `_steps/` holds one module per Step family and `_rpcs/` the
RPC rules; below them `_rules/` (turn control, tool outcomes, built-in calls,
plan mode, compaction, questions) and `_movements` (movements whose options
travel with them); then the runtime, the stores (`_stores/`), the event writer
and the schema. A Step reaches another family's Steps only through the Step
table (`_step_table.SessionSteps`) that `_flow` fills and the runtime carries.
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
