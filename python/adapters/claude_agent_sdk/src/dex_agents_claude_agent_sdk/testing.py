"""Offline test support: `ClaudeAgentOptions` for the bundled CLI against a loopback fake API.

The scripted server itself is `dex_agents_testing.fake_anthropic.FakeMessagesServer`;
this only says what the CLI needs to reach it and nothing else.
"""

from __future__ import annotations

from typing import Any

from claude_agent_sdk import ClaudeAgentOptions

__all__ = ["offline_options"]

LOOPBACK_KEY = "sk-fake-for-loopback"


def offline_options(base_url: str, **overrides: Any) -> ClaudeAgentOptions:
    """Options whose CLI calls only `base_url`: no built-in tools, no settings
    files, no telemetry or update checks, no API retries, a placeholder key, a bounded run."""
    env = {
        "ANTHROPIC_BASE_URL": base_url,
        "ANTHROPIC_API_KEY": LOOPBACK_KEY,
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "DISABLE_AUTOUPDATER": "1",
        "DISABLE_TELEMETRY": "1",
        "DISABLE_ERROR_REPORTING": "1",
        # A failed model call fails the RunModel attempt at once: Dex's retry policy
        # decides, not the CLI's own backoff.
        "CLAUDE_CODE_MAX_RETRIES": "0",
    }
    env.update(overrides.pop("env", {}))
    settings: dict[str, Any] = {
        "tools": [],
        "setting_sources": [],
        "model": "claude-scripted",
        "max_turns": 8,
        "env": env,
    }
    settings.update(overrides)
    return ClaudeAgentOptions(**settings)
