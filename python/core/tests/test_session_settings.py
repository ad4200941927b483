"""Session settings on a real Worker: update_session_settings and turn boundaries."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from dex import (
    BlobCacheConfig,
    Client,
    ClientOptions,
    FlowStatus,
    StartFlowOptions,
    Value,
    WireKind,
    WorkerTarget,
    open_blob_cache,
)
from dex_agents._session_settings import (
    INVALID_START_SETTINGS,
    MAX_SESSION_SETTINGS_BYTES,
    SESSION_SETTINGS_SIZE_TOLERANCE_BYTES,
    NotAnObject,
    session_settings_problem,
    settings_size,
)
from dex_agents.codecs import SESSION_SETTINGS_CODECS
from dex_agents.session._schema import SessionSchema
from dex_agents.worker import agent_registry
from dex_agents_contracts import (
    AgentSessionStartInput,
    Struct,
    UpdateSessionSettingsRequest,
    struct_from_json,
    struct_to_json,
)
from dex_agents_testing import wait_until
from helpers import FakeContext, Harness
from stepwise_flows import flow

FACTORY = "stepwise_flows:flow"


def _settings(snapshot_settings: Struct | None) -> dict[str, object] | None:
    return None if snapshot_settings is None else struct_to_json(snapshot_settings)


def _padded(total_bytes: int) -> Struct:
    """Settings whose compact JSON text is exactly `total_bytes` long."""
    base = settings_size(struct_from_json({"pad": ""}))
    struct = struct_from_json({"pad": "x" * (total_bytes - base)})
    assert settings_size(struct) == total_bytes
    return struct


def _raw_update(h: Harness, session: str, settings: Struct | None) -> bool:
    """The RPC without the Client's own size check."""
    result: bool = h.client.client.invoke_rpc(
        h.flow.update_session_settings,
        session,
        UpdateSessionSettingsRequest(session_settings=settings),
    )
    return result


def test_update_session_settings_false_cases_and_clearing(
    factory_harness: Callable[..., Harness],
) -> None:
    h = factory_harness(FACTORY, {})
    session = h.start(session_settings={"model": "a"})
    h.wait_snapshot(session, lambda s: s.state is not None, what="the session start")
    client = h.client
    assert client.update_session_settings(session, None) is False
    assert _raw_update(h, session, None) is False
    not_an_object: Any = ["model", "b"]
    assert client.update_session_settings(session, not_an_object) is False
    # The Client refuses anything over the limit; the session accepts the tolerance.
    limit = MAX_SESSION_SETTINGS_BYTES + SESSION_SETTINGS_SIZE_TOLERANCE_BYTES
    over_client = {"pad": "x" * MAX_SESSION_SETTINGS_BYTES}
    assert client.update_session_settings(session, over_client) is False
    assert _raw_update(h, session, _padded(limit)) is True
    assert _raw_update(h, session, _padded(limit + 1)) is False
    assert _settings(h.snapshot(session).session_settings) == {"pad": "x" * (limit - 10)}
    assert client.update_session_settings(session, {"model": "b", "n": 2}) is True
    assert _settings(h.snapshot(session).session_settings) == {"model": "b", "n": 2}
    assert client.update_session_settings(session, {}) is True
    assert h.snapshot(session).session_settings is None


def test_update_before_start_agent_session_committed_is_false() -> None:
    # Before StartAgentSession commits there is no AgentState; the RPC handler
    # runs against that state directly, because Dex cannot hold a start open.
    session_flow = flow({"flow_type": "SettingsBeforeStart", "log_path": "/dev/null"})
    context: Any = FakeContext()
    request = UpdateSessionSettingsRequest(session_settings=struct_from_json({"model": "b"}))
    result = session_flow.update_session_settings(context, request)
    assert result.output is False
    assert context.values == {}
    schema = SessionSchema.create(1024)
    assert schema.session_settings.name not in {name for name, _ in context.values}


def test_settings_update_takes_effect_at_the_next_turn_only(
    factory_harness: Callable[..., Harness], tmp_path: Path
) -> None:
    h = factory_harness(FACTORY, {"gate_dir": str(tmp_path)})
    session = h.start(session_settings={"model": "a"})
    assert h.client.send_user_message(session, "gate:g1")
    wait_until(
        lambda: h.log.count("model_call", command="gate:g1") == 1, what="the gated model call"
    )
    # The update commits while turn 1's model call runs; that call then fails once.
    assert h.client.update_session_settings(session, {"model": "b"}) is True
    (tmp_path / "g1").touch()
    h.wait_idle(session, 1, timeout=60)
    calls = h.log.entries("model_call", command="gate:g1")
    assert len(calls) == 2  # the failed attempt and its retry
    assert [(c["model"], c["settings"]) for c in calls] == [("a", {"model": "a"})] * 2
    assert h.client.send_user_message(session, "say next")
    h.wait_idle(session, 2)
    (last,) = h.log.entries("model_call", command="say")
    assert (last["model"], last["settings"]) == ("b", {"model": "b"})
    assert h.client.update_session_settings(session, {}) is True
    assert h.client.send_user_message(session, "say again")
    h.wait_idle(session, 3)
    assert h.log.entries("model_call", command="say")[-1]["settings"] == {}


# --- settings that are not a JSON object, on the wire ---------------------------------


@dataclass(frozen=True)
class _RawJson:
    """Sends a str as the wire JSON of `type_name`, as a non-Python client could."""

    name: str

    @property
    def type_name(self) -> str:
        return self.name

    @property
    def wire_kind(self) -> WireKind:
        return WireKind.JSON

    def encode(self, value: str) -> Value:
        return Value(WireKind.JSON, value)

    def decode(self, value: Value) -> str:
        return str(value.data)


@pytest.fixture
def raw_client(
    factory_harness: Callable[..., Harness], tmp_path: Path
) -> Iterator[tuple[Harness, Client]]:
    h = factory_harness(FACTORY, {})
    registry = agent_registry(
        [h.flow],
        {
            AgentSessionStartInput: _RawJson("AgentSessionStartInput"),
            UpdateSessionSettingsRequest: _RawJson("UpdateSessionSettingsRequest"),
        },
    )
    cache = open_blob_cache(BlobCacheConfig(directory=str(tmp_path), max_bytes=1 << 24))
    client = Client(
        registry,
        cache,
        ClientOptions(server_address=h.server.address, worker_target=WorkerTarget(pull=True)),
    )
    yield h, client
    client.close()
    cache.close()


@pytest.mark.parametrize("settings", ['"fast"', "[1]", "3", "true"])
def test_codecs_read_non_object_settings_as_not_an_object(settings: str) -> None:
    for message_type, codec in SESSION_SETTINGS_CODECS.items():
        decoded: Any = codec.decode(Value(WireKind.JSON, f'{{"session_settings":{settings}}}'))
        assert type(decoded) is message_type
        assert isinstance(decoded.session_settings, NotAnObject)
        assert session_settings_problem(decoded.session_settings) == "they are not a JSON object"
    ok: Any = SESSION_SETTINGS_CODECS[UpdateSessionSettingsRequest].decode(
        Value(WireKind.JSON, '{"session_settings":{"model":"a"}}')
    )
    assert struct_to_json(ok.session_settings) == {"model": "a"}


def test_non_object_settings_on_the_wire(raw_client: tuple[Harness, Client]) -> None:
    h, raw = raw_client
    # The raw codecs take wire JSON text where the Flow's signatures name messages.
    update: Any = h.flow.update_session_settings
    session_flow: Any = h.flow
    session = h.start()
    h.wait_snapshot(session, lambda s: s.state is not None, what="the session start")
    for settings in ('"fast"', "[1]", "3"):
        body = f'{{"session_settings":{settings}}}'
        assert raw.invoke_rpc(update, session, body) is False
    # StartAgentSession force-fails the session with the documented reason.
    refused = f"s-{uuid.uuid4().hex[:12]}"
    raw.start_flow(
        session_flow,
        refused,
        '{"initial_message":"hi","session_settings":[1]}',
        StartFlowOptions(),
    )
    result = raw.wait_for_flow(refused, timedelta(seconds=30))
    assert result.status is FlowStatus.FAILED
    assert result.error_message == f"{INVALID_START_SETTINGS}: they are not a JSON object"
