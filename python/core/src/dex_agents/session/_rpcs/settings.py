"""The rule of update_session_settings: replace the settings later turns start with."""

from __future__ import annotations

from dex import Context
from dex_agents_contracts import Struct, UpdateSessionSettingsRequest

from dex_agents._session_settings import session_settings_problem
from dex_agents.session._schema import SessionSchema

__all__ = ["update_session_settings"]


def update_session_settings(
    schema: SessionSchema, context: Context, request: UpdateSessionSettingsRequest
) -> bool:
    """False before StartAgentSession committed, and for settings that are missing, not
    a JSON object, or too large; `{}` clears them. The active turn keeps its own copy."""
    if schema.state.get(context) is None:
        return False
    settings = request.session_settings
    if not isinstance(settings, Struct) or session_settings_problem(settings) is not None:
        return False
    if settings.fields:
        schema.session_settings.set(context, settings)
    else:
        schema.session_settings.delete(context)
    return True
