"""Calls to the runner service: wire JSON on gRPC, deadlines, and no hidden retries.

gRPC's own retries are off: a call that fails fails the Step attempt, and only
the Step's retry policy may run it again (for a single-attempt tool, a sent
call without an answer is outcome_unknown, never a second run).
"""

from __future__ import annotations

import asyncio
import dataclasses
import threading
from collections.abc import AsyncIterator
from typing import Any, TypeVar

import grpc
import grpc.aio
from dex_agents_contracts import RunnerFailure, decode, encode

from dex_agents._remote.errors import RemoteRunnerError, RemoteRunnerUnavailableError
from dex_agents._remote.methods import Method
from dex_agents._runner.errors import TURN_ENDING_ERRORS_BY_NAME

__all__ = ["CallSite", "Transport", "frame_field"]

RequestT = TypeVar("RequestT")
ResponseT = TypeVar("ResponseT")

_MAX_MESSAGE_BYTES = 64 * 1024 * 1024
"""Run state and stored messages travel whole; Dex itself bounds them far below this."""

_OPTIONS: list[tuple[str, Any]] = [
    ("grpc.enable_retries", 0),
    ("grpc.max_send_message_length", _MAX_MESSAGE_BYTES),
    ("grpc.max_receive_message_length", _MAX_MESSAGE_BYTES),
    # A restarted sidecar is reached again within a second, not after gRPC's
    # default backoff of up to two minutes.
    ("grpc.initial_reconnect_backoff_ms", 100),
    ("grpc.min_reconnect_backoff_ms", 100),
    ("grpc.max_reconnect_backoff_ms", 1000),
]


@dataclasses.dataclass(frozen=True, kw_only=True)
class CallSite:
    """What an error names: the method, the Step attempt and the session."""

    method: str
    attempt: int = 0
    session_id: str | None = None


def frame_field(frame: object, *, site: CallSite) -> tuple[str, Any]:
    """The one field a response frame sets.

    Raises:
        ValueError: the frame sets none or several.
    """
    assert dataclasses.is_dataclass(frame)
    set_fields = [
        (f.name, getattr(frame, f.name))
        for f in dataclasses.fields(frame)
        if getattr(frame, f.name) not in (None, False)
    ]
    if len(set_fields) != 1:
        names = ", ".join(name for name, _ in set_fields) or "none"
        raise ValueError(
            f"a {type(frame).__name__} frame of `{site.method}` must set exactly one field; "
            f"it sets {names}"
        )
    return set_fields[0]


class Transport:
    """One runner service address: a blocking channel for `DescribeRunner`, opened when
    the runner is first described, and one asyncio channel per event loop for every
    protocol call; constructing it connects nothing."""

    def __init__(self, target: str, flow_type: str, *, connect_timeout: float) -> None:
        self.target = target
        self.flow_type = flow_type
        self.connect_timeout = connect_timeout
        self._lock = threading.Lock()
        self._sync: grpc.Channel | None = None
        self._sync_state: grpc.ChannelConnectivity | None = None
        self._aio: dict[int, tuple[asyncio.AbstractEventLoop, grpc.aio.Channel]] = {}

    def error(
        self,
        site: CallSite,
        message: str,
        *,
        error_type: str | None = None,
        unavailable: bool = False,
    ) -> RemoteRunnerError:
        cls = RemoteRunnerUnavailableError if unavailable else RemoteRunnerError
        return cls(
            f"runner {self.flow_type!r} at {self.target!r}: `{site.method}` "
            f"(attempt {site.attempt}) {message}",
            target=self.target,
            flow_type=self.flow_type,
            method=site.method,
            attempt=site.attempt,
            error_type=error_type,
            session_id=site.session_id,
        )

    def failure(self, site: CallSite, failure: RunnerFailure) -> Exception:
        """The runner's exception as this side raises it: a turn-ending error by its kit
        class, so RunModel ends the turn as for a runner in process, any other as
        `RemoteRunnerError`."""
        turn_ending = TURN_ENDING_ERRORS_BY_NAME.get(failure.error_type)
        if turn_ending is not None:
            return turn_ending(failure.message)
        return self.error(
            site,
            f"raised {failure.error_type}: {failure.message}",
            error_type=failure.error_type,
        )

    def _rpc_error(self, site: CallSite, error: grpc.RpcError, timeout: float) -> RemoteRunnerError:
        code = error.code() if isinstance(error, grpc.Call | grpc.aio.AioRpcError) else None
        details = error.details() if isinstance(error, grpc.Call | grpc.aio.AioRpcError) else ""
        if code is grpc.StatusCode.UNAVAILABLE:
            return self.error(
                site,
                f"failed: the runner service is unreachable ({details})",
                unavailable=True,
            )
        if code is grpc.StatusCode.DEADLINE_EXCEEDED:
            return self.error(site, f"failed: no answer within its deadline of {timeout:g} s")
        name = code.name if code is not None else "UNKNOWN"
        return self.error(site, f"failed: gRPC status {name}: {details}")

    def _sync_channel(self, site: CallSite) -> grpc.Channel:
        """The blocking channel, connected within `connect_timeout`."""
        with self._lock:
            if self._sync is None:
                self._sync = grpc.insecure_channel(self.target, options=_OPTIONS)
                self._sync.subscribe(self._track, try_to_connect=True)
            channel = self._sync
        if self._sync_state is not grpc.ChannelConnectivity.READY:
            try:
                grpc.channel_ready_future(channel).result(timeout=self.connect_timeout)
            except grpc.FutureTimeoutError:
                raise self.error(
                    site,
                    f"failed: the runner service is unreachable (no connection within "
                    f"{self.connect_timeout:g} s)",
                    unavailable=True,
                ) from None
        return channel

    def _track(self, state: grpc.ChannelConnectivity) -> None:
        self._sync_state = state

    def _aio_channel(self) -> grpc.aio.Channel:
        loop = asyncio.get_running_loop()
        with self._lock:
            known = self._aio.get(id(loop))
            if known is None or known[0] is not loop:
                known = (loop, grpc.aio.insecure_channel(self.target, options=_OPTIONS))
                self._aio[id(loop)] = known
            return known[1]

    def unary_blocking(
        self,
        method: Method[RequestT, ResponseT],
        request: RequestT,
        *,
        site: CallSite,
        timeout: float,
    ) -> ResponseT:
        """One blocking call: `DescribeRunner`, made once when `RemoteRunner` is first
        described, normally before any event loop runs Steps on it.

        Like the other calls, it fails as unreachable when no connection is up
        within `connect_timeout`.
        """
        call = self._sync_channel(site).unary_unary(
            method.path,
            request_serializer=_serializer,
            response_deserializer=_deserializer(method.response),
        )
        try:
            response: ResponseT = call(request, timeout=timeout, wait_for_ready=False)
        except grpc.RpcError as error:
            raise self._rpc_error(site, error, timeout) from None
        return response

    async def unary(
        self,
        method: Method[RequestT, ResponseT],
        request: RequestT,
        *,
        site: CallSite,
        deadline_seconds: float,
    ) -> ResponseT:
        """One call on the event loop's channel, so a Step waiting for it blocks no other.

        Fails as unreachable when no connection is up within `connect_timeout`.
        """
        channel = await self._ready_aio_channel(site)
        call = channel.unary_unary(
            method.path,
            request_serializer=_serializer,
            response_deserializer=_deserializer(method.response),
        )
        try:
            response: ResponseT = await call(
                request, timeout=deadline_seconds, wait_for_ready=False
            )
        except grpc.RpcError as error:
            raise self._rpc_error(site, error, deadline_seconds) from None
        return response

    async def _ready_aio_channel(self, site: CallSite) -> grpc.aio.Channel:
        channel = self._aio_channel()
        try:
            async with asyncio.timeout(self.connect_timeout):
                await channel.channel_ready()
        except TimeoutError:
            raise self.error(
                site,
                f"failed: the runner service is unreachable (no connection within "
                f"{self.connect_timeout:g} s)",
                unavailable=True,
            ) from None
        return channel

    async def stream(
        self,
        method: Method[RequestT, ResponseT],
        request: RequestT,
        *,
        site: CallSite,
        deadline_seconds: float,
    ) -> AsyncIterator[ResponseT]:
        """The frames of one streamed call; cancelling the consumer cancels the call.

        The connection must be up within `connect_timeout`: an unreachable
        service fails the attempt then, not when the call's deadline passes.
        """
        channel = await self._ready_aio_channel(site)
        call = channel.unary_stream(
            method.path,
            request_serializer=_serializer,
            response_deserializer=_deserializer(method.response),
        )(request, timeout=deadline_seconds, wait_for_ready=False)
        try:
            while True:
                try:
                    frame = await call.read()
                except grpc.RpcError as error:
                    raise self._rpc_error(site, error, deadline_seconds) from None
                if frame is grpc.aio.EOF:
                    raise self.error(site, "failed: the stream ended without an outcome")
                yield frame
        finally:
            # The outcome frame, a cancelled Step or an error: the sidecar stops either way.
            call.cancel()

    def close(self) -> None:
        with self._lock:
            if self._sync is not None:
                self._sync.close()
                self._sync = None


def _serializer(message: object) -> bytes:
    return encode(message).encode("utf-8")


def _deserializer(message_type: type[ResponseT]) -> Any:
    def read(data: bytes) -> ResponseT:
        return decode(message_type, data.decode("utf-8"))

    return read
