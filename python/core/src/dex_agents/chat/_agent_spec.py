"""`--agent module:name`: the AgentSessionFlow (or a factory of one) a chat talks to."""

from __future__ import annotations

import importlib

from dex_agents.errors import UserError
from dex_agents.session import AgentSessionFlow

__all__ = ["load_agent"]


def load_agent(spec: str) -> AgentSessionFlow:
    """`module:name`, an AgentSessionFlow or a function of no arguments returning one."""
    module_name, _, attribute = spec.partition(":")
    if not module_name or not attribute:
        raise UserError(f"--agent {spec!r} must be 'module:name'")
    try:
        found: object = getattr(importlib.import_module(module_name), attribute)
    except (ImportError, AttributeError) as error:
        raise UserError(f"--agent {spec!r} could not be loaded: {error}") from None
    if callable(found) and not isinstance(found, AgentSessionFlow):
        found = found()
    if not isinstance(found, AgentSessionFlow):
        raise UserError(f"--agent {spec!r} is {type(found).__name__}, not an AgentSessionFlow")
    return found
