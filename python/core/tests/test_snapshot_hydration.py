"""Regression: a snapshot must list each queued and steered message under its own channel.

CI saw `get_agent_snapshot` report "queued b" as steered and "queued a" as queued
right after a correct steer of "queued b". The cause was SDK 1.23.0's hydrator,
which reads the values of `loaded_channel_messages` in one map's order and writes
them back in the order of a `CopyFrom` copy; upb orders the two differently in
some processes (its hash seed is per process). These tests build a request whose
copy is ordered differently in *this* process, so the failing order is forced
rather than waited for, and run the session's real snapshot RPC through the SDK's
dispatcher with either hydrator.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path
from typing import Any, cast

from dex._async_value_hydrator import AsyncValueHydrator
from dex._async_worker_dispatcher import AsyncWorkerDispatcher
from dex._server_protocol import NegotiatedServerProtocol
from dex._value_mapper import ValueMapper
from dex.dexpb import dex_pb2 as pb
from dex_agents import AgentSessionFlow
from dex_agents._sdk_compat import ChannelKeyedHydrator
from dex_agents.worker import agent_registry
from dex_agents_contracts import AgentSnapshot, AgentUserMessage, decode, encode
from dex_agents_testing import RunLog, ScriptedRunner, child_env

QUEUED = "QueuedUserMessages"
STEERED = "SteeredUserMessages"
MAX_PADDING = 200
FRESH_PROCESSES = 8
CHILD_SCRIPT = (
    "import sys, test_snapshot_hydration as t; "
    "print(t._snapshot_texts(sys.argv[1], sys.argv[2]) or 'null')"
)


def _channel(request: pb.InvokeWorkerRPCRequest, name: str, texts: list[str]) -> None:
    messages = request.loaded_channel_messages[name]
    messages.SetInParent()
    for index, text in enumerate(texts):
        message = messages.messages.add(channel_name=name, message_id=f"{name}-{index}")
        message.value.obj_value.encoding = "json"
        message.value.obj_value.payload = encode(AgentUserMessage(text=text)).encode()


def _snapshot_request(padding: int) -> pb.InvokeWorkerRPCRequest:
    """get_agent_snapshot right after "queued b" was steered, as parsed off the wire.

    `padding` more channels of one message each (a Worker ignores channels it did
    not ask for) change how upb lays the map out, which decides whether a copy
    iterates it in another order.
    """
    request = pb.InvokeWorkerRPCRequest(flow_type="HydrationAgent", rpc_name="get_agent_snapshot")
    request.context.flow_id = "session-1"
    request.context.run_id = "run-1"
    request.input.null_value = 0  # type: ignore[assignment,unused-ignore]
    request.loaded_channel_names.extend([QUEUED, STEERED])
    request.loaded_attribute_map_instances.extend(
        ["AgentMessages/", "AgentMessageChunks/", "AgentToolCalls/"]
    )
    _channel(request, QUEUED, ["queued a"])
    _channel(request, STEERED, ["queued b"])
    for index in range(padding):
        _channel(request, f"Padding{index}", [f"padding {index}"])
    return pb.InvokeWorkerRPCRequest.FromString(request.SerializeToString())


def _values_before(request: pb.InvokeWorkerRPCRequest) -> dict[str, int]:
    """How many message values the map's iteration yields before each channel's first."""
    before, counts = 0, {}
    for name, channel in request.loaded_channel_messages.items():
        counts[name] = before
        before += len(channel.messages)
    return counts


def _reordered_by_a_copy() -> pb.InvokeWorkerRPCRequest | None:
    """The first snapshot request whose CopyFrom copy moves a session channel's values.

    The SDK gathers values in the request's order and hands them out in the copy's,
    so a session channel gets another channel's value when the number of values
    ahead of it differs between the two. None when this process's hash seed lays
    both channels out where no padding moves them (a few processes in a hundred).
    """
    for padding in range(1, MAX_PADDING):
        request = _snapshot_request(padding)
        copy = pb.InvokeWorkerRPCRequest()
        copy.CopyFrom(request)
        original, copied = _values_before(request), _values_before(copy)
        if any(original[name] != copied[name] for name in (QUEUED, STEERED)):
            return request
    return None


def _snapshot_texts(hydrator: str, log_dir: str) -> str | None:
    """The queued and steered texts the snapshot RPC reports through `hydrator`, as JSON.

    None when this process cannot force the reorder.
    """
    request = _reordered_by_a_copy()
    if request is None:
        return None
    flow = AgentSessionFlow(
        ScriptedRunner([], [], RunLog(str(Path(log_dir) / "log"))), flow_type="HydrationAgent"
    )
    registry = agent_registry([flow])
    hydrator_type = {"sdk": AsyncValueHydrator, "keyed": ChannelKeyedHydrator}[hydrator]
    dispatcher = AsyncWorkerDispatcher(
        registry,
        ValueMapper(registry.codec_registry),
        hydrator_type(cast(Any, None), cast(Any, None)),  # no blob to fetch: never called
        NegotiatedServerProtocol(),
    )
    response = asyncio.run(dispatcher.invoke_rpc(request))
    snapshot = decode(AgentSnapshot, response.output.obj_value.payload.decode())
    return json.dumps(
        [
            [p.message.text if p.message else None for p in snapshot.queued_messages],
            [p.message.text if p.message else None for p in snapshot.steered_messages],
        ]
    )


def _texts_with_reorder_forced(hydrator: str, tmp_path: Path) -> list[list[str | None]]:
    """`_snapshot_texts` here, or in fresh processes (each has its own upb hash seed)."""
    texts = _snapshot_texts(hydrator, str(tmp_path))
    for _ in range(FRESH_PROCESSES):
        if texts is not None:
            break
        child = subprocess.run(
            [sys.executable, "-c", CHILD_SCRIPT, hydrator, str(tmp_path)],
            env=child_env(),
            capture_output=True,
            text=True,
            timeout=120,
            check=True,
        )
        answer = child.stdout.strip()
        texts = None if answer == "null" else answer
    assert texts is not None, f"no process of {FRESH_PROCESSES + 1} could force the reorder"
    result: list[list[str | None]] = json.loads(texts)
    return result


def test_the_snapshot_lists_each_message_under_its_own_channel(tmp_path: Path) -> None:
    assert _texts_with_reorder_forced("keyed", tmp_path) == [["queued a"], ["queued b"]]


def test_the_sdk_hydrator_alone_moves_values_between_channels(tmp_path: Path) -> None:
    # The failure CI saw, forced: what the test above guards against. When a later
    # SDK pairs the values by channel, this fails; then drop ChannelKeyedHydrator.
    assert _texts_with_reorder_forced("sdk", tmp_path) != [["queued a"], ["queued b"]]
