"""The Client's own session settings limit: start_session checks it like update_session_settings."""

from __future__ import annotations

import re
from datetime import UTC, datetime

import pytest
from dex_agents import AgentSessionClient, UserError
from dex_agents._session_settings import INVALID_START_SETTINGS, MAX_SESSION_SETTINGS_BYTES
from stepwise_flows import flow

# Nothing listens here: every call below must be refused before it is sent.
_NOWHERE = "127.0.0.1:9"


def test_start_session_refuses_settings_over_the_limit_before_sending() -> None:
    session_flow = flow({"flow_type": "ClientSettingsLimit", "log_path": "/dev/null"})
    over = {"pad": "x" * MAX_SESSION_SETTINGS_BYTES}  # 10 bytes of `{"pad":""}` too many
    with AgentSessionClient(session_flow, server_address=_NOWHERE) as client:
        expected = f"{INVALID_START_SETTINGS}: they exceed {MAX_SESSION_SETTINGS_BYTES} bytes"
        with pytest.raises(UserError, match=re.escape(expected)):
            client.start_session("s-too-large", "hello", session_settings=over)
        # The same settings are what update_session_settings refuses.
        assert client.update_session_settings("s-too-large", over) is False


@pytest.mark.parametrize(
    ("settings", "named"),
    [
        ({"when": datetime(2026, 12, 3, tzinfo=UTC)}, "expected a JSON value, got datetime"),
        ({"nested": {"ids": {1, 2}}}, "expected a JSON value, got set"),
        ({"blob": [b"raw"]}, "expected a JSON value, got bytes"),
        ({"nested": {7: "seven"}}, "expected a string key, got int"),
    ],
)
def test_settings_that_are_not_json_get_a_clear_error_before_sending(
    settings: dict[str, object], named: str
) -> None:
    session_flow = flow({"flow_type": "ClientSettingsNotJson", "log_path": "/dev/null"})
    with AgentSessionClient(session_flow, server_address=_NOWHERE) as client:
        expected = f"{INVALID_START_SETTINGS}: they are not JSON ({named})"
        with pytest.raises(UserError, match=re.escape(expected)):
            client.start_session("s-not-json", "hello", session_settings=settings)
        # update_session_settings answers false for settings that are not JSON.
        assert client.update_session_settings("s-not-json", settings) is False
