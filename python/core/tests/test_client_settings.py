"""The Client's own session settings limit: start_session checks it like update_session_settings."""

from __future__ import annotations

import re

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
